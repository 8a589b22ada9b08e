"""Append-only CSV storage: one record per replicate, each line written whole and fsynced.

Why append-only and fsync per record: a run can take hours on a shared GPU box and may be
killed at any moment. Every finished replicate must survive that, and a resume must be able
to trust what is on disk. An existing file is never rewritten; a header is written only when
the file is created, and an existing file with a different header is refused.

Why one record per replicate, with the row last: a replicate's samples and its row go to two
files, so they cannot land in one write. Its samples carry the row's ``attempt_id`` (a new
one for every attempt, a resume's re-run included) and are written first; the row is the
commit. Samples count only once a row with their attempt is on disk, which is how the
report's loader joins them. A write that fails undoes the record's samples, so neither file
keeps half of it (see ``bench.run.store.durable``). Only a kill between the two writes can leave
samples without a row, and only at the end of samples.csv: ``open`` moves them aside.

Why ``open`` reads before it repairs: a resume must skip only replicates whose row is whole.
It reads the complete rows first; then it moves results.csv's torn tail (a row cut by a
kill, which may well read ``ok`` up to where it was cut) and samples.csv's samples without a
row into ``<file>.torn-N`` beside them, so appending starts on a line boundary and nothing
already written is destroyed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.run.store import durable
from bench.run.store.durable import StoreError
from bench.schema import (
    ENV_FILE,
    RESULT_COLUMNS,
    RESULTS_FILE,
    SAMPLE_COLUMNS,
    SAMPLES_FILE,
    SchemaError,
)

__all__ = ["CsvAppender", "RunStore", "StoreError", "new_attempt_id"]

Row = dict[str, str]


def new_attempt_id() -> str:
    """A fresh id for one attempt at a replicate: its row and its samples carry it."""
    return secrets.token_hex(6)


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


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(path, exc) from None


def _records(data: bytes) -> list[list[str]]:
    """The fields of every record of ``data`` (whole records only, the header included)."""
    text = data.decode("utf-8", errors="replace")
    return list(csv.reader(io.StringIO(text, newline="")))


class CsvAppender:
    """Appends whole records in a fixed column order to one CSV file, durably.

    It checks the header first (a foreign one is refused and the file left as it is); then
    ``prepare`` creates the file, or sets aside a tail that is not whole records (with
    ``keep``, also the records at the end of the file that ``keep`` refuses). ``prepare=False``
    leaves that to the caller, who may check other files' headers first.
    """

    def __init__(self, path: Path, columns: Sequence[str], prepare: bool = True) -> None:
        self.path = path
        self.columns = tuple(columns)
        self.aside: list[Path] = []  # what prepare() moved out of the way
        data = _read(path)
        line = self._header_line()
        self._torn_header = b"\n" not in data and line.startswith(data)
        if data and not self._torn_header:
            header = _records(data[: data.index(b"\n") + 1]) if b"\n" in data else [[]]
            if tuple(header[0] if header else ()) != self.columns:
                raise SchemaError(f"{path}: existing header does not match this schema version;"
                                  " write to a new --out directory")
        if prepare:
            self.prepare()

    def _header_line(self) -> bytes:
        return self._encode([self.columns])

    def _encode(self, rows: Iterable[Sequence[Any]]) -> bytes:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        for row in rows:
            writer.writerow(row)
        return buf.getvalue().encode("utf-8")

    def prepare(self, keep: Callable[[Row], bool] | None = None) -> None:
        """Create the file with its header, or make it end on a whole record we keep."""
        data = _read(self.path)
        if self._torn_header:  # empty, or killed while its header was written
            if data:
                self._aside(0)
            durable.append(self.path, self._header_line())
            return
        end = durable.complete_end(data)
        if keep is not None:
            header_end = data.index(b"\n") + 1
            for start, stop in durable.records_backwards(data[:end]):
                if start < header_end:
                    break
                fields = _records(data[start:stop])
                if fields and len(fields[0]) == len(self.columns) and keep(
                        dict(zip(self.columns, fields[0]))):
                    break
                end = start
        if end < len(data):
            self._aside(end)

    def _aside(self, keep: int) -> None:
        moved = durable.set_aside(self.path, keep)
        if moved is not None:
            self.aside.append(moved)

    def append(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write rows (dicts keyed by column) as one write, fsynced; returns the offset the
        write began at, for ``undo``. Raises ``StoreError``, leaving the file as it was."""
        return durable.append(self.path, self._encode(
            [[_cell(r.get(c)) for c in self.columns] for r in rows]))

    def undo(self, offset: int) -> None:
        """Cut the file back to ``offset`` (where an append of ours began)."""
        durable.truncate(self.path, offset)


class RunStore:
    """The three files of one run directory: results.csv, samples.csv, env.json."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.results_path = run_dir / RESULTS_FILE
        self.samples_path = run_dir / SAMPLES_FILE
        self.env_path = run_dir / ENV_FILE
        self._results: CsvAppender | None = None
        self._samples: CsvAppender | None = None
        self.aside: list[Path] = []  # torn tails open() moved out of the way

    def exists(self) -> bool:
        return self.results_path.exists()

    def open(self) -> list[Row]:
        """Make both files ready to append; return the rows already complete.

        The complete rows are read before anything is repaired, and both headers are checked
        before either file is touched. Raises ``SchemaError`` for a foreign header and
        ``StoreError`` when the folder cannot be written.
        """
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(self.run_dir, exc) from None
        rows = self.existing_rows()
        committed = {r.get("attempt_id") for r in rows} - {"", None}
        results = CsvAppender(self.results_path, RESULT_COLUMNS, prepare=False)
        samples = CsvAppender(self.samples_path, SAMPLE_COLUMNS, prepare=False)
        results.prepare()
        samples.prepare(keep=lambda s: s.get("attempt_id") in committed)
        self.aside = [*results.aside, *samples.aside]
        self._results, self._samples = results, samples
        return rows

    def start(self, env: Mapping[str, Any], new_run: bool = False) -> list[Row]:
        """Begin writing: env.json first, then both CSVs (``open``); the rows already complete.

        Why this order, and why a failed start takes back what it created: a folder whose
        results.csv exists is a run that only ``--resume`` may continue, and the report reads
        every results.csv with its env.json. A start that fails (a full disk) must leave
        neither a results.csv that blocks the same command, nor one without env.json that the
        report refuses: the files and folders it created are removed again (the ``.torn-N``
        files a resume set aside are kept: they hold what was written). ``new_run`` (no
        results.csv, so no row) replaces an env.json that a start killed early left behind.
        """
        created = [p for p in (self.env_path, self.results_path, self.samples_path)
                   if not p.exists()]
        folders = [p for p in (self.run_dir, *self.run_dir.parents) if not p.exists()]
        try:
            try:
                self.run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(self.run_dir, exc) from None
            self.write_env(env, replace=new_run)
            return self.open()
        except BaseException:
            for path in created:
                with contextlib.suppress(OSError):
                    path.unlink()
            for folder in folders:  # innermost first; one that is not empty stays
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise

    def write_env(self, env: Mapping[str, Any], replace: bool = False) -> None:
        """env.json is written atomically when the run starts (see ``replace`` in ``start``);
        a resume only rewrites it to add its sitting's record (``session.record_sitting``)."""
        if self.env_path.exists() and not replace:
            return
        text = json.dumps(env, indent=2, sort_keys=True) + "\n"
        durable.write_file(self.env_path, text.encode("utf-8"))

    def read_env(self) -> dict[str, Any] | None:
        """The stored env.json (None when there is none); an unreadable one is refused."""
        if not self.env_path.exists():
            return None
        try:
            loaded = json.loads(self.env_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SchemaError(f"{self.env_path} cannot be read: {exc}") from None
        if not isinstance(loaded, dict):
            raise SchemaError(f"{self.env_path} is not a JSON object")
        return loaded

    def add(self, row: Mapping[str, Any], samples: Sequence[Mapping[str, Any]] = (),
            between: Callable[[], None] | None = None) -> None:
        """One replicate's record: its samples, then its row (the commit). If the row cannot
        be written, the samples are taken back. ``between`` runs after the samples are on disk
        and before the row is written (a test's chance to kill the process there)."""
        assert self._results is not None and self._samples is not None, "call open() first"
        start = self._samples.append(samples) if samples else None
        try:
            if between is not None:
                between()
            self._results.append([row])
        except BaseException:
            if start is not None:
                self._samples.undo(start)
            raise

    def existing_rows(self) -> list[Row]:
        """Rows already on disk, for --resume: whole records with every field only (a torn
        last row, however much of it reads ``ok``, is not one)."""
        data = _read(self.results_path)
        records = _records(data[: durable.complete_end(data)])
        if not records:
            return []
        header = records[0]
        return [dict(zip(header, r)) for r in records[1:] if len(r) == len(header)]
