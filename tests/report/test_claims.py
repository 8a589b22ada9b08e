"""Claims: each verdict comes from the rows. The same claim, fed rows that support it and rows
that contradict it, gets two verdicts; with no rows to answer from, it is "not measured here"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.report import analysis, claims
from bench.report.claims import rules
from bench.report.load import load_reports

from .builders import axes, cell, env_for, result_row

ENV = env_for("box", "run-1")
BY_ID = {c.id: c for c in claims.load_claims()}


def _verdict(write_tree: Any, claim: str, rows: list[dict[str, object]],
             env: dict[str, Any] = ENV, more: list[Any] = ()) -> claims.Verdict:
    root = write_tree([(env, rows, []), *more])
    (found,) = claims.evaluate(analysis.analyse(load_reports(root)), [BY_ID[claim]])
    return found


def _benchmark(on_factor: float, spread: tuple[float, float, float] = (1.0, 1.0, 1.0),
               env: dict[str, Any] = ENV, **over: Any) -> list[dict[str, object]]:
    off = [0.100, 0.101, 0.099]
    return (cell(env, axes(**over), off, cold_pass_s=0.5)
            + cell(env, axes(cudnn_benchmark="on", **over),
                   [t * on_factor * k for t, k in zip(off, spread)], cold_pass_s=4.0))


#: Replicates of the "on" side that scatter by ±25%: "no clear difference" with an interval
#: far wider than 1 ± δ, which shows neither a change nor its absence.
WIDE = (0.75, 1.0, 1.3)


def test_every_claim_has_a_rule_and_a_page_that_exists() -> None:
    assert len(BY_ID) == 10
    assert {c.analysis for c in BY_ID.values()} <= set(rules.RULES)
    pages = {"cudnn-benchmark", "dynamic-shapes", "determinism", "cpu-vs-gpu"}
    assert all(set(c.pages) <= pages and c.pages for c in BY_ID.values())


def test_a_claims_file_with_an_unknown_rule_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claims]]\nid = "x"\nclaim = "c"\nquestion = "q"\nanalysis = "oracle"\n')
    with pytest.raises(claims.ClaimsError, match="unknown analysis 'oracle'; valid choices:"):
        claims.load_claims(bad)


def test_with_no_rows_every_claim_is_not_measured_here(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    verdicts = claims.evaluate(analysis.analyse(load_reports(tmp_path / "empty")))
    assert {v.verdict for v in verdicts} == {claims.NOT_MEASURED}
    assert all(v.missing for v in verdicts), "each says what run would measure it"


def test_benchmark_with_static_shapes(write_tree: Any) -> None:
    helps = _verdict(write_tree, "benchmark-static", _benchmark(0.6))
    same = _verdict(write_tree, "benchmark-static", _benchmark(1.0))
    assert (helps.verdict, same.verdict) == (claims.SUPPORTED, claims.CONTRADICTED)
    assert "faster in 1 (resnet50 · train 1.67×), no clear difference in 0" in helps.summary
    assert "first pass costs up to 3.50 s more" in helps.findings[0].text
    assert len(helps.evidence) == 2 and helps.scope == "1 finding (resnet50) on box"
    # two models that disagree: it depends, and each finding names its model
    mixed = _benchmark(0.6) + _benchmark(1.0, model="vit_b_16")
    both = _verdict(write_tree, "benchmark-static", mixed)
    assert both.verdict == claims.DEPENDS
    assert {f.model for f in both.findings} == {"resnet50", "vit_b_16"}
    # "it depends" names where: the regimes that moved, the largest change first
    slower = _benchmark(1.3, model="vit_b_16")
    three = _verdict(write_tree, "benchmark-static",
                     _benchmark(0.6) + _benchmark(0.8, model="resnet18") + slower)
    assert "faster in 2 (resnet50 · train 1.67×, resnet18 · train 1.25×)" in three.summary
    assert "slower in 1 (vit_b_16 · train 0.77×)" in three.summary


def test_a_wide_interval_is_no_evidence_against_benchmark(write_tree: Any) -> None:
    wide = _verdict(write_tree, "benchmark-static", _benchmark(1.0, WIDE))
    assert wide.verdict == claims.NOT_MEASURED and wide.scope == ""
    assert wide.missing.startswith("the 1 finding below could not tell")
    assert "too wide to tell" in wide.findings[0].text
    assert "no clear difference in 1 (1 of them too wide to tell)" in wide.summary
    # beside a tight one it does not turn a contradiction into "it depends"
    both = _verdict(write_tree, "benchmark-static",
                    _benchmark(1.0) + _benchmark(1.0, WIDE, model="vit_b_16"))
    assert both.verdict == claims.CONTRADICTED and both.scope == (
        "1 of 2 findings (resnet50) on box")  # the other could not tell


def _dynamic(on_factor: float, spread: tuple[float, ...] = (1.0, 1.0, 1.0),
             env: dict[str, Any] = ENV) -> list[dict[str, object]]:
    rows = _benchmark(1.0, env=env)  # the static pair: benchmark adds 3.5 s to one shape's
    off = [0.100, 0.101, 0.099]  # first pass
    rows += cell(env, axes(shapes="dynamic"), off, cold_pass_s=1.5, shape_count=3)
    rows += cell(env, axes(shapes="dynamic", cudnn_benchmark="on"),
                 [t * on_factor * k for t, k in zip(off, spread)], cold_pass_s=12.0,
                 shape_count=3)
    return rows


def test_benchmark_with_cycled_shapes(write_tree: Any) -> None:
    searches = _verdict(write_tree, "benchmark-dynamic", _dynamic(1.0))
    repays = _verdict(write_tree, "benchmark-dynamic", _dynamic(0.6))
    assert (searches.verdict, repays.verdict) == (claims.SUPPORTED, claims.CONTRADICTED)
    assert "each of its 3 shapes' first pass costs 3.50 s more" in searches.findings[0].text
    # dearer first passes, but an interval over the cycle too wide to say it does not repay
    wide = _verdict(write_tree, "benchmark-dynamic", _dynamic(1.0, WIDE))
    assert wide.verdict == claims.NOT_MEASURED and "too wide to tell" in wide.findings[0].text


def _repro(bm: str, equal: bool) -> dict[str, object]:
    return result_row(ENV, axes(cudnn_benchmark=bm), kind="repro",
                      repro_bitwise_equal="true" if equal else "false")


def test_benchmark_and_reproducibility(write_tree: Any) -> None:
    makes = _verdict(write_tree, "benchmark-nondeterministic",
                     [_repro("off", True), _repro("on", False)])
    keeps = _verdict(write_tree, "benchmark-nondeterministic",
                     [_repro("off", True), _repro("on", True)])
    either = _verdict(write_tree, "benchmark-nondeterministic",
                      [_repro("off", False), _repro("on", False)])
    assert (makes.verdict, keeps.verdict) == (claims.SUPPORTED, claims.CONTRADICTED)
    assert keeps.summary.endswith("equal in 1 of 1 checks")
    # unequal with benchmark off too: benchmark's part cannot be told apart
    assert either.verdict == claims.NOT_MEASURED
    assert "cannot be told apart" in either.findings[0].text
    assert {a for _, a in makes.evidence} == {f"repro-{r['cell_id']}" for r in
                                               (_repro("on", False), _repro("off", True))}


def test_the_algo_argument_is_what_the_installed_torch_says(write_tree: Any) -> None:
    rows = cell(ENV, axes(), [0.1] * 3)

    def with_api(accepts: bool) -> claims.Verdict:
        env = {**ENV, "conv_api": {"torch.nn.functional.conv2d": {
            "accepts_algo": accepts, "error": "" if accepts else "TypeError: no algo"}}}
        return _verdict(write_tree, "conv-algo-argument", rows, env=env)

    assert with_api(False).verdict == claims.CONTRADICTED
    assert "refuses it (TypeError: no algo)" in with_api(False).findings[0].text
    assert with_api(False).evidence[0][1] == "environment"  # env.json, on the machine page
    assert with_api(True).verdict == claims.SUPPORTED
    assert _verdict(write_tree, "conv-algo-argument", rows).verdict == claims.NOT_MEASURED


def _cpu_gpu(cpu: list[float], gpu: list[float], batch: int = 128,
             **extra: Any) -> list[dict[str, object]]:
    return (cell(ENV, axes(device="cpu", mode="infer", batch_size=batch, cpu_threads=""), cpu,
                 peak_rss_bytes=extra.get("rss", 2e9))
            + cell(ENV, axes(mode="infer", batch_size=batch), gpu,
                   peak_mem_allocated_bytes=extra.get("gpu_mem", 1e9),
                   cold_peak_mem_allocated_bytes=extra.get("gpu_mem", 1e9)))


def test_gpu_up_to_fifty_times(write_tree: Any) -> None:
    about = _verdict(write_tree, "gpu-50x", _cpu_gpu([4.8, 5.0, 5.2], [0.1] * 3))
    more = _verdict(write_tree, "gpu-50x", _cpu_gpu([20.0] * 3, [0.1] * 3))
    less = _verdict(write_tree, "gpu-50x", _cpu_gpu([0.5] * 3, [0.1] * 3))
    assert about.verdict == claims.SUPPORTED and "95% CI 48.0–52.0×" in about.summary
    assert "(resnet50 · infer · batch 128, 95% CI" in about.summary  # one batch, still named
    assert more.verdict == less.verdict == claims.CONTRADICTED
    assert "more than 50×" in more.summary and "never 50×" in less.summary


def test_cpu_for_small_batches(write_tree: Any) -> None:
    cpu_wins = _cpu_gpu([0.004] * 3, [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3, [0.01] * 3)
    gpu_wins = _cpu_gpu([0.03] * 3, [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3, [0.01] * 3)
    thin = _cpu_gpu([0.004, None, None], [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3,
                                                                         [0.01] * 3)
    assert _verdict(write_tree, "cpu-for-small", cpu_wins).verdict == claims.SUPPORTED
    assert _verdict(write_tree, "cpu-for-small", gpu_wins).verdict == claims.CONTRADICTED
    even = _cpu_gpu([0.006] * 3, [0.006] * 3, batch=1)
    wide = _cpu_gpu([0.006] * 3, [0.0045, 0.006, 0.0078], batch=1)
    assert _verdict(write_tree, "cpu-for-small", even).verdict == claims.CONTRADICTED
    found = _verdict(write_tree, "cpu-for-small", wide)
    assert found.verdict == claims.NOT_MEASURED and "too wide" in found.findings[0].text
    # the smallest batch lost its replicates: batch 128 does not answer for small batches
    assert _verdict(write_tree, "cpu-for-small", thin).verdict == claims.NOT_MEASURED


def test_which_memory_fills_first(write_tree: Any) -> None:
    # the fixture GPU has 139.7 GiB, the host 16 GiB (4 cores × 4 GiB)
    gpu_full = _cpu_gpu([1.0] * 3, [0.01] * 3, rss=1e9, gpu_mem=100e9)
    host_full = _cpu_gpu([1.0] * 3, [0.01] * 3, rss=12e9, gpu_mem=10e9)
    assert _verdict(write_tree, "gpu-memory-limit", gpu_full).verdict == claims.SUPPORTED
    found = _verdict(write_tree, "gpu-memory-limit", host_full)
    assert found.verdict == claims.CONTRADICTED and "of 16.0 GiB" in found.findings[0].text


def test_threads(write_tree: Any) -> None:
    cpu = {"device": "cpu", "mode": "infer", "batch_size": 8}

    def rows(every: float, spread: tuple[float, ...] = (1.0, 1.0, 1.0),
             **over: Any) -> list[dict[str, object]]:
        return (cell(ENV, axes(cpu_threads=1, **cpu), [0.2] * 3)
                + cell(ENV, axes(cpu_threads="", **cpu, **over), [every * k for k in spread]))

    faster = _verdict(write_tree, "threads", rows(0.1))
    assert faster.verdict == claims.SUPPORTED
    assert faster.findings[0].text.startswith(  # its batch and how many threads "every" is
        "resnet50 · infer · batch 8: every core (4 threads) against one thread 2.00×")
    assert _verdict(write_tree, "threads", rows(0.2)).verdict == claims.CONTRADICTED
    assert _verdict(write_tree, "threads", rows(0.2, WIDE)).verdict == claims.NOT_MEASURED
    # a compiled all-cores cell is not one-thread eager's partner
    compiled = rows(0.1, compile="default")
    assert _verdict(write_tree, "threads", compiled).verdict == claims.NOT_MEASURED


def _copies(gpu_gbps: float, cpu_gbps: float = 40.0) -> list[dict[str, object]]:
    rows = []
    for device, rate in (("cuda", gpu_gbps), ("cpu", cpu_gbps)):
        ceiling = {k: "" for k in axes()} | {
            "device": device, "model": "copy", "cudnn_benchmark": "n/a",
            "cudnn_deterministic": "n/a", "kernel_cache": "fresh"}
        work = 2 * 2**30
        rows += [result_row(ENV, ceiling, i, kind="ceiling", seconds=work / (rate * 1e9) * f,
                            work_per_iter=work, work_unit="byte")
                 for i, f in enumerate((0.99, 1.0, 1.01))]
    return rows


def test_memory_bandwidth(write_tree: Any) -> None:
    assert _verdict(write_tree, "gpu-bandwidth", _copies(4000.0)).verdict == claims.SUPPORTED
    assert _verdict(write_tree, "gpu-bandwidth", _copies(120.0)).verdict == claims.CONTRADICTED


def test_an_upgrade_against_a_setting_change(write_tree: Any) -> None:
    slow = env_for("slow-box", "run-2", gpu=False)
    cpu = {"device": "cpu", "mode": "infer", "batch_size": 8, "cpu_threads": ""}

    def tree(fast_s: float | list[float], setting_batch: int = 8) -> claims.Verdict:
        at = {**cpu, "batch_size": setting_batch}
        slow_rows = (cell(slow, axes(**cpu), [0.30] * 3)
                     + (cell(slow, axes(**at), [0.30] * 3) if setting_batch != 8 else [])
                     + cell(slow, axes(precision="amp-bf16", **at), [0.20] * 3))  # 1.5×
        times = fast_s if isinstance(fast_s, list) else [fast_s] * 3
        fast_rows = cell(ENV, axes(mode="infer", batch_size=8), times)
        return _verdict(write_tree, "upgrade-beats-settings", fast_rows,
                        more=[(slow, slow_rows, [])])

    upgrade = tree(0.03)  # 10× the slow box
    marginal = tree(0.25)  # 1.2×: the bf16 switch on the slow box buys more
    assert (upgrade.verdict, marginal.verdict) == (claims.SUPPORTED, claims.CONTRADICTED)
    assert "fp32 → amp-bf16 1.50× (95% CI 1.50–1.50×), as much or more" in (
        marginal.findings[0].text)
    # 1.5× point against 1.5×: no more; intervals that overlap the setting's: cannot tell
    assert tree(0.20).verdict == claims.CONTRADICTED
    close = tree([0.17, 0.20, 0.23])
    assert close.verdict == claims.NOT_MEASURED and "too close" in close.findings[0].text
    # a setting change measured at another batch answers nothing for batch 8
    elsewhere = tree(0.03, setting_batch=1)
    assert elsewhere.verdict == claims.NOT_MEASURED
    assert "none was measured there" in elsewhere.findings[0].text


def test_each_finding_page_shows_its_claims_box_once(write_tree: Any, tmp_path: Path) -> None:
    """Two machines with cycled shapes give the dynamic-shapes page two sections; the box of
    the claims it answers stands once above them, not in each."""
    from bench.report.site import render_site

    other = env_for("box-two", "run-2")
    root = write_tree([(ENV, _dynamic(1.0), []), (other, _dynamic(0.6, env=other), [])])
    generated = tmp_path / "docs" / "generated"
    render_site(load_reports(root), root, generated)
    for page in ("dynamic-shapes", "cudnn-benchmark", "determinism", "cpu-vs-gpu"):
        text = (generated / f"{page}.md").read_text(encoding="utf-8")
        assert text.count('"Common advice, checked"') == 1, page
    dynamic = (generated / "dynamic-shapes.md").read_text(encoding="utf-8")
    assert dynamic.count("## ") >= 2, "one section per machine"


def _static_section(write_tree: Any, tmp_path: Path, models: int
                    ) -> tuple[list[dict[str, object]], Path, str]:
    """``models`` static benchmark pairs rendered: their rows, the generated folder, and the
    Claims page's section of the static-shapes claim."""
    from bench.report.site import render_site

    rows = [r for i in range(models) for r in _benchmark(1.0, model=f"net{i:02d}")]
    root = write_tree([(ENV, rows, [])])
    generated = tmp_path / "docs" / "generated"
    render_site(load_reports(root), root, generated)
    page = (generated / "claims.md").read_text(encoding="utf-8")
    return rows, generated, page.split("{ #claim-benchmark-static }")[1].split("\n## ")[0]


def test_findings_beyond_the_first_dozen_keep_their_rows(write_tree: Any, tmp_path: Path) -> None:
    from bench.report.views.claims import FINDINGS_SHOWN

    rows, _, section = _static_section(write_tree, tmp_path, FINDINGS_SHOWN + 1)
    assert '??? note "1 more finding"' in section
    hidden = section.split("??? note")[1]
    assert "net12" in hidden and all(f"#cell-{r['cell_id']}" in hidden
                                     for r in rows if r["model"] == "net12")


def test_every_finding_is_in_its_claims_csv_with_its_rows(write_tree: Any, tmp_path: Path,
                                                         monkeypatch: Any) -> None:
    """A big tree files thousands of findings: past the open and the collapsed ones, the page
    points to the claim's CSV, which holds every finding with its rows."""
    import csv

    from bench.report.views import claims as claims_view

    monkeypatch.setattr(claims_view, "FINDINGS_COLLAPSED", 1)
    n = claims_view.FINDINGS_SHOWN + 3
    rows, generated, section = _static_section(write_tree, tmp_path, n)
    assert '??? note "1 more finding (of 3)"' in section
    assert "… and 2 more: every finding of this claim, with its rows, is in" in section
    assert "claim-benchmark-static.csv" in section
    with open(generated / "data" / "comparisons" / "claim-benchmark-static.csv",
              encoding="utf-8", newline="") as f:
        found = list(csv.DictReader(f))
    assert len(found) == n and {r["model"] for r in found} == {f"net{i:02d}" for i in range(n)}
    last = next(r for r in found if r["model"] == f"net{n - 1:02d}")
    cells = {r["cell_id"] for r in rows if r["model"] == f"net{n - 1:02d}"}
    assert {a.split("#cell-")[1] for a in last["rows"].split()} == cells
