"""What a claim, a finding and a verdict are: the vocabulary of the claims rules and pages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from bench.report.vocabulary import ClaimVerdict, Stance


@dataclass(frozen=True)
class Claim:
    """One piece of popular advice, as ``claims.toml`` holds it."""

    id: str
    claim: str  # the advice, in our own words
    question: str  # what it becomes once made measurable
    analysis: str  # the rule that answers it (a name in rules.RULES)
    pages: tuple[str, ...] = ()  # the finding pages that show its verdict


@dataclass(frozen=True)
class Finding:
    """What one machine or configuration says about a claim, with the rows it rests on.

    ``text`` is plain text with its figures (escaped where it is shown); ``evidence`` holds
    (machine page, row anchor) pairs, as everywhere on the site.
    """

    stance: Stance
    page: str  # the machine page key
    machine: str
    describe: Callable[[], str] | str  # the text, or how to write it when it is shown
    evidence: tuple[tuple[str, str], ...] = ()
    model: str = ""  # the model it measured ("" where the finding is about the machine)
    label: str = ""  # its regime in a few words, for a summary that names it ("" = the model)
    #: what would let a finding that cannot tell tell ("" where nothing more here would)
    remedy: str = ""
    #: why it cannot tell, in a few words for its claim's summary ("" = the claim's words)
    why: str = ""

    @functools.cached_property
    def text(self) -> str:
        """Plain text with its figures. Written on first use: a big tree files thousands of
        findings and a page shows a dozen of each claim's."""
        return self.describe if isinstance(self.describe, str) else self.describe()


@dataclass(frozen=True)
class ClaimAnswer:
    """A claim's computed verdict: the word, a summary true of every finding it cites, the
    findings themselves, and (when nothing could tell) the run that would measure it."""

    claim: Claim
    verdict: ClaimVerdict
    summary: str
    findings: tuple[Finding, ...] = ()
    missing: str = ""

    @property
    def scope(self) -> str:
        """What the verdict rests on, so it never reads as wider than that: ``3 findings
        (resnet50, vit_b_16) on nvidia-h200``, or ``7 of 9 findings …`` when some could not
        tell; empty when none could."""
        telling = [f for f in self.findings if f.stance != Stance.CANNOT_TELL]
        if not telling:
            return ""
        # a finding over several models names them all ("mobilenet_v3_large, resnet18")
        models = sorted({m for f in telling for m in f.model.split(", ") if m})
        machines = sorted({f.machine for f in telling})
        of = f" of {len(self.findings)}" if len(self.findings) != len(telling) else ""
        what = f"{len(telling)}{of} finding{'s' if len(self.findings) != 1 else ''}"
        if models:
            what += f" ({', '.join(models)})"
        return f"{what} on {', '.join(machines)}"

    @property
    def evidence(self) -> tuple[tuple[str, str], ...]:
        """Every row behind the verdict, once, in finding order."""
        return tuple(dict.fromkeys(e for f in self.findings for e in f.evidence))



#: The verdict of findings that all say the same.
_AGREED = {
    Stance.SUPPORTS: ClaimVerdict.SUPPORTED,
    Stance.CONTRADICTS: ClaimVerdict.CONTRADICTED,
    Stance.LARGER: ClaimVerdict.LARGER,
    Stance.SMALLER: ClaimVerdict.SMALLER,
}


#: The remedy of a finding that cannot tell for want of replicates or of a narrow interval.
MORE_REPLICATES = ("more replicates of those rows where they are too few or their interval too "
                   "wide")


def replicates_remedy(stance: Stance) -> str:
    """The remedy of a finding whose stance rests on an interval: more replicates, where it
    cannot tell."""
    return MORE_REPLICATES if stance == Stance.CANNOT_TELL else ""


def decide(claim: Claim, findings: list[Finding], summary: str, missing: str) -> ClaimAnswer:
    """The verdict that the findings which can tell give (see the module docstring): what
    they all say, or *depends* where they differ; *cannot tell* where some were measured but
    none can tell, *not measured* where none was measured. What would measure a claim that
    cannot tell is what its findings lack (each finding's remedy), then ``missing``."""
    stances = {f.stance for f in findings} - {Stance.CANNOT_TELL}
    if not stances:
        if findings:  # measured, but nothing that could tell: say so before what would
            remedies = dict.fromkeys(f.remedy for f in findings if f.remedy)
            missing = (f"the {len(findings)} finding{'s' if len(findings) != 1 else ''} below "
                       f"could not tell (each says why); "
                       + ", or ".join(m for m in [*remedies, missing] if m))
            return ClaimAnswer(claim, ClaimVerdict.CANNOT_TELL, summary, tuple(findings),
                               missing)
        return ClaimAnswer(claim, ClaimVerdict.NOT_MEASURED, summary, (), missing)
    word = _AGREED[next(iter(stances))] if len(stances) == 1 else ClaimVerdict.DEPENDS
    return ClaimAnswer(claim, word, summary, tuple(findings))
