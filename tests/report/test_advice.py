"""advice: the same rules fed different data give different advice; nothing is hard-coded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bench.intervals import log_ratio_interval
from bench.report.analysis import DELTA, analyse
from bench.report.analysis.cells import cell_stats
from bench.report.input.load import load_reports
from bench.report.judge import advice
from bench.report.judge.regimes import Regime, regimes
from bench.report.render.words import sentences
from bench.report.vocabulary import Action

from .builders import axes, cell, env_for, result_row, synth

ENV = env_for("box", "run-1")
MODELS = ("resnet18", "resnet50")


def _benchmark_dataset(root: Path, on_factor: float, *, extra_cold: float = 2.0):
    """Two resnets, train, fp32: benchmark on runs at ``on_factor`` × the off step time."""
    rows = []
    for model in MODELS:
        off = [0.100, 0.101, 0.099]
        rows += cell(ENV, axes(model=model), off, cold_pass_s=0.5)
        on = [t * on_factor for t in off]
        rows += cell(ENV, axes(model=model, cudnn_benchmark="on"), on, cold_pass_s=0.5 + extra_cold)
    synth.write_run(root / "box" / "run-1", rows, synth.samples_for(rows), ENV)
    return load_reports(root)


def _bm(recs, job_length):
    found = [r for r in recs if r.setting == "cudnn.benchmark" and r.job_length == job_length]
    assert len(found) == 1, found
    return found[0]


def test_benchmark_advice_follows_the_data(tmp_path):
    helps = advice.recommend(_benchmark_dataset(tmp_path / "helps", 0.6))
    hurts = advice.recommend(_benchmark_dataset(tmp_path / "hurts", 1.25))
    same = advice.recommend(_benchmark_dataset(tmp_path / "same", 1.0))

    long_helps, long_hurts, long_same = (_bm(r, 1_000_000) for r in (helps, hurts, same))
    assert (long_helps.action, long_helps.rule) == (Action.ENABLE, "bm-faster-pays-back")
    assert (long_hurts.action, long_hurts.rule) == (Action.KEEP_OFF, "bm-slower")
    assert (long_same.action, long_same.rule) == (Action.LEAVE_DEFAULT, "bm-no-clear-difference")
    assert long_helps.speedup == pytest.approx(1 / 0.6)
    assert long_hurts.speedup == pytest.approx(1 / 1.25)
    # break-even, worst case over the CI: 2 s extra cold / the saving at ci_low, the low end
    # of Welch's interval on logs over the replicates (off over on)
    off = [0.100, 0.101, 0.099]
    ci_low = log_ratio_interval(off, [t * 0.6 for t in off])[0]
    assert long_helps.ci_low == pytest.approx(ci_low, rel=1e-5)
    assert long_helps.break_even_iters == pytest.approx(2.0 / (0.100 * (1 - 1 / ci_low)), rel=1e-4)
    assert _bm(helps, 100).action == Action.ENABLE
    assert long_hurts.break_even_iters == float("inf")
    # every recommendation cites the rows it came from
    assert {a for _, a in long_helps.evidence} == {
        f"cell-{ENV['fingerprint_id'][:8]}-{c}"
        for c in cell_stats(load_reports(tmp_path / "helps"))["cell_id"]
    }
    assert all(p == f"box-{ENV['fingerprint_id'][:8]}" for p, _ in long_helps.evidence)


def test_short_jobs_do_not_repay_a_big_cold_cost(tmp_path):
    recs = advice.recommend(_benchmark_dataset(tmp_path, 0.9, extra_cold=50.0))
    # saving ≈ 0.01 s/step, so 50 s of autotuning needs ≈ 5,000 steps
    assert (_bm(recs, 100).action, _bm(recs, 100).rule) == (
        Action.KEEP_OFF,
        "bm-cold-cost-not-repaid",
    )
    assert _bm(recs, 1_000_000).action == Action.ENABLE
    table = advice.decision_table(recs)
    row = table.loc[table["setting"] == "cudnn.benchmark"].iloc[0]
    assert (row["action_100"], row["action_1000000"], row["action"]) == (
        Action.KEEP_OFF,
        Action.ENABLE,
        Action.ENABLE,
    )


def test_mixed_families_are_not_averaged_into_one_answer(write_tree):
    rows = cell(ENV, axes(model="resnet18"), [0.1] * 3) + cell(
        ENV, axes(model="resnet18", cudnn_benchmark="on"), [0.05] * 3
    )
    rows += cell(ENV, axes(model="resnet50"), [0.1] * 3) + cell(
        ENV, axes(model="resnet50", cudnn_benchmark="on"), [0.2] * 3
    )
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, rows, [])]))), 10_000)
    assert (rec.verdict, rec.action) == ("mixed", Action.DEPENDS)
    assert (rec.ci_low, rec.ci_high) == pytest.approx((0.5, 2.0))  # the envelope, not an average
    assert rec.models == ("resnet18", "resnet50")  # the family names what was measured
    assert sentences.workload(rec).startswith("resnet models (resnet18, resnet50) · train")
    lone = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows[:6], [])])))
            if r.setting == "cudnn.benchmark"]
    assert {r.models for r in lone} == {("resnet18",)}


def test_too_few_replicates_give_insufficient_data(write_tree):
    rows = cell(ENV, axes(), [0.1, None, None]) + cell(ENV, axes(cudnn_benchmark="on"), [0.05] * 3)
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, rows, [])]))), 10_000)
    assert (rec.action, rec.rule, rec.speedup) == (Action.INSUFFICIENT, "bm-insufficient", None)
    assert len(rec.evidence) == 2


def test_determinism_rules(write_tree):
    rows = cell(ENV, axes(), [0.10] * 3) + cell(ENV, axes(cudnn_deterministic="on"), [0.10] * 3)
    rows.append(result_row(ENV, axes(), kind="repro", repro_bitwise_equal="false"))
    rows.append(
        result_row(ENV, axes(cudnn_deterministic="on"), kind="repro", repro_bitwise_equal="true")
    )
    (free,) = [
        r
        for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
        if r.setting == "cudnn.deterministic"
    ]
    assert (free.action, free.rule) == (Action.ENABLE, "det-no-measurable-cost")
    assert (free.bitwise_equal_default, free.bitwise_equal_variant) == (False, True)
    assert any(a.startswith("repro-") for _, a in free.evidence)


def _checked(rows: list, *, on_equal: str = "true") -> list:
    """The re-run check with deterministic on, which the cost rules below rest on."""
    return [*rows, result_row(ENV, axes(cudnn_deterministic="on"), kind="repro",
                              repro_bitwise_equal=on_equal)]


def test_determinism_that_costs_is_only_if_needed(write_tree):
    rows = cell(ENV, axes(), [0.10] * 3) + cell(ENV, axes(cudnn_deterministic="on"), [0.15] * 3)
    rows = _checked(rows)
    (rec,) = [
        r
        for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
        if r.setting == "cudnn.deterministic"
    ]
    assert (rec.action, rec.rule) == (Action.ENABLE_IF_NEEDED, "det-costs")


def test_determinism_with_a_wide_interval_is_not_called_free(write_tree):
    """Noisy replicates: no clear difference, but the interval allows a cost well above δ, so
    the advice is 'only if needed', not 'no measurable cost'."""
    rows = cell(ENV, axes(), [0.10, 0.08, 0.12])
    rows += cell(ENV, axes(cudnn_deterministic="on"), [0.13, 0.08, 0.10])
    rows = _checked(rows)
    (rec,) = [
        r
        for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
        if r.setting == "cudnn.deterministic"
    ]
    assert rec.verdict == "no clear difference" and rec.ci_low < 1 - DELTA
    assert (rec.action, rec.rule) == (Action.ENABLE_IF_NEEDED, "det-cost-unclear")


@pytest.mark.parametrize("on_factor", [1.0, 1.5])
def test_determinism_without_a_rerun_check_claims_no_reproducibility(write_tree, on_factor):
    """Free or not, deterministic on is never called reproducible where no check ran."""
    rows = cell(ENV, axes(), [0.10] * 3)
    rows += cell(ENV, axes(cudnn_deterministic="on"), [0.10 * on_factor] * 3)
    (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
              if r.setting == "cudnn.deterministic"]
    assert (rec.action, rec.rule) == (Action.ENABLE_IF_NEEDED, "det-unchecked")
    assert rec.bitwise_equal_variant is None
    from bench.report.render.markdown import Page

    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "not checked" in text and "reproducibility matters" not in text
    (checked,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, _checked(rows),
                                                                        [])])))
                  if r.setting == "cudnn.deterministic"]
    assert checked.rule == ("det-no-measurable-cost" if on_factor == 1.0 else "det-costs")


def _cold_rows(env, cell_axes, colds, seconds=0.1, **extra):
    return [result_row(env, cell_axes, i, seconds=seconds, cold_pass_s=c, **extra)
            for i, c in enumerate(colds)]


def test_benchmark_cold_cost_is_true_of_every_replicate(write_tree):
    """The H200 pattern: the first benchmark-on replicate paid 16.0 s, the others 3.0 and
    4.7 s. "Adds up to" must hold for all three, and the break-even must survive the worst."""
    rows = _cold_rows(ENV, axes(), [0.55, 0.62, 0.80])
    rows += _cold_rows(ENV, axes(cudnn_benchmark="on"), [16.0, 3.0, 4.7], seconds=0.05)
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, rows, [])]))), 10_000)
    assert rec.cold_pass_max_s == pytest.approx(16.0)
    assert rec.base_cold_pass_s == pytest.approx(0.62)
    assert rec.extra_cold_s == pytest.approx(16.0 - 0.62)  # the slowest replicate
    assert rec.extra_cold_median_s == pytest.approx(4.7 - 0.62)  # the median one
    assert rec.break_even_iters == pytest.approx((16.0 - 0.62) / 0.05, rel=1e-6)
    from bench.report.render.markdown import Page

    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "15.4 s" in text and "16.0 s" in text, text


def test_benchmark_decides_from_an_empty_cache_and_shows_the_warm_one(write_tree):
    rows = _cold_rows(ENV, axes(), [0.6] * 3)
    rows += _cold_rows(ENV, axes(cudnn_benchmark="on"), [12.0] * 3, seconds=0.05)
    rows += _cold_rows(ENV, axes(kernel_cache="warm"), [0.6] * 3)
    rows += _cold_rows(ENV, axes(cudnn_benchmark="on", kernel_cache="warm"), [3.6] * 3,
                       seconds=0.05)
    recs = advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
    rec = _bm(recs, 100)
    assert rec.kernel_cache == "fresh" and rec.extra_cold_s == pytest.approx(11.4)
    assert rec.warm_extra_cold_s == pytest.approx(3.0)
    # 11.4 s over a 0.05 s saving is 228 steps: too many for a 100-step job, however warm
    assert rec.break_even_iters == pytest.approx(228)
    assert rec.warm_break_even_iters == pytest.approx(60)
    assert (rec.action, rec.rule) == (Action.KEEP_OFF, "bm-cold-cost-not-repaid")
    from bench.report.render.markdown import Page

    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "empty kernel cache" in text and "warm kernel cache it adds up to 3.00 s" in text, text
    only_warm = [r for r in rows if r["kernel_cache"] == "warm"]
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, only_warm, [])]))), 100)
    assert rec.kernel_cache == "warm" and rec.action == Action.ENABLE  # 60 steps, and says so


def test_benchmark_memory_counts_the_cold_pass(write_tree):
    """ResNet-50 TF32 training on the H200: 10.6 GiB steady either way, 15.8 GiB while the
    search ran. The whole replicate's peak is what a job needs, and the advice says how much."""
    gib = 2**30
    rows = cell(ENV, axes(), [0.1] * 3, peak_mem_allocated_bytes=10.6 * gib,
                cold_peak_mem_allocated_bytes=10.5 * gib)
    rows += cell(ENV, axes(cudnn_benchmark="on"), [0.1] * 3,
                 peak_mem_allocated_bytes=10.6 * gib, cold_peak_mem_allocated_bytes=15.8 * gib)
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, rows, [])]))), 10_000)
    assert rec.extra_peak_mem_bytes == pytest.approx(5.2 * gib)
    assert rec.extra_peak_mem_share == pytest.approx(5.2 / 10.6)
    assert rec.workspace_bytes == pytest.approx(5.2 * gib)
    assert "extra-memory" in rec.caveats
    from bench.report.render.markdown import Page

    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "5.20 GiB (+49.1%)" in text, text
    small = cell(ENV, axes(), [0.1] * 3, peak_mem_allocated_bytes=10.6 * gib,
                 cold_peak_mem_allocated_bytes=10.5 * gib)
    small += cell(ENV, axes(cudnn_benchmark="on"), [0.1] * 3,
                  peak_mem_allocated_bytes=10.6 * gib, cold_peak_mem_allocated_bytes=11.0 * gib)
    rec = _bm(advice.recommend(load_reports(write_tree([(ENV, small, [])]))), 10_000)
    assert "extra-memory" not in rec.caveats  # +4%: under the 10% line


def test_a_crossover_with_thin_smaller_batches_says_so(write_tree):
    """The H200's first run: batch 1 and 16 lost a replicate, so "from batch 128" would only
    mean "not enough data below 128"."""
    rows = []
    for b, cpu, gpu, reps in ((1, 0.03, 0.004, 2), (16, 0.4, 0.006, 2), (128, 4.2, 0.018, 3)):
        rows += cell(ENV, axes(device="cpu", mode="infer", batch_size=b, cpu_threads=4),
                     [cpu] * reps)
        rows += cell(ENV, axes(mode="infer", batch_size=b), [gpu] * 3)
    (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
              if r.setting == "device"]
    assert rec.from_batch == 128 and "smaller-batches-insufficient" in rec.caveats
    from bench.report.render.markdown import Page

    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "not enough data below batch 128" in text and "from batch 128**" not in text, text
    # and 128 is the largest batch measured: no "and up" above it either
    assert "largest-batch-only" in rec.caveats
    assert "batch 128, the largest measured; there is not enough data" in text, text
    assert "and up" not in text
    assert sentences.decision(Regime((rec,))) == (
        "GPU at batch 128, the largest batch measured; not enough data below it")


def test_a_gpu_verdict_at_the_only_batch_measured_says_only_not_largest(write_tree):
    """The H200's training curve has batch 1 alone: "GPU at batch 1, the largest measured"
    read as if larger batches had been measured and lost."""
    from bench.report.render.markdown import Page

    rows = cell(ENV, axes(device="cpu", batch_size=1, cpu_threads=4), [0.3] * 3)
    rows += cell(ENV, axes(batch_size=1), [0.04] * 3)
    (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
              if r.setting == "device"]
    assert {"largest-batch-only", "one-batch-only"} <= set(rec.caveats)
    assert sentences.decision(Regime((rec,))) == "GPU at batch 1, the only batch measured"
    text = str(sentences.sentence(Regime((rec,)), Page("index.md")))
    assert "there, the only batch measured (" in text and "largest" not in text, text


def test_precision_memory_format_and_device(write_tree):
    rows = cell(ENV, axes(), [0.10] * 3)
    rows += cell(ENV, axes(precision="amp-bf16"), [0.05] * 3)
    rows += cell(ENV, axes(precision="fp32-strict"), [0.25] * 3)
    rows += cell(ENV, axes(memory_format="channels_last"), [0.1] * 3)
    for b, cpu, gpu in ((1, 0.004, 0.006), (8, 0.03, 0.007), (32, 0.12, 0.01)):
        rows += cell(ENV, axes(device="cpu", mode="infer", batch_size=b, cpu_threads=4), [cpu] * 3)
        rows += cell(ENV, axes(mode="infer", batch_size=b), [gpu] * 3)
    recs = advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
    by = {(r.setting, r.variant_value, r.mode): r for r in recs}
    amp = by[("precision", "amp-bf16", "train")]
    assert (amp.action, amp.precision) == (Action.ENABLE, "fp32")
    assert "changes-numerics" in amp.caveats and "tf32-default" in amp.caveats
    assert by[("precision", "fp32-strict", "train")].action == Action.KEEP_OFF
    assert by[("memory_format", "channels_last", "train")].action == Action.LEAVE_DEFAULT
    device = by[("device", "cuda", "infer")]
    assert (device.action, device.from_batch, device.verdict) == (Action.ENABLE, 8, "faster")
    assert device.speedup == pytest.approx(0.03 / 0.007)
    # the figure is batch 8's alone, so it is quoted with batch 8's interval, not as a median
    # of the regime's configurations (batch 1 and 32 too)
    assert device.n_sufficient == 1
    text = sentences.speedup_text(device)
    assert text.startswith("4.29× (95% CI ") and "median of" not in text, text


def test_precision_advice_is_per_memory_format(write_tree):
    """AMP's gain depends on the layout: one regime per layout, never one pooled answer."""
    rows = []
    for layout, amp in (("nchw", 0.099), ("channels_last", 0.05)):
        rows += cell(ENV, axes(memory_format=layout), [0.10] * 3)
        rows += cell(ENV, axes(memory_format=layout, precision="amp-bf16"), [amp] * 3)
    recs = advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
    amp_by = {r.memory_format: r for r in recs if r.setting == "precision"}
    assert set(amp_by) == {"nchw", "channels_last"}
    assert (amp_by["nchw"].action, amp_by["channels_last"].action) == (
        Action.LEAVE_DEFAULT, Action.ENABLE)
    assert amp_by["channels_last"].speedup == pytest.approx(2.0)
    assert "channels_last" in sentences.workload(amp_by["channels_last"])
    assert "nchw" not in sentences.workload(amp_by["nchw"])  # the default layout goes unsaid
    layout = [r for r in recs if r.setting == "memory_format"]
    assert layout and all(r.memory_format == "" for r in layout)  # the switch is the layout


def test_advice_is_per_batch_size(write_tree):
    """A setting that helps at one batch and not at another gets two answers, not a blend."""
    rows = []
    for b, on_factor in ((32, 0.6), (128, 1.0)):
        rows += cell(ENV, axes(batch_size=b), [0.100, 0.101, 0.099])
        rows += cell(ENV, axes(batch_size=b, cudnn_benchmark="on"),
                     [t * on_factor for t in (0.100, 0.101, 0.099)])
    recs = advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
    longest = {r.batch_size: r for r in recs if r.job_length == 1_000_000}
    assert longest["32"].action == Action.ENABLE
    assert longest["128"].action == Action.LEAVE_DEFAULT
    assert len(advice.decision_table(recs)) == 2


def test_gpu_crossover_says_when_smaller_batches_are_unjudged(write_tree):
    """Batch 1 has two ok GPU replicates only: the GPU 'from batch 8' may start lower."""
    rows = []
    for b, cpu, gpu, n_gpu in ((1, 0.004, 0.002, 2), (8, 0.03, 0.007, 3), (32, 0.12, 0.01, 3)):
        rows += cell(ENV, axes(device="cpu", mode="infer", batch_size=b, cpu_threads=4), [cpu] * 3)
        rows += cell(ENV, axes(mode="infer", batch_size=b), [gpu] * n_gpu)
    recs = advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
    device = next(r for r in recs if r.setting == "device")
    assert (device.from_batch, device.batch_size) == (8, "")
    assert "smaller-batches-insufficient" in device.caveats


def test_decision_table_is_one_row_per_regime(tmp_path):
    recs = advice.recommend(_benchmark_dataset(tmp_path, 0.6))
    table = advice.decision_table(recs)
    assert len(recs) == len(advice.JOB_LENGTHS)  # one regime × three job lengths
    assert len(table) == 1
    row = table.iloc[0]
    assert row["evidence_page"] == recs[0].page and row["evidence_anchor"].startswith("cell-")
    assert [f"action_{n}" for n in advice.JOB_LENGTHS] == [
        c for c in table.columns if c.startswith("action_")
    ]


def test_recommendation_holds_data_not_formatting():
    names = {f.name for f in dataclasses.fields(advice.Recommendation)}
    assert {"setting", "action", "rule", "evidence", "speedup", "ci_low", "ci_high"} <= names
    methods = {n for n in vars(advice.Recommendation) if not n.startswith("_")}
    assert not {m for m in methods if "html" in m or "markdown" in m or "md" in m}


def test_a_tree_of_only_failures_gives_empty_but_well_formed_tables(write_tree):
    cpu = env_for("laptop", "run-1", gpu=False)
    rows = [result_row(cpu, axes(), i, status="skipped", seconds=None) for i in range(3)]
    rows += cell(cpu, axes(device="cpu", cpu_threads=4), [0.1] * 3)
    analysis = analyse(load_reports(write_tree([(cpu, rows, [])])))
    assert len(analysis.cells) == 2 and analysis.benchmark.empty
    recs = advice.recommend(analysis)
    assert [(r.setting, r.action) for r in recs] == [("device", Action.INSUFFICIENT)]
    empty = advice.decision_table([])
    assert list(empty.columns) == list(advice.decision_table(recs).columns)
    assert {f"action_{n}" for n in advice.JOB_LENGTHS} <= set(empty.columns)


def _samples(row: dict, seconds: list[float]) -> list[dict[str, object]]:
    return [{"schema_version": 1, "run_id": row["run_id"], "fingerprint_id": row["fingerprint_id"],
             "cell_id": row["cell_id"], "replicate": row["replicate"], "phase": "steady",
             "iter": i, "batch_size": row["batch_size"], "resolution": 224, "seconds": s}
            for i, s in enumerate(seconds)]


def test_a_drifting_cell_is_counted_and_flags_the_advice_it_feeds(write_tree):
    """A steady state that slows down as it runs (here 10x) is flagged, not silently pooled."""
    off = cell(ENV, axes(), [0.10] * 3, steady_iters=4)  # the samples' count, below
    on = cell(ENV, axes(cudnn_benchmark="on"), [0.10] * 3, steady_iters=4)
    other = cell(ENV, axes(batch_size=8), [0.10] * 3, steady_iters=4)
    other_on = cell(ENV, axes(batch_size=8, cudnn_benchmark="on"), [0.10] * 3, steady_iters=4)
    samples = [s for r in off for s in _samples(r, [0.05, 0.05, 0.5, 0.5])]
    samples += [s for r in on + other + other_on for s in _samples(r, [0.1, 0.1, 0.1, 0.1])]
    ds = load_reports(write_tree([(ENV, off + on + other + other_on, samples)]))
    cells = cell_stats(ds).set_index("cell_id")
    assert cells.loc[off[0]["cell_id"], "n_drift"] == 3
    assert cells.loc[off[0]["cell_id"], "drift_max"] == pytest.approx(10.0)
    assert cells.loc[on[0]["cell_id"], "n_drift"] == 0
    recs = [r for r in advice.recommend(ds) if r.job_length == 1_000_000]
    flagged = {r.batch_size for r in recs if "steady-drift" in r.caveats}
    assert flagged == {"64"}


def test_no_clear_difference_says_whether_the_interval_is_tight(tmp_path):
    """'Within 1 ± δ' only when the whole interval is; a wide interval is called inconclusive."""
    from bench.report.render.markdown import Page
    from bench.report.render.words import sentences

    def said(recs):
        return str(sentences.sentence(regimes(recs)[0], Page("index.md")))

    recs = [r for r in advice.recommend(_benchmark_dataset(tmp_path, 1.0))
            if r.setting == "cudnn.benchmark"]
    assert recs[0].verdict == "no clear difference"
    assert "within 1 ± 3%" in said(recs)
    wide = [dataclasses.replace(r, ci_low=0.8, ci_high=1.5) for r in recs]
    text = said(wide)
    assert "within 1 ±" not in text and "reaches beyond 1 ± 3%" in text


def test_a_machine_summary_names_what_it_covers_and_where_it_mattered(write_tree):
    """A box that says "no clear difference" on one GPU must not read as a verdict for every
    model there: it lists the models, precisions and layouts measured, and the exceptions."""
    from bench.report.judge.common import scope_of
    from bench.report.render.words.labels import exceptions, scope

    rows = []
    for model, on in (("resnet50", 0.10), ("vit_b_16", 0.10), ("convnext_tiny", 0.08)):
        rows += cell(ENV, axes(model=model), [0.10, 0.101, 0.099])
        rows += cell(ENV, axes(model=model, cudnn_benchmark="on"), [on, on * 1.01, on * 0.99])
    costs = analyse(load_reports(write_tree([(ENV, rows, [])]))).benchmark
    assert scope(scope_of(costs)) == ("convnext_tiny, resnet50, vit_b_16 · train · fp32 · nchw · "
                            "static shapes · batch 64 · fresh kernel cache")
    assert exceptions(costs, ["model"]).startswith("faster in convnext_tiny (1.25×)")
    assert "resnet50" not in exceptions(costs, ["model"])


def test_a_switch_with_no_clear_difference_says_whether_the_interval_is_tight(tmp_path):
    """The precision and layout sentences qualify "no clear difference" as the cudnn ones do."""
    from bench.report.render.markdown import Page
    from bench.report.render.words import sentences

    recs = [r for r in advice.recommend(_benchmark_dataset(tmp_path, 1.0))
            if r.setting == "cudnn.benchmark"]
    as_switch = [dataclasses.replace(r, setting="precision", action=Action.LEAVE_DEFAULT,
                                     baseline_value="fp32", variant_value="amp-bf16")
                 for r in recs]

    def said(ci_low, ci_high):
        regime = regimes([dataclasses.replace(r, ci_low=ci_low, ci_high=ci_high)
                                    for r in as_switch])[0]
        return str(sentences.sentence(regime, Page("index.md")))

    assert "keep fp32" in said(0.99, 1.01) and "within 1 ± 3%" in said(0.99, 1.01)
    assert "reaches beyond 1 ± 3%" in said(0.71, 1.14)


def _repro_rows(checks: dict[str, str | None]) -> list:
    """deterministic off and on, each with cudnn.benchmark off and on; ``checks`` maps the
    benchmark setting to the re-run check with deterministic on ("true", "false", or None for
    none)."""
    rows = []
    for bm in ("off", "on"):
        rows += cell(ENV, axes(cudnn_benchmark=bm), [0.10] * 3)
        rows += cell(ENV, axes(cudnn_benchmark=bm, cudnn_deterministic="on"), [0.15] * 3)
        if checks.get(bm) is not None:
            rows.append(result_row(ENV, axes(cudnn_benchmark=bm, cudnn_deterministic="on"),
                                   kind="repro", repro_bitwise_equal=checks[bm]))
    return rows


def test_determinism_with_checks_that_disagree_names_where(write_tree):
    """With it on, the re-run was bitwise equal with benchmark off and not with it on: that is
    a check that ran and disagreed, not "no check ran"; the advice names where it differed."""
    from bench.report.render.markdown import Page

    def rec_for(checks):
        rows = _repro_rows(checks)
        (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
                  if r.setting == "cudnn.deterministic"]
        return rec, str(sentences.sentence(Regime((rec,)), Page("index.md")))

    mixed, text = rec_for({"off": "true", "on": "false"})
    assert (mixed.action, mixed.rule) == (Action.ENABLE_IF_NEEDED, "det-reproduces-in-some")
    assert mixed.bitwise_equal_variant is None
    assert sorted(mixed.variant_checks) == [("resnet50", "off", "fresh", True),
                                            ("resnet50", "on", "fresh", False)]
    assert "No two-process re-run check ran" not in text, text
    assert ("bitwise equal for resnet50 with benchmark off but not for resnet50 with "
            "benchmark on") in text, text
    assert "re-runs matched in some" in sentences.decision(Regime((mixed,)))
    # every check unequal: it does not reproduce; none at all: unchecked
    assert rec_for({"off": "false", "on": "false"})[0].rule == "det-does-not-reproduce"
    none, text = rec_for({})
    assert none.rule == "det-unchecked" and "No two-process re-run check ran" in text
    # equal where checked, but one configuration never checked: not called reproducible
    partial, text = rec_for({"off": "true"})
    assert (partial.rule, partial.bitwise_equal_variant) == ("det-unchecked", None)
    assert ("bitwise equal for resnet50 with benchmark off; no two-process re-run check ran "
            "for resnet50 with benchmark on") in text, text
    assert rec_for({"off": "true", "on": "true"})[0].rule == "det-costs"


@pytest.mark.parametrize(("factors", "said"), [
    ((1.004, 1.004, 1.004), "with it on, steps take no measurable extra time: 1.00×"),
    ((1.3, 0.85, 1.0), "its cost in step time is not clear: "),
    ((0.96, 0.93, 0.99), "with it on, there is no measurable cost: "),
    ((1.3, 1.3, 1.3), "with it on, steps take 30% more time"),
])
def test_determinisms_step_cost_is_said_no_more_firmly_than_its_interval(
        write_tree, factors, said):
    """A +0.4% median change whose interval reaches into faster read as "steps take 0.40%
    more time": a slowdown stated as fact where the interval rules out only a large one."""
    from bench.report.render.markdown import Page

    base = [0.100, 0.101, 0.099]
    rows = cell(ENV, axes(), base)
    rows += cell(ENV, axes(cudnn_deterministic="on"), [t * f for t, f in zip(base, factors)])
    rows = _checked(rows)
    (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
              if r.setting == "cudnn.deterministic"]
    text = " ".join(str(sentences.sentence(Regime((rec,)), Page("index.md"))).split())
    assert said in text, text
    if rec.verdict != "slower":
        assert "more time" not in text


def test_a_caveat_several_sentences_share_is_one_numbered_note_above_the_list(write_tree):
    """AMP advice at two batches: "it changes the arithmetic" was said in each sentence; it
    is now said once above the list, and each sentence cites it by number."""
    from bench.report.judge.common import AdviceList
    from bench.report.render.markdown import Page
    from bench.report.render.words.recommendations import advice_items

    rows = []
    for b in (8, 32):
        rows += cell(ENV, axes(batch_size=b), [0.10] * 3)
        rows += cell(ENV, axes(batch_size=b, precision="amp-bf16"), [0.05] * 3)
    recs = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
            if r.setting == "precision"]
    assert len(recs) == 2 and all("changes-numerics" in r.caveats for r in recs)
    items = advice_items(AdviceList(tuple(Regime((r,)) for r in recs), ()), Page("index.md"))
    assert items["notes"].startswith("Note 1: it changes the arithmetic, so check that "
                                     "accuracy holds.")
    for said in map(str, items["said"]):
        assert "See notes 1, 2." in said and "check that accuracy holds" not in said, said


def test_a_long_list_of_undecided_workloads_names_ten_and_counts_the_rest(write_tree):
    """On a tree of many machines one sentence named 150 workloads without enough data; it
    names ``UNDECIDED_SHOWN`` and counts the rest, which are in the decisions CSV."""
    from bench.report.judge.common import AdviceList
    from bench.report.render.markdown import Page
    from bench.report.render.words.recommendations import UNDECIDED_SHOWN, advice_items

    rows = cell(ENV, axes(), [0.10] * 3) + cell(ENV, axes(precision="amp-bf16"), [0.05] * 3)
    (rec,) = [r for r in advice.recommend(load_reports(write_tree([(ENV, rows, [])])))
              if r.setting == "precision"]
    for n, named in ((UNDECIDED_SHOWN, UNDECIDED_SHOWN), (UNDECIDED_SHOWN + 5, UNDECIDED_SHOWN)):
        items = advice_items(AdviceList((), (rec,) * n), Page("index.md"))
        assert len(items["unknown"]) == named
        more = items["more"]
        assert (more is None) if n == named else \
            str(more).startswith(f"{n - named:,} more workloads are not listed here")
