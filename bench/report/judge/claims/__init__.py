"""Popular advice about these settings, held against the measurements: one verdict per claim.

The claims are data (``claims.toml``: the advice in our own words, the measurable question it
becomes, and the rule that answers it); the verdicts are computed by the rules that
:mod:`bench.report.judge.claims.rules` names (written by subject, in ``cudnn`` and
``hardware``) from
the same analysis the rest of the site uses, with its intervals, δ band and replicate minimums.
Nothing here is written by hand: fed other rows, the same claim gets another verdict.

A rule looks at each machine (or configuration) it can answer from and files a
:class:`Finding` that supports the claim, contradicts it, finds its figure larger or smaller,
or cannot tell. The verdict follows from the findings that can tell: all support →
*supported*; all contradict → *contradicted*; all larger or all smaller → *larger* or *smaller
than claimed*; some of each → *depends* (the findings name which regimes); findings that all
cannot tell → *cannot tell*; no finding → *not measured*, with the run that would
measure it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from bench.report.judge.claims.model import Claim, ClaimAnswer, Finding
from bench.report.judge.claims.rules import RULES
from bench.report.vocabulary import ClaimVerdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

__all__ = ["Claim", "ClaimAnswer", "ClaimsError", "Finding", "count_verdicts", "evaluate",
           "load_claims"]

CLAIMS_FILE: Final = Path(__file__).with_name("claims.toml")


class ClaimsError(ValueError):
    """A claims file that cannot be used; the message names the entry and the problem."""


def load_claims(path: Path = CLAIMS_FILE) -> list[Claim]:
    """The claims of ``path``, checked: every entry complete, ids unique, rules known."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ClaimsError(f"{path}: {exc}") from None
    entries = data.get("claims")
    if not isinstance(entries, list) or not entries:
        raise ClaimsError(f"{path}: no [[claims]] entries")
    claims: list[Claim] = []
    for n, entry in enumerate(entries, start=1):
        where = f"{path}: claim {n}"
        if not isinstance(entry, dict):
            raise ClaimsError(f"{where}: not a table")
        missing = [k for k in ("id", "claim", "question", "analysis") if not entry.get(k)]
        if missing:
            raise ClaimsError(f"{where}: missing {', '.join(missing)}")
        if entry["analysis"] not in RULES:
            raise ClaimsError(f"{where}: unknown analysis {entry['analysis']!r}; valid choices: "
                              f"{', '.join(sorted(RULES))}")
        claims.append(Claim(str(entry["id"]), str(entry["claim"]), str(entry["question"]),
                            str(entry["analysis"]), tuple(map(str, entry.get("pages", ())))))
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ClaimsError(f"{path}: claim ids must be unique")
    return claims


def evaluate(analysis: Any, claims: list[Claim] | None = None) -> list[ClaimAnswer]:
    """Every claim's verdict from one :class:`~bench.report.analysis.Analysis`."""
    return [RULES[c.analysis](c, analysis) for c in (claims or load_claims())]


def count_verdicts(answers: Iterable[ClaimAnswer]) -> dict[ClaimVerdict, int]:
    """Claims per verdict, every verdict present (zero where none), in the vocabulary's order."""
    found = [a.verdict for a in answers]
    return {v: sum(x == v for x in found) for v in ClaimVerdict}
