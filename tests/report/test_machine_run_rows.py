"""The machine page counts a run's rows in its own folder: two folders can share a run id (a
Slurm shard resubmitted to another kind of node gets the same ``<run>-shardK`` id under
another machine), and an unfinished run must still read as unfinished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .builders import axes, cell, env_for, render_tree


def test_a_run_id_shared_by_two_machines_counts_each_folder_alone(write_tree: Any,
                                                                   tmp_path: Path) -> None:
    a = {**env_for("box-a", "r1-shard1"), "planned_rows": 6}
    b = {**env_for("box-b", "r1-shard1", gpu=False), "planned_rows": 6}
    assert a["fingerprint_id"] != b["fingerprint_id"]
    runs = [(a, cell(a, axes(), [0.1] * 3), []),  # stopped after 3 of its 6 rows
            (b, cell(b, axes(), [0.1] * 3) + cell(b, axes(batch_size=8), [0.1] * 3), [])]
    root = write_tree(runs)
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    page_a, page_b = (generated / "machines" / "box-a.md"), (generated / "machines" / "box-b.md")
    assert "3 ok; 3 of 6 planned rows (unfinished)" in page_a.read_text(encoding="utf-8")
    text_b = page_b.read_text(encoding="utf-8")
    assert "6 ok; 6 of 6 planned rows" in text_b and "(unfinished)" not in text_b
