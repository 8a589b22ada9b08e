"""The graph breaks of a compiled cell, as torch counted and named them, with torch's hint for
each kind in words: what the torch.compile page and ``bench advise`` say beside a compiled
speedup, and the one rule for when the breaks are the likely reason compiling gained little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.report.vocabulary import Verdict
from bench.schema import SchemaError, parse_break_reasons

#: torch's advice for each kind of graph break, in words, matched on the start of the reason
#: it gives (``graph_break_reasons``); the first match wins.
BREAK_HINTS = (
    ("Unsupported Tensor.item()", "a data-dependent `.item()`: set "
     "`torch._dynamo.config.capture_scalar_outputs = True`, or keep the branch on it out of "
     "the compiled model"),
    ("Failed to trace builtin operator", "a Python builtin Dynamo cannot trace (such as "
     "`print`): take it out of `forward`"),
    ("Attempted to call function marked as skipped", "a call into a function Dynamo does not "
     "trace (a C builtin): move it out of `forward`, or wrap it in `torch.compiler.disable`"),
    ("Data-dependent branching", "Python control flow on a tensor's value: use `torch.cond`, "
     "or move the branch out of the compiled model"),
)


@dataclass(frozen=True)
class Breaks:
    """The graph breaks a compiled cell met, cold pass included, each reason with torch's hint
    in words ("" where none is known)."""

    total: int | None  # None: this torch did not report them
    graphs: int | None
    reasons: tuple[tuple[int, str, str], ...]  # (count, reason, hint), most frequent first

    @property
    def hints(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h for _, _, h in self.reasons if h))


def _count_or_none(value: Any) -> int | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def hint_for(reason: str) -> str:
    """torch's advice for one break reason, in words ("" where none is known)."""
    return next((h for start, h in BREAK_HINTS if reason.startswith(start)), "")


def breaks(total: Any, graphs: Any, reasons: Any) -> Breaks:
    """A cell's breaks from its ``graph_breaks_max``, ``graphs_max`` and
    ``graph_break_reasons`` figures (a reasons text that does not parse names none)."""
    try:
        found = parse_break_reasons(str(reasons or ""))
    except SchemaError:
        found = []
    return Breaks(_count_or_none(total), _count_or_none(graphs),
                  tuple((n, text, hint_for(text)) for n, text in found))


def breaks_of(r: Any) -> Breaks:
    """A compile pair's compiled side's breaks (its ``var_`` figures)."""
    return breaks(r.var_graph_breaks_max, r.var_graphs_max, r.var_graph_break_reasons)


def explain(verdict: Any, b: Breaks | None) -> bool:
    """Whether graph breaks are the likely reason compiling gained little: the model broke
    into several graphs, and the compiled side was judged and not clearly faster."""
    return (b is not None and bool(b.total)
            and verdict in (Verdict.NO_CLEAR_DIFFERENCE, Verdict.SLOWER))
