"""User models as strings, in profiles and cells, and their round trip through the probe: pure,
no torch (the probe's answers are written here by hand)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bench.run.plan import matrix, modelspec, usermodels
from bench.run.plan.matrix import Cell, ProfileError
from bench.run.plan.profiles import parse_profile
from bench.run.protocol import ModelCheck, ModelInfo, Probe, Record

from .conftest import ROOT

MODEL = "tests/advise/model.py:build"
#: A profile's defaults: the small model in a file, at 32x32.
DEFAULTS = f"""
[defaults]
model = "{MODEL}"
input_shape = "3,32,32"
"""


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # model paths are relative to the current directory


def _profile(body: str) -> matrix.Profile:
    import tomllib

    return parse_profile(tomllib.loads(body), "t")


def _cells(body: str) -> list[Cell]:
    return [c for s in _profile(body).studies for c in s.cells]


@pytest.mark.parametrize(("text", "target", "attr", "is_file"), [
    ("pkg.module:factory", "pkg.module", "factory", False),
    ("models/net.py:Net.create", "models/net.py", "Net.create", True),
    ("C:/x/net.py:build", "C:/x/net.py", "build", True),  # the last colon separates
])
def test_the_two_forms_parse(text: str, target: str, attr: str, is_file: bool) -> None:
    spec = modelspec.parse(text)
    assert (spec.target, spec.attr, spec.is_file) == (target, attr, is_file)
    assert modelspec.is_user_model(text) and not modelspec.is_user_model("resnet50")


@pytest.mark.parametrize("text", ["pkg:", ":build", "pkg.module:1x", "my pkg:build",
                                  "models/net:build"])
def test_a_bad_string_names_the_valid_forms(text: str) -> None:
    with pytest.raises(modelspec.SpecError, match=r"pkg\.module:factory or path/to/file\.py"):
        modelspec.parse(text)


@pytest.mark.parametrize("text", ["3,32", "0,32,32", "3,32,32,1", "a,b,c", ""])
def test_input_shape_must_be_three_positive_integers(text: str) -> None:
    with pytest.raises(modelspec.SpecError, match="is not C,H,W"):
        modelspec.parse_input_shape(text)


@pytest.mark.parametrize(("text", "problem"), [
    ("3,100000,100000", "H must be from 1 to 16,384, got 100,000"),
    ("3,32,20000", "W must be from 1 to 16,384, got 20,000"),
    ("1000000000,1,1", "C must be from 1 to 16,384, got 1,000,000,000"),
])
def test_input_shape_has_the_range_of_a_resolution(text: str, problem: str) -> None:
    with pytest.raises(modelspec.SpecError, match=problem):
        modelspec.parse_input_shape(text)


def test_torchvision_cell_ids_and_names_are_unchanged() -> None:
    assert Cell().cell_id == "adf637ecfe"
    cell = _cells('[studies.s]\nmodel = "resnet18"\nresolution = 64\n')[0]
    assert cell.name == "resnet18 cpu infer b1 r64 fp32 nchw static"
    assert (cell.model_source, cell.input_shape, cell.inputs, cell.loss) == ("", "", "", "")


def test_a_user_model_takes_its_resolution_from_its_input_shape_unless_swept() -> None:
    one = _cells(f'[studies.s]\nmodel = "{MODEL}"\ninput_shape = "3,32,32"\n')
    assert [(c.resolution, c.input_shape) for c in one] == [(32, "3,32,32")]
    swept = _cells(f'[studies.s]\nmodel = "{MODEL}"\ninput_shape = "1,32,32"\n'
                   'resolution = [16, 48]\n')
    assert [(c.resolution, c.input_shape) for c in swept] == [(16, "1,16,16"), (48, "1,48,48")]
    default = _cells(f'[studies.s]\nmodel = "{MODEL}"\n')[0]
    assert (default.resolution, default.input_shape) == (224, "3,224,224")
    assert "in=3,224,224" in default.name and "r224" not in default.name


def test_model_identity_separates_cells_and_only_user_models_carry_it() -> None:
    cell = _cells(f'[studies.s]\nmodel = "{MODEL}"\ninput_shape = "3,32,32"\n')[0]
    other = replace(cell, model_source="0123456789")
    assert cell.cell_id != other.cell_id and other.name.endswith("src=012345")
    mixed = _cells(f'[defaults]\ninput_shape = "3,32,32"\n[studies.s]\nmodel = ["{MODEL}", '
                   '"resnet18"]\n')
    assert [c.input_shape for c in mixed] == ["3,32,32", ""]  # not an axis of torchvision's
    assert mixed[1].resolution == 32


def test_inputs_callable_and_input_shape_replace_each_other_by_level() -> None:
    body = DEFAULTS + """
[studies.image]
mode = "train"
[studies.vectors]
model = "tests/advise/model.py:mlp"
inputs = "tests/advise/model.py:vectors"
loss = "tests/advise/model.py:squared_error"
"""
    image, vectors = _cells(body)
    assert (image.input_shape, image.inputs) == ("3,32,32", "")
    assert (vectors.input_shape, vectors.inputs, vectors.resolution) == (
        "", "tests/advise/model.py:vectors", 0)
    assert "inputs=tests/advise/model.py:vectors" in vectors.name and " r0 " not in vectors.name
    with pytest.raises(ProfileError, match="give input_shape or inputs, not both"):
        _cells(f'[studies.s]\nmodel = "{MODEL}"\ninput_shape = "3,8,8"\n'
               'inputs = "tests/advise/model.py:vectors"\n')


@pytest.mark.parametrize(("extra", "message"), [
    ('input_shape = "3,32,64"\nshapes = "dynamic"\n', "is not square"),
    ('inputs = "tests/advise/model.py:vectors"\nshapes = "dynamic"\n',
     "valid shapes here: static, ragged"),
    ('model_source = "abc"\n', "unknown key 'model_source'"),
    ('inputs = "nowhere.py:fn"\n', "there is no file nowhere.py"),
    ('loss = "not a spec"\n', "is not of the form"),
])
def test_bad_user_model_axes_are_refused_with_one_line(extra: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message) as info:
        _cells(f'[studies.s]\nmodel = "{MODEL}"\n{extra}')
    assert "\n" not in str(info.value)


def test_a_non_square_shape_keeps_its_height_and_width() -> None:
    cell = _cells(f'[studies.s]\nmodel = "{MODEL}"\ninput_shape = "1,28,56"\n')[0]
    assert (cell.input_shape, cell.resolution, cell.schedule()) == ("1,28,56", 28, [(1, 28)])


def test_a_missing_file_is_refused_before_anything_runs() -> None:
    with pytest.raises(ProfileError, match="there is no file"):
        _cells('[studies.s]\nmodel = "missing/model.py:build"\n')
    matrix.check_models(_profile(f'[studies.s]\nmodel = "{MODEL}"\n'), ["resnet18"])  # not
    # torchvision's to check: the probe answers for it


def _probe(*infos: ModelInfo) -> Probe:
    return Probe({"machine": "m", "fingerprint_id": "f"}, ["resnet18"], False,
                 {"cpu": ["bfloat16"]}, list(infos))


def test_the_probe_checks_each_model_and_shape_once_in_its_hardest_mode() -> None:
    body = DEFAULTS + """
[studies.s]
mode = ["infer", "train"]
shapes = ["static", "dynamic"]
shape_count = 3
device = ["cpu", "cuda"]
"""
    checks = usermodels.checks(_cells(body))
    assert sorted(c.input_shape for c in checks) == ["3,16,16", "3,32,32", "3,48,48"]
    assert {(c.mode, c.device) for c in checks} == {("train", "cpu")}
    cuda_only = usermodels.checks(_cells(body.replace('["cpu", "cuda"]', '"cuda"')))
    assert {c.device for c in cuda_only} == {"cuda"}
    assert usermodels.checks(_cells('[studies.s]\nmodel = "resnet18"\n')) == []


def test_binding_fills_the_source_and_a_failure_is_one_line() -> None:
    profile = _profile(f'[studies.s]\nmodel = ["{MODEL}", "resnet18"]\ninput_shape = "3,32,32"\n')
    check = usermodels.checks(profile.studies[0].cells)[0]
    bound = usermodels.bind(profile, _probe(ModelInfo(check, source="ecfe4f0842",
                                                      flops_per_sample=1e6)))
    user, tv = bound.studies[0].cells
    assert (user.model_source, tv.model_source) == ("ecfe4f0842", "")
    assert user.cell_id != profile.studies[0].cells[0].cell_id
    assert usermodels.flops_for(_probe(ModelInfo(check, flops_per_sample=1e6)), user) == 1e6
    broken = _probe(ModelInfo(check, error="build() raised ValueError: boom"))
    with pytest.raises(ProfileError, match=rf"^model {MODEL}: build\(\) raised ValueError: boom$"):
        usermodels.bind(profile, broken)


def test_identities_go_to_env_json_and_a_changed_source_refuses_a_resume() -> None:
    check = ModelCheck(MODEL, "3,32,32")
    probe = _probe(ModelInfo(check, source="aaa", files={"tests/advise/model.py": "aaa"}),
                   ModelInfo(replace(check, input_shape="3,64,64"), source="aaa"))
    ids = usermodels.identities(probe)
    assert ids == [{"model": MODEL, "inputs": "", "loss": "", "model_source": "aaa",
                    "files": {"tests/advise/model.py": "aaa"}}]
    old = {"user_models": ids}
    usermodels.check_resume(old, {"user_models": ids}, "run")  # the same code: fine
    usermodels.check_resume(None, {"user_models": ids}, "run")  # a new run: fine
    changed = [{**ids[0], "model_source": "bbb"}]
    with pytest.raises(ProfileError, match="changed since run was started"):
        usermodels.check_resume(old, {"user_models": changed}, "run")


def test_probe_answers_cross_the_process_boundary() -> None:
    info = ModelInfo(ModelCheck(MODEL, "3,32,32", mode="train"), source="s", files={"f": "s"},
                     input_ndim=4, flops_per_sample=2.5, note="")
    record = Record(probe=_probe(info))
    back = Record.from_json(record.to_json())
    assert back.probe == record.probe and back.probe is not None
    assert back.probe.user_models[0].check.mode == "train"


def test_a_failed_inputs_or_loss_callable_is_named_instead_of_the_model() -> None:
    profile = _profile(f'[studies.s]\nmodel = "{MODEL}"\nmode = "train"\n'
                       f'inputs = "tests/advise/model.py:vectors"\n'
                       f'loss = "tests/advise/model.py:squared_error"\n')
    (check,) = usermodels.checks(profile.studies[0].cells)
    for what in ("inputs", "loss"):
        text = getattr(check, what)
        error = f"{what} {text}: tests/advise/model.py has no x"
        with pytest.raises(ProfileError, match=rf"^{what} {text}: tests/advise/model\.py has "):
            usermodels.bind(profile, _probe(ModelInfo(check, error=error)))
    with pytest.raises(ProfileError, match=rf"^model {MODEL}: inputs nowhere"):  # not its own
        usermodels.bind(profile, _probe(ModelInfo(check, error="inputs nowhere: ...")))


def test_a_probe_that_died_names_the_model_it_was_checking(tmp_path: Path) -> None:
    log = tmp_path / "probe.log"
    log.write_text(f"{modelspec.CHECKING}a.py:one\n{modelspec.CHECKED}a.py:one\n"
                   f"{modelspec.CHECKING}b.py:two\nsome output of its own\n")
    assert usermodels.being_checked(log) == "b.py:two"
    assert usermodels.probe_death(log, "crash", "exit code 1 without a result; last output: "
                                  "some output of its own") == (
        "the probe died while checking model b.py:two: exit code 1 without a result; last "
        "output: some output of its own")
    log.write_text(f"{modelspec.CHECKING}b.py:two\n")  # the marker itself is no output
    assert usermodels.probe_death(log, "crash", f"signal SIGSEGV without a result; last output: "
                                  f"{modelspec.CHECKING}b.py:two") == (
        "the probe died while checking model b.py:two: signal SIGSEGV without a result")
    log.write_text(f"{modelspec.CHECKING}a.py:one\n{modelspec.CHECKED}a.py:one\n")
    assert usermodels.probe_death(log, "crash", "exit code 1") == ""  # between two checks
    assert usermodels.probe_death(tmp_path / "none.log", "crash", "exit code 1") == ""
