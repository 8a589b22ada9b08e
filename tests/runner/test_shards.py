"""Shards: every job in exactly one shard, rounds interleaved inside each, cells never split."""

from __future__ import annotations

import pytest

from bench.run.cluster import shards
from bench.run.plan.jobs import plan
from bench.run.plan.profiles import load_profile


@pytest.mark.parametrize(("profile", "count"), [("smoke", 2), ("cpu", 3), ("gpu", 4)])
def test_every_job_lands_in_one_shard_with_its_cell(profile: str, count: int) -> None:
    jobs = plan(load_profile(profile))
    parts = shards.split(jobs, count)
    assert len(parts) == count and all(parts), "no shard is empty"
    assert sorted(map(id, (j for p in parts for j in p))) == sorted(map(id, jobs))
    owner = {}
    for k, part in enumerate(parts):
        for j in part:
            assert owner.setdefault(j.cell.cell_id, k) == k, "a cell's replicates stay together"
        # the plan's own order inside a shard: replicate rounds, then the re-run checks
        assert part == [j for j in jobs if j in part]
        measured = [j.replicate for j in part if j.op == "measure"]
        assert measured == sorted(measured), "round-robin: round 0 of every cell, then 1"


def test_shards_share_the_estimated_time_out_evenly() -> None:
    from bench.run.plan import estimate

    jobs = plan(load_profile("cpu"))
    cost = [sum(estimate.replicate_s(j.cell, j.study.settings, 1) * (2 if j.op == "repro"
                                                                     else 1) for j in part)
            for part in shards.split(jobs, 2)]
    assert max(cost) < 1.6 * min(cost), cost


def test_the_submitter_and_each_shard_agree_on_the_split() -> None:
    jobs = plan(load_profile("smoke"))
    parts = shards.split(jobs, 3)
    assert [shards.select(jobs, k, 3) for k in (1, 2, 3)] == parts


@pytest.mark.parametrize(("spec", "words"), [("0/2", "between 1 and N"), ("3/2", "between"),
                                             ("two", "expected K/N")])
def test_a_bad_shard_is_one_line(spec: str, words: str) -> None:
    with pytest.raises(shards.ShardError, match=words):
        shards.parse(spec)


def test_more_shards_than_cells_is_refused() -> None:
    jobs = plan(load_profile("smoke"))
    with pytest.raises(shards.ShardError, match="is more than the profile's"):
        shards.split(jobs, 1000)
