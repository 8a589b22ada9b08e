"""The CSVs of the pages whose figures had none: every sweep point of the Feeding page and
every claim's verdict with its findings. Each is written next to the other computed CSVs, and
its page links it on its download line (``ui.download``)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.report.judge import ClaimAnswer, Scalar, Table
from bench.report.judge.feeding_sections import FeedingSection
from bench.report.render.paths import COMPARISONS
from bench.report.render.writer import Writer

FEEDING_CSV = f"{COMPARISONS}/feeding.csv"
CLAIMS_CSV = f"{COMPARISONS}/claims.csv"

_FEEDING_COLUMNS = ("machine", "fingerprint_id", "device", "mode", "batch_size", "decoder",
                    "images", "num_workers", "samples_per_s", "ci_low", "ci_high", "n_ok",
                    "first_batch_s", "cpu_s_per_sample", "decode_errors", "row")
_CLAIMS_COLUMNS = ("claim", "verdict", "statement", "stance", "machine", "page", "model",
                   "finding", "rows")


def _number(value: float) -> float | None:
    return value if value == value else None  # NaN: no value


def feeding_csv(writer: Writer, sections: Sequence[FeedingSection]) -> str:
    """Every delivered rate the Feeding page charts, one row per sweep point; its path."""
    rows: list[tuple[Scalar, ...]] = []
    for s in sections:
        for sw in s.sweeps:
            for pt in sw.points:
                d = pt.delivered
                rows.append((s.machine.machine, s.machine.fingerprint_id, sw.device, sw.mode,
                             sw.batch_size, sw.decoder, sw.images or None, d.workers,
                             _number(d.rate.median), _number(d.rate.low),
                             _number(d.rate.high), d.rate.n, _number(pt.first_batch_s),
                             _number(pt.cpu_s_per_sample), _number(pt.decode_errors),
                             f"{d.page}#{d.anchor}" if d.anchor else None))
    writer.csv(FEEDING_CSV, Table(_FEEDING_COLUMNS, tuple(rows)))
    return FEEDING_CSV


def claims_csv(writer: Writer, answers: Sequence[ClaimAnswer]) -> str:
    """Every claim's verdict, one row per finding (a claim without one: a row of its own),
    its rows as ``machine-page#row``; its path."""
    rows: list[tuple[Scalar, ...]] = []
    for v in answers:
        head = (v.claim.id, str(v.verdict), v.claim.claim)
        rows += [(*head, str(f.stance), f.machine, f.page, f.model or None, f.text,
                  " ".join(f"{page}#{anchor}" for page, anchor in f.evidence))
                 for f in v.findings] or [(*head, None, None, None, None, None, None)]
    writer.csv(CLAIMS_CSV, Table(_CLAIMS_COLUMNS, tuple(rows)))
    return CLAIMS_CSV
