"""The words the report judges in, each defined once: verdicts, stances, actions, statuses.

String-valued enums, so that a table's ``verdict`` column, a CSV, a page and
``bench advise --json`` all read the same words (``Verdict.FASTER == "faster"``), and typed,
so that a renamed or mistyped word is an error mypy sees instead of a branch that silently
never runs. No other module spells these words as string literals (a test holds this).

Free of every dependency, so ``bench advise`` can import it where only torch is installed.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """An enum whose members are their words wherever they are printed or compared."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str(self), spec)


class Verdict(Word):
    """What a comparison of two cells says, from its 95% interval against 1 ± δ (see
    ``analysis.pairs``); ``MIXED`` only ever describes several comparisons that disagree."""

    FASTER = "faster"
    SLOWER = "slower"
    NO_CLEAR_DIFFERENCE = "no clear difference"
    INSUFFICIENT = "insufficient"
    MIXED = "mixed"


class ClaimVerdict(Word):
    """What the measurements say of one piece of popular advice (``judge.claims``)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    DEPENDS = "depends"
    NOT_MEASURED = "not measured here"


class Stance(Word):
    """What one finding says of its claim."""

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    CANNOT_TELL = "cannot tell"


class Action(Word):
    """What the advice says to do with a setting in one regime (``judge.advice``)."""

    ENABLE = "enable"
    KEEP_OFF = "keep off"
    LEAVE_DEFAULT = "leave default"
    INSUFFICIENT = "insufficient data"
    DEPENDS = "depends on model"
    ENABLE_IF_NEEDED = "enable only if needed"


class KnobStatus(Word):
    """What became of one knob ``bench advise`` was asked about."""

    PLANNED = "planned"  # a dry run's plan: nothing measured yet
    MEASURED = "measured"
    INSUFFICIENT = "insufficient"
    NOT_IN_BUDGET = "not in budget"
    SKIPPED = "skipped"


#: The judged words (verdicts, stances, actions), for the test that no module spells them
#: itself (a knob's status shares "skipped" with a row's, which the schema spells).
VOCABULARY: tuple[type[Word], ...] = (Verdict, ClaimVerdict, Stance, Action)
