"""One-off costs in words: break-even, "never pays back", the warm-cache figures beside them.

Shared by every page that weighs a setting's up-front cost (cudnn.benchmark's search,
torch.compile's compilation) against what it saves per step, so both read alike. The rows carry
``pays_back`` (``judge.common.with_pay_back``): whether a break-even is worth quoting.
"""

from __future__ import annotations

import math
from typing import Any

from bench.report import fmt
from bench.report.render.words.frames import present
from bench.report.vocabulary import Verdict


def warm_text(r: Any) -> str:
    """The same configuration with a warm kernel cache: its extra cold cost and break-even."""
    if r.kernel_cache == "warm" or not present(r.warm_extra_cold_pass_max_s):
        return fmt.MISSING
    text = f"{fmt.signed_seconds(r.warm_extra_cold_pass_max_s)} cold"
    if r.pays_back and present(r.warm_break_even_iters_high):
        text += f", break-even {warm_break_even(r)}"
    return text


def warm_break_even(r: Any) -> str:
    """The warm cache's break-even as the fresh one is quoted: the range from the interval and
    the replicates (``32 to 48``), so the two read alike."""
    return break_even_range(r.warm_break_even_iters_low,
                            r.warm_break_even_iters_high, r.verdict)


def no_pay_back(r: Any) -> str:
    if r.verdict == Verdict.SLOWER:
        return "never pays back (slower)"
    if r.verdict == Verdict.NO_CLEAR_DIFFERENCE:
        return "no clear saving to repay it"
    return "never pays back (no saving measured)"


def break_even_text(r: Any) -> str:
    if r.verdict == Verdict.INSUFFICIENT or not (
        fmt.present(r.break_even_iters) or is_inf(r.break_even_iters)
    ):
        return fmt.MISSING
    if not r.pays_back:
        return no_pay_back(r)
    if float(r.break_even_iters) <= 0:
        return "immediately (no extra cold cost)"
    return fmt.iterations(r.break_even_iters)


def break_even_cell(r: Any) -> str:
    """The median break-even, with its range from the interval and the replicates beside it
    where that differs (``334 (334 to 367)``): a recommendation quotes the upper end, so a
    table beside it shows where that comes from."""
    text = break_even_text(r)
    if not r.pays_back:
        return text
    spread = break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
    return text if spread == text else f"{text} ({spread})"


def break_even_range(low: Any, high: Any, verdict: str) -> str:
    if verdict == Verdict.INSUFFICIENT:
        return fmt.MISSING

    def one(v: Any) -> str:
        if is_inf(v):
            return "never"
        return fmt.iterations(v) if fmt.present(v) else fmt.MISSING

    a, b = one(low), one(high)
    return a if a == b else f"{a} to {b}"


def is_inf(value: Any) -> bool:
    try:
        return math.isinf(float(value))
    except (TypeError, ValueError):
        return False
