"""The constants snippet: the statistical settings the methodology page quotes from the code."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import CONFIDENCE, DELTA, MIN_OK_REPLICATES, N_RESAMPLES, SEED
from bench.report.paths import CONSTANTS_SNIPPET
from bench.report.writer import Writer


def constants_page(writer: Writer, common: dict[str, Any]) -> None:
    writer.page(
        CONSTANTS_SNIPPET,
        "constants.md.j2",
        delta=fmt.pct(DELTA),
        confidence=fmt.pct(CONFIDENCE),
        min_ok=MIN_OK_REPLICATES,
        resamples=f"{N_RESAMPLES:,}",
        seed=SEED,
        **{k: v for k, v in common.items() if k not in ("delta_pct", "confidence_pct")},
    )
