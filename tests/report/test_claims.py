"""Claims: each verdict comes from the rows. The same claim, fed rows that support it and rows
that contradict it, gets two verdicts; with no rows to answer from, it is "not measured"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.report import analysis
from bench.report.input.load import load_reports
from bench.report.judge import claims
from bench.report.judge.claims import memory, rules
from bench.report.judge.claims.model import MORE_REPLICATES
from bench.report.vocabulary import ClaimVerdict, Stance

from .builders import axes, cell, env_for, result_row

ENV = env_for("box", "run-1")
BY_ID = {c.id: c for c in claims.load_claims()}


def _verdict(write_tree: Any, claim: str, rows: list[dict[str, object]],
             env: dict[str, Any] = ENV, more: list[Any] = ()) -> claims.ClaimAnswer:
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


def test_every_claim_has_a_page_that_exists() -> None:
    assert len(BY_ID) == 13
    pages = {"cudnn-benchmark", "dynamic-shapes", "determinism", "cpu-vs-gpu", "precision"}
    assert all(set(c.pages) <= pages and c.pages for c in BY_ID.values())
    # the questions say what their rules match: the upgrade rule matches the batch size too,
    # and the shapes rule counts a smaller last batch as a change of shape
    assert BY_ID["upgrade-beats-settings"].question.endswith("for that model, mode and batch "
                                                            "size?")
    assert "a smaller last batch" in BY_ID["benchmark-dynamic"].question


def test_a_claims_file_whose_rule_is_missing_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: Any) -> None:
    """The shipped claims file against a rule table that lacks one of its rules, and an entry
    that names no rule: each stops the load with one line naming the entry and the problem."""
    monkeypatch.delitem(rules.RULES, "memory_limit")
    with pytest.raises(claims.ClaimsError) as found:
        claims.load_claims()
    message = str(found.value)
    assert "\n" not in message
    assert message.startswith(f"{claims.CLAIMS_FILE}: claim 7: unknown analysis 'memory_limit'")
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claims]]\nid = "x"\nclaim = "c"\nquestion = "q"\n')
    with pytest.raises(claims.ClaimsError) as found:
        claims.load_claims(bad)
    assert str(found.value) == f"{bad}: claim 1: missing analysis"


def test_a_claims_file_with_an_unknown_rule_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claims]]\nid = "x"\nclaim = "c"\nquestion = "q"\nanalysis = "oracle"\n')
    with pytest.raises(claims.ClaimsError, match="unknown analysis 'oracle'; valid choices:"):
        claims.load_claims(bad)


def test_with_no_rows_every_claim_is_not_measured_here(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    verdicts = claims.evaluate(analysis.analyse(load_reports(tmp_path / "empty")))
    assert {v.verdict for v in verdicts} == {ClaimVerdict.NOT_MEASURED}
    assert all(v.missing for v in verdicts), "each says what run would measure it"


def test_benchmark_with_static_shapes(write_tree: Any) -> None:
    helps = _verdict(write_tree, "benchmark-static", _benchmark(0.6))
    same = _verdict(write_tree, "benchmark-static", _benchmark(1.0))
    assert (helps.verdict, same.verdict) == (ClaimVerdict.SUPPORTED, ClaimVerdict.CONTRADICTED)
    assert "faster in 1 (resnet50 · train 1.67×), no clear difference in 0" in helps.summary
    assert "first pass costs up to 3.50 s more" in helps.findings[0].text
    assert len(helps.evidence) == 2 and helps.scope == "1 finding (resnet50) on box"
    # two models that disagree: it depends, and each finding names its model
    mixed = _benchmark(0.6) + _benchmark(1.0, model="vit_b_16")
    both = _verdict(write_tree, "benchmark-static", mixed)
    assert both.verdict == ClaimVerdict.DEPENDS
    assert {f.model for f in both.findings} == {"resnet50", "vit_b_16"}
    # the side that contradicts it is named too: a tight "no clear difference"
    assert "no clear difference in 1 (within 1 ± 3%: vit_b_16 · train 1.00×)" in both.summary
    # "it depends" names where: the regimes that moved, the largest change first
    slower = _benchmark(1.3, model="vit_b_16")
    three = _verdict(write_tree, "benchmark-static",
                     _benchmark(0.6) + _benchmark(0.8, model="resnet18") + slower)
    assert "faster in 2 (resnet50 · train 1.67×, resnet18 · train 1.25×)" in three.summary
    assert "slower in 1 (vit_b_16 · train 0.77×)" in three.summary


def test_a_wide_interval_is_no_evidence_against_benchmark(write_tree: Any) -> None:
    wide = _verdict(write_tree, "benchmark-static", _benchmark(1.0, WIDE))
    assert wide.verdict == ClaimVerdict.CANNOT_TELL and wide.scope == ""
    assert wide.missing.startswith("the 1 finding below could not tell (each says why); more "
                                   "replicates of those rows")
    assert "too wide to tell" in wide.findings[0].text
    assert "no clear difference in 1 (1 of them too wide to tell)" in wide.summary
    # beside a tight one it does not turn a contradiction into "it depends"
    both = _verdict(write_tree, "benchmark-static",
                    _benchmark(1.0) + _benchmark(1.0, WIDE, model="vit_b_16"))
    assert both.verdict == ClaimVerdict.CONTRADICTED and both.scope == (
        "1 of 2 findings (resnet50) on box")  # the other could not tell


def _dynamic(on_factor: float, spread: tuple[float, ...] = (1.0, 1.0, 1.0),
             env: dict[str, Any] = ENV, static: float = 0.6) -> list[dict[str, object]]:
    # the static pair: benchmark on helps one shape (0.6 of the step by default) and adds
    # 3.5 s to its first pass
    rows = _benchmark(static, env=env)
    off = [0.100, 0.101, 0.099]
    rows += cell(env, axes(shapes="dynamic"), off, cold_pass_s=1.5, shape_count=3)
    rows += cell(env, axes(shapes="dynamic", cudnn_benchmark="on"),
                 [t * on_factor * k for t, k in zip(off, spread)], cold_pass_s=12.0,
                 shape_count=3)
    return rows


def test_benchmark_with_cycled_shapes(write_tree: Any) -> None:
    searches = _verdict(write_tree, "benchmark-dynamic", _dynamic(1.0))
    repays = _verdict(write_tree, "benchmark-dynamic", _dynamic(0.6))
    assert (searches.verdict, repays.verdict) == (ClaimVerdict.SUPPORTED, ClaimVerdict.CONTRADICTED)
    assert "each of its 3 shapes' first pass costs 3.50 s more" in searches.findings[0].text
    # dearer first passes, but an interval over the cycle too wide to say it does not repay
    wide = _verdict(write_tree, "benchmark-dynamic", _dynamic(1.0, WIDE))
    assert wide.verdict == ClaimVerdict.CANNOT_TELL and "too wide to tell" in wide.findings[0].text


def _colds(env: dict[str, Any], cell_axes: dict[str, Any], colds: tuple[float, ...],
           seconds: float = 0.1, **extra: Any) -> list[dict[str, object]]:
    """One replicate per cold pass, each at the same steady step."""
    return [result_row(env, cell_axes, i, seconds=seconds, cold_pass_s=c, **extra)
            for i, c in enumerate(colds)]


def test_changing_shapes_name_their_regime_and_every_replicate(write_tree: Any) -> None:
    """The H200's 8 cycled shapes: replicates with benchmark on paid 50.4, 23.1 and 19.6 s. The
    per-shape figure is the median replicate's, so the range beside it holds for each; the
    finding names batch and precision; a smaller last batch (ragged) answers the claim too."""
    rows = _benchmark(0.6, batch_size=32)  # benchmark helps with one shape
    rows += _colds(ENV, axes(batch_size=32, shapes="dynamic"), (1.44,) * 3, shape_count=8)
    rows += _colds(ENV, axes(batch_size=32, shapes="dynamic", cudnn_benchmark="on"),
                   (50.4, 23.1, 19.6), shape_count=8)
    rows += _colds(ENV, axes(batch_size=32, shapes="ragged"), (0.7,) * 3, shape_count=2)
    rows += _colds(ENV, axes(batch_size=32, shapes="ragged", cudnn_benchmark="on"),
                   (12.6, 6.5, 5.0), shape_count=2)
    found = _verdict(write_tree, "benchmark-dynamic", rows)
    texts = {f.label: f.text for f in found.findings}
    assert set(texts) == {"resnet50 · train · batch 32 · fp32 · dynamic shapes",
                          "resnet50 · train · batch 32 · fp32 · ragged shapes"}
    dynamic = texts["resnet50 · train · batch 32 · fp32 · dynamic shapes"]
    assert dynamic.startswith("resnet50 · train · batch 32 · fp32 · dynamic shapes: ")
    # (23.1 − 1.44) / 8 = 2.71 in the median replicate; (19.6 − 1.44) / 8 to (50.4 − 1.44) / 8
    assert ("first pass costs 2.71 s more on average in the median replicate (2.27 s to "
            "6.12 s over its replicates") in dynamic, dynamic
    assert "of 2 configurations with changing shapes (resnet50)" in found.summary
    # each pair's rows, and the one-shape pair's both cite
    assert found.verdict == ClaimVerdict.SUPPORTED and len(found.evidence) == 6


def _render(write_tree: Any, tmp_path: Path, rows: list[dict[str, object]],
            *pages: str) -> list[str]:
    """``rows`` rendered into a site: the text of each generated page named."""
    from .builders import render_tree

    root = write_tree([(ENV, rows, [])])
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    return [(generated / f"{page}.md").read_text(encoding="utf-8") for page in pages]


def test_the_shapes_table_shows_each_cold_pass_range_and_its_cache(write_tree: Any,
                                                                   tmp_path: Path) -> None:
    rows = _benchmark(1.0, batch_size=32)
    rows += _colds(ENV, axes(batch_size=32, shapes="dynamic"), (1.44,) * 3, shape_count=8)
    rows += _colds(ENV, axes(batch_size=32, shapes="dynamic", cudnn_benchmark="on"),
                   (50.4, 23.1, 19.6), shape_count=8)
    (page,) = _render(write_tree, tmp_path, rows, "dynamic-shapes")
    header = next(line for line in page.splitlines() if "| Configuration | Cache" in line)
    assert "| Cache | First pass, all shapes (range) |" in header
    on = next(line for line in page.splitlines()
              if "bm&#61;on" in line and "| fresh |" in line)
    assert "| fresh | 23.1 s (19.6 s–50.4 s) |" in on, on


def test_the_cudnn_box_and_home_count_what_the_claims_page_counts(write_tree: Any,
                                                                  tmp_path: Path) -> None:
    """Two static pairs the Claims page counts, plus one with deterministic on and one with a
    warm cache that it leaves out: the summary box and the home headline count the two, and
    say what they count."""
    rows = _benchmark(0.6) + _benchmark(1.0, model="vit_b_16")
    rows += _benchmark(0.6, cudnn_deterministic="on") + _benchmark(0.6, kernel_cache="warm")
    cudnn, home = _render(write_tree, tmp_path, rows, "cudnn-benchmark", "snippets/home")
    found = _verdict(write_tree, "benchmark-static", rows)
    assert "of 2 configurations with one input shape" in found.summary
    # the answer leads with the default workload's decision, then counts what the claim does
    assert "Of the 2 configurations judged here: 1 faster, 1 no clear difference." in cudnn, \
        cudnn
    assert ("The answer counts the 2 configurations with one input shape with "
            "cudnn.deterministic off and no warm kernel cache") in cudnn
    assert "2 more (deterministic on, or a warm duplicate) are in the tables" in cudnn
    assert "1 of 2 configurations with one input shape there: faster" in home, home


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
    assert (makes.verdict, keeps.verdict) == (ClaimVerdict.SUPPORTED, ClaimVerdict.CONTRADICTED)
    assert keeps.summary.endswith("equal in 1 of 1 check")
    # unequal with benchmark off too: benchmark's part cannot be told apart
    assert either.verdict == ClaimVerdict.CANNOT_TELL
    assert "cannot be told apart" in either.findings[0].text
    # a bitwise check has no interval: more replicates would tell nothing, and a machine
    # whose steps differ with benchmark off cannot tell on any re-run
    assert "replicates" not in either.missing
    alone = _verdict(write_tree, "benchmark-nondeterministic", [_repro("on", False)])
    assert alone.verdict == ClaimVerdict.CANNOT_TELL
    assert "the same re-run check with benchmark off on that machine" in alone.missing
    fp8 = str(ENV["fingerprint_id"])[:8]
    assert {a for _, a in makes.evidence} == {f"repro-{fp8}-{r['cell_id']}" for r in
                                               (_repro("on", False), _repro("off", True))}


def test_the_algo_argument_is_what_the_installed_torch_says(write_tree: Any) -> None:
    rows = cell(ENV, axes(), [0.1] * 3)

    def with_api(accepts: bool) -> claims.ClaimAnswer:
        env = {**ENV, "conv_api": {"torch.nn.functional.conv2d": {
            "accepts_algo": accepts, "error": "" if accepts else "TypeError: no algo"}}}
        return _verdict(write_tree, "conv-algo-argument", rows, env=env)

    assert with_api(False).verdict == ClaimVerdict.CONTRADICTED
    assert "refuses it (TypeError: no algo)" in with_api(False).findings[0].text
    # env.json, in its fingerprint's section of the machine page
    assert with_api(False).evidence[0][1] == f"env-{str(ENV['fingerprint_id'])[:8]}"
    assert with_api(True).verdict == ClaimVerdict.SUPPORTED
    assert _verdict(write_tree, "conv-algo-argument", rows).verdict == ClaimVerdict.NOT_MEASURED


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
    # Welch's interval on logs over the replicates: 45.2–55.2× (the bootstrap's was their range)
    assert about.verdict == ClaimVerdict.SUPPORTED and "95% CI 45.2–55.2×" in about.summary
    assert "(resnet50 · infer · batch 128, 95% CI" in about.summary  # one batch, still named
    assert (more.verdict, less.verdict) == (ClaimVerdict.LARGER, ClaimVerdict.SMALLER)
    assert "more than 50×" in more.summary and "never 50×" in less.summary


def test_cpu_for_small_batches(write_tree: Any) -> None:
    cpu_wins = _cpu_gpu([0.004] * 3, [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3, [0.01] * 3)
    gpu_wins = _cpu_gpu([0.03] * 3, [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3, [0.01] * 3)
    thin = _cpu_gpu([0.004, None, None], [0.006] * 3, batch=1) + _cpu_gpu([1.0] * 3,
                                                                         [0.01] * 3)
    assert _verdict(write_tree, "cpu-for-small", cpu_wins).verdict == ClaimVerdict.SUPPORTED
    assert _verdict(write_tree, "cpu-for-small", gpu_wins).verdict == ClaimVerdict.CONTRADICTED
    even = _cpu_gpu([0.006] * 3, [0.006] * 3, batch=1)
    wide = _cpu_gpu([0.006] * 3, [0.0045, 0.006, 0.0078], batch=1)
    assert _verdict(write_tree, "cpu-for-small", even).verdict == ClaimVerdict.CONTRADICTED
    found = _verdict(write_tree, "cpu-for-small", wide)
    assert found.verdict == ClaimVerdict.CANNOT_TELL and "too wide" in found.findings[0].text
    assert "more replicates of those rows" in found.missing
    assert "the smallest model measured on both is resnet50 (4.00 GFLOP a sample in " \
        "inference)" in found.summary
    # the smallest batch lost its replicates: batch 128 does not answer for small batches
    assert _verdict(write_tree, "cpu-for-small", thin).verdict == ClaimVerdict.CANNOT_TELL


def test_it_depends_names_the_regimes_on_each_side(write_tree: Any) -> None:
    """Every "it depends" summary, not only the static-shapes one, says where the claim held
    and where it did not, naming at most three per side."""
    models = ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152")
    rows = cell(ENV, axes(device="cpu", mode="infer", batch_size=1, cpu_threads="",
                          model="mobilenet_v3_large"), [0.004] * 3, flops_per_sample=0.44e9)
    rows += cell(ENV, axes(mode="infer", batch_size=1, model="mobilenet_v3_large"), [0.006] * 3)
    for model in models:  # the GPU wins at batch 1 for each of these
        rows += cell(ENV, axes(device="cpu", mode="infer", batch_size=1, cpu_threads="",
                               model=model), [0.03] * 3)
        rows += cell(ENV, axes(mode="infer", batch_size=1, model=model), [0.006] * 3)
    found = _verdict(write_tree, "cpu-for-small", rows)
    assert found.verdict == ClaimVerdict.DEPENDS
    assert "the CPU clearly faster in 1 (mobilenet_v3_large · infer at batch 1)" in found.summary
    # how small the smallest model measured on both is (its CPU cell's counted FLOPs)
    assert found.summary.endswith("the smallest model measured on both is mobilenet_v3_large "
                                  "(0.440 GFLOP a sample in inference): a smaller model is not "
                                  "answered")
    assert ("the GPU faster or neither in 5 (resnet101 · infer at batch 1, resnet152 · infer at "
            "batch 1, resnet18 · infer at batch 1 and 2 more)") in found.summary, found.summary
    # one verdict alone names nothing: the counts say it all
    alone = _verdict(write_tree, "cpu-for-small", rows[6:])
    assert alone.verdict == ClaimVerdict.CONTRADICTED
    counts = alone.summary.split("; the smallest model")[0]
    assert counts.startswith("on box, of 5 curves at their smallest batch (resnet101, resnet152, "
                             "resnet18 and 2 more): ")  # the models it rests on, not regimes
    assert "(" not in counts.split(": ", 1)[1]
    # the re-run claim: benchmark made the difference on one model and not on the other
    two = [_repro("off", True), _repro("on", False),
           result_row(ENV, axes(cudnn_benchmark="off", model="vit_b_16"), kind="repro",
                      repro_bitwise_equal="true"),
           result_row(ENV, axes(cudnn_benchmark="on", model="vit_b_16"), kind="repro",
                      repro_bitwise_equal="true")]
    rerun = _verdict(write_tree, "benchmark-nondeterministic", two)
    assert rerun.verdict == ClaimVerdict.DEPENDS
    assert rerun.summary.endswith(
        "unequal with it on but equal with it off in resnet50 · train on box, equal with it on "
        "in vit_b_16 · train on box"), rerun.summary


def _grown(cpu_rss: tuple[float, float], gpu_mem: tuple[float, float],
           gpu_times: tuple[list[float | None], list[float | None]] = ([0.01] * 3, [0.01] * 3)
           ) -> list[dict[str, object]]:
    """One workload at batch 8 and 128 on both sides, with each side's whole-run peak."""
    return (_cpu_gpu([1.0] * 3, gpu_times[0], batch=8, rss=cpu_rss[0], gpu_mem=gpu_mem[0])
            + _cpu_gpu([1.0] * 3, gpu_times[1], batch=128, rss=cpu_rss[1], gpu_mem=gpu_mem[1]))


def test_which_memory_fills_first_is_judged_by_growth(write_tree: Any) -> None:
    # the fixture GPU has 139.7 GiB, the host 16 GiB (4 cores × 4 GiB); batch 8 to 128
    gpu_full = _grown((1e9, 1.6e9), (1e9, 61e9))  # 500 MB a sample on the GPU, 5 MB on the host
    host_full = _grown((1e9, 7e9), (1e9, 2.2e9))  # 50 MB a sample on the host, 10 MB on the GPU
    assert _verdict(write_tree, "gpu-memory-limit", gpu_full).verdict == ClaimVerdict.SUPPORTED
    found = _verdict(write_tree, "gpu-memory-limit", host_full)
    assert found.verdict == ClaimVerdict.CONTRADICTED and "of the host's 16.0 GiB" in (
        found.findings[0].text)
    assert "batch 8 to 128" in found.findings[0].text and "47.7 MiB a sample" in (
        found.findings[0].text) and len(found.findings[0].evidence) == 4
    # what each side measures is said: allocator bytes on the GPU, the process's RSS on the CPU
    assert "allocator's peak" in found.summary and "peak resident set" in found.summary
    # the host's peak is half its memory and the GPU's under a tenth of its own (a peak at one
    # batch would say the host is the fuller), but each sample adds about as much of each
    # side's memory: what does not grow with the batch does not answer "as the batch grows"
    close = _verdict(write_tree, "gpu-memory-limit", _grown((8e9, 9.2e9), (1e9, 13.6e9)))
    assert close.verdict == ClaimVerdict.CANNOT_TELL
    assert f"within {memory.MEMORY_MARGIN:g}× of each other" in close.findings[0].text
    # rates within the margin are a property of the two memories' sizes, not of too few
    # replicates: what would tell is a machine whose memories differ more
    assert "each says why" in close.missing and "replicates" not in close.missing
    assert "whose host and GPU memory stand in a markedly different proportion than box's " \
        "(16.0 GiB host, 140 GiB GPU)" in close.missing, close.missing
    # one batch size has no growth: counted apart, not judged
    one = _verdict(write_tree, "gpu-memory-limit", _cpu_gpu([1.0] * 3, [0.01] * 3, rss=12e9))
    assert one.verdict == ClaimVerdict.NOT_MEASURED and not one.findings
    assert "1 workload measured at one batch size only" in one.summary
    # the large batch's GPU cell kept one ok replicate: the site's replicate minimum leaves
    # that pair out, and batch 8 alone has no growth
    thin = _verdict(write_tree, "gpu-memory-limit",
                    _grown((1e9, 1.6e9), (1e9, 61e9), ([0.01] * 3, [0.01, None, None])))
    assert thin.verdict == ClaimVerdict.NOT_MEASURED and not thin.findings
    # an env.json without the host's memory: the summary says which machine lacks what
    bare = {**ENV, "memory": {}}
    unrecorded = _verdict(write_tree, "gpu-memory-limit", _grown((1e9, 7e9), (1e9, 2.2e9)),
                          env=bare)
    assert unrecorded.verdict == ClaimVerdict.NOT_MEASURED
    assert unrecorded.summary == ("on box, env.json does not record the host's installed memory "
                                  "(2 workloads measured on both left out)")


def test_threads(write_tree: Any) -> None:
    cpu = {"device": "cpu", "mode": "infer", "batch_size": 8}

    def rows(every: float, spread: tuple[float, ...] = (1.0, 1.0, 1.0),
             **over: Any) -> list[dict[str, object]]:
        return (cell(ENV, axes(cpu_threads=1, **cpu), [0.2] * 3)
                + cell(ENV, axes(cpu_threads="", **cpu, **over), [every * k for k in spread]))

    faster = _verdict(write_tree, "threads", rows(0.1))
    assert faster.verdict == ClaimVerdict.SUPPORTED
    assert faster.findings[0].text.startswith(  # its batch and how many threads "every" is
        "resnet50 · infer · batch 8: every core (4 threads) against one thread 2.00×")
    assert _verdict(write_tree, "threads", rows(0.2)).verdict == ClaimVerdict.CONTRADICTED
    assert _verdict(write_tree, "threads", rows(0.2, WIDE)).verdict == ClaimVerdict.CANNOT_TELL
    # a compiled all-cores cell is not one-thread eager's partner
    compiled = rows(0.1, compile="default")
    assert _verdict(write_tree, "threads", compiled).verdict == ClaimVerdict.NOT_MEASURED


def _copies(gpu_gbps: float, cpu_gbps: float = 40.0, n: int = 3) -> list[dict[str, object]]:
    rows = []
    for device, rate in (("cuda", gpu_gbps), ("cpu", cpu_gbps)):
        ceiling = {k: "" for k in axes()} | {
            "device": device, "model": "copy", "cudnn_benchmark": "n/a",
            "cudnn_deterministic": "n/a", "kernel_cache": "fresh"}
        work = 2 * 2**30
        rows += [result_row(ENV, ceiling, i, kind="ceiling", seconds=work / (rate * 1e9) * f,
                            work_per_iter=work, work_unit="byte")
                 for i, f in enumerate((0.99, 1.0, 1.01)[:n])]
    return rows


def test_memory_bandwidth(write_tree: Any) -> None:
    assert _verdict(write_tree, "gpu-bandwidth", _copies(4000.0)).verdict == ClaimVerdict.SUPPORTED
    found = _verdict(write_tree, "gpu-bandwidth", _copies(120.0))
    assert found.verdict == ClaimVerdict.CONTRADICTED


def test_a_measured_ratio_without_an_interval_decides_when_it_is_far_from_the_claim(
        write_tree: Any) -> None:
    """Two ok replicates give no interval, but 50× against a claim of 10× is measured: the rule
    decides on it (and says why), where a ratio near the threshold stays too few replicates."""
    far = _verdict(write_tree, "gpu-bandwidth", _copies(2000.0, n=2))  # 50×
    assert far.verdict == ClaimVerdict.SUPPORTED
    assert "too few ok replicates for an interval, but it is over 2 times" in far.summary
    under = _verdict(write_tree, "gpu-bandwidth", _copies(160.0, n=2))  # 4×
    assert under.verdict == ClaimVerdict.CONTRADICTED
    near = _verdict(write_tree, "gpu-bandwidth", _copies(480.0, n=2))  # 12×
    assert near.verdict == ClaimVerdict.CANNOT_TELL and near.findings


def test_an_upgrade_against_a_setting_change(write_tree: Any) -> None:
    slow = env_for("slow-box", "run-2", gpu=False)
    cpu = {"device": "cpu", "mode": "infer", "batch_size": 8, "cpu_threads": ""}

    def tree(fast_s: float | list[float | None], setting_batch: int = 8) -> claims.ClaimAnswer:
        at = {**cpu, "batch_size": setting_batch}
        slow_rows = (cell(slow, axes(**cpu), [0.30] * 3)
                     + (cell(slow, axes(**at), [0.30] * 3) if setting_batch != 8 else [])
                     + cell(slow, axes(precision="amp-bf16", **at), [0.20] * 3))  # 1.5×
        times = fast_s if isinstance(fast_s, list) else [fast_s] * 3
        fast_rows = cell(ENV, axes(mode="infer", batch_size=8), times)
        return _verdict(write_tree, "upgrade-beats-settings", fast_rows,
                        more=[(slow, slow_rows, [])])

    # best against best: the slow box at its best is bf16 (0.20 s), the fast box fp32
    upgrade = tree(0.03)  # 6.7× the slow box at its best
    marginal = tree(0.16)  # 1.25×: the bf16 switch on the slow box buys more
    assert (upgrade.verdict, marginal.verdict) == (ClaimVerdict.SUPPORTED,
                                                   ClaimVerdict.CONTRADICTED)
    assert upgrade.findings[0].text.startswith(
        "resnet50 · infer · batch 8: box at its best (cuda, fp32) is 6.67× the throughput of "
        "slow-box at its best (cpu, amp-bf16)")
    assert "fp32 → amp-bf16 1.50× (95% CI replicates identical), as much or more" in (
        marginal.findings[0].text)
    # like for like the fast box would be 1.2× at 0.25 s; at its best the slow box is faster,
    # so it is the faster hardware here, and no setting change was measured on the other
    flipped = tree(0.25)
    assert flipped.verdict == ClaimVerdict.CANNOT_TELL
    assert flipped.findings[0].text.startswith("resnet50 · infer · batch 8: slow-box at its "
                                               "best (cpu, amp-bf16) is 1.25× the throughput of "
                                               "box")
    # 1.5× point against 1.5×: no more; intervals that overlap the setting's: cannot tell
    assert tree(0.20 / 1.5).verdict == ClaimVerdict.CONTRADICTED
    close = tree([0.11, 0.20 / 1.5, 0.16])
    assert close.verdict == ClaimVerdict.CANNOT_TELL and "too close" in close.findings[0].text
    # a setting change measured at another batch answers nothing for batch 8
    elsewhere = tree(0.03, setting_batch=1)
    assert elsewhere.verdict == ClaimVerdict.CANNOT_TELL
    assert "none was measured there" in elsewhere.findings[0].text
    assert "more replicates" not in elsewhere.missing
    assert "a setting change (precision, layout or threads) measured on the slower machine" in (
        elsewhere.missing)
    assert "more replicates of those rows" in close.missing  # intervals too close: more
    # the fast box kept one ok replicate: not dropped, but a finding that cannot tell, with
    # the rows of both machines
    thin = tree([0.03, None, None])
    assert thin.verdict == ClaimVerdict.CANNOT_TELL and len(thin.findings) == 1
    (finding,) = thin.findings
    assert finding.stance == Stance.CANNOT_TELL and finding.text == (
        "resnet50 · infer · batch 8: measured on box, slow-box, but with too few ok replicates "
        "on box to compare")
    assert {page.split("-")[0] for page, _ in finding.evidence} == {"box", "slow"}
    assert "a cpu-profile run (its batch-1 settings study) on one machine and a gpu-profile run " \
        "on another" in thin.missing


def test_each_finding_page_shows_its_claims_box_once(write_tree: Any, tmp_path: Path) -> None:
    """Two machines with cycled shapes give the dynamic-shapes page two sections; the box of
    the claims it answers stands once above them, not in each."""
    from .builders import render_tree

    other = env_for("box-two", "run-2")
    root = write_tree([(ENV, _dynamic(1.0), []), (other, _dynamic(0.6, env=other), [])])
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    for page in ("dynamic-shapes", "cudnn-benchmark", "determinism", "cpu-vs-gpu"):
        text = (generated / f"{page}.md").read_text(encoding="utf-8")
        assert text.count('"Common advice, checked"') == 1, page
    dynamic = (generated / "dynamic-shapes.md").read_text(encoding="utf-8")
    assert dynamic.count("## ") >= 2, "one section per machine"


def _static_section(write_tree: Any, tmp_path: Path, models: int
                    ) -> tuple[list[dict[str, object]], Path, str]:
    """``models`` static benchmark pairs rendered: their rows, the generated folder, and the
    Claims page's section of the static-shapes claim."""
    from .builders import render_tree

    rows = [r for i in range(models) for r in _benchmark(1.0, model=f"net{i:02d}")]
    root = write_tree([(ENV, rows, [])])
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    page = (generated / "claims.md").read_text(encoding="utf-8")
    return rows, generated, page.split("{: #claim-benchmark-static }")[1].split("\n## ")[0]


def test_findings_beyond_the_first_dozen_keep_their_rows(write_tree: Any, tmp_path: Path) -> None:
    from bench.report.questions.claims.view import FINDINGS_SHOWN

    rows, _, section = _static_section(write_tree, tmp_path, FINDINGS_SHOWN + 1)
    assert "The question, and its 13 findings" in section
    hidden = section.split("??? ")[1]
    fp8 = str(ENV["fingerprint_id"])[:8]
    assert "net12" in hidden and all(f"#cell-{fp8}-{r['cell_id']}" in hidden
                                     for r in rows if r["model"] == "net12")


def test_every_finding_is_in_its_claims_csv_with_its_rows(write_tree: Any, tmp_path: Path,
                                                         monkeypatch: Any) -> None:
    """A big tree files thousands of findings: past the open and the collapsed ones, the page
    points to the claim's CSV, which holds every finding with its rows."""
    import csv

    from bench.report.questions.claims import view as claims_view

    monkeypatch.setattr(claims_view, "FINDINGS_COLLAPSED", 1)
    n = claims_view.FINDINGS_SHOWN + 3
    rows, generated, section = _static_section(write_tree, tmp_path, n)
    assert f"The question, and its {n} findings" in section
    assert "… and 2 more: every finding of this claim, with its rows, is in" in section
    assert "claim-benchmark-static.csv" in section
    with open(generated / "data" / "comparisons" / "claim-benchmark-static.csv",
              encoding="utf-8", newline="") as f:
        found = list(csv.DictReader(f))
    assert len(found) == n and {r["model"] for r in found} == {f"net{i:02d}" for i in range(n)}
    last = next(r for r in found if r["model"] == f"net{n - 1:02d}")
    cells = {r["cell_id"] for r in rows if r["model"] == f"net{n - 1:02d}"}
    fp8 = str(ENV["fingerprint_id"])[:8]
    assert {a.split(f"#cell-{fp8}-")[1] for a in last["rows"].split()} == cells


def _energy_pair(cpu_j: float | None, gpu_j: float | None) -> list[dict[str, object]]:
    """A CPU/GPU pair whose replicates carry these joules per sample (None: not measured,
    as on a machine without readable counters)."""
    def figures(j: float | None, method: str) -> dict[str, object]:
        if j is None:
            return {"energy_method": "none", "energy_reason": "no RAPL counters readable"}
        return {"energy_method": method, "joules_per_sample": j, "energy_j": j * 100,
                "energy_window_s": 1.2, "mean_power_w": j * 100 / 1.2}

    return (cell(ENV, axes(device="cpu", mode="infer", batch_size=1, cpu_threads=""),
                 [0.02] * 3, **figures(cpu_j, "rapl"))
            + cell(ENV, axes(mode="infer", batch_size=1), [0.002] * 3,
                   **figures(gpu_j, "nvml-energy")))


def test_a_gpu_is_more_energy_efficient_only_where_both_sides_measured_it(
        write_tree: Any) -> None:
    gpu_less = _verdict(write_tree, "gpu-energy-per-sample", _energy_pair(2.0, 0.5))
    cpu_less = _verdict(write_tree, "gpu-energy-per-sample", _energy_pair(0.5, 2.0))
    even = _verdict(write_tree, "gpu-energy-per-sample", _energy_pair(1.0, 1.0))
    one_side = _verdict(write_tree, "gpu-energy-per-sample", _energy_pair(None, 0.5))
    assert gpu_less.verdict == ClaimVerdict.SUPPORTED
    assert "0.500 J per sample on the GPU (nvml-energy), 2.00 J on the CPU (rapl)" in \
        gpu_less.findings[0].text
    assert "neither includes the rest of the host" in gpu_less.summary
    assert cpu_less.verdict == ClaimVerdict.CONTRADICTED
    assert even.verdict == ClaimVerdict.CANNOT_TELL
    # energy on one side only is no finding: never compared against an estimate
    assert one_side.verdict == ClaimVerdict.NOT_MEASURED and not one_side.findings


def test_gpu_fifty_times_is_judged_like_for_like_and_best_against_best(
        write_tree: Any) -> None:
    like = _cpu_gpu([20.0] * 3, [0.1] * 3)  # 200x like for like
    best_cpu = cell(ENV, axes(device="cpu", mode="infer", batch_size=128, cpu_threads="",
                              precision="amp-bf16", memory_format="channels_last"), [0.5] * 3)
    same_gpu = cell(ENV, axes(mode="infer", batch_size=128, precision="amp-bf16",
                              memory_format="channels_last"), [0.1] * 3)  # tried on both
    both = _verdict(write_tree, "gpu-50x", like + best_cpu + same_gpu)  # 5x: CPU at its best
    stances = {f.label: f.stance for f in both.findings}
    assert stances["best against best"] == Stance.SMALLER
    assert both.verdict == ClaimVerdict.DEPENDS
    assert "each side at its best measured setting: 5.00×" in both.summary
    assert "the CPU at amp-bf16, channels_last" in both.summary
    alone = _verdict(write_tree, "gpu-50x", like)  # no other CPU setting: one finding
    assert [f.label for f in alone.findings] == [""]
    # the CPU's best setting never tried on the GPU: the GPU is not at its best, no finding
    untried = _verdict(write_tree, "gpu-50x", like + best_cpu)
    assert [f.label for f in untried.findings] == [""]


def test_a_claims_scope_names_each_model_once_when_a_finding_covers_several() -> None:
    """A like-for-like finding over two models and a best-against-best one over one of them:
    the scope names the two models, not the second twice."""
    from bench.report.judge.claims.model import Claim, ClaimAnswer, Finding

    found = (Finding(Stance.SMALLER, "p", "box", "", model="mobilenet_v3_large, resnet18"),
             Finding(Stance.LARGER, "p", "box", "", model="resnet18"))
    answer = ClaimAnswer(Claim("c", "", "", ""), ClaimVerdict.DEPENDS, "", found)
    assert answer.scope == "2 findings (mobilenet_v3_large, resnet18) on box"


@pytest.mark.parametrize("tree", ["tests/fixtures/reports", "reports"])
def test_more_replicates_is_asked_only_of_findings_that_lack_them(tree: str) -> None:
    """On the fixture tree and the committed runs: a finding that cannot tell asks for more
    replicates only where its own text says its replicates are too few or its interval too
    wide or too close, and a claim asks for them only where such a finding is among its own."""
    root = Path(__file__).resolve().parents[2] / tree
    answers = claims.evaluate(analysis.analyse(load_reports(root)), list(BY_ID.values()))
    why = ("replicate", "too wide", "too close", "interval")
    for answer in answers:
        asks = [f for f in answer.findings if f.remedy == MORE_REPLICATES]
        for f in asks:
            assert f.stance == Stance.CANNOT_TELL and any(w in f.text for w in why), f.text
        if "more replicates" in answer.missing:
            assert asks, (answer.claim.id, answer.missing)
