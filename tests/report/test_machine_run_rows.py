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
    # one page per hardware model: box-a has the test GPU, box-b only the test CPU
    page_a = generated / "machines" / "test-gpu.md"
    page_b = next((generated / "machines").glob("test-cpu*.md"))
    assert "3 ok; 3 of 6 planned rows (unfinished)" in page_a.read_text(encoding="utf-8")
    text_b = page_b.read_text(encoding="utf-8")
    assert "6 ok; 6 of 6 planned rows" in text_b and "(unfinished)" not in text_b


def test_a_run_made_in_two_sittings_says_when_each_was(write_tree: Any, tmp_path: Path) -> None:
    """A budgeted run and its resume: the machine page names both sittings and their times;
    a run of one sitting, or of rows that predate the column, says nothing of sittings."""
    env = {**env_for("box", "r1"), "planned_rows": 6}
    first = cell(env, axes(), [0.1] * 3, sitting=1, started_at="2026-12-01T12:30:00Z",
                 ended_at="2026-12-01T12:31:00Z")
    second = cell(env, axes(batch_size=8), [0.1] * 3, sitting=2,
                  started_at="2026-12-02T09:00:00Z", ended_at="2026-12-02T09:05:30Z")
    other = {**env_for("box", "r2"), "planned_rows": 3}
    root = write_tree([(env, first + second, []), (other, cell(other, axes(), [0.1] * 3), [])])
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    text = (generated / "machines" / "test-gpu.md").read_text(encoding="utf-8")
    assert ("Run r1 was made in 2 sittings (a budgeted run and its resumes): "
            "2026-12-01 12:30–12:31 (3 rows), 2026-12-02 09:00–09:05 (3 rows), UTC.") in text
    assert "Run r2 was made" not in text


def _two_sittings(write_tree: Any, tmp_path: Path, records: list[dict[str, Any]]) -> str:
    """The machine page of a run made in three sittings whose env.json holds ``records``."""
    env = {**env_for("box", "r1"), "planned_rows": 9, "sittings": records}
    rows = [cell(env, axes(batch_size=b), [0.1] * 3, sitting=n,
                 started_at=f"2026-12-0{n}T12:30:00Z", ended_at=f"2026-12-0{n}T12:31:00Z")
            for n, b in ((1, 2), (2, 4), (3, 8))]
    root = write_tree([(env, [r for rs in rows for r in rs], [])])
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    return (generated / "machines" / "test-gpu.md").read_text(encoding="utf-8")


def test_sittings_that_ran_other_code_are_named(write_tree: Any, tmp_path: Path) -> None:
    """Which measuring code each sitting ran (env.json's records): one sentence when all ran
    the same, and which sittings ran which when they differ or some predate the record."""
    same = [{"sitting": n, "code": "aaaa", "commit": "c1"} for n in (1, 2, 3)]
    assert "Every sitting ran the same measuring code (aaaa, commit c1)." in \
        _two_sittings(write_tree, tmp_path / "same", same)
    other = [same[0], {**same[1], "code": "bbbb", "commit": None}, same[2]]
    assert ("Its sittings ran different measuring code, pooled as one run: sitting 1 aaaa, "
            "commit c1; sitting 2 bbbb; sitting 3 aaaa, commit c1.") in \
        _two_sittings(write_tree, tmp_path / "other", other)
    late = [{"sitting": 3, "code": "bbbb"}]  # sittings 1-2 ran before the record was kept
    assert "Measuring code: sittings 1–2 not recorded; sitting 3 bbbb." in \
        _two_sittings(write_tree, tmp_path / "late", late)
    assert "measuring code" not in _two_sittings(write_tree, tmp_path / "none", [])


def test_a_runs_timed_work_is_said_over_the_sittings_that_recorded_it(
        write_tree: Any, tmp_path: Path) -> None:
    """The share of a run's wall time that was measurement, from its sitting records: over the
    whole run when every sitting recorded it, else over those that did, and so worded."""
    timed = [{"sitting": n, "code": "aaaa", "wall_s": 100.0, "timed_s": t}
             for n, t in ((1, 90.0), (2, 95.0), (3, 80.0))]
    assert ("Timed work (cold passes and steady iterations) was 88.3% of its 300 s of wall "
            "time; the rest is the probe,") in _two_sittings(write_tree, tmp_path / "all", timed)
    partial = [{"sitting": 3, "code": "bbbb", "wall_s": 50.0, "timed_s": 45.5}]
    assert ("In the 1 sitting that recorded it, timed work (cold passes and steady "
            "iterations) was 91.0% of their 50.0 s of wall time") in \
        _two_sittings(write_tree, tmp_path / "partial", partial)
    assert "Timed work" not in _two_sittings(write_tree, tmp_path / "none", timed[:0])
    env = {**env_for("box", "one"), "planned_rows": 3,
           "sittings": [{"sitting": 1, "code": "aaaa", "wall_s": 10.0, "timed_s": 9.0}]}
    root = write_tree([(env, cell(env, axes(), [0.1] * 3, sitting=1), [])])
    render_tree(root, tmp_path / "one" / "generated")
    text = (tmp_path / "one" / "generated" / "machines" / "test-gpu.md").read_text(encoding="utf-8")
    assert "Run one: Timed work (cold passes and steady iterations) was 90.0% of its 10.0 s" \
        in text


def test_runs_of_one_fingerprint_that_ran_other_code_are_named(write_tree: Any,
                                                                tmp_path: Path) -> None:
    """A fingerprint pools its runs: where they ran different measuring code (or some
    predate the record), its section names which ran which; runs of one code say nothing."""
    def run(name: str, records: list[dict[str, Any]], batch: int) -> Any:
        env = {**env_for("box", name), "planned_rows": 3, "sittings": records}
        return (env, cell(env, axes(batch_size=batch), [0.1] * 3, sitting=1,
                          started_at="2026-12-01T12:30:00Z", ended_at="2026-12-01T12:31:00Z"),
                [])

    def page(where: str, *runs: Any) -> str:
        generated = tmp_path / where / "docs" / "generated"
        render_tree(write_tree(list(runs)), generated)
        return (generated / "machines" / "test-gpu.md").read_text(encoding="utf-8")

    new = [{"sitting": 1, "code": "bbbb", "commit": "c2"}]
    text = page("mixed", run("r1", [], 2), run("r2", [], 4), run("r3", new, 8))
    assert ("Its runs ran different measuring code, pooled as one fingerprint: r1 and r2: not "
            "recorded; r3: bbbb, commit c2.") in text, text
    assert "pooled as one fingerprint" not in page("same", run("r1", new, 2), run("r2", new, 4))
