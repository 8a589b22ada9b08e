"""Profiles, studies and cells: pure, no torch."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pytest

from bench.run.plan import matrix, profiles
from bench.run.plan.matrix import Cell, ProfileError
from bench.run.plan.profiles import load_profile, parse_profile


def test_every_shipped_profile_loads_and_has_unique_cells() -> None:
    names = profiles.shipped_profiles()
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
    # an axis added later keeps the old ids at its default, and separates the cells elsewhere
    assert Cell(kernel_cache="fresh").cell_id == "adf637ecfe"
    warm = Cell(kernel_cache="warm")
    assert warm.cell_id != Cell().cell_id and warm.name.endswith("cache=warm")


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
    ('[studies.s]\nbatch_size = 0', "batch_size must be an integer from 1 to 65536, got 0"),
    ('[studies.s]\nreplicates = "3"', "setting replicates must be int"),
    ('[defaults]\nfoo = 1\n[studies.s]', "unknown key 'foo'"),
    ('[profile]\n[other]', "unknown top-level key(s) other"),
    ('[profile]', "needs at least one [studies.NAME] table"),
    ('[profile]\ndescription = 5\n[studies.s]', "[profile]: description must be text in quotes"),
    ('[profile]\ndescripton = "x"\n[studies.s]', "unknown key(s) 'descripton'; valid keys: "
     "description"),
    ('profile = "gpu"\n[studies.s]', "[profile]: must be a table"),
    ('[pace]\nwindow_s = 0\n[studies.s]', "[pace]: pace.window_s must be a finite number "
     "from 0.1 to 1.8, got 0"),
    ('[pace]\nwindow_s = 5\n[studies.s]', "pace.window_s must be a finite number from 0.1 to "
     "1.8, got 5"),
    ('[pace]\nwindow = 0.3\n[studies.s]', "[pace]: unknown key 'window'; valid keys: "
     "window_s"),
    ('pace = 0.3\n[studies.s]', "[pace]: must be a table, e.g. window_s = 0.3"),
    ('[studies.s]\ndescription = ["a"]', "[studies.s]: description must be text in quotes"),
    ('[studies.s]\nkind = "ceiling"\nmodel = "fft"', "unknown ceiling op 'fft'"),
    # "shared" only describes rows from before per-replicate caches; nobody can ask for it
    ('[studies.s]\nkernel_cache = "shared"', "unknown kernel_cache 'shared'; valid choices: "
     "fresh, warm"),
])
def test_bad_profiles_fail_with_one_clear_line(body: str, needle: str) -> None:
    with pytest.raises(ProfileError) as err:
        _profile(body)
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_profile_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'nosuch'; valid choices: "
                                           "compile, contrib, cpu, full"):
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


#: Beyond the axis, what the report's pairing key leaves out (see bench.report.analysis.pairs).
_UNPAIRED = {"cudnn_benchmark": {"cudnn_benchmark_limit"},
             "device": {"cpu_threads", "cudnn_benchmark", "cudnn_deterministic",
                        "cudnn_benchmark_limit"}}


def _has_pair(cells: list[Cell], axis: str, base: str, variant: str) -> bool:
    """Whether two cells differ in ``axis`` alone (the report only compares such pairs)."""
    skip = {axis, "kind", "shape_count", *_UNPAIRED.get(axis, ())}

    def rest(c: Cell) -> tuple[object, ...]:
        return tuple(v for k, v in asdict(c).items() if k not in skip)

    bases = {rest(c) for c in cells if str(getattr(c, axis)) == base}
    return any(rest(c) in bases for c in cells if str(getattr(c, axis)) == variant)


def test_gpu_profile_answers_every_gpu_question() -> None:
    """Each decision the site makes for a GPU needs cells that differ in that setting alone."""
    p = load_profile("gpu")
    cells = [c for _, c in p.planned() if c.kind == "model"]
    for axis, base, variant in [("cudnn_benchmark", "off", "on"),
                                ("cudnn_deterministic", "off", "on"),
                                ("precision", "fp32", "fp32-strict"),
                                ("precision", "fp32", "amp-bf16"),
                                ("memory_format", "nchw", "channels_last"),
                                ("shapes", "static", "dynamic"),
                                ("device", "cpu", "cuda")]:
        assert _has_pair(cells, axis, base, variant), (axis, base, variant)
    # the questions the site is asked, each with cudnn.benchmark off and on: where cuDNN's
    # heuristics are weakest (strict fp32, ConvNeXt's depthwise convolutions), the ViT control,
    # the usual configurations of ResNet-50, cycled shapes, and both kernel-cache states
    def both(**axes: object) -> bool:
        found = {c.cudnn_benchmark for c in cells if c.device == "cuda"
                 and all(getattr(c, k) == v for k, v in axes.items())}
        return found == {"off", "on"}

    assert both(model="resnet50", mode="train", precision="fp32-strict")
    assert both(model="convnext_tiny", mode="train")
    assert both(model="vit_b_16", mode="train")
    for mode in ("infer", "train"):
        assert both(model="resnet50", mode=mode, precision="fp32", memory_format="nchw",
                    shapes="static", kernel_cache="fresh", batch_size=128)
        assert both(model="resnet50", mode=mode, precision="amp-bf16",
                    memory_format="channels_last", batch_size=128)
    assert both(model="resnet50", shapes="dynamic") and all(
        c.shape_count >= 3 for c in cells if c.shapes == "dynamic")
    for cache in ("fresh", "warm"):
        assert both(model="resnet50", mode="train", kernel_cache=cache)
    cvg = {c.batch_size for c in cells if c.device == "cpu"}
    assert {1, 128} <= cvg
    # all cores, like for like; the CPU at its best (study d2) one thread per physical core
    assert all(c.cpu_threads is None for c in cells if c.device == "cpu"
               and c.precision == "fp32")
    checked = {(c.cudnn_deterministic, c.cudnn_benchmark)
               for s in p.studies if s.settings.repro for c in s.cells}
    # the bitwise re-run: deterministic off and on, and benchmark on with deterministic off
    # (the claim that benchmark makes re-runs differ)
    assert {("off", "off"), ("on", "off"), ("off", "on")} <= checked
    ceil = {c.model for s in p.studies for c in s.cells if c.kind == "ceiling"}
    assert {"matmul-bf16", "matmul-tf32", "matmul-fp32", "copy"} <= ceil
    assert min(s.settings.replicates for s in p.studies) >= 3


def test_gpu_profile_takes_about_ten_minutes_of_an_h200(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The estimate (from the H200's measured costs) for a 16-core CUDA host like that one:
    about eight minutes for studies (a)-(e), plus each side's best-settings cells, the energy
    window's 1 s minimum and the feeding studies (about 2 minutes: each replicate takes its
    workers' start-up batches untimed, then times two whole rounds of them): two budgeted
    sittings of a 9-minute slot. ``cpu_threads = "physical"`` is read from the host that loads
    the profile, so the host's 16 cores are its physical ones here too."""
    from bench.run.plan import cpuinfo, estimate
    from bench.run.plan.jobs import plan
    from bench.run.protocol import Probe

    monkeypatch.setattr(cpuinfo, "physical_cores", lambda *_: 16)
    jobs = plan(load_profile("gpu"))
    seconds = sum(estimate.jobs_s(jobs, Probe({"cpu": {"affinity": 16}}, [], True)))
    assert 6 * 60 < seconds <= 12 * 60, seconds / 60


def test_the_estimate_never_stops_a_replicate_before_min_iters_or_after_max_iters() -> None:
    """The stopping rule ends a slow cell at max_time_s only once min_iters are done, so its
    estimate cannot stop sooner; nor can it run past max_iters."""
    from bench.run.plan import estimate
    from bench.run.plan.matrix import Settings

    cpu = Cell(model="resnet50", device="cpu", batch_size=128)
    t = estimate.iteration_s(cpu, 16)
    assert t > 1.0  # slower than max_time_s below: only min_iters can end it
    slow = Settings(min_iters=5, min_time_s=0.1, max_time_s=0.5, warmup_iters=0)
    fixed = estimate.replicate_s(cpu, replace(slow, min_iters=1), 16)
    assert estimate.replicate_s(cpu, slow, 16) - fixed == pytest.approx(4 * t)
    quick = Cell(model="resnet18", device="cuda", batch_size=1)
    capped = Settings(min_iters=1, min_time_s=10.0, max_time_s=10.0, max_iters=20)
    t = estimate.iteration_s(quick, 16)
    assert estimate.replicate_s(quick, capped, 16) - estimate.replicate_s(
        quick, replace(capped, max_iters=1), 16) == pytest.approx(19 * t)
    # a window stretched for the energy counter is bounded by its time, not the study's cap
    short = replace(capped, max_iters=1, min_time_s=0.0, max_time_s=0.0)
    assert estimate.replicate_s(quick, short, 16) - estimate.replicate_s(
        quick, replace(short, max_iters=2), 16) == pytest.approx(0.0)


def test_has_pair_needs_a_single_axis_difference() -> None:
    a = Cell(model="resnet50", device="cuda")
    assert _has_pair([a, replace(a, cudnn_benchmark="on")], "cudnn_benchmark", "off", "on")
    assert not _has_pair([a, replace(a, precision="amp-bf16", memory_format="channels_last")],
                         "precision", "fp32", "amp-bf16")


def test_compile_profile_fits_about_eight_minutes_of_an_h200() -> None:
    """The compile profile's estimate for a 16-core CUDA host (its GPU compile costs are guesses
    until a GPU run measures them; the profile says so)."""
    from bench.run.plan import estimate
    from bench.run.plan.jobs import plan
    from bench.run.protocol import Probe

    p = load_profile("compile")
    jobs = plan(p)
    seconds = sum(estimate.jobs_s(jobs, Probe({"cpu": {"affinity": 16}}, [], True)))
    assert 6 * 60 < seconds <= 12 * 60, seconds / 60
    modes = {c.compile for s in p.studies for c in s.cells}
    assert {"off", "default", "reduce-overhead", "max-autotune-no-cudagraphs"} <= modes
    assert {c.kernel_cache for s in p.studies for c in s.cells if c.compile != "off"} == {
        "fresh", "warm"}


def test_cpu_profile_has_a_compile_study() -> None:
    p = load_profile("cpu")
    cells = [c for s in p.studies if s.name == "compile" for c in s.cells]
    assert {(c.compile, c.kernel_cache) for c in cells} == {
        (m, k) for m in ("off", "default") for k in ("fresh", "warm")}


@pytest.mark.parametrize(("line", "needle"), [
    ("batch_size = 1e9", "batch_size must be an integer from 1 to 65536, got 1000000000.0"),
    ("batch_size = 1000000000", "batch_size must be an integer from 1 to 65536, got 1000000000"),
    ("resolution = 100000", "resolution must be an integer from 1 to 16384, got 100000"),
    ("ci_target = nan", "setting ci_target must be a finite number from 0 to 1, got nan"),
    ("max_time_s = inf", "setting max_time_s must be a finite number from 0 to 86400, got inf"),
    ("min_time_s = -1", "setting min_time_s must be a finite number from 0 to 86400, got -1"),
    ("warmup_iters = -3", "setting warmup_iters must be an integer from 0 to 100000, got -3"),
    ("timeout_s = 0", "setting timeout_s must be a finite number from 0.1 to 604800, got 0"),
    ("cpu_threads = 0", "cpu_threads must be an integer from 1 to 4096, got 0"),
    ("shape_count = [4, 1000]", "shape_count must be an integer from 1 to 64, got 1000"),
    ("min_time_s = 5.0\nmax_time_s = 0.5",
     "min_time_s 5 is above max_time_s 0.5; valid: min_time_s <= max_time_s"),
])
def test_numbers_out_of_range_are_refused_at_dry_run_with_the_valid_range(
        tmp_path: Path, line: str, needle: str) -> None:
    from .conftest import run_cli

    profile = tmp_path / "p.toml"
    profile.write_text(f"[defaults]\n{line}\n[studies.s]\nmodel = 'resnet18'\n")
    proc = run_cli("run", "--profile", str(profile), "--dry-run")
    assert proc.returncode == 2
    (only,) = proc.stderr.strip().splitlines()
    assert only.startswith("error: p [") and only.endswith(f"]: {needle}"), only


@pytest.mark.parametrize(("body", "blamed"), [
    ("[defaults]\nbatch_size = 1e9\n[studies.modes]\nmodel = 'resnet18'\n", "p [defaults]"),
    ("[defaults]\nbatch_size = []\n[studies.modes]\nmodel = 'resnet18'\n", "p [defaults]"),
    ("[defaults]\nbatch_size = 8\n[studies.modes]\nmodel = 'resnet18'\nbatch_size = 1e9\n",
     "p [studies.modes]"),
])
def test_a_bad_axis_value_is_blamed_on_the_table_that_holds_it(
        tmp_path: Path, body: str, blamed: str) -> None:
    """A value inherited from [defaults] is the defaults' to fix, not the study's."""
    (tmp_path / "p.toml").write_text(body)
    with pytest.raises(ProfileError) as info:
        load_profile(str(tmp_path / "p.toml"))
    assert str(info.value).startswith(f"{blamed}: "), info.value
