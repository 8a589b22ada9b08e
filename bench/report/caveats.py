"""Each caveat code of the advice in words, so the pages and ``bench advise`` say it alike.

The advice computes the codes (``Recommendation.caveats``, ``Verdict.caveats``) and keeps no
prose; this is the one place their words live. Free of the page layer's imports (Jinja,
matplotlib), so ``advise`` can print them where only the report's statistics are installed.
"""

from __future__ import annotations

from bench.report import fmt
from bench.report.advice.record import MEMORY_CAVEAT_SHARE

CAVEATS = {
    "changes-numerics": "it changes the arithmetic, so check that accuracy holds",
    "tf32-default": "the fp32 baseline already ran its convolutions in TF32 (PyTorch's default)",
    "variant-failed": "in some configurations the setting failed outright (see the machine page)",
    "extra-memory": "it raises the peak memory of a whole run by more than "
    + fmt.pct(MEMORY_CAVEAT_SHARE),
    "smaller-batches-insufficient": "smaller batches had too few ok replicates to judge, so "
    "the GPU may already win below that batch",
    "steady-drift": "some of the measurements it rests on drifted while they were timed (see "
    "the machine page)",
}
