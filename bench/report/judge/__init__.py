"""Judging: every decision the site and ``bench advise`` state, made once from the analysis.

The advice (a rule per setting and regime) and the claims (a rule per piece of popular
advice) are judged here, and each question's page model from them. Views only format what
they are handed: which rows answer a question (:mod:`~bench.report.judge.selection`), what a
machine's pairs add up to, and which verdict a headline carries are decided here, in the typed
words of :mod:`bench.report.vocabulary`.

- :mod:`~bench.report.judge.advice`: the recommendation rules;
- :mod:`~bench.report.judge.claims`: popular advice, held against the measurements;
- :mod:`~bench.report.judge.asks`: the pairs ``bench advise`` names, judged the report's way;
- each question's page model (``bench.report.questions``) is built from one
  :class:`~bench.report.judge.facts.Facts`; ``bench.report.questions.answers.judge`` runs them.
"""

from __future__ import annotations

from bench.report.analysis import CONFIDENCE, DELTA, MIN_OK_REPLICATES
from bench.report.judge.advice import Recommendation
from bench.report.judge.advice.codes import Caveat, Rule, Setting
from bench.report.judge.claims import ClaimAnswer, Finding
from bench.report.judge.machines import Machine
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Counted, Pair, Scalar, Table
from bench.report.judge.tally import Comparisons, MachineRows, Tally

__all__ = [
    "CONFIDENCE", "DELTA", "MIN_OK_REPLICATES", "Caveat", "ClaimAnswer", "Comparisons", "Counted",
    "Finding", "Machine", "MachineRows", "Pair", "Recommendation", "Regime", "Rule", "Scalar",
    "Setting", "Table", "Tally",
]  # fmt: skip
