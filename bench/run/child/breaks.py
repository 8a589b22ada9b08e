"""Graph breaks as torch names them, shortened to what a row can hold.

Why: a model's graph breaks are why compiling it gains less than it might, and torch's own
reason is what tells a user which line to change. Dynamo keys ``counters["graph_break"]`` by
its whole message, many lines long (on torch 2.14: the break's kind, then ``Explanation:``,
``Hint:`` lines, a developer context and a link to the break's page). A row keeps the first
line, which names the kind ("Failed to trace builtin operator"), with the first name the
explanation quotes when the first line does not already hold it (`` `print` ``), and the id of
torch's page on that break (``gb0059``): short, and still the words a search finds.

Standard library only: the counters are read by ``bench.run.child.compiling``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_QUOTED = re.compile(r"`([^`]+)`")
_PAGE = re.compile(r"/gb/(gb\d+)\.html")


def short_reason(raw: str) -> str:
    """One line for one of torch's break reasons: its first line, the name its explanation
    quotes first (unless the first line holds it already) and the id of torch's page on it.

    >>> short_reason("Failed to trace builtin operator\\n  Explanation: Dynamo does not know "
    ...              "how to trace builtin operator `print` with argument types ['str']\\n"
    ...              " For more details ... /gb/gb0059.html")
    'Failed to trace builtin operator: `print` (gb0059)'
    """
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    text = lines[0] if lines else "(no reason given)"
    explained = next((line for line in lines[1:] if line.startswith("Explanation:")), "")
    quoted = _QUOTED.search(explained)
    if quoted and quoted.group(1) not in text:
        text = f"{text}: `{quoted.group(1)}`"
    page = _PAGE.search(raw)
    return f"{text} ({page.group(1)})" if page else text


def tally(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Counts of raw reasons as counts of short ones (two messages that shorten alike, as the
    same break met with other argument types, are one reason), in the order first met."""
    out: dict[str, int] = {}
    for raw, n in counts:
        if n > 0:
            key = short_reason(raw)
            out[key] = out.get(key, 0) + n
    return out


def grown(before: tuple[tuple[str, int], ...] | None, after: tuple[tuple[str, int], ...] | None
          ) -> list[tuple[str, int]] | None:
    """What each reason's count grew by between two readings of one counter (None: unknown)."""
    if before is None or after is None:
        return None
    was = dict(before)
    return [(k, n - was.get(k, 0)) for k, n in after if n > was.get(k, 0)]
