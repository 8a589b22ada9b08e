"""The cores-to-feed rule at its boundaries, on hand-made rates (no run needed)."""

from __future__ import annotations

import math

import pytest

from bench.report.judge.feeding import Delivered, Rate, cores_to_feed, host_limit, per_worker
from bench.report.vocabulary import Feeding


def _sweep(*rates: tuple[int, float], n: int = 3) -> list[Delivered]:
    return [Delivered(w, Rate(r, r * 0.95, r * 1.05, n)) for w, r in rates]


SWEEP = _sweep((0, 100.0), (1, 150.0), (2, 290.0), (4, 560.0))


def test_exactly_enough_is_enough_and_names_the_smallest_count() -> None:
    got = cores_to_feed(Rate(290.0, 280.0, 300.0, 3), SWEEP, host_cores=4)
    assert got.verdict == Feeding.FED and got.workers == 2
    assert got.delivered is not None and got.delivered.rate.median == 290.0
    assert got.shortfall is None and not got.clear  # 290's interval reaches below 290


def test_just_above_a_count_needs_the_next_one() -> None:
    got = cores_to_feed(Rate(290.01, 280.0, 300.0, 3), SWEEP, host_cores=4)
    assert (got.verdict, got.workers) == (Feeding.FED, 4)
    assert got.clear  # 560 x 0.95 is above 290.01


def test_never_enough_on_this_host_gives_the_shortfall() -> None:
    got = cores_to_feed(Rate(1000.0, 950.0, 1050.0, 3), SWEEP, host_cores=4)
    assert got.verdict == Feeding.SHORT and got.workers is None
    assert got.delivered is not None and got.delivered.workers == 4
    assert got.shortfall == pytest.approx(440.0)


def test_a_sweep_that_stops_below_the_host_cores_says_so() -> None:
    got = cores_to_feed(Rate(1000.0, 950.0, 1050.0, 3), SWEEP, host_cores=16)
    assert got.verdict == Feeding.NOT_REACHED and got.measured_up_to == 4


def test_too_few_replicates_and_nothing_measured() -> None:
    few = cores_to_feed(Rate(120.0, math.nan, math.nan, 2), SWEEP, host_cores=4)
    assert few.verdict == Feeding.INSUFFICIENT and few.workers == 1  # the figure, no verdict
    assert cores_to_feed(None, SWEEP, 4).verdict == Feeding.NOT_MEASURED
    assert cores_to_feed(Rate(120.0, n=3), [], 4).verdict == Feeding.NOT_MEASURED
    assert cores_to_feed(Rate(math.nan, n=3), SWEEP, 4).verdict == Feeding.NOT_MEASURED


def test_zero_workers_never_feed_a_step_and_say_what_they_cost() -> None:
    # 0 workers deliver 100/s, above the step's 50/s; but then the step's own process decodes,
    # between its steps: the answer is the smallest count of one or more workers
    got = cores_to_feed(Rate(50.0, 45.0, 55.0, 3), SWEEP, host_cores=4)
    assert (got.verdict, got.workers) == (Feeding.FED, 1)
    assert got.inline is not None and got.inline.workers == 0
    # a sample costs the step 1/50 s and its decode 1/100 s, one after the other
    assert got.inline_wait == pytest.approx((1 / 100) / (1 / 50 + 1 / 100))
    # only 0 workers measured: no count to give, and no rate to call the best
    alone = cores_to_feed(Rate(50.0, 45.0, 55.0, 3), _sweep((0, 100.0)), host_cores=4)
    assert (alone.verdict, alone.workers, alone.delivered) == (Feeding.NOT_REACHED, None, None)
    assert alone.measured_up_to == 0 and alone.inline is not None
    # nor is a 0-worker rate the host's limit, however high it is
    fast_inline = _sweep((0, 500.0), (1, 150.0))
    limit = host_limit(fast_inline, cores=2)
    assert limit is not None and limit.workers == 1
    assert host_limit(_sweep((0, 500.0)), cores=2) is None
    # nor the best when none suffices: the shortfall is from a count that runs beside the step
    short = cores_to_feed(Rate(400.0, 380.0, 420.0, 3), fast_inline, host_cores=1)
    assert short.delivered is not None and short.delivered.workers == 1
    assert short.shortfall == pytest.approx(250.0)


def test_host_limit_and_the_ideal_line() -> None:
    limit = host_limit(SWEEP, cores=2)
    assert limit is not None and (limit.workers, limit.rate.median) == (2, 290.0)
    assert host_limit(SWEEP, cores=64) is not None
    assert per_worker(SWEEP) == 150.0 and per_worker(_sweep((0, 10.0))) is None


def _startup(workers: int) -> Delivered:
    """A worker count measured only inside its start-up: ok replicates, no rate."""
    return Delivered(workers, Rate(math.nan, n=0), startup=3)


def test_a_count_timed_inside_its_start_up_hides_the_answer_below_it() -> None:
    sweep = [Delivered(1, Rate(150.0, 140.0, 160.0, 3)), _startup(2), _startup(4)]
    assert cores_to_feed(Rate(100.0, 95.0, 105.0, 3), sweep, 4).verdict == Feeding.FED
    hidden = cores_to_feed(Rate(290.0, 280.0, 300.0, 3), sweep, 4)
    assert (hidden.verdict, hidden.workers, hidden.delivered) == (Feeding.STARTUP, None, None)
    # none covers the step and a count was never rated: it might have
    assert cores_to_feed(Rate(900.0, 850.0, 950.0, 3), sweep, 4).verdict == Feeding.STARTUP
    # measured only inside the start-up, everywhere
    assert cores_to_feed(Rate(90.0, n=3), [_startup(2)], 4).verdict == Feeding.STARTUP


def test_no_host_limit_where_a_count_within_its_cores_was_timed_inside_its_start_up() -> None:
    assert host_limit([*SWEEP[:2], _startup(2)], cores=2) is None
    limit = host_limit([*SWEEP[:2], _startup(8)], cores=4)  # 8 is beyond the host's cores
    assert limit is not None and limit.workers == 1


def test_the_host_limit_sentence_is_true_of_every_replicate_in_its_interval() -> None:
    """Half the replicates of the best worker count delivered more than its median, so the
    page does not say the host delivered "at most" the median: a step waits for data only
    beyond the interval's top, and only such steps are counted as waiting."""
    from types import SimpleNamespace

    from bench.report.judge.feeding_sections import Sweep
    from bench.report.questions.feeding.view import limit_text

    best = Delivered(2, Rate(386.0, 367.0, 466.0, 6))
    sweep = Sweep("cpu", "train", 8, "pil", "", ())

    def need(rate: float) -> SimpleNamespace:
        return SimpleNamespace(answer=SimpleNamespace(demand=Rate(rate)))

    section = SimpleNamespace(limit=best, limit_sweep=sweep, host_cores=2,
                              needs=(need(15.0), need(400.0), need(500.0)))
    text = limit_text(section)  # type: ignore[arg-type]
    assert "386 samples/s (95% CI 367–466) at its best worker count" in text
    assert "consumes more than the top of that interval waits" in text
    assert "at most" not in text
    assert text.endswith("1 of 3 consume more than 466 samples/s.")


def test_the_compare_row_says_a_startup_verdict_leaves_the_cores_unknown() -> None:
    from bench.report.judge.feeding_sections import FeedingSection, Need
    from bench.report.render.words.feeding import cores_per_gpu

    def section(answer: object) -> FeedingSection:
        need = Need("n", "p", "a", "resnet50", "train", 128, "amp-bf16", "channels_last",
                    "cuda", "pil", answer)  # type: ignore[arg-type]
        return FeedingSection(None, 16, True, (), (need,), (), need, None,  # type: ignore
                              None)

    demand = Rate(4000.0, 3900.0, 4100.0, 3)
    startup = cores_to_feed(demand, [_startup(2)], host_cores=16)
    assert cores_per_gpu(section(startup)) == (
        "not known: the pipelines were timed inside the workers' start-up "
        "(resnet50 train b128 amp-bf16 channels_last)")
    fed = cores_to_feed(demand, _sweep((1, 900.0), (8, 4500.0)), host_cores=16)
    assert cores_per_gpu(section(fed)).startswith("8 (resnet50 train b128")
    assert cores_per_gpu(None) == "not measured"


def test_a_sweep_of_0_workers_alone_gives_its_rate_and_wait_once() -> None:
    from bench.report.judge.feeding_sections import Need
    from bench.report.questions.feeding.view import inline_text, need_text

    answer = cores_to_feed(Rate(50.0, 45.0, 55.0, 3), _sweep((0, 150.0)), host_cores=4)
    need = Need("n", "p", "a", "resnet18", "train", 8, "fp32", "nchw", "cpu", "pil", answer)
    text = need_text(need, "It")
    assert text.startswith("It consumes 50.0 samples/s; only 0 workers were measured")
    assert "decoding between steps at 150 samples/s" in text
    assert text.endswith("the step would wait 25% of the time")  # 1/150 of each 1/50 + 1/150
    assert inline_text(need) == ""  # not said twice
    fed = cores_to_feed(Rate(50.0, 45.0, 55.0, 3), _sweep((0, 150.0), (1, 120.0)), 4)
    twin = Need("n", "p", "a", "resnet18", "train", 8, "fp32", "nchw", "cpu", "pil", fed)
    assert inline_text(twin).startswith("With 0 workers, decoding between steps at 150 samples/s")


def test_an_end_to_end_twin_with_benchmark_on_says_so() -> None:
    """The cores table quotes a step at its fastest setting (4,369 samples/s, benchmark
    off); the end-to-end table's twin ran with benchmark on (3,962): unlabelled, one step
    read as two figures."""
    from bench.report.judge.feeding_sections import EndToEnd
    from bench.report.questions.feeding.view import _synthetic

    rate = Rate(3962.0, 3900.0, 4000.0, 3)
    on = EndToEnd("e2e resnet50 cuda train b128", "p", "a", 16, rate, rate, 0.01, 0, "on")
    off = EndToEnd("e2e resnet50 cuda train b128", "p", "a", 16, rate, rate, 0.01, 0, "off")
    assert _synthetic(on) == "3,962 samples/s (cudnn.benchmark on)"
    assert _synthetic(off) == "3,962 samples/s"


def test_a_cpu_time_that_spans_the_cut_start_up_says_so() -> None:
    """The H200's sweeps read CPU time over windows whose start-up batches were cut from the
    rate: "—" with no reason read as not measured."""
    from types import SimpleNamespace

    from bench.report.judge.feeding_sections import Sweep, SweepPoint
    from bench.report.questions.feeding.view import _sweep_rows

    rate = Rate(156.0, 155.0, 160.0, 3)
    cut = SweepPoint(Delivered(1, rate), 0.5, math.nan, 0.0, cpu_spans_startup=True)
    whole = SweepPoint(Delivered(2, rate), 0.5, 0.004, 0.0)
    sweep = Sweep("cuda", "train", 128, "pil", "", (cut, whole))
    rows = _sweep_rows(SimpleNamespace(sweeps=(sweep,)))  # type: ignore[arg-type]
    assert rows[0][5] == "— (its CPU time spans the cut start-up)"
    assert rows[1][5] == "4.00 ms"


def test_counts_timed_inside_the_start_up_still_bound_the_workers_needed() -> None:
    # one worker rated (at most 164/s, the top of its interval), the rest only inside the
    # start-up: the step's 4,369/s takes at least 4369 / 164 workers at perfect scaling
    unrated = [Delivered(w, Rate(math.nan), startup=3) for w in (2, 4, 8, 16)]
    sweep = [Delivered(1, Rate(156.0, 150.0, 164.0, 3)), *unrated]
    got = cores_to_feed(Rate(4369.0, 4300.0, 4400.0, 3), sweep, host_cores=16)
    assert got.verdict == Feeding.STARTUP and got.workers is None
    assert got.at_least is not None and got.at_least.workers == math.ceil(4369 / 164) == 27
    assert got.at_least.source.workers == 1 and got.beyond_host
    # a larger host could hold that many: the bound stands, the host is not ruled out
    assert not cores_to_feed(Rate(4369.0, 4300.0, 4400.0, 3), sweep, host_cores=32).beyond_host


def test_the_tightest_rated_count_gives_the_bound_and_a_covering_count_needs_none() -> None:
    got = cores_to_feed(Rate(1000.0, 950.0, 1050.0, 3), SWEEP, host_cores=4)
    # per worker at most 157.5 (1 worker), 152.25 (2) and 147 (4): each bounds 7; the largest
    # rated count, nearest the counts not measured, is the one named
    assert got.at_least is not None and got.at_least.source.workers == 4
    assert got.at_least.workers == math.ceil(1000.0 * 4 / (560.0 * 1.05)) == 7
    assert got.beyond_host and got.verdict == Feeding.SHORT
    assert cores_to_feed(Rate(290.0, 280.0, 300.0, 3), SWEEP, 4).at_least is None
