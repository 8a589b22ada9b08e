"""Append-only storage: never rewrite, refuse a foreign header, survive a torn last line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.store import CsvAppender, RunStore
from bench.schema import RESULT_COLUMNS, SCHEMA_VERSION, SchemaError, migrate


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


def test_torn_last_line_is_terminated_not_glued(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n3")
    CsvAppender(p, ["a", "b"]).append([{"a": 4, "b": 5}])
    assert p.read_text() == "a,b\n1,2\n3\n4,5\n"


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
    assert migrate(v1) == {**row, "kernel_cache": "shared"}
    row["schema_version"] = "99"
    with pytest.raises(SchemaError, match="newer than this code understands"):
        migrate(row)
    row["schema_version"] = "0"
    with pytest.raises(SchemaError, match="no migration"):
        migrate(row)
