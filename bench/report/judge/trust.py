"""How far each machine's figures are trusted, and which machine of a hardware model
disagrees with the rest: the rules behind the label beside every machine name.

- *reference*: every run of the fingerprint is the project's own (a committed run that names
  its profile, or a manifest that says so);
- *reproduced*: contributed, and two or more physical machines of its hardware model, with
  different recorded ``machine_uid``, agree with the rest of that model, none disagreeing;
- *contributed*: any other: checked on arrival, one machine's word.

Two machines agree on a cell where the 95% interval of one's median step time over the
others' (``analysis.machines.agreement``) reaches into 1 ± δ, and disagree where it lies
wholly outside it; a machine agrees with the rest of its model where it agrees on most (more
than half) of the shared cells that could be judged, at least ``MIN_SHARED`` of them (the
sittings' rule: fewer cells say nothing of a whole machine), and disagrees likewise. A
machine that disagrees is named on its model's page with its ratio, never pooled silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.report.analysis.machines import MachineAgreement
from bench.report.vocabulary import Trust
from bench.sittings import MIN_SHARED

__all__ = ["MIN_SHARED", "ModelTrust", "agrees", "count_trust", "disagrees", "judge_model",
           "trust_of"]


def _judged(m: MachineAgreement) -> int:
    return m.agree + m.disagree


def agrees(m: MachineAgreement) -> bool:
    """It agrees with the rest of its model on most cells that could be judged."""
    return _judged(m) >= MIN_SHARED and 2 * m.agree > _judged(m)


def disagrees(m: MachineAgreement) -> bool:
    """Its medians lie outside the rest's intervals on most cells that could be judged."""
    return _judged(m) >= MIN_SHARED and 2 * m.disagree > _judged(m)


@dataclass(frozen=True)
class ModelTrust:
    """One hardware model's machines, judged against each other."""

    model: str
    machines: tuple[MachineAgreement, ...]
    disagreeing: tuple[MachineAgreement, ...]  # named on the page, with their ratios
    reproduced: bool  # two machines of recorded, different ids agree; none disagrees
    unrecorded: bool  # a machine is a run folder: its run did not say which machine


def judge_model(model: str, machines: Sequence[MachineAgreement]) -> ModelTrust:
    """The machines of ``model`` held against each other (see the module docstring)."""
    bad = tuple(m for m in machines if disagrees(m))
    uids = {m.uid for m in machines if m.uid and agrees(m)}
    return ModelTrust(model, tuple(machines), bad, reproduced=len(uids) >= 2 and not bad,
                      unrecorded=any(not m.uid for m in machines))


def trust_of(reference: bool, keys: Sequence[str], model: ModelTrust) -> Trust:
    """A fingerprint's trust: ``reference`` where every run of it is the project's own, else
    reproduced where its model is and none of its machines (``keys``) disagrees."""
    if reference:
        return Trust.REFERENCE
    bad = {m.key for m in model.disagreeing}
    if model.reproduced and not bad & set(keys):
        return Trust.REPRODUCED
    return Trust.CONTRIBUTED


def count_trust(trusts: Iterable[Trust]) -> dict[Trust, int]:
    """How many of ``trusts`` are each trust, every trust present (Home counts them)."""
    found = list(trusts)
    return {t: found.count(t) for t in Trust}
