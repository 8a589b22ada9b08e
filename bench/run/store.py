"""Append-only CSV storage: one row per replicate, flushed and fsynced as it is written.

Why append-only and fsync per row: a run can take hours on a shared GPU box and may be
killed at any moment. Every finished replicate must survive that, and a resume must be able
to trust what is on disk. An existing results file is never rewritten; a header is written
only when the file is created, and an existing file with a different header is refused.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.schema import (
    ENV_FILE,
    RESULT_COLUMNS,
    RESULTS_FILE,
    SAMPLE_COLUMNS,
    SAMPLES_FILE,
    SchemaError,
)


def _cell(value: Any) -> str:
    """CSV text for one value; None is empty, floats keep full precision."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if value == value and value not in (float("inf"), float("-inf")) \
            else ""
    return str(value)


class CsvAppender:
    """Appends rows in a fixed column order to one CSV file, durably."""

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = tuple(columns)
        if path.exists() and path.stat().st_size > 0:
            with open(path, newline="", encoding="utf-8") as f:
                header = next(csv.reader(f), [])
            if tuple(header) != self.columns:
                raise SchemaError(f"{path}: existing header does not match this schema version;"
                                  " write to a new --out directory")
            self._repair_tail()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._write([self.columns])

    def _repair_tail(self) -> None:
        """A run killed mid-write can leave a last line without its newline. Appending to it
        would glue two rows together, so terminate it: the loader then reports that line as
        malformed instead of silently mixing rows."""
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
        if last != b"\n":
            with open(self.path, "ab") as f:
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())

    def _write(self, rows: Iterable[Sequence[Any]]) -> None:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        for row in rows:
            writer.writerow(row)
        with open(self.path, "a", newline="", encoding="utf-8") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write rows (dicts keyed by column) in one flush + fsync."""
        self._write([[_cell(r.get(c)) for c in self.columns] for r in rows])


class RunStore:
    """The three files of one run directory: results.csv, samples.csv, env.json."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.results_path = run_dir / RESULTS_FILE
        self.samples_path = run_dir / SAMPLES_FILE
        self.env_path = run_dir / ENV_FILE
        self._results: CsvAppender | None = None
        self._samples: CsvAppender | None = None

    def exists(self) -> bool:
        return self.results_path.exists()

    def open(self) -> None:
        self._samples = CsvAppender(self.samples_path, SAMPLE_COLUMNS)
        self._results = CsvAppender(self.results_path, RESULT_COLUMNS)

    def write_env(self, env: Mapping[str, Any]) -> None:
        """env.json is written once, when the run starts; never rewritten."""
        if self.env_path.exists():
            return
        tmp = self.env_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(env, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.env_path)

    def read_env(self) -> dict[str, Any] | None:
        if not self.env_path.exists():
            return None
        loaded: dict[str, Any] = json.loads(self.env_path.read_text(encoding="utf-8"))
        return loaded

    def add(self, row: Mapping[str, Any], samples: Sequence[Mapping[str, Any]] = ()) -> None:
        """Samples first, then the result row: an ok row on disk implies its samples are."""
        assert self._results is not None and self._samples is not None, "call open() first"
        if samples:
            self._samples.append(samples)
        self._results.append([row])

    def existing_rows(self) -> list[dict[str, str]]:
        """Rows already on disk, for --resume (a torn last line is ignored)."""
        if not self.results_path.exists():
            return []
        with open(self.results_path, newline="", encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines = lines[:-1]
        reader = csv.DictReader(lines)
        return [row for row in reader if None not in row]
