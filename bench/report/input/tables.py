"""Reading one results.csv or samples.csv into typed, checked columns: each value read once as
text where it must be, every bad value named with its file and line (``errors.Problems``),
older schema versions migrated, and the rows every figure keeps (``consistency.row_orders``).
The checks of a row on its own (``result_problems``, ``sample_problems``) and the typing also
take the rows of many files at once (``batch``). What a run folder is, and how its files
agree, is ``folder``'s."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench import consistency as rules
from bench import migrations, schema
from bench.report.input.consistency import row_orders
from bench.report.input.errors import LoadError, Problems, drop_bad, report, short

#: Every type and closed set below comes from ``bench.schema``'s column spec, never a list kept
#: here: a column added there is read, checked and typed here without a change.
_SAMPLE_INTEGERS = schema.SAMPLE_INTEGER_COLUMNS
_SAMPLE_NUMBERS = tuple(c.name for c in schema.SAMPLE_SPEC if c.type == "float")
_SAMPLE_CHOICES = {c.name: c.choices for c in schema.SAMPLE_SPEC if c.choices}
#: Closed columns of results.csv whose only values are true and false: read as booleans.
_BOOLEANS = tuple(
    c.name for c in schema.RESULT_SPEC if c.choices and set(c.choices) == {"true", "false"}
)


#: Windows refused when shorter than their steady steps (none yet: fixture runs break the rule).
HELD_WINDOWS: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Records:
    header: list[str]
    header_end: int  # byte offset just after the header's newline
    starts: np.ndarray  # byte offset of each data record
    ends: np.ndarray  # byte offset of its terminating newline (or end of file)
    lines: np.ndarray  # 1-based physical line where it starts
    fields: np.ndarray  # number of fields
    truncated: bool  # the last record has no newline or an unclosed quote


def _scan(data: bytes, path: Path) -> _Records:
    """Find records in RFC 4180 CSV bytes without parsing the fields.

    A comma or newline inside quotes is data. Quote parity is a running count mod 2 (an escaped
    ``""`` adds two), kept in uint8 so a large file costs one byte per byte.
    """
    if not data:
        raise LoadError(path, 1, "empty file: no header line")
    buf = np.frombuffer(data, dtype=np.uint8)
    newline, comma = buf == 10, buf == 44
    quoted = b'"' in data
    if quoted:
        outside = (np.cumsum(buf == 34, dtype=np.uint8) & 1) == 0
        newline &= outside
        comma &= outside
        unclosed = not bool(outside[-1]) if len(buf) else False
    else:
        unclosed = False
    ends = np.flatnonzero(newline)
    truncated = not data.endswith(b"\n") or unclosed
    if truncated:
        ends = np.append(ends, len(buf))
    if len(ends) == 0:
        raise LoadError(path, 1, "empty file: no header line")
    starts = np.concatenate(([0], ends[:-1] + 1))
    fields = np.diff(np.searchsorted(np.flatnonzero(comma), np.concatenate(([-1], ends)))) + 1
    if quoted:
        lines = np.searchsorted(np.flatnonzero(buf == 10), starts) + 1
    else:
        lines = np.arange(1, len(starts) + 1)
    # Blank lines (pandas skips them) are not records.
    length = ends - starts
    blank = (length == 0) | ((length == 1) & (buf[np.minimum(starts, len(buf) - 1)] == 13))
    header_text = data[starts[0] : ends[0]].decode("utf-8", errors="replace")
    header = next(csv.reader([header_text.rstrip("\r")]), [])
    keep = ~blank
    keep[0] = False
    if truncated and (blank[-1] or len(starts) == 1):
        truncated = False  # trailing blank fragment, or a header-only file
    header_end = int(ends[0]) + 1
    return _Records(
        header, header_end, starts[keep], ends[keep], lines[keep], fields[keep], truncated
    )


def _read_table(
    path: Path,
    rel: Path,
    numeric: Iterable[str],
    skip_bad: bool,
    skipped: list[str],
    *,
    as_text: bool = False,
) -> pd.DataFrame:
    """The file's rows plus ``line`` and ``source``; field-count problems raised or skipped.

    Numeric columns are parsed by pandas' C parser as float64, every other column as a string
    (``NaN`` when empty). If a numeric column holds text, the fast parse fails and the file is
    read again with every column as a string, so that the validators can find and name the
    offending rows. ``as_text`` reads plain strings (for
    migrations, which work on ``dict[str, str]`` rows).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(path, 0, f"cannot read file: {exc}") from None
    rec = _scan(data, path)
    bad = rec.fields != len(rec.header)
    problems = [f"expected {len(rec.header)} fields, found {n}" for n in rec.fields[bad].tolist()]
    bad_lines = rec.lines[bad].tolist()
    if rec.truncated and len(rec.starts):
        if bad[-1]:
            problems[-1] = f"truncated last line ({problems[-1]}, no newline at end)"
        else:
            bad[-1] = True
            bad_lines.append(int(rec.lines[-1]))
            problems.append("truncated last line (no newline at end)")
    report(path, bad_lines, problems, skip_bad, skipped)
    if bad.any():
        body = b"".join(data[s : e + 1] for s, e in zip(rec.starts[~bad], rec.ends[~bad]))
        text = data[: rec.header_end] + body
        lines = rec.lines[~bad]
    else:
        text = data
        lines = rec.lines
    numeric = [c for c in numeric if c in rec.header]
    options: dict[str, Any] = {
        "keep_default_na": False,
        "na_values": [""],
        "skip_blank_lines": True,
        "encoding": "utf-8",
        "encoding_errors": "replace",
    }
    if as_text:
        df = pd.read_csv(
            io.BytesIO(text), dtype=str, **{**options, "na_values": None, "na_filter": False}
        )
    else:
        # text as Python objects, not Arrow strings: the columns share one block, so each
        # check and each selection of rows touches one array rather than one per column
        typed = dict.fromkeys(rec.header, object) | dict.fromkeys(numeric, "float64")
        try:
            df = pd.read_csv(io.BytesIO(text), dtype=typed, **options)
        except (ValueError, TypeError, OverflowError):
            df = pd.read_csv(io.BytesIO(text), dtype=str, **options)
    if len(df) != len(lines):  # pandas and the scan disagree: refuse rather than guess lines
        raise LoadError(path, 0, "could not align CSV records with lines (malformed quoting?)")
    where = pd.DataFrame({"line": lines.astype(np.int64),
                          "source": pd.Series(rel.as_posix(), index=df.index, dtype=object)},
                         index=df.index)
    return pd.concat([df, where], axis=1).copy()  # one block per type (copy consolidates)


def _current_version(df: pd.DataFrame) -> pd.Series:
    version = df["schema_version"]
    if version.dtype == "float64":
        return version == schema.SCHEMA_VERSION
    return version.astype(object) == str(schema.SCHEMA_VERSION)


def _migrate(
    path: Path, rel: Path, numeric: Iterable[str], skip_bad: bool, skipped: list[str]
) -> pd.DataFrame:
    """Re-read a file holding older (or unknown) schema versions and migrate it row by row."""
    df = _read_table(path, rel, numeric, skip_bad, [], as_text=True)
    rows: dict[int, dict[str, str]] = {}
    failures: dict[int, str] = {}
    columns = [c for c in df.columns if c not in ("line", "source")]
    lines = df["line"].to_numpy()
    for n, (idx, values) in enumerate(
        zip(df.index, df[columns].itertuples(index=False, name=None))
    ):
        try:
            rows[idx] = migrations.migrate(dict(zip(columns, values)))
        except schema.SchemaError as exc:
            if not skip_bad:
                raise LoadError(path, int(lines[n]), str(exc)) from None
            failures[idx] = str(exc)
    problems = Problems(df.index)
    problems.add(df.index.isin(list(failures)), lambda idx: [failures[i] for i in idx])
    df = drop_bad(df, problems, path, skip_bad, skipped)
    migrated = pd.DataFrame.from_dict({i: rows[i] for i in df.index}, orient="index", dtype=str)
    if migrated.empty:
        migrated = pd.DataFrame(columns=columns, dtype=str)
    migrated = migrated.where(migrated != "", np.nan)
    migrated["line"] = df["line"]
    migrated["source"] = df["source"]
    return migrated


def read_results(path: Path, rel: Path, skip_bad: bool, skipped: list[str]) -> pd.DataFrame:
    df = results_table(path, rel, skip_bad, skipped)
    p, ints, nums = result_problems(df)
    df = drop_bad(df, p, path, skip_bad, skipped)
    return _typed(df, schema.RESULT_COLUMNS, ints, nums, _BOOLEANS)


_RESULT_NUMBERS = (*schema.NUMERIC_COLUMNS, *schema.INTEGER_COLUMNS)


def results_table(path: Path, rel: Path, skip_bad: bool, skipped: list[str]) -> pd.DataFrame:
    """The file's rows as read (``_read_table``), migrated to this schema version if older,
    with every column this version has; not yet checked."""
    df = _versioned(path, rel, skip_bad, skipped)
    if not _current_version(df).all():
        df = _migrate(path, rel, _RESULT_NUMBERS, skip_bad, skipped)
    _require_columns(df, schema.RESULT_COLUMNS, path)
    return df


def current_results_table(path: Path, rel: Path, skip_bad: bool, skipped: list[str]
                          ) -> pd.DataFrame | None:
    """``results_table``, or None for a file that holds an older version (to migrate)."""
    df = _versioned(path, rel, skip_bad, skipped)
    if not _current_version(df).all():
        return None
    _require_columns(df, schema.RESULT_COLUMNS, path)
    return df


def _versioned(path: Path, rel: Path, skip_bad: bool, skipped: list[str]) -> pd.DataFrame:
    df = _read_table(path, rel, _RESULT_NUMBERS, skip_bad, skipped)
    if "schema_version" not in df.columns:
        raise LoadError(path, 1, "missing column(s): schema_version")
    return df


#: A table's first problem per row, and its integer and number columns parsed over every row.
Checked = tuple[Problems, dict[str, pd.Series], dict[str, pd.Series]]


def result_problems(df: pd.DataFrame) -> Checked:
    """Every rule a results row keeps on its own: each row's problem, whatever files the rows
    come from (a check of one row never looks at another)."""
    p = Problems(df.index)
    for col in schema.REQUIRED_RESULT_COLUMNS:
        p.add(df[col].isna(), f"{col} is empty")
    for col, allowed in schema.RESULT_CHOICES.items():
        s = df[col]
        p.add(s.notna() & ~s.isin(allowed), _unknown(s, col, allowed))
    nums = _numerics(df, schema.NUMERIC_COLUMNS, p)
    ints = _integers(df, schema.INTEGER_COLUMNS, p)
    status, kind = df["status"], df["kind"]
    ok_timed = (status == schema.Status.OK) & kind.isin(["model", "ceiling"])
    p.add(ok_timed & ~(nums["steady_median_s"] > 0), "status ok but steady_median_s is empty or 0")
    ok_ceiling = (status == schema.Status.OK) & (kind == "ceiling")
    p.add(ok_ceiling & ~(nums["work_per_iter"] > 0), "ceiling row without work_per_iter")
    p.add(ok_ceiling & df["work_unit"].isna(), "ceiling row without work_unit")
    ok_repro = (status == schema.Status.OK) & (kind == "repro")
    p.add(ok_repro & df["repro_bitwise_equal"].isna(), "repro row without repro_bitwise_equal")
    row_orders(nums, ints["steady_iters"], p, HELD_WINDOWS)
    return p, ints, nums


def typed_results(df: pd.DataFrame, checked: Checked) -> pd.DataFrame:
    """The rows of ``df`` (those ``result_problems`` was given, or some of them), typed."""
    _, ints, nums = checked
    return _typed(df, schema.RESULT_COLUMNS, ints, nums, _BOOLEANS)


def read_samples(path: Path, rel: Path, skip_bad: bool, skipped: list[str]) -> pd.DataFrame:
    df = samples_table(path, rel, skip_bad, skipped)
    p, ints, nums = sample_problems(df)
    df = drop_bad(df, p, path, skip_bad, skipped)
    return _typed(df, schema.SAMPLE_COLUMNS, ints, nums)


def samples_table(path: Path, rel: Path, skip_bad: bool, skipped: list[str]) -> pd.DataFrame:
    """The file's samples as read (``_read_table``), with every column; not yet checked."""
    df = _read_table(path, rel, (*_SAMPLE_INTEGERS, *_SAMPLE_NUMBERS), skip_bad, skipped)
    if "attempt_id" not in df.columns and "schema_version" in df.columns:
        # versions 1 and 2 may keep no attempt ids: their samples match their row by cell and
        # replicate
        if (pd.to_numeric(df["schema_version"], errors="coerce") > 2).any():
            raise LoadError(path, 1, "missing column(s): attempt_id")
        df["attempt_id"] = ""
    _require_columns(df, schema.SAMPLE_COLUMNS, path)
    return df


def sample_problems(df: pd.DataFrame) -> Checked:
    """Every rule a sample keeps on its own (as ``result_problems``, for samples)."""
    p = Problems(df.index)
    for col in schema.REQUIRED_SAMPLE_COLUMNS:
        p.add(df[col].isna(), f"{col} is empty")
    ints = _integers(df, _SAMPLE_INTEGERS, p)
    # The sample columns have not changed since version 1, so any version up to ours reads.
    version = ints["schema_version"]
    p.add(
        version.notna() & ((version > schema.SCHEMA_VERSION) | (version < 1)),
        lambda idx: [
            f"schema_version {version[i]} is not one this code reads "
            f"(1 to {schema.SCHEMA_VERSION})"
            for i in idx
        ],
    )
    for col, allowed in _SAMPLE_CHOICES.items():
        s = df[col]
        p.add(s.notna() & ~s.isin(allowed), _unknown(s, col, allowed))
    nums = _numerics(df, _SAMPLE_NUMBERS, p)
    return p, ints, nums


def typed_samples(df: pd.DataFrame, checked: Checked) -> pd.DataFrame:
    """The samples of ``df`` (those ``sample_problems`` was given, or some of them), typed."""
    _, ints, nums = checked
    return _typed(df, schema.SAMPLE_COLUMNS, ints, nums)


def _typed(df: pd.DataFrame, columns: Iterable[str], ints: dict[str, pd.Series],
           nums: dict[str, pd.Series], booleans: Iterable[str] = ()) -> pd.DataFrame:
    """The rows left in ``df``, each column as its type (``ints`` and ``nums``: already parsed
    over every row, so they are cut to those left), then where each row came from. The text
    columns are filled together and the numbers joined as one block: a file's columns one at a
    time cost more than reading it."""
    columns, booleans = list(columns), set(booleans)
    keep = df.index
    whole = len(df) == len(next(iter(nums.values()), df))  # no row dropped: no cut needed
    texts = [c for c in columns if c not in ints and c not in nums and c not in booleans]
    dtypes = df.dtypes
    plain = [c for c in texts if dtypes[c] == np.dtype(object)]  # as read: a str or missing
    parts = [df[plain].fillna("")] if plain else []
    floats = {c: (s if whole else s.loc[keep]).to_numpy() for c, s in nums.items()}
    parts.append(pd.DataFrame(floats, index=keep) if floats else pd.DataFrame(index=keep))
    other: dict[str, pd.Series] = {c: (ints[c] if whole else ints[c].loc[keep]) for c in ints}
    for col in booleans:
        other[col] = _boolean(df[col])
    for col in texts:
        if col not in plain:
            other[col] = _text(df[col])
    other["source"] = df["source"].astype(str).astype(object)
    other["line"] = df["line"]
    parts.append(pd.DataFrame(other, index=keep))
    out = pd.concat(parts, axis=1)
    return out[[*columns, "source", "line"]].reset_index(drop=True)


def _boolean(s: pd.Series) -> pd.Series:
    """``true`` and ``false`` as booleans, anything else missing."""
    text = s.to_numpy(dtype=object)
    true, false = text == "true", text == "false"
    return pd.Series(pd.arrays.BooleanArray(true, ~(true | false)), index=s.index, name=s.name)


def _numerics(df: pd.DataFrame, cols: Iterable[str], p: Problems, *,
              integers: bool = False) -> dict[str, pd.Series]:
    """Each of ``cols`` as :func:`_numeric` (``integers``: :func:`_integer`) reads it. The
    columns pandas parsed as numbers are screened together first, and only one holding a value
    that may break a rule is checked on its own: a clean column adds no problem, so passing it
    by changes nothing but the time (thousands of small files each pay for every check)."""
    cols, dtypes = list(cols), df.dtypes
    parsed = [c for c in cols if dtypes[c] == "float64"]
    values = df[parsed].to_numpy(dtype=np.float64)
    signed = np.array([c in rules.ENERGY_FIGURES for c in parsed], dtype=bool)
    with np.errstate(invalid="ignore"):
        doubt = np.isinf(values) | ((values < 0) & ~signed)
        if integers:
            doubt |= ~np.isnan(values) & (values % 1 != 0)
    bad = doubt.any(axis=0)
    clean = {c for c, d in zip(parsed, bad) if not d}
    check = _integer if integers else _numeric
    out = {c: df[c] if c in clean else check(df[c], c, p) for c in cols}
    if integers and clean:  # the clean columns as nullable integers, built from the block
        at = [i for i, d in enumerate(bad) if not d]
        missing = np.isnan(values[:, at])
        whole = np.where(missing, 0.0, values[:, at]).astype(np.int64)
        for k, i in enumerate(at):
            out[parsed[i]] = pd.Series(pd.arrays.IntegerArray(whole[:, k], missing[:, k]),
                                       index=df.index, name=parsed[i])
    return out


def _integers(df: pd.DataFrame, cols: Iterable[str], p: Problems) -> dict[str, pd.Series]:
    return _numerics(df, cols, p, integers=True)


def _numeric(s: pd.Series, col: str, p: Problems) -> pd.Series:
    """float64 values; text (slow re-read), non-finite and < 0 flagged (energy: row_orders)."""
    if s.dtype == "float64":
        values = s
    else:  # the slow re-read: text that may not be a number
        values = pd.to_numeric(s, errors="coerce").astype("float64")
        p.add(s.notna() & values.isna(), _not_a(s, col, "a number"))
    p.add(values.notna() & ~np.isfinite(values.fillna(0.0)), _not_a(s, col, "a finite number"))
    if col not in rules.ENERGY_FIGURES:
        p.add(values < 0, lambda idx: [f"{col} is negative: {short(s[i])}" for i in idx])
    return values.astype("float64")


def _integer(s: pd.Series, col: str, p: Problems) -> pd.Series:
    values = _numeric(s, col, p)
    p.add(values.notna() & (values % 1 != 0), _not_a(s, col, "an integer"))
    return values.where(values % 1 == 0).astype("Int64")


def _text(s: pd.Series) -> pd.Series:
    """Plain strings, ``""`` for empty, held as Python objects: the text columns then share one
    block, so selecting rows copies one array, not one Arrow array per column."""
    if s.dtype == object:  # as read: every value a str or missing
        return s.fillna("")
    return s.fillna("").astype(str).astype(object)


def _not_a(s: pd.Series, col: str, what: str) -> Any:
    return lambda idx: [f"{col} is not {what}: {short(s[i])}" for i in idx]


def _unknown(s: pd.Series, col: str, allowed: Iterable[str]) -> Any:
    choices = ", ".join(allowed)
    return lambda idx: [f"unknown {col} {short(s[i])} (expected one of: {choices})" for i in idx]


def _require_columns(df: pd.DataFrame, columns: Iterable[str], path: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise LoadError(path, 1, "missing column(s): " + ", ".join(missing))


def by_line(messages: list[str], path: Path) -> list[str]:
    """One file's ``path:line: problem`` messages in line order (checks run column by column)."""
    start = len(str(path)) + 1
    return sorted(messages, key=lambda m: int(m[start:].split(":", 1)[0]))


def first(df: pd.DataFrame, col: str) -> str:
    return str(df[col].iloc[0]) if len(df) else ""


def concat(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty
    out = pd.concat(frames, ignore_index=True)
    return out


def empty_results() -> pd.DataFrame:
    return _empty(schema.RESULT_COLUMNS, schema.INTEGER_COLUMNS, schema.NUMERIC_COLUMNS,
                  _BOOLEANS)


def empty_samples() -> pd.DataFrame:
    return _empty(schema.SAMPLE_COLUMNS, _SAMPLE_INTEGERS, _SAMPLE_NUMBERS)


def _empty(columns: Iterable[str], ints: Iterable[str], nums: Iterable[str],
           booleans: Iterable[str] = ()) -> pd.DataFrame:
    """No rows, but the columns and types a read table has, so that an empty dataset reads
    like any other."""
    df = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    for col in nums:
        df[col] = pd.Series(dtype="float64")
    for col in ints:
        df[col] = pd.Series(dtype="Int64")
    for col in booleans:
        df[col] = pd.Series(dtype="boolean")
    df["source"] = pd.Series(dtype=object)
    df["line"] = pd.Series(dtype="int64")
    return df
