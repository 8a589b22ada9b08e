"""Each caveat code of the advice in words, so the pages and ``bench advise`` say it alike.

The advice computes the codes (``Recommendation.caveats``, ``Verdict.caveats``) and keeps no
prose; this is the one place their words live. Free of the page layer's imports (Jinja,
matplotlib), so ``advise`` can print them where only the report's statistics are installed.
"""

from __future__ import annotations

from bench.report import fmt
from bench.report.judge.advice.codes import Caveat
from bench.report.judge.advice.record import MEMORY_CAVEAT_SHARE

CAVEATS: dict[str, str] = {
    Caveat.CHANGES_NUMERICS: "it changes the arithmetic, so check that accuracy holds",
    Caveat.TF32_DEFAULT:
        "the fp32 baseline already ran its convolutions in TF32 (PyTorch's default)",
    Caveat.VARIANT_FAILED:
        "in some configurations the setting failed outright (see the machine page)",
    # the two above, where advise reads the report's pair the other way round
    # (``verdicts.reverse``: the TF32 knob)
    Caveat.TF32_IS_THE_DEFAULT: "TF32 convolutions are already PyTorch's default for fp32 "
    "(torch.backends.cudnn.allow_tf32); fp32-strict is what turns them off",
    Caveat.BASELINE_FAILED: "in some configurations the run with the setting off failed outright "
    "(see the machine page)",
    Caveat.EXTRA_MEMORY: "it raises the peak memory of a whole run by more than "
    + fmt.pct(MEMORY_CAVEAT_SHARE),
    Caveat.SMALLER_BATCHES_INSUFFICIENT: "smaller batches had too few ok replicates to judge, so "
    "the GPU may already win below that batch",
    Caveat.STEADY_DRIFT: "some of the measurements it rests on drifted while they were timed (see "
    "the machine page)",
}


def memory_change(extra_bytes: float | None, share: float | None, *, signed: bool = True
                  ) -> str:
    """A change in peak memory in bytes and, where the baseline's peak is known, as a share
    of it (``+5.21 GiB (+12%)``): a size alone does not say whether it matters."""
    text = fmt.bytes_(extra_bytes, signed=signed)
    return text + (f" ({fmt.pct(share, signed=True)})" if fmt.present(share) and
                   fmt.present(extra_bytes) else "")


def caveat_text(code: str, extra_bytes: float | None = None, share: float | None = None) -> str:
    """A caveat in words; the memory one with its figures where they are known, so "more
    memory" has a size (as the pages word it: ``views.sentences.caveat_text``)."""
    if code == Caveat.EXTRA_MEMORY and fmt.present(extra_bytes):
        return (f"it raises the peak memory of a whole run, first pass included, by "
                f"{memory_change(extra_bytes, share, signed=False)}")
    return CAVEATS.get(code, code)
