"""Why cells of a run were not measured, in a few lines: what ``bench run`` and ``bench advise``
say at their end instead of sending the reader to the CSV.

A cell is not measured when none of its replicates ended ok (each replicate counted by its
last attempt, as a resume counts it). The rows of its replicates are grouped by distinct
reason: the ``status`` and the first line of the ``reason`` column, with what varies from one
cell to the next (numbers, sizes, seconds, addresses, cell ids) set aside, so that one cause
met in many cells is one line. ``unmeasured`` is a pure function over the rows as the run
wrote them (text, ``csv.DictReader``'s dicts); ``lines`` words it, with the hint the command
gives for each status (the command owns its options, so it passes its hints in);
``ending_lines`` reads a run folder and does both. Standard library only: it runs on the
measuring box, which may lack the report's dependencies.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.run.plan.jobs import NO_CUDA
from bench.schema import RESULTS_FILE, Status

Row = Mapping[str, str]

#: A status in words, as the first word of its line.
STATUS_WORDS: dict[str, str] = {
    Status.OOM: "out of memory",
    Status.TIMEOUT: "timed out",
    Status.CRASH: "the process died",
    Status.ERROR: "an exception",
    Status.SKIPPED: "skipped (cannot run here)",
    Status.INTERRUPTED: "interrupted by a signal",
}
#: The short codes a skipped row gives (``bench.run.child.worker``), in words.
SKIP_WORDS: dict[str, str] = {
    NO_CUDA: "no CUDA device on this machine",
    "no-mps": "no MPS device on this machine",
    "tf32-is-cuda-only": "TF32 matmuls exist on CUDA only",
}
#: Distinct reasons shown; the others are counted, with where to read them.
SHOWN = 5
#: The longest reason text shown (the rows keep up to 500 characters).
TEXT_CHARS = 200

#: What varies between cells with one cause: a hex address, a hash-like id with a digit in it
#: (a cell id, a folder), a number (sizes, seconds, counts, shapes' sides).
_VARYING = re.compile(r"0x[0-9a-fA-F]+|\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b|\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Reason:
    """One distinct reason cells were not measured: its status, its text (the first line of
    the first row's reason), the cells and replicates it stopped, and each of those
    replicates as ``(where, log)``: ``study: cell #rN`` and the name its kept log would have
    in the run's ``logs/`` folder (``runner._keep_log``), first row first."""

    status: str
    text: str
    cells: int
    replicates: int
    examples: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Unmeasured:
    """The cells a run has rows of, those of them not measured, and why, the reason that
    stopped the most cells first."""

    cells: int
    missing: int
    reasons: tuple[Reason, ...]


def _get(row: Row, column: str) -> str:
    """A column's text; empty where the row lacks it (a short line reads as ``None``)."""
    return row.get(column) or ""


def first_line(reason: str) -> str:
    """The first non-blank line of a reason, stripped."""
    return next((line.strip() for line in reason.splitlines() if line.strip()), "")


def key_of(status: str, reason: str) -> tuple[str, str]:
    """What makes two rows one reason: the status and the first line, what varies between
    cells set aside (``OutOfMemoryError: ... allocate 2.00 GiB`` and ``... 8.00 GiB`` agree)."""
    return status, " ".join(_VARYING.sub("#", first_line(reason)).split())


def _last_attempts(rows: Iterable[Row]) -> dict[tuple[str, str, str], Row]:
    """Each replicate's last row, in file order: a replicate counts by its last attempt."""
    last: dict[tuple[str, str, str], Row] = {}
    for row in rows:
        key = (_get(row, "kind"), _get(row, "cell_id"), _get(row, "replicate"))
        last.pop(key, None)  # re-inserted: the order is that of the last attempts
        last[key] = row
    return last


def unmeasured(rows: Iterable[Row]) -> Unmeasured:
    """The cells (a kind and a cell id: a re-run check is its own) none of whose replicates
    ended ok, and their replicates grouped by ``key_of``, the reason that stopped the most
    cells first (then the most replicates, then the order of ``Status``)."""
    last = _last_attempts(rows)
    measured = {(kind, cell) for (kind, cell, _), row in last.items()
                if _get(row, "status") == Status.OK}
    cells = {(kind, cell) for kind, cell, _ in last}
    groups: dict[tuple[str, str], list[tuple[tuple[str, str], Row]]] = {}
    for (kind, cell, _), row in last.items():
        if (kind, cell) not in measured:
            groups.setdefault(key_of(_get(row, "status"), _get(row, "reason")),
                              []).append(((kind, cell), row))
    reasons = [Reason(status, first_line(_get(members[0][1], "reason")),
                      len({c for c, _ in members}), len(members),
                      tuple((_where(r), _log_name(r)) for _, r in members))
               for (status, _), members in groups.items()]
    order = [s.value for s in Status]
    reasons.sort(key=lambda r: (-r.cells, -r.replicates,
                                order.index(r.status) if r.status in order else len(order)))
    return Unmeasured(len(cells), len(cells - measured), tuple(reasons))


def _where(row: Row) -> str:
    study = _get(row, "study")
    return f"{study + ': ' if study else ''}{_get(row, 'cell_name')} #r{_get(row, 'replicate')}"


def _log_name(row: Row) -> str:
    return f"{_get(row, 'kind')}-{_get(row, 'cell_id')}-r{_get(row, 'replicate')}.log"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def reason_line(r: Reason, hint: str, logs: Path, kept: Collection[str] = ()) -> str:
    """One reason on one line: what happened, how often, an example replicate and its reason
    (with its log, where ``kept`` holds the name of one in ``logs``), and what to do."""
    where, log = next(((w, n) for w, n in r.examples if n in kept), r.examples[0])
    text = r.text if len(r.text) <= TEXT_CHARS else r.text[:TEXT_CHARS - 3] + "..."
    said = repr_text(text)
    if r.status == Status.SKIPPED and text in SKIP_WORDS:
        said += f" ({SKIP_WORDS[text]})"
    words = STATUS_WORDS.get(r.status, r.status or "no status")
    seen = f" (log: {logs / log})" if log in kept else ""
    return (f"  {words}: {_plural(r.cells, 'cell')}, {_plural(r.replicates, 'replicate')}, "
            f"e.g. {where}: {said}{seen}"
            + (f"; to do: {hint}" if hint else ""))


def repr_text(text: str) -> str:
    """A reason as quoted in a line (its own quotes kept), or that there was none."""
    return f'"{text}"' if text else "(no reason given)"


def lines(found: Unmeasured, hints: Mapping[str, str], results: Path,
          kept: Collection[str] = (), shown: int = SHOWN) -> list[str]:
    """The lines for the end of a command: none when every cell was measured; else a count,
    one line per reason (the first ``shown``, with the command's hint for its status) and
    how many more there are, with the file that holds them. ``kept``: the names of the logs
    in the ``logs/`` folder beside ``results``."""
    if not found.reasons:
        return []
    logs = results.parent / "logs"
    head = (f"not measured: {found.missing} of {_plural(found.cells, 'cell')} (no replicate "
            f"ended ok), for {_plural(len(found.reasons), 'reason')}:")
    out = [head, *(reason_line(r, hints.get(r.status, ""), logs, kept)
                   for r in found.reasons[:shown])]
    more = len(found.reasons) - shown
    if more > 0:
        out.append(f"  and {more} more reason{'' if more == 1 else 's'}, see {results} "
                   f"(its status and reason columns)")
    return out


def ending_lines(run_dir: Path, hints: Mapping[str, str], shown: int = SHOWN) -> list[str]:
    """``lines`` for the run in ``run_dir``, read from its results file (none when it has no
    such file); a file it cannot read is said in one line, not raised: the run is written."""
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        return []
    try:
        with open(results, newline="", encoding="utf-8") as f:
            found = unmeasured(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        return [f"could not read why cells were not measured ({exc}); see {results}"]
    kept = {p.name for p in (run_dir / "logs").glob("*.log")}
    return lines(found, hints, results, kept, shown)
