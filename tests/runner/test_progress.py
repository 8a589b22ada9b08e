"""Progress falls back to plain lines when stderr is not a terminal (CI logs, pipes)."""

from __future__ import annotations

import io

from bench.run.execute.progress import Progress


def test_plain_lines_carry_counts_and_eta() -> None:
    now = [0.0]
    stream = io.StringIO()
    p = Progress(4, stream=stream, clock=lambda: now[0])
    for i, status in enumerate(["ok", "crash", "skipped", "ok"]):
        p.begin(f"cell {i}")
        now[0] += 10.0
        p.end(f"cell {i}", status)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("[1/4] ok") and "cell 0" in lines[0] and "eta 0m30s" in lines[0]
    assert "ok=1 failed=1" in lines[1]
    assert lines[-1].startswith("[4/4] ok") and "ok=2 failed=1" in lines[-1]


def test_a_replicate_whose_row_was_not_written_is_not_counted_as_failed() -> None:
    """A full disk stops the run at a replicate the store could not record: no row says it
    failed, so neither does the progress line."""
    stream = io.StringIO()
    p = Progress(2, stream=stream, clock=lambda: 0.0)
    p.end("cell 0", "ok")
    p.end("cell 1", "not written")
    assert "ok=1 failed=0" in stream.getvalue().splitlines()[-1]
