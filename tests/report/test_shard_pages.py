"""The machine page names the shards of a cluster run, and says how they are pooled, only
where a run was sharded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .builders import axes, cell, env_for, render_tree


def _page(write_tree: Any, tmp_path: Path, shards: bool,
          later_jobs: dict[int, list[str]] | None = None) -> str:
    """The machine page of two runs (shards of one, with ``shards``); ``later_jobs``: the
    jobs that resumed shard k's folder, as ``bench.run.cluster.node.note_job`` lists them."""
    runs = []
    for k in (1, 2):
        env = env_for("box", f"r1-shard{k}" if shards else f"r{k}")
        if shards:
            env["shard"] = {"spec": f"{k}/2", "slurm_job_id": str(40 + k)}
        runs.append((env, cell(env, axes(batch_size=8 * k), [0.1] * 3), []))
    root = write_tree(runs)
    for k, jobs in (later_jobs or {}).items():
        (root / "box" / f"r1-shard{k}" / "slurm-jobs.txt").write_text(
            "".join(f"{j}\n" for j in [str(40 + k), *jobs]))
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    page = generated / "machines" / "test-gpu.md"  # a hardware model's page lives at its name
    return page.read_text(encoding="utf-8")


def test_a_sharded_run_is_named_shard_by_shard(write_tree: Any, tmp_path: Path) -> None:
    page = _page(write_tree, tmp_path, shards=True)
    assert "r1-shard1, shard 1/2 (Slurm job 41)" in page
    assert "r1-shard2, shard 2/2 (Slurm job 42)" in page
    assert "one folder per shard" in page


def test_a_machine_without_shards_says_nothing_of_them(write_tree: Any, tmp_path: Path) -> None:
    assert "one folder per shard" not in _page(write_tree, tmp_path, shards=False)


def test_a_resumed_shard_names_every_slurm_job_it_ran_under(write_tree: Any,
                                                             tmp_path: Path) -> None:
    """The first job (env.json's) alone would name job 41 for rows that job 43 wrote."""
    page = _page(write_tree, tmp_path, shards=True,
                 later_jobs={1: ["43"], 2: ["44", "45", "46", "47", "not-a-job <b>"]})
    assert "r1-shard1, shard 1/2 (Slurm jobs 41, 43)" in page
    assert "r1-shard2, shard 2/2 (Slurm jobs 42, …, 47: 5 in all, the latest last)" in page
    assert "not-a-job" not in page, "the folder's list is untrusted: job ids only"
