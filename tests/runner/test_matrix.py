"""Profiles, studies and cells: pure, no torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import matrix
from bench.matrix import Cell, ProfileError, load_profile, parse_profile


def test_every_shipped_profile_loads_and_has_unique_cells() -> None:
    names = matrix.shipped_profiles()
    assert {"smoke", "cpu", "gpu", "full"} <= set(names)
    for name in names:
        p = load_profile(name)
        ids = [c.cell_id for _, c in p.planned()]
        assert len(ids) == len(set(ids)), name


def test_cell_id_is_stable_and_depends_only_on_axes() -> None:
    a = Cell(model="resnet50", device="cuda", cudnn_benchmark="on")
    b = Cell(model="resnet50", device="cuda", cudnn_benchmark="on")
    c = Cell(model="resnet50", device="cuda", cudnn_benchmark="off")
    assert a.cell_id == b.cell_id != c.cell_id
    assert len(a.cell_id) == 10
    # A regression guard: ids are published in URLs, so they must not drift between versions.
    assert Cell().cell_id == "adf637ecfe"


def _profile(body: str) -> matrix.Profile:
    import tomllib

    return parse_profile(tomllib.loads(body), "t")


def test_cpu_cells_do_not_multiply_over_cudnn_axes() -> None:
    p = _profile("""
[studies.s]
device = ["cpu", "cuda"]
cudnn_benchmark = ["off", "on"]
cudnn_deterministic = ["off", "on"]
""")
    cells = p.studies[0].cells
    cpu = [c for c in cells if c.device == "cpu"]
    cuda = [c for c in cells if c.device == "cuda"]
    assert len(cpu) == 1 and cpu[0].cudnn_benchmark == "n/a"
    assert len(cuda) == 4


def test_variants_move_together_and_product_covers_the_rest() -> None:
    p = _profile("""
[studies.s]
device = "cuda"
mode = ["infer", "train"]
variants = [{precision = "fp32"}, {precision = "amp-bf16", memory_format = "channels_last"}]
""")
    combos = {(c.mode, c.precision, c.memory_format) for c in p.studies[0].cells}
    assert combos == {("infer", "fp32", "nchw"), ("train", "fp32", "nchw"),
                      ("infer", "amp-bf16", "channels_last"),
                      ("train", "amp-bf16", "channels_last")}


def test_shared_cells_are_planned_once_by_the_first_study() -> None:
    p = _profile("""
[studies.a]
mode = ["infer", "train"]
[studies.b]
mode = "train"
batch_size = [1, 2]
""")
    planned = p.planned()
    assert len(planned) == 3
    assert [s.name for s, _ in planned] == ["a", "a", "b"]


@pytest.mark.parametrize(("body", "needle"), [
    ('[studies.s]\nprecision = "fp64"', "unknown precision 'fp64'; valid choices: fp32, "
     "fp32-strict, amp-bf16, amp-fp16"),
    ('[studies.s]\nmemory_format = "nhwc"', "valid choices: nchw, channels_last"),
    ('[studies.s]\nshapes = "wobbly"', "valid choices: static, dynamic, ragged"),
    ('[studies.s]\ndevice = "tpu"', "valid choices: cpu, cuda, mps"),
    ('[studies.s]\ncolour = "red"', "unknown key 'colour'"),
    ('[studies.s]\nbatch_size = 0', "batch_size must be a positive integer"),
    ('[studies.s]\nreplicates = "3"', "setting replicates must be int"),
    ('[defaults]\nfoo = 1\n[studies.s]', "unknown key 'foo'"),
    ('[profile]\n[other]', "unknown top-level key(s) other"),
    ('[profile]', "needs at least one [studies.NAME] table"),
    ('[studies.s]\nkind = "ceiling"\nmodel = "fft"', "unknown ceiling op 'fft'"),
])
def test_bad_profiles_fail_with_one_clear_line(body: str, needle: str) -> None:
    with pytest.raises(ProfileError) as err:
        _profile(body)
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_profile_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'nosuch'; valid choices: cpu, full"):
        load_profile("nosuch")


def test_malformed_toml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[studies.s\nmode = ")
    with pytest.raises(ProfileError, match="is not valid TOML"):
        load_profile(str(bad))


def test_unknown_model_is_refused_with_the_valid_choices() -> None:
    p = _profile('[studies.s]\nmodel = ["resnet18", "resnet9000"]')
    with pytest.raises(ProfileError, match=r"unknown model\(s\) resnet9000 .*valid choices: "
                                           r"alexnet, resnet18"):
        matrix.check_models(p, ["resnet18", "alexnet"])
    matrix.check_models(p, ["resnet18", "resnet9000"])


def test_only_selects_studies_and_refuses_unknown() -> None:
    p = load_profile("smoke")
    assert [s.name for s in matrix.select(p, ["cuda"]).studies] == ["cuda"]
    msg = "unknown study 'nope' in profile smoke; valid choices: modes"
    with pytest.raises(ProfileError, match=msg):
        matrix.select(p, ["nope"])


def test_shape_schedules() -> None:
    assert Cell(shapes="static").schedule() == [(1, 224)]
    dyn = Cell(shapes="dynamic", shape_count=4, batch_size=8).schedule()
    assert len(set(dyn)) == 4 and all(b == 8 for b, _ in dyn) and (8, 224) in dyn
    rag = Cell(shapes="ragged", batch_size=9).schedule()
    assert rag[:-1] == [(9, 224)] * 7 and rag[-1] == (3, 224)


def test_gpu_profile_covers_the_required_studies() -> None:
    p = load_profile("gpu")
    cells = {s.name: s.cells for s in p.studies}
    bench = cells["benchmark"]
    assert {c.model for c in bench} == {"resnet18", "resnet50", "mobilenet_v3_large",
                                        "convnext_tiny", "vit_b_16"}
    assert {(c.precision, c.memory_format) for c in bench} == {
        ("fp32", "nchw"), ("fp32-strict", "nchw"), ("amp-bf16", "channels_last")}
    assert {c.cudnn_benchmark for c in bench} == {"off", "on"}
    assert {c.shapes for c in cells["shapes"]} == {"static", "dynamic", "ragged"}
    det = p.studies[[s.name for s in p.studies].index("determinism")]
    assert det.settings.repro
    cvg = cells["cpu_vs_gpu"]
    assert {c.batch_size for c in cvg} == {1, 8, 32, 128}
    assert {c.device for c in cvg} == {"cpu", "cuda"}
    assert all(c.cpu_threads is None for c in cvg)  # all cores
    ceil = {c.model for s in p.studies for c in s.cells if c.kind == "ceiling"}
    assert {"matmul-bf16", "matmul-tf32", "matmul-fp32", "copy"} <= ceil
    assert min(s.settings.replicates for s in p.studies) >= 3
