"""Split a run's plan into shards, one per cluster node, each a normal run of its own.

Why by cell, in contiguous blocks: a shard runs every replicate (and the re-run check) of its
cells, so each cell's replicates come from one node and one fingerprint, and the rounds stay
interleaved inside the shard (replicate 0 of each of its cells, then replicate 1, …), exactly
as in a local run. Cells of one study sit next to each other in the plan, so a contiguous block
keeps most comparisons' arms on one node. Blocks are cut where the estimated time is shared
out evenly, so no node waits on another for long.

Pure functions over the plan: the submitting process and every shard compute the same split
from the same profile, so a shard needs only its index and the count (``--shard K/N``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bench.run.plan import estimate
from bench.run.plan.jobs import Job


class ShardError(ValueError):
    """A shard that cannot be made; one line naming the problem."""


def parse(spec: str) -> tuple[int, int]:
    """``"2/4"`` → (2, 4): shard 2 of 4, counted from 1."""
    match = re.fullmatch(r"(\d+)/(\d+)", spec.strip())
    if not match:
        raise ShardError(f"--shard {spec!r}: expected K/N, e.g. 2/4")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise ShardError(f"--shard {spec!r}: K must be between 1 and N")
    return k, n


def cells_in_order(jobs: Sequence[Job]) -> list[str]:
    """The plan's cell ids, each once, in the order the plan first meets them."""
    return list(dict.fromkeys(j.cell.cell_id for j in jobs))


def split(jobs: Sequence[Job], count: int, cores: int = 1) -> list[list[Job]]:
    """``count`` shards of ``jobs``: contiguous blocks of cells of about equal estimated time,
    each shard's jobs in the plan's own order."""
    cells = cells_in_order(jobs)
    if count < 1:
        raise ShardError("--shards must be at least 1")
    if count > len(cells):
        raise ShardError(f"--shards {count} is more than the profile's {len(cells)} cells")
    cost = dict.fromkeys(cells, 0.0)
    for j in jobs:
        t = estimate.replicate_s(j.cell, j.study.settings, cores)
        cost[j.cell.cell_id] += 2 * t if j.op == "repro" else t
    total = sum(cost.values())
    owner: dict[str, int] = {}
    shard, spent, filled = 0, 0.0, False
    for i, cid in enumerate(cells):
        if shard < count - 1 and filled:
            # a cell goes to the next shard when more than half of it would lie past this
            # shard's share (one long cell, a fresh compile, cannot swing the split)
            share_done = spent + cost[cid] / 2 >= total * (shard + 1) / count
            # the cells left must still give every later shard one
            must = len(cells) - i <= count - shard - 1
            if share_done or must:
                shard, filled = shard + 1, False
        owner[cid] = shard
        spent += cost[cid]
        filled = True
    out: list[list[Job]] = [[] for _ in range(count)]
    for j in jobs:
        out[owner[j.cell.cell_id]].append(j)
    return out


def select(jobs: Sequence[Job], k: int, n: int, cores: int = 1) -> list[Job]:
    """Shard ``k`` of ``n`` (counted from 1)."""
    return split(jobs, n, cores)[k - 1]


def run_id(base: str, k: int) -> str:
    """The run folder of shard ``k``: ``<run-id>-shard<k>``."""
    return f"{base}-shard{k}"
