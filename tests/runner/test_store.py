"""Append-only storage: never rewrite, refuse a foreign header, write whole lines or nothing
(a full disk, an I/O error), keep a replicate's samples and row together, and set a torn
tail aside, read only after what is complete."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bench.migrations import V5_ENERGY_REASON, migrate
from bench.run.store import durable
from bench.run.store.store import CsvAppender, RunStore, StoreError
from bench.schema import RESULT_COLUMNS, SAMPLE_COLUMNS, SCHEMA_VERSION, SchemaError


def test_appends_never_rewrite(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    a = CsvAppender(p, ["a", "b"])
    a.append([{"a": 1, "b": None}])
    first = p.read_bytes()
    CsvAppender(p, ["a", "b"]).append([{"a": 2.5, "b": "x,y"}])
    assert p.read_bytes().startswith(first)
    assert p.read_text() == 'a,b\n1,\n2.5,"x,y"\n'


def test_nan_and_inf_are_written_empty_not_invented(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    CsvAppender(p, ["a", "b", "c"]).append([{"a": float("nan"), "b": float("inf"), "c": True}])
    assert p.read_text().splitlines()[1] == ",,true"


def test_foreign_header_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,c\n1,2\n")
    with pytest.raises(SchemaError, match="header does not match"):
        CsvAppender(p, ["a", "b"])
    assert p.read_text() == "a,c\n1,2\n"


def test_a_torn_last_line_is_set_aside_not_glued(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n3")
    CsvAppender(p, ["a", "b"]).append([{"a": 4, "b": 5}])
    assert p.read_text() == "a,b\n1,2\n4,5\n"
    assert (tmp_path / "x.csv.torn-1").read_text() == "3", "nothing written is destroyed"


def test_existing_rows_ignore_a_torn_tail(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open()
    store.add({"status": "ok", "cell_id": "c1", "replicate": 0, "kind": "model"})
    with open(store.results_path, "a") as f:
        f.write("1,run,fp")
    rows = store.existing_rows()
    assert len(rows) == 1 and rows[0]["cell_id"] == "c1"


def test_env_is_written_once(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_env({"fingerprint_id": "a"})
    store.write_env({"fingerprint_id": "b"})
    assert store.read_env() == {"fingerprint_id": "a"}


def test_schema_migration_refuses_newer_versions() -> None:
    row = dict.fromkeys(RESULT_COLUMNS, "")
    row["schema_version"] = str(SCHEMA_VERSION)
    assert migrate(dict(row)) == row
    v1 = {k: v for k, v in row.items()
          if k not in ("kernel_cache", "kernel_cache_start_bytes", "kernel_cache_end_bytes")}
    v1["schema_version"] = "1"  # version 1 ran against the machine's own, shared caches
    # and ran eagerly (version 3's compile axes), measuring no energy (version 6's)
    assert migrate(v1) == {**row, "kernel_cache": "shared", "compile": "off",
                           "compile_dynamic": "auto", "energy_reason": V5_ENERGY_REASON}
    row["schema_version"] = "99"
    with pytest.raises(SchemaError, match="newer than this code understands"):
        migrate(row)
    row["schema_version"] = "0"
    with pytest.raises(SchemaError, match="no migration"):
        migrate(row)


def _failing_write(monkeypatch: pytest.MonkeyPatch, after: int, err: int) -> None:
    """``os.write`` as a filling disk does it: ``after`` more bytes land (a short write where
    a call asks for more), then every write fails with ``err``."""
    real = os.write
    room = {"left": after}

    def write(fd: int, data: bytes) -> int:
        if not room["left"]:
            raise OSError(err, os.strerror(err))
        n = real(fd, bytes(data[: room["left"]]))
        room["left"] -= n
        return n

    monkeypatch.setattr(durable.os, "write", write)


def test_a_write_that_fills_the_disk_leaves_the_file_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Part of the line lands, the rest fails: the part is taken back (it used to stay, and
    the next append was glued onto it)."""
    p = tmp_path / "x.csv"
    a = CsvAppender(p, ["a", "b"])
    a.append([{"a": 1, "b": "one"}])
    before = p.read_bytes()
    _failing_write(monkeypatch, after=3, err=errno.ENOSPC)
    with pytest.raises(StoreError, match="No space left on device") as info:
        a.append([{"a": 2, "b": "a longer second row"}])
    assert str(info.value).startswith(f"cannot write {p}: ")
    monkeypatch.undo()
    assert p.read_bytes() == before
    a.append([{"a": 3, "b": "three"}])
    assert p.read_text() == "a,b\n1,one\n3,three\n"


def test_an_fsync_error_takes_the_write_back(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "x.csv"
    a = CsvAppender(p, ["a"])
    before = p.read_bytes()
    calls = {"n": 0}
    real = os.fsync

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(durable.os, "fsync", fsync)
    with pytest.raises(StoreError, match="Input/output error"):
        a.append([{"a": 1}])
    assert p.read_bytes() == before


def test_a_row_that_cannot_be_written_takes_its_samples_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One record per replicate: the samples went in, the row did not, so neither stays."""
    store = RunStore(tmp_path)
    store.open()
    samples_before = store.samples_path.read_bytes()
    row = {"status": "ok", "cell_id": "c1", "replicate": 0, "kind": "model",
           "attempt_id": "a1", "reason": "x" * 2000}
    _failing_write(monkeypatch, after=1000, err=errno.ENOSPC)  # the samples fit, the row not
    with pytest.raises(StoreError):
        store.add(row, [{"cell_id": "c1", "replicate": 0, "attempt_id": "a1"}])
    monkeypatch.undo()
    assert store.samples_path.read_bytes() == samples_before
    assert store.existing_rows() == []


def test_a_row_torn_after_its_status_is_not_complete_and_is_set_aside(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open()
    store.add({"status": "ok", "cell_id": "c1", "replicate": 0, "kind": "model",
               "attempt_id": "a1"})
    torn = b"2,run,fp,box,,,c2,,model,1,a2" + b",x" * 25 + b",ok"
    with open(store.results_path, "ab") as f:
        f.write(torn)
    again = RunStore(tmp_path)
    complete = again.open()
    assert [r["cell_id"] for r in complete] == ["c1"], "read before the tail is repaired"
    assert again.aside == [tmp_path / "results.csv.torn-1"]
    assert again.aside[0].read_bytes() == torn
    assert store.results_path.read_bytes().endswith(b"\n")


def test_a_quoted_field_cut_after_its_newline_is_still_a_torn_tail(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text('a,b\n1,2\n3,"boom\n')
    CsvAppender(p, ["a", "b"])
    assert p.read_text() == "a,b\n1,2\n"
    assert (tmp_path / "x.csv.torn-1").read_text() == '3,"boom\n'


def test_samples_a_kill_left_without_their_row_are_set_aside_on_open(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open()
    store.add({"status": "ok", "cell_id": "c1", "replicate": 0, "kind": "model",
               "attempt_id": "a1"}, [{"cell_id": "c1", "replicate": 0, "attempt_id": "a1"}])
    kept = store.samples_path.read_bytes()
    orphans = CsvAppender(store.samples_path, SAMPLE_COLUMNS)  # the samples, then the kill
    orphans.append([{"cell_id": "c1", "replicate": 1, "attempt_id": "a2", "iter": i}
                    for i in range(3)])
    tail = store.samples_path.read_bytes()[len(kept):]
    again = RunStore(tmp_path)
    again.open()
    assert store.samples_path.read_bytes() == kept
    assert (tmp_path / "samples.csv.torn-1").read_bytes() == tail


def test_a_header_torn_at_creation_is_set_aside_and_written_again(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,")
    CsvAppender(p, ["a", "b"]).append([{"a": 1, "b": 2}])
    assert p.read_text() == "a,b\n1,2\n"
    assert (tmp_path / "x.csv.torn-1").read_text() == "a,"
