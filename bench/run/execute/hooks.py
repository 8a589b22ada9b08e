"""Named instants of a run at which a test can act: the runner calls ``hook(point, target)``.

Faults that hit the runner itself (a kill between a replicate's samples and its row, a
second Ctrl-C while a child is being stopped, one while the run closes down) cannot be timed
from outside without races, so the runner says when it reaches each point:

- ``launched``: the replicate's child has been launched and is running;
- ``stopping``: a signal came, and the runner is about to have that child stopped;
- ``samples-written``: the replicate's samples are on disk and its row is not yet;
- ``row-written``: its row is on disk;
- ``closing``: the run is over and the launcher is about to be closed (no target).

``target`` is ``"<cell_id> <cell name> #r<replicate>"``, the string the worker's fault spec
matches. ``from_spec`` turns ``TORCH_KNOBS_SIGNAL`` into a hook that sends the runner a
signal at chosen points: comma-separated ``POINT[@MATCH]=SIGNAL`` (``samples-written@#r1=KILL``,
``stopping=INT``), MATCH a substring of the target (empty matches any); each entry fires once.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

Hook = Callable[[str, str], None]

POINTS = ("launched", "stopping", "samples-written", "row-written", "closing")
SIGNAL_ENV = "TORCH_KNOBS_SIGNAL"


def none(point: str, target: str) -> None:
    """The hook of a real run: nothing happens at any point."""


@dataclass
class _Entry:
    point: str
    match: str
    signal: signal.Signals
    fired: bool = False


def from_spec(spec: str) -> Hook:
    """A hook that signals this process as ``spec`` says; ValueError names a bad entry."""
    entries: list[_Entry] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        where, _, name = part.partition("=")
        point, _, match = where.partition("@")
        sig = getattr(signal, f"SIG{name.upper()}", None)
        if point not in POINTS or not isinstance(sig, signal.Signals):
            raise ValueError(f"{SIGNAL_ENV}: bad entry {part!r}; expected POINT[@MATCH]=SIGNAL "
                             f"with POINT one of {', '.join(POINTS)}")
        entries.append(_Entry(point, match, sig))
    if not entries:
        return none

    def hook(point: str, target: str) -> None:
        for entry in entries:
            if not entry.fired and entry.point == point and entry.match in target:
                entry.fired = True
                os.kill(os.getpid(), entry.signal)

    return hook
