"""``bench.sittings``: which sittings of a run disagree, held against the spread within them.

Hand-made observations, no files: each replicate's step time is a cell's base time, times its
sitting's pace, times a fixed +-1% jitter (so the spread within sittings is about 1% of log
time and the limit ``max(DELTA, Z * spread)`` is about 1.03x).
"""

from __future__ import annotations

import math
import statistics

import pytest

from bench.sittings import (
    DELTA,
    MIN_SPREAD,
    Agreement,
    Observation,
    Part,
    Z,
    judge,
    judge_rows,
    observation,
    probe_observations,
)

RUN = "run-1"
#: Three replicates per sitting and cell, one percent apart: their SD of log time is ~0.01.
JITTER = (0.99, 1.0, 1.01)
SPREAD = statistics.stdev(math.log(j) for j in JITTER)  # ~0.0100
LIMIT = math.exp(max(math.log1p(DELTA), Z * SPREAD))


def _obs(sitting: int, cells: list[str], pace: float = 1.0, part: Part = Part.CPU,
         jitter: tuple[float, ...] = JITTER, run: str = RUN) -> list[Observation]:
    """Each cell's replicates in one sitting: cell ``k`` takes ``0.1 * (k + 1)`` s at pace 1."""
    return [Observation(run, sitting, cell, part, 0.1 * (k + 1) * pace * j)
            for k, cell in enumerate(cells) for j in jitter]


def _pace(judgement, sitting: int, part: Part = Part.CPU):
    [found] = [p for p in judgement.paces if p.sitting == sitting and p.part is part]
    return found


CELLS5 = [f"c{k}" for k in range(5)]


def test_a_sitting_slower_on_five_shared_cells_disagrees_and_is_named() -> None:
    verdict = judge(_obs(1, CELLS5) + _obs(2, CELLS5) + _obs(3, CELLS5, pace=1.6))
    [slow] = verdict.disagreeing()
    assert (slow.run_id, slow.sitting, slow.part, slow.cells) == (RUN, 3, Part.CPU, 5)
    assert slow.pace == pytest.approx(1.6, rel=1e-9)
    assert slow.limit == pytest.approx(LIMIT, rel=1e-3)
    for kept in (1, 2):  # held against the kept sittings alone: sitting 3 no longer counts
        p = _pace(verdict, kept)
        assert (p.agreement, p.cells) == (Agreement.AGREES, 5)
        assert p.pace == pytest.approx(1.0, rel=1e-9)
    assert verdict.spread[(RUN, Part.CPU)] == pytest.approx(SPREAD, rel=1e-3)
    assert verdict.left_out() == {(RUN, 3, "*cpu")}
    assert verdict.cells == ()  # a sitting left out whole is not judged cell by cell too
    assert verdict.is_left_out(RUN, 3, "c0", Part.CPU)
    assert not verdict.is_left_out(RUN, 1, "c0", Part.CPU)
    assert not verdict.is_left_out(RUN, 3, "c0", Part.GPU)


def test_two_shared_cells_are_too_few_for_a_pace_and_are_judged_cell_by_cell() -> None:
    cells = ["a", "b"]
    verdict = judge(_obs(1, cells) + _obs(2, cells, pace=1.6))
    assert verdict.disagreeing() == ()
    one, two = _pace(verdict, 1), _pace(verdict, 2)
    assert (one.agreement, two.agreement) == (Agreement.FEW, Agreement.FEW)
    assert (one.cells, two.cells) == (2, 2)
    assert two.pace == pytest.approx(1.6, rel=1e-9)
    assert one.pace == pytest.approx(1 / 1.6, rel=1e-9)
    left = sorted(verdict.cells, key=lambda c: c.cell_id)
    assert [(c.sitting, c.cell_id, c.reference) for c in left] == [(2, "a", 1), (2, "b", 1)]
    for c in left:
        assert c.ratio == pytest.approx(1.6, rel=1e-9)
        # three replicates on either side: the limit widens by sqrt(1/3 + 1/3)
        band = math.exp(max(math.log1p(DELTA), Z * SPREAD * math.sqrt(2 / 3)))
        assert c.limit == pytest.approx(band, rel=1e-3)
    assert verdict.left_out() == {(RUN, 2, "a"), (RUN, 2, "b")}


def test_per_cell_the_slower_sittings_replicates_are_left_out_never_the_faster() -> None:
    """Cell ``a`` ran slow in sitting 2, cell ``b`` in sitting 1; the rest agree, so no whole
    sitting's pace moves: each cell leaves out its slower sitting's replicates alone."""
    fine = [f"f{k}" for k in range(4)]
    obs = _obs(1, fine) + _obs(2, fine)
    obs += _obs(1, ["a"]) + _obs(2, ["a"], pace=1.5)
    obs += _obs(1, ["b"], pace=1.5) + _obs(2, ["b"])
    verdict = judge(obs)
    assert {p.agreement for p in verdict.paces} == {Agreement.AGREES}
    assert {(c.sitting, c.cell_id, c.reference) for c in verdict.cells} == {(2, "a", 1),
                                                                            (1, "b", 2)}
    assert all(c.ratio == pytest.approx(1.5, rel=1e-9) for c in verdict.cells)
    assert verdict.is_left_out(RUN, 2, "a", Part.CPU)
    assert not verdict.is_left_out(RUN, 1, "a", Part.CPU)
    assert verdict.is_left_out(RUN, 1, "b", Part.CPU)
    assert not verdict.is_left_out(RUN, 2, "b", Part.CPU)
    assert not any(verdict.is_left_out(RUN, s, c, Part.CPU) for s in (1, 2) for c in fine)


def test_two_sittings_within_noise_agree_and_nothing_is_left_out() -> None:
    verdict = judge(_obs(1, CELLS5) + _obs(2, CELLS5, pace=1.01))
    assert [(p.sitting, p.agreement, p.cells) for p in verdict.paces] == [
        (1, Agreement.AGREES, 5), (2, Agreement.AGREES, 5)]
    assert _pace(verdict, 2).pace == pytest.approx(1.01, rel=1e-9)
    assert verdict.disagreeing() == () and verdict.cells == ()
    assert verdict.left_out() == frozenset()


def test_a_slow_host_leaves_out_its_cpu_cells_and_not_its_gpu_cells() -> None:
    gpu = [f"g{k}" for k in range(4)]
    obs = _obs(1, CELLS5) + _obs(2, CELLS5, pace=1.6)
    obs += _obs(1, gpu, part=Part.GPU) + _obs(2, gpu, part=Part.GPU)
    verdict = judge(obs)
    [slow] = verdict.disagreeing()
    assert (slow.sitting, slow.part, slow.cells) == (2, Part.CPU, 5)
    assert slow.pace == pytest.approx(1.6, rel=1e-9)
    gpu_two = _pace(verdict, 2, Part.GPU)
    assert (gpu_two.agreement, gpu_two.cells) == (Agreement.AGREES, 4)
    assert gpu_two.pace == pytest.approx(1.0, rel=1e-9)
    assert verdict.left_out() == {(RUN, 2, "*cpu")}
    assert verdict.is_left_out(RUN, 2, "c0", Part.CPU)
    assert not verdict.is_left_out(RUN, 2, "g0", Part.GPU)
    assert verdict.cells == ()


def _records(paces: dict[int, float], name: str = "cpu_matmul") -> list[dict[str, object]]:
    """env.json sitting records whose probe read 0.2 s (start) and 0.202 s (end) at pace 1."""
    return [{"sitting": s, "code": "abc", "pace": {
        "start": {name: {"cell_id": "x", "steady_p10_s": 0.2 * p}},
        "end": {name: {"cell_id": "x", "steady_p10_s": 0.202 * p},
                "cuda_launch": {"cell_id": "y", "missing": "timeout"}}}}
        for s, p in paces.items()]


def _row(sitting: object, cell: str, seconds: float, replicate: int = 0,
         **over: object) -> dict[str, object]:
    row: dict[str, object] = {"run_id": RUN, "sitting": str(sitting), "cell_id": cell,
                              "kind": "model", "status": "ok", "device": "cpu",
                              "replicate": str(replicate), "steady_median_s": str(seconds)}
    row.update(over)
    return row


def _rows(sitting: object, cells: list[str], pace: float = 1.0) -> list[dict[str, object]]:
    return [_row(sitting, cell, 0.1 * (k + 1) * pace * j, replicate=i)
            for k, cell in enumerate(cells) for i, j in enumerate(JITTER)]


def test_pace_probes_of_the_sitting_records_count_as_cells() -> None:
    """Two shared cells say nothing of a whole sitting's pace; its probes, slow at both ends
    as its cells are, make three, and then the sitting disagrees."""
    cells = ["a", "b"]
    rows = _rows(1, cells) + _rows(2, cells, pace=1.6)
    without = judge_rows(rows)
    assert {p.agreement for p in without.paces} == {Agreement.FEW}
    probes = probe_observations(RUN, [*_records({1: 1.0, 2: 1.6}), {"sitting": "x"}])
    assert sorted((o.sitting, o.cell_id, o.part, round(o.seconds, 4)) for o in probes) == [
        (1, "pace:cpu_matmul", Part.CPU, 0.2), (1, "pace:cpu_matmul", Part.CPU, 0.202),
        (2, "pace:cpu_matmul", Part.CPU, 0.32), (2, "pace:cpu_matmul", Part.CPU, 0.3232)]
    verdict = judge_rows(rows, {RUN: _records({1: 1.0, 2: 1.6})})
    [slow] = verdict.disagreeing()
    assert (slow.sitting, slow.cells, slow.part) == (2, 3, Part.CPU)
    assert slow.pace == pytest.approx(1.6, rel=1e-9)
    assert verdict.is_left_out(RUN, 2, "a", Part.CPU)
    # a probe is never left out on its own as a cell's replicates would be
    assert not any(c.cell_id.startswith("pace:") for c in verdict.cells)


def test_a_cuda_probe_counts_for_the_gpu_and_not_the_host() -> None:
    [probe] = probe_observations(RUN, [{"sitting": 1, "pace": {
        "start": {"cuda_matmul": {"steady_p10_s": 0.01}}}}])
    assert (probe.part, probe.cell_id) == (Part.GPU, "pace:cuda_matmul")


def test_rows_without_a_sitting_are_never_judged() -> None:
    """Rows written before sittings were recorded (an empty ``sitting``) do not count, however
    slow; nor do failed rows or rows of kinds that say no pace."""
    rows = _rows(1, CELLS5) + _rows(2, CELLS5, pace=1.01)
    rows += _rows("", CELLS5, pace=3.0) + _rows("None", CELLS5, pace=3.0)
    rows += [_row(2, "c0", 9.0, replicate=7, status="crash"),
             _row(2, "c0", 9.0, replicate=8, kind="pipeline")]
    assert observation(_row("", "c0", 1.0)) is None
    assert observation(_row(2, "c0", 1.0, status="timeout")) is None
    assert observation(_row(2, "c0", 0.0)) is None
    verdict = judge_rows(rows)
    assert sorted(p.sitting for p in verdict.paces) == [1, 2]
    assert {p.agreement for p in verdict.paces} == {Agreement.AGREES}
    assert verdict.left_out() == frozenset()


def test_a_lone_sitting_is_not_judged_and_identical_replicates_floor_the_spread() -> None:
    assert judge(_obs(1, CELLS5)).paces == ()
    verdict = judge(_obs(1, CELLS5, jitter=(1.0, 1.0)) + _obs(2, CELLS5, jitter=(1.0, 1.0)))
    assert verdict.spread[(RUN, Part.CPU)] == MIN_SPREAD
    # a sitting sharing no cell with another has nothing to be compared with
    alone = judge(_obs(1, ["a"]) + _obs(2, ["b"]))
    assert {p.agreement for p in alone.paces} == {Agreement.ALONE}
    assert all(p.pace is None and p.cells == 0 for p in alone.paces)


def test_the_sitting_kept_against_a_slow_one_is_not_said_to_have_nothing_to_compare() -> None:
    """Two sittings, the second 1.6x slower and left out: the first shared five cells with it
    and was its reference, so it is not ``ALONE`` ("it shares no cell with another sitting"),
    which the machine page shows as "nothing to compare"."""
    verdict = judge(_obs(1, CELLS5) + _obs(2, CELLS5, pace=1.6))
    assert [p.sitting for p in verdict.disagreeing()] == [2]
    kept = _pace(verdict, 1)
    assert kept.agreement is Agreement.AGREES and kept.cells == 5 and kept.pace == 1.0
