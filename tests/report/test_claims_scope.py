"""Claims whose findings must not say more than their rows: a re-run pair that differs in
more than cudnn.benchmark, changing shapes judged without the same workload's one-shape
result, an upgrade judged only on the slowest machine, a count that names the wrong ones,
and a summary that does not say which models and machines it rests on."""

from __future__ import annotations

from typing import Any

from bench.report.vocabulary import ClaimVerdict, Stance

from .builders import axes, cell, env_for, result_row
from .test_claims import ENV, WIDE, _benchmark, _verdict


def _repro(bm: str, equal: bool, cache: str = "fresh", diff: float = 0.0) -> dict[str, object]:
    return result_row(ENV, axes(cudnn_benchmark=bm, kernel_cache=cache), kind="repro",
                      repro_bitwise_equal="true" if equal else "false",
                      repro_max_abs_diff=diff)


def test_a_rerun_pair_that_differs_in_the_kernel_cache_too_cannot_tell(write_tree: Any) -> None:
    """The H200's checks: unequal with benchmark on and a warm kernel cache (0.351 apart),
    equal with it off and a fresh one. Two settings differ, so the pair cannot say which made
    the difference; the finding says so and names the check that would tell."""
    on = _repro("on", False, cache="warm", diff=0.350856)
    mixed = _verdict(write_tree, "benchmark-nondeterministic", [_repro("off", True), on])
    assert mixed.verdict == ClaimVerdict.CANNOT_TELL
    (finding,) = mixed.findings
    assert finding.stance == Stance.CANNOT_TELL
    assert "differs in kernel cache (fresh with it off, warm with it on) as well" in finding.text
    assert "bitwise equal with it off, every other setting" not in finding.text
    # what the figure is a difference of
    assert ("(largest absolute difference 0.351 in an element of the last step's output and "
            "gradients)") in finding.text
    assert ("the same re-run check with benchmark off on that machine, with kernel cache warm "
            "as with it on") in mixed.missing
    assert "differs in another setting too, which cannot tell" in mixed.summary
    # the check that matches in every other setting tells, and it alone is cited beside it
    warm_off = _repro("off", True, cache="warm")
    paired = _verdict(write_tree, "benchmark-nondeterministic",
                      [_repro("off", True), warm_off, on])
    assert paired.verdict == ClaimVerdict.SUPPORTED
    assert "bitwise equal with it off, every other setting the same" in paired.findings[0].text
    fp8 = str(ENV["fingerprint_id"])[:8]
    assert {a for _, a in paired.evidence} == {f"repro-{fp8}-{r['cell_id']}"
                                               for r in (on, warm_off)}


def _cycled(on_factor: float, static: float | None) -> list[dict[str, object]]:
    """A cycled-shapes pair whose benchmark-on first passes are dearer, beside the same
    workload's one-shape pair with benchmark on ``static`` times the step (None: no pair)."""
    off = [0.100, 0.101, 0.099]
    rows = _benchmark(static) if static is not None else []
    rows += cell(ENV, axes(shapes="dynamic"), off, cold_pass_s=1.5, shape_count=3)
    rows += cell(ENV, axes(shapes="dynamic", cudnn_benchmark="on"),
                 [t * on_factor for t in off], cold_pass_s=12.0, shape_count=3)
    return rows


def test_changing_shapes_are_blamed_only_against_the_same_workload_with_one_shape(
        write_tree: Any) -> None:
    """Benchmark no faster over a cycle of shapes says nothing of the shapes when it is no
    faster with one shape either (the H200's resnet50: 1.00× cycled, 0.99× static)."""
    neither = _verdict(write_tree, "benchmark-dynamic", _cycled(1.0, static=1.0))
    assert neither.verdict == ClaimVerdict.CANNOT_TELL
    assert "benchmark is no faster with one shape either" in neither.findings[0].text
    assert ("a workload on which cudnn.benchmark is clearly faster with one input shape, "
            "measured with changing shapes as well") in neither.missing
    assert neither.summary.startswith("on box, of 1 configuration with changing shapes "
                                      "(resnet50): ")
    # the summary says why it cannot tell, not every reason a finding might have
    assert neither.summary.endswith("no faster with one input shape either in 1"), \
        neither.summary
    # a gain with one shape that the changing shapes take away: supported
    helps = _verdict(write_tree, "benchmark-dynamic", _cycled(1.0, static=0.6))
    assert helps.verdict == ClaimVerdict.SUPPORTED
    assert "the changing shapes take its gain away" in helps.findings[0].text
    # a cost over the cycle: supported whatever one shape does
    costs = _verdict(write_tree, "benchmark-dynamic", _cycled(1.3, static=1.0))
    assert costs.verdict == ClaimVerdict.SUPPORTED
    # nothing with one shape to hold it against: cannot tell, and it says what would
    alone = _verdict(write_tree, "benchmark-dynamic", _cycled(1.0, static=None))
    assert alone.verdict == ClaimVerdict.CANNOT_TELL
    assert "the same workload with one input shape, cudnn.benchmark on and off" in alone.missing
    assert alone.summary.endswith("no one-shape pair in 1"), alone.summary


def test_every_slower_machine_of_a_workload_is_judged_against_the_upgrade(
        write_tree: Any) -> None:
    """Two workloads on a GPU box and two CPU boxes, the slowest a different one for each: every
    CPU box is judged on both workloads, not only where it is the slowest."""
    slow_a = env_for("cpu-a", "run-2", gpu=False)
    slow_b = env_for("cpu-b", "run-3", gpu=False)

    def cpu_rows(env: dict[str, Any], mode: str, fp32: float) -> list[dict[str, object]]:
        at = {"device": "cpu", "mode": mode, "batch_size": 1, "cpu_threads": ""}
        return (cell(env, axes(**at), [fp32] * 3)
                + cell(env, axes(precision="amp-bf16", **at), [fp32 / 1.2] * 3))

    fast = (cell(ENV, axes(mode="infer", batch_size=1), [0.01] * 3)
            + cell(ENV, axes(mode="train", batch_size=1), [0.03] * 3))
    more = [(slow_a, cpu_rows(slow_a, "infer", 0.30) + cpu_rows(slow_a, "train", 0.80), []),
            (slow_b, cpu_rows(slow_b, "infer", 0.25) + cpu_rows(slow_b, "train", 0.90), [])]
    found = _verdict(write_tree, "upgrade-beats-settings", fast, more=more)
    assert len(found.findings) == 4
    assert {(f.machine, f.label) for f in found.findings} == {
        (m, f"resnet50 · {mode} · batch 1") for m in ("cpu-a", "cpu-b")
        for mode in ("infer", "train")}
    for machine in ("cpu-a", "cpu-b"):
        assert (f"on {machine}, of 2 workloads measured on two machines (resnet50): the upgrade "
                "buys more in 2") in found.summary, found.summary
    assert found.verdict == ClaimVerdict.SUPPORTED
    assert "the best single-setting change measured on cpu-a: fp32 → amp-bf16 1.20×" in (
        next(f.text for f in found.findings if f.machine == "cpu-a"))


def test_those_named_within_the_band_are_not_counted_as_too_wide(write_tree: Any) -> None:
    """Five "no clear difference", three within 1 ± δ and named, two too wide: the two are
    the others, not "2 of them"."""
    rows = _benchmark(0.6)
    rows += [r for m in ("net0", "net1", "net2") for r in _benchmark(1.0, model=m)]
    rows += [r for m in ("wide0", "wide1") for r in _benchmark(1.0, WIDE, model=m)]
    found = _verdict(write_tree, "benchmark-static", rows)
    assert found.verdict == ClaimVerdict.DEPENDS
    assert ("no clear difference in 5 (3 within 1 ± 3%: net0 · train 1.00×, net1 · train "
            "1.00×, net2 · train 1.00×; the other 2 too wide to tell)") in found.summary
    assert "of them too wide" not in found.summary


def test_a_summary_names_the_models_and_machines_it_rests_on(write_tree: Any) -> None:
    """One model on one machine: the summary (shown alone on the finding pages) says which, so
    the verdict never reads as the machine's."""
    cpu = {"device": "cpu", "mode": "infer", "batch_size": 8}
    threads = _verdict(write_tree, "threads",
                       cell(ENV, axes(cpu_threads=1, **cpu), [0.2] * 3)
                       + cell(ENV, axes(cpu_threads="", **cpu), [0.1] * 3))
    assert threads.verdict == ClaimVerdict.SUPPORTED
    assert threads.summary.startswith("on box, of 1 configuration (resnet50): every core")
    assert threads.summary.endswith("; every core: 4 threads on box")  # how many "every" is
    # two models on the machine, one too wide to tell: the one that told is named
    wide = [0.2 * k for k in WIDE]
    two = _verdict(write_tree, "threads",
                   cell(ENV, axes(cpu_threads=1, **cpu), [0.2] * 3)
                   + cell(ENV, axes(cpu_threads="", **cpu), [0.1] * 3)
                   + cell(ENV, axes(cpu_threads=1, model="vit_b_16", **cpu), [0.2] * 3)
                   + cell(ENV, axes(cpu_threads="", model="vit_b_16", **cpu), wide))
    assert ("on box, of 2 configurations (resnet50, vit_b_16): every core clearly faster than "
            "one thread in 1 (resnet50 · infer · batch 8), not clearly faster in 0, too wide an "
            "interval to tell in 1") in two.summary, two.summary
    repro = _verdict(write_tree, "benchmark-nondeterministic",
                     [_repro("off", True), _repro("on", True)])
    assert "(deterministic off) on box (resnet50): equal in 1 of 1 check" in repro.summary
    static = _verdict(write_tree, "benchmark-static", _benchmark(0.6))
    assert "of 1 configuration with one input shape (resnet50)" in static.summary



def test_findings_that_cannot_tell_are_counted_under_their_own_reasons() -> None:
    """"too few ok replicates, no setting change measured on the slower, or intervals too
    close to tell in 6" did not say which: each reason is now counted on its own, and a
    finding without one falls back to the claim's words."""
    from bench.report.judge.claims.findings import tally
    from bench.report.judge.claims.model import Finding

    def found(stance: Stance, why: str = "") -> Finding:
        return Finding(stance, "box-1", "box", "", model="resnet50", why=why)

    fs = [found(Stance.SUPPORTS), found(Stance.CANNOT_TELL, "no setting measured"),
          found(Stance.CANNOT_TELL, "too few ok replicates"),
          found(Stance.CANNOT_TELL, "no setting measured")]
    assert tally(fs, "workloads", "yes", "no", "unknown") == (
        "on box, of 4 workloads (resnet50): yes in 1 (resnet50), no in 0, no setting measured "
        "in 2, too few ok replicates in 1")
    fs[-1] = found(Stance.CANNOT_TELL)
    assert tally(fs, "workloads", "yes", "no", "unknown").endswith("unknown in 3")
