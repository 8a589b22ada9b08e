"""The words the report judges in, each defined once: verdicts, stances, actions, statuses.

String-valued enums, so that a table's ``verdict`` column, a CSV, a page and
``bench advise --json`` all read the same words (``Verdict.FASTER == "faster"``), and typed,
so that a renamed or mistyped word is an error mypy sees instead of a branch that silently
never runs. No other module spells these words as string literals (a test holds this), and
each word's meaning is here too (``MEANINGS``), which the Methodology page prints.

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
    INSUFFICIENT = "too few replicates"
    NOT_MEASURED = "not measured"
    MIXED = "mixed"


class Noise(Word):
    """Why a comparison's figure is noisy (``analysis.pairs``): what ``bench check`` flags in
    a replicate it rests on, or replicates that spread too far for an interval to be of use."""

    DRIFT = "a replicate drifted"
    THROTTLED = "clocks throttled"
    SPREAD = "replicates spread widely"


class Numerics(Word):
    """What a cell's paired numerics check says of its outputs against the strict reference
    (``judge.numerics``): within the tolerance of the arithmetic it ran, or not."""

    AGREES = "agrees"
    DRIFTS = "drifts"
    NOT_CHECKED = "not checked"


class Tradeoff(Word):
    """Speed and numerics weighed together (``judge.numerics.tradeoff``): what a switch that
    changes the arithmetic comes to."""

    FASTER_AGREES = "faster, and its outputs agree with the strict reference within tolerance"
    FASTER_DRIFTS = "faster, but its outputs drift: check on your own data before you switch"
    SLOWER_DRIFTS = "no faster, and it drifts: leave it"
    SLOWER_AGREES = "no faster, though its outputs agree: nothing to gain"


class ClaimVerdict(Word):
    """What the measurements say of one piece of popular advice (``judge.claims``)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    LARGER = "larger than claimed"
    SMALLER = "smaller than claimed"
    DEPENDS = "depends"
    CANNOT_TELL = "cannot tell"
    NOT_MEASURED = "not measured"


class Stance(Word):
    """What one finding says of its claim."""

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    LARGER = "larger"  # a claimed figure, measured larger
    SMALLER = "smaller"  # measured smaller
    CANNOT_TELL = "cannot tell"


class Action(Word):
    """What the advice says to do with a setting in one regime (``judge.advice``)."""

    ENABLE = "enable"
    KEEP_OFF = "keep off"
    LEAVE_DEFAULT = "leave default"
    INSUFFICIENT = "too few replicates"
    DEPENDS = "depends on model"
    ENABLE_IF_NEEDED = "enable only if needed"


class KnobStatus(Word):
    """What became of one knob ``bench advise`` was asked about."""

    PLANNED = "planned"  # a dry run's plan: nothing measured yet
    MEASURED = "measured"
    INSUFFICIENT = "too few replicates"
    NOT_IN_BUDGET = "not in budget"
    SKIPPED = "skipped"


class Power(Word):
    """What a cell's telemetry says beside its figures (``analysis.energy``)."""

    THROTTLED = "clocks throttled"
    SHORT_WINDOW = "energy window too short"
    NOT_MEASURED = "not measured on this machine"


class Feeding(Word):
    """Whether a host's loader workers keep a device's step fed (``judge.feeding``)."""

    FED = "enough workers"
    SHORT = "more than this host has"
    NOT_REACHED = "more workers than measured"
    INSUFFICIENT = "too few replicates"
    STARTUP = "timed inside the workers' start-up"
    NOT_MEASURED = "not measured"


class Call(Word):
    """Home's grid: what one switch comes to on one machine, for its default workload."""

    ON = "turn on"  # switch it on (use the variant)
    ON_IF_OUTPUTS_HOLD = "turn on if your outputs hold"  # faster, but its outputs drift
    OFF = "leave off"  # leave the default
    DEPENDS = "depends"  # on for some jobs only (the answer says which)
    TOO_FEW = "too few runs"  # measured, but too few replicates to decide
    FLAGGED = "flagged by bench check"  # decided only on replicates that drifted or throttled
    NOT_MEASURED = "not measured"
    NOT_APPLICABLE = "n/a (no GPU)"  # a CUDA switch on a machine without one


class Trust(Word):
    """How far a machine's figures can be trusted (``judge.trust``): who measured them, and
    whether another machine of the same hardware model measured the same."""

    REFERENCE = "reference"
    CONTRIBUTED = "contributed"
    REPRODUCED = "reproduced"


#: The judged words (verdicts, stances, actions), for the test that no module spells them
#: itself (a knob's status shares "skipped" with a row's, which the schema spells).
#: ``Trust`` is left out: its words are also a manifest's values, which the measuring side
#: writes, and a column of the sittings' table.
VOCABULARY: tuple[type[Word], ...] = (Verdict, ClaimVerdict, Stance, Action, Power,
                                       Feeding, Noise, Tradeoff)
#: ``Numerics`` is left out too: "agrees" is also a sitting's word (``bench.sittings``) and
#: "not checked" a re-run check's label.

#: What each word a page shows means: the Methodology page's definitions. Pairs, not a dict:
#: a claim's and a finding's "cannot tell" are equal strings, and would collide.
MEANINGS: tuple[tuple[Word, str], ...] = (
    (Verdict.FASTER, "the whole 95% interval of the speedup lies above 1 + δ"),
    (Verdict.SLOWER, "the whole 95% interval lies below 1 − δ"),
    (Verdict.NO_CLEAR_DIFFERENCE, "the interval overlaps 1 ± δ; where it lies inside that band "
                                  "the setting does not matter there, where it reaches beyond "
                                  "it more replicates could still show a change"),
    (Verdict.INSUFFICIENT, "fewer ok replicates than a verdict needs on one side; the figure "
                           "says how many of the needed (2 of 3), and the statuses say why"),
    (Verdict.NOT_MEASURED, "no run measured this configuration on this machine"),
    (Verdict.MIXED, "a summary over several configurations whose verdicts disagree; the page "
                    "names which went which way"),
    (Noise.DRIFT, "a replicate the figure rests on drifted while it was timed (bench check "
                  "flags it): its median describes no single regime"),
    (Noise.THROTTLED, "a replicate the figure rests on ran with its clocks throttled"),
    (Noise.SPREAD, "the replicates of one side spread more than 10% (their coefficient of "
                   "variation): the page gives the spread, not an interval no one can use"),
    (Numerics.AGREES, "every checked replicate's outputs are within the tolerance of the "
                      "arithmetic it ran (its norm-wise relative error, its cosine similarity, "
                      "and in training its loss and parameters after the same steps) against "
                      "the strict reference from the same weights and inputs"),
    (Numerics.DRIFTS, "at least one checked replicate is outside that tolerance; the page gives "
                      "the figure that is"),
    (Numerics.NOT_CHECKED, "no replicate of this configuration ran the numerics check (a run "
                           "older than the check, or a cell it skips)"),
    (Tradeoff.FASTER_AGREES, "clearly faster, and its numerics agree"),
    (Tradeoff.FASTER_DRIFTS, "clearly faster, but its numerics drift: the speed is real, the "
                             "outputs differ more than the tolerance"),
    (Tradeoff.SLOWER_DRIFTS, "not clearly faster, and its numerics drift"),
    (Tradeoff.SLOWER_AGREES, "not clearly faster, and its numerics agree"),
    (ClaimVerdict.SUPPORTED, "every finding that can tell agrees with the claim"),
    (ClaimVerdict.CONTRADICTED, "every finding that can tell goes against the claim"),
    (ClaimVerdict.LARGER, "the claim names a figure, and every finding measured more than it"),
    (ClaimVerdict.SMALLER, "the claim names a figure, and every finding measured less than it"),
    (ClaimVerdict.DEPENDS, "the findings disagree; the verdict names the regimes on each side"),
    (ClaimVerdict.CANNOT_TELL, "measured, but no finding can tell: too few ok replicates, an "
                               "interval too wide to decide, or figures within the claim's "
                               "margin"),
    (ClaimVerdict.NOT_MEASURED, "no run measured what the claim is about; the verdict names "
                                "the run that would"),
    (Stance.SUPPORTS, "this measurement agrees with the claim"),
    (Stance.CONTRADICTS, "this measurement goes against the claim"),
    (Stance.LARGER, "this measurement's figure is above the claim's (its whole interval "
                    "too, where it has one)"),
    (Stance.SMALLER, "this measurement's figure is below the claim's (its whole interval "
                     "too, where it has one)"),
    (Stance.CANNOT_TELL, "this measurement cannot decide the claim: too few ok replicates, an "
                         "interval too wide, figures within the claim's margin, or a check "
                         "that cannot single the setting out"),
    (Power.THROTTLED, "in at least one replicate's timed window the GPU reported a clock-event "
                      "(throttle) reason other than idle (a power cap, a thermal or hardware "
                      "slowdown): it ran at reduced clocks for part of the measurement"),
    (Power.SHORT_WINDOW, "an energy figure taken over a steady window under 1 s, a few updates "
                         "of the counter: too short to trust"),
    (Power.NOT_MEASURED, "no replicate of this configuration read an energy counter on this "
                         "machine (no NVML energy or power reading, no readable RAPL counters, "
                         "or a run older than the energy columns); never estimated from a "
                         "nameplate"),
    (Feeding.FED, "the smallest worker count measured, one or more, whose delivered samples/s "
                  "(the median over fresh processes) is at least what the device's step "
                  "consumes; with 0 workers the step's own process decodes between steps, so "
                  "the step waits for every batch"),
    (Feeding.SHORT, "no worker count up to the host's cores delivered what the device consumes; "
                    "the shortfall is the consumption less the best delivered rate"),
    (Feeding.NOT_REACHED, "no worker count measured delivered enough, and the sweep stopped "
                          "below the host's cores: more workers might"),
    (Feeding.INSUFFICIENT, "the pipeline or the step it feeds has fewer than three ok "
                           "replicates: the figures are shown, without a verdict"),
    (Feeding.STARTUP, "every replicate of a worker count timed only batches its workers "
                      "were handed when the loader started (two each), which arrive in a "
                      "burst: no rate they sustain was measured, so no count is given where "
                      "that one might have been enough"),
    (Feeding.NOT_MEASURED, "no run measured this pipeline, or the step it would feed, on "
                           "this machine"),
    (Trust.REFERENCE, "measured by the project itself: a committed run (or one whose manifest "
                      "says so) that names the profile it ran, so its commands are recorded "
                      "and anyone can run them again"),
    (Trust.CONTRIBUTED, "measured by someone else and checked on arrival (its files, its "
                        "rows' consistency), but not reproduced: one machine's word"),
    (Trust.REPRODUCED, "contributed by two or more machines of the same hardware model "
                       "(different machine ids) that agree: on most workloads both measured, "
                       "the 95% interval of one machine's median over the others' reaches "
                       "into 1 ± δ, and no machine of the model disagrees with the rest"),
)
