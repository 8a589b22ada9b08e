"""The torch.compile page and the Compare page's compiled cells, rendered from small trees.

The trees are shaped like ``bench/profiles/compile.toml`` (its cells, read from the profile):
reduce-overhead and the cudnn.benchmark study are measured with a warm compile cache only,
and the new-shape study with dynamic=auto and true at one replicate each. Every sentence must
be true of the rows it links.
"""

from __future__ import annotations

import html
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from bench.report.analysis import analyse, machines
from bench.report.input.load import load_reports
from bench.run.plan.matrix import Cell
from bench.run.plan.profiles import load_profile

from .builders import axes, cell, env_for, render_tree, synth

ROOT = Path(__file__).resolve().parents[2]
GPU = env_for("gpu-box", "run-gpu")
CPU = env_for("laptop", "run-cpu", gpu=False)

#: Steady seconds per step, by compile mode: reduce-overhead is the fastest.
STEP = {"off": 0.100, "default": 0.085, "reduce-overhead": 0.070,
        "max-autotune-no-cudagraphs": 0.060}


def _row_axes(c: Cell) -> dict[str, Any]:
    """A profile cell's axis columns, as the runner writes them."""
    out = {k: v for k, v in asdict(c).items() if k not in ("kind", "shape_count")}
    return {k: ("" if v is None else v) for k, v in out.items()}


def _cold(c: Cell) -> float:
    """Cold passes: eager 0.5 s; compiling 40 s with an empty cache, 4 s with a warm one; a
    cycled schedule under dynamic=auto recompiles once (+20 s), under true never (+2 s)."""
    if c.compile == "off":
        return 0.5
    cold = 40.5 if c.kernel_cache == "fresh" else 4.5
    if c.shapes == "dynamic":
        cold += 20.0 if c.compile_dynamic == "auto" else 2.0
    return cold


def _compiles(c: Cell) -> int:
    return 2 if c.shapes == "dynamic" and c.compile_dynamic == "auto" else 1


def profile_rows(env: dict[str, Any] = GPU) -> list[dict[str, object]]:
    """Rows for every cell of the shipped ``compile`` profile, each study with its replicates."""
    rows: list[dict[str, object]] = []
    for study in load_profile("compile").studies:
        for c in study.cells:
            t = STEP[c.compile] * (0.8 if c.cudnn_benchmark == "on" and c.compile == "off"
                                   else 1.0)
            extra: dict[str, object] = {"cold_pass_s": _cold(c), "shape_count": c.shape_count}
            if c.compile != "off":
                extra.update(compile_time_s=_cold(c) - 0.5, compiles=_compiles(c),
                             recompiles=0, steady_graph_breaks=0)
            rows += cell(env, _row_axes(c), [t] * study.settings.replicates, **extra)
    return rows


def _render(tmp_path: Path, runs: list[tuple[dict[str, Any], list[dict[str, object]]]]
            ) -> Path:
    root = tmp_path / "reports"
    for env, rows in runs:
        synth.write_run(root / env["machine"] / env["run_id"], rows, synth.samples_for(rows),
                        env)
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    return generated


def _page(tmp_path: Path, rows: list[dict[str, object]], env: dict[str, Any] = GPU,
          name: str = "torch-compile.md") -> str:
    return html.unescape((_render(tmp_path, [(env, rows)]) / name).read_text(encoding="utf-8"))


def _advice(page: str, start: str) -> str:
    """A workload's sentence, once on the page: in its machine's section, or, for the first
    workload, only in the machine's answer at the top."""
    found = [ln for ln in page.splitlines()
             if ln.startswith(f"- {start}") or f"** for {start}" in ln]
    assert len(found) == 1, found
    return found[0]


def _anchor(rows: list[dict[str, object]], **kw: Any) -> str:
    """The row anchor of the one cell whose axes match ``kw``."""
    ids = {(str(r["fingerprint_id"])[:8], r["cell_id"]) for r in rows
           if all(r[k] == v for k, v in kw.items())}
    ((fp8, cid),) = ids
    return f"#cell-{fp8}-{cid}"


@pytest.fixture(scope="module")
def compile_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, object]]]:
    rows = profile_rows()
    return _page(tmp_path_factory.mktemp("compile-profile"), rows), rows


# -- 1. a mode measured only with a warm cache is judged, and says so ------------------------

def test_a_faster_mode_measured_only_warm_is_the_advice(compile_page):
    page, _ = compile_page
    r50 = _advice(page, "resnet50")
    assert "use reduce-overhead, the mode with the highest speedup measured among those " \
           "clearly faster than eager." in r50
    assert "With a warm kernel cache it runs at 1.43× the eager speed" in r50
    assert "it was not measured with a fresh kernel cache (what a first run pays)" in r50
    assert "Also clearly faster than eager: default 1.18× with a fresh cache" in r50


def test_a_workload_measured_only_warm_is_judged_not_called_insufficient(compile_page):
    page, _ = compile_page
    for bm in ("off", "on"):
        line = _advice(page, f"resnet18 · infer · benchmark {bm}")
        assert "not enough ok replicates" not in line
        assert "use max-autotune-no-cudagraphs, the only mode measured. With a warm kernel " \
               "cache it runs at" in line
        assert "not measured with a fresh kernel cache" in line


# -- 5. each figure links the rows it comes from ---------------------------------------------

def _clauses(line: str) -> list[tuple[str, set[str]]]:
    """(text, anchors linked right after it) for each ``… (rows: …)`` clause of a sentence."""
    pieces = line.split("(rows: ")
    out, text = [], pieces[0]
    for piece in pieces[1:]:
        anchors = re.findall(r"#cell-[0-9a-f]{8}-[0-9a-f]+", piece)
        out.append((text, set(anchors)))
        text = piece.rsplit(anchors[-1], 1)[1] if anchors else piece
    return out


def test_each_cache_figure_links_its_own_rows(compile_page):
    page, rows = compile_page
    r50 = dict(model="resnet50", precision="amp-bf16")
    warm_eager = _anchor(rows, **r50, compile="off", kernel_cache="warm")
    warm_ro = _anchor(rows, **r50, compile="reduce-overhead", kernel_cache="warm")
    fresh_eager = _anchor(rows, **r50, compile="off", kernel_cache="fresh")
    fresh_default = _anchor(rows, **r50, compile="default", kernel_cache="fresh")
    warm_default = _anchor(rows, **r50, compile="default", kernel_cache="warm")
    clauses = _clauses(_advice(page, "resnet50"))
    assert [links for _, links in clauses] == [
        {warm_eager, warm_ro}, {fresh_eager, fresh_default}, {warm_eager, warm_default}]
    assert "With a warm kernel cache it runs at 1.43×" in clauses[0][0]
    assert "default 1.18× with a fresh cache" in clauses[1][0]
    assert "default 1.18× with a warm cache" in clauses[2][0]


def test_a_mode_measured_fresh_and_warm_quotes_and_links_both(tmp_path):
    """The cpu profile's shape: default against eager with an empty and a warm cache. The warm
    figures used to be quoted beside the fresh rows' links only."""
    rows = []
    for cache, cold in (("fresh", 20.5), ("warm", 2.5)):
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache), [0.2] * 3,
                     cold_pass_s=0.5)
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache,
                               compile="default"), [0.14] * 3, cold_pass_s=cold)
    line = _advice(_page(tmp_path, rows, CPU), "resnet50")
    (fresh, fresh_links), (warm, warm_links) = _clauses(line)
    assert "With a fresh kernel cache it runs at 1.43× the eager speed" in fresh
    assert "costs +20.0 s before the first step (slowest replicate) and pays back after 334 " \
           "steps" in fresh  # 20 s / 0.06 s saved per step
    assert "with a warm kernel cache it runs at 1.43×" in warm
    assert "costs +2.00 s before the first step (slowest replicate) and pays back after 34 " \
           "steps" in warm
    assert fresh_links == {_anchor(rows, kernel_cache="fresh", compile=m) for m in
                           ("off", "default")}
    assert warm_links == {_anchor(rows, kernel_cache="warm", compile=m) for m in
                          ("off", "default")}
    assert "not measured" not in line


def test_a_cache_not_clearly_faster_gives_its_interval(tmp_path):
    """A fresh cache whose speedup's interval reaches below 1 + δ: the figure comes with its
    interval, as every figure on the site does."""
    rows = []
    for cache, compiled in (("fresh", [0.14, 0.2, 0.26]), ("warm", [0.14] * 3)):
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache), [0.2] * 3,
                     cold_pass_s=0.5)
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache,
                               compile="default"), compiled, cold_pass_s=2.5)
    line = _advice(_page(tmp_path, rows, CPU), "resnet50")
    assert re.search(r"With a fresh kernel cache it was not clearly faster \(1\.\d\d×, 95% CI "
                     r"0\.\d+–\d\.\d+×, no clear difference\)", line), line


# -- 6. a new shape under compile, and cudnn.benchmark under compile -------------------------

def test_dynamic_true_is_compared_with_auto(compile_page):
    page, rows = compile_page
    section = page.split('??? note "New input shapes"', 1)[1].split("??? note", 1)[0]
    (line,) = [ln.strip() for ln in section.splitlines() if ln.strip().startswith("- ")]
    assert line.startswith("- resnet18 · infer · compile default · dynamic shapes (3 shapes): ")
    # (static 40.5 s → cycled 60.5 s) / 2 extra shapes, and (40.5 → 42.5) / 2
    assert "dynamic=auto: +10.0 s of cold pass per extra shape against its static cell, " \
           "compiled 2 times against its static cell's 1" in line
    assert "dynamic=true: +1.00 s of cold pass per extra shape against its static cell, " \
           "compiled 1 time against its static cell's 1" in line
    assert "Of the two, dynamic=true avoided the recompile that dynamic=auto paid for the new " \
           "shapes; dynamic=true cost 9.00 s less of cold pass per extra shape." in line
    assert "No cycled cell recompiled in the steady state." in line
    assert "One replicate each" in line
    shapes = dict(model="resnet18", batch_size=32)
    linked = set(re.findall(r"#cell-[0-9a-f]{8}-[0-9a-f]+", line))
    assert linked == {_anchor(rows, **shapes, shapes=s, compile_dynamic=d)
                      for s in ("static", "dynamic") for d in ("auto", "true")}
    assert "| Compiles cycled / static |" in section
    assert "| 2 / 1 |" in section and "| 1 / 1 |" in section


def test_dynamic_true_that_recompiles_too_is_said_not_to_avoid_it(tmp_path):
    base = dict(device="cuda", mode="infer", compile="default")
    rows = []
    for dyn in ("auto", "true"):
        for shapes, n in (("static", 1), ("dynamic", 3)):
            rows += cell(GPU, axes(**base, shapes=shapes, compile_dynamic=dyn), [0.05],
                         shape_count=n, cold_pass_s=40.0 + (n - 1) * 5.0, compiles=n,
                         recompiles=0)
    line = next(ln for ln in _page(tmp_path, rows).splitlines() if "dynamic=auto:" in ln)
    assert "Of the two, dynamic=true did not avoid recompiling for the new shapes." in line
    assert "less of cold pass" not in line  # the same cost per shape: neither is cheaper


def test_only_auto_measured_says_true_is_unknown(tmp_path):
    base = dict(device="cuda", mode="infer", compile="default")
    rows = cell(GPU, axes(**base), [0.05], cold_pass_s=40.0, compiles=1)
    rows += cell(GPU, axes(**base, shapes="dynamic"), [0.05], shape_count=3, cold_pass_s=60.0,
                 compiles=2)
    page = _page(tmp_path, rows)
    assert "No run here measured dynamic=true, so whether dynamic=true avoids the recompile " \
           "for a new shape is not known." in page


def test_cudnn_benchmark_under_compile_is_set_beside_the_same_switch_eagerly(compile_page):
    page, rows = compile_page
    section = page.split('??? note "cudnn.benchmark in a compiled model"', 1)[1]
    (line,) = [ln.strip() for ln in section.splitlines() if ln.strip().startswith("- ")]
    assert line.startswith("- resnet18 · infer · compile max-autotune-no-cudagraphs: with "
                           "cudnn.benchmark on, 1.00× the speed with it off")
    assert "no clear difference" in line and "eagerly 1.25×, faster" in line
    assert line.endswith(": under max-autotune-no-cudagraphs it was no longer clearly faster "
                         "here.")
    r18 = dict(model="resnet18", batch_size=128)
    assert set(re.findall(r"#cell-[0-9a-f]{8}-[0-9a-f]+", line)) == {
        _anchor(rows, **r18, compile=m, cudnn_benchmark=bm)
        for m in ("off", "max-autotune-no-cudagraphs") for bm in ("off", "on")}
    assert "| 1.25× (faster) |" in section


def test_a_machine_without_compiled_benchmark_pairs_says_so(tmp_path):
    cpu = cell(CPU, axes(device="cpu", mode="infer"), [0.2] * 3, cold_pass_s=0.5)
    cpu += cell(CPU, axes(device="cpu", mode="infer", compile="default"), [0.15] * 3,
                cold_pass_s=20.5)
    gpu = cell(GPU, axes(mode="infer"), [0.2] * 3, cold_pass_s=0.5)
    gpu += cell(GPU, axes(mode="infer", compile="default"), [0.15] * 3, cold_pass_s=20.5)
    generated = _render(tmp_path, [(CPU, cpu), (GPU, gpu)])
    page = html.unescape((generated / "torch-compile.md").read_text(encoding="utf-8"))
    laptop, box = (page.split("## On laptop", 1)[1].split("## On gpu-box")[0],
                   page.split("## On gpu-box", 1)[1])
    if "## On laptop" in box:  # machines in either order
        box = box.split("## On laptop")[0]
    assert "Not measured on this machine: cudnn.benchmark is a cuDNN switch, and no compiled " \
           "cell here ran on a CUDA device" in laptop
    assert "Not measured on this machine: no two compiled cells here differ only in " \
           "cudnn.benchmark" in box


# -- 7. the break-even columns say what they are computed from -------------------------------

def test_the_break_even_columns_name_the_figures_they_use(tmp_path):
    """Median extra cold pass 20 s over a 0.06 s saving: 334 steps; the slowest replicate's
    22 s over the same saving (no interval: every replicate alike) is the range's top, 367."""
    rows = cell(CPU, axes(device="cpu", mode="infer"), [0.2] * 3, cold_pass_s=0.5)
    rows += [{**r, "cold_pass_s": c} for r, c in zip(
        cell(CPU, axes(device="cpu", mode="infer", compile="default"), [0.14] * 3),
        (19.5, 20.5, 22.5))]
    page = _page(tmp_path, rows, CPU)
    header = next(ln.strip() for ln in page.splitlines()
                  if ln.strip().startswith("| Configuration | Mode"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    (row,) = [ln.strip() for ln in page.splitlines() if ln.strip().startswith("| resnet50")]
    got = dict(zip(cols, [c.strip() for c in row.strip("|").split("|")]))
    assert got["Break-even"] == "334 (334 to 367)"  # the median, and the range beside it
    methodology = (ROOT / "site_src" / "methodology.md").read_text(encoding="utf-8")
    section = methodology.split("### torch.compile", 1)[1].split("\n### ", 1)[0]
    assert "the slowest\nreplicate's cold pass against the saving per step" not in section
    assert "break-even\nis the median extra cold pass over the median saving per step" in section


# -- 2. the Compare page keeps compiled and eager cells apart --------------------------------

def test_compare_sets_compiled_cells_only_beside_compiled_ones(tmp_path):
    cpu = cell(CPU, axes(device="cpu", mode="infer", batch_size=8), [0.2] * 3)
    cpu += cell(CPU, axes(device="cpu", mode="infer", batch_size=8, compile="default"),
                [0.15] * 3)
    gpu = cell(GPU, axes(mode="infer", batch_size=8), [0.1] * 3)
    generated = _render(tmp_path, [(CPU, cpu), (GPU, gpu)])
    page = html.unescape((generated / "compare.md").read_text(encoding="utf-8"))
    (eager,) = [ln for ln in page.splitlines() if ln.startswith("| resnet50 · infer · eager |")]
    (compiled,) = [ln for ln in page.splitlines()
                   if ln.startswith("| resnet50 · infer · compile default |")]
    cpu_eager = _anchor(cpu, compile="off")
    cpu_compiled = _anchor(cpu, compile="default")
    assert "[40.0 samples/s]" in eager and cpu_eager in eager and cpu_compiled not in eager
    assert "[80.0 samples/s]" in eager  # the GPU's eager cell, beside the CPU's eager one
    assert "[53.3 samples/s]" in compiled and cpu_compiled in compiled
    assert "—" in compiled  # the GPU measured no compiled cell: nothing to set beside it


def test_best_throughput_per_compile_mode(write_tree):
    rows = cell(CPU, axes(device="cpu", mode="infer"), [0.2] * 3)
    rows += cell(CPU, axes(device="cpu", mode="infer", compile="default"), [0.15] * 3)
    cells = analyse(load_reports(write_tree([(CPU, rows, [])]))).cells
    over_all = machines.best_throughput(cells)
    assert tuple(over_all.columns) == machines.BEST_COLUMNS
    (r,) = over_all.itertuples()
    assert (r.compile, r.compile_dynamic) == ("default", "auto")  # the best says how it ran
    key = machines.COMPILED_WORKLOAD_KEY
    apart = machines.best_throughput(cells, key)
    assert list(apart["compile"]) == ["default", "off"]
    assert set(key) - set(machines.WORKLOAD_KEY) == {"compile", "compile_dynamic"}


def test_the_fixtures_hold_the_compile_profiles_sections():
    """The committed fixtures (and so the golden pages) hold a compiled new-shape study at
    dynamic=auto and true, cudnn.benchmark under compile, and a mode measured warm only."""
    from bench.report.analysis.compiled import compiled_only

    from .builders import FIXTURE_REPORTS

    a = analyse(load_reports(FIXTURE_REPORTS))
    shapes = compiled_only(a.shapes)
    assert set(shapes["compile_dynamic"]) == {"auto", "true"}
    assert set(compiled_only(a.benchmark)["compile"]) == {"max-autotune-no-cudagraphs"}
    warm_only = set(a.compiled["variant_value"]) - set(
        a.compiled.loc[a.compiled["kernel_cache"] == "fresh", "variant_value"])
    assert warm_only == {"reduce-overhead", "max-autotune-no-cudagraphs"}


def test_each_thing_is_said_once_on_a_cpu_only_page(tmp_path):
    """The first workload's sentence was the machine's answer and again its section's first
    bullet, and every CPU machine's section said again that new shapes and cudnn.benchmark
    were not measured: now the answer alone, and one note for the page."""
    rows = []
    for cache in ("fresh", "warm"):
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache), [0.2] * 3)
        rows += cell(CPU, axes(device="cpu", mode="infer", kernel_cache=cache,
                               compile="default"), [0.14] * 3, cold_pass_s=5.0)
    page = _page(tmp_path, rows, CPU)
    assert page.count("use default, the only mode measured") == 1
    assert page.count("Not measured on any machine here: no compiled cell cycled its input "
                      "shapes") == 1
    assert "Not measured on this machine" not in page
