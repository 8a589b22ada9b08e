"""The constants snippet: the statistical settings the methodology page quotes from the code."""

from __future__ import annotations

from typing import Any

from bench.report import analysis, fmt
from bench.report.paths import CONSTANTS_SNIPPET
from bench.report.writer import Writer


def constants_page(writer: Writer, common: dict[str, Any]) -> None:
    writer.page(
        CONSTANTS_SNIPPET,
        "constants.md.j2",
        delta=fmt.pct(analysis.DELTA),
        confidence=fmt.pct(analysis.CONFIDENCE),
        min_ok=analysis.MIN_OK_REPLICATES,
        resamples=f"{analysis.N_RESAMPLES:,}",
        seed=analysis.SEED,
        **{k: v for k, v in common.items() if k not in ("delta_pct", "confidence_pct")},
    )
