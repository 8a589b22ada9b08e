"""Cores to feed: how many loader workers keep a device's step supplied with batches.

The rule joins two measurements of one machine: what its input pipeline delivers with w
workers (samples/s, for the recipe and batch of the step) and what the step consumes (its
synthetic-input samples/s: the rate it would take batches at were they free). The answer is
the smallest w of one or more whose delivered median is at least the consumption, with that
rate's interval; where none is, the best rate and the shortfall, and whether the sweep reached
the host's cores (then more workers cannot help on this host) or stopped short of them.

Where no measured count covers the step, the rated counts still bound the answer: workers
scale at best linearly (w workers deliver at most w times one worker's rate), so a count w that
delivered at most r (the top of its interval) means at least ``consumption × w / r`` workers
are needed (``Bound``). Where that is more than the host's cores, this host cannot feed the step
with this pipeline, whatever the counts not rated would have shown.

Why not 0 workers: with none, the process running the step decodes each batch itself, between
its steps, so a loop that waits for its step (it reads its loss) waits for every decode too,
however fast the decoding is. That count never feeds a step; what it costs the step is
given instead (``CoresToFeed.inline_wait``).

Plain Python, no pandas: ``bench advise`` applies the same rule where only torch is installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from bench.report.vocabulary import Feeding

#: Fewer ok replicates than this on either side: the figures, without a verdict (the
#: analysis' ``MIN_OK_REPLICATES``, repeated here to keep this module free of pandas).
MIN_OK = 3


@dataclass(frozen=True)
class Rate:
    """Samples per second: the median over replicates and its 95% interval (NaN without)."""

    median: float
    low: float = math.nan
    high: float = math.nan
    n: int = 0  # ok replicates

    @property
    def known(self) -> bool:
        return math.isfinite(self.median) and self.median > 0


@dataclass(frozen=True)
class Delivered:
    """A pipeline's rate with ``workers`` loader workers, and the row it was measured in;
    ``startup``: its ok replicates timed inside the workers' start-up, which give no rate
    (``analysis.startup``)."""

    workers: int
    rate: Rate
    page: str = ""
    anchor: str = ""
    startup: int = 0

    @property
    def unrated(self) -> bool:
        """Measured, but only inside the start-up: no rate the workers sustain is known."""
        return self.startup > 0 and not self.rate.known


@dataclass(frozen=True)
class Bound:
    """At least ``workers`` loader workers, at perfect scaling: the rated count ``source``
    delivered at most ``ceiling`` samples/s (the top of its interval), so each worker adds at
    most ``ceiling / source.workers``. A bound, not a measurement."""

    workers: int
    source: Delivered
    ceiling: float


def lower_bound(demand: Rate, sweep: Sequence[Delivered]) -> Bound | None:
    """The tightest bound the rated counts below the consumption give (see the module
    docstring); None where no rated count of one or more workers falls short of it."""
    found = []
    for d in sweep:
        if d.workers <= 0 or not d.rate.known:
            continue
        ceiling = d.rate.high if math.isfinite(d.rate.high) else d.rate.median
        if ceiling < demand.median:
            found.append(Bound(math.ceil(demand.median * d.workers / ceiling), d, ceiling))
    return max(found, key=lambda b: (b.workers, b.source.workers), default=None)


@dataclass(frozen=True)
class CoresToFeed:
    """The answer for one step: the verdict, the consumption, the smallest worker count that
    covers it and what that count delivered (or, where none does, the best count's rate and
    the shortfall in samples/s)."""

    verdict: Feeding
    demand: Rate | None
    host_cores: int
    workers: int | None = None
    delivered: Delivered | None = None
    shortfall: float | None = None
    measured_up_to: int | None = None  # the largest worker count measured
    inline: Delivered | None = None  # 0 workers, where rated: the step's process decodes
    at_least: Bound | None = None  # where no count covers the step: what the rated ones bound

    @property
    def beyond_host(self) -> bool:
        """The bound alone says this host's cores cannot feed the step with this pipeline."""
        return self.at_least is not None and self.at_least.workers > self.host_cores

    @property
    def inline_wait(self) -> float | None:
        """With 0 workers, the share of its time the step would wait for its batch: each
        sample costs the step 1/consumed and its decode 1/delivered, one after the other."""
        d, demand = self.inline, self.demand
        if d is None or demand is None or not demand.known:
            return None
        return demand.median / (demand.median + d.rate.median)

    @property
    def inline_keeps_pace(self) -> bool:
        """0 workers decode at least as fast as the step consumes, so a reader could take them
        for enough: where their cost needs saying."""
        d, demand = self.inline, self.demand
        return d is not None and demand is not None and demand.known and \
            d.rate.median >= demand.median

    @property
    def clear(self) -> bool:
        """The covering rate's whole interval lies at or above the consumption's median."""
        d, demand = self.delivered, self.demand
        return (self.verdict == Feeding.FED and d is not None and demand is not None
                and math.isfinite(d.rate.low) and d.rate.low >= demand.median)


def inline(sweep: Sequence[Delivered]) -> Delivered | None:
    """The sweep's 0-worker point, where it has a rate: the step's own process decoding."""
    return next((d for d in sweep if d.workers == 0 and d.rate.known), None)


def cores_to_feed(demand: Rate | None, sweep: Sequence[Delivered], host_cores: int
                  ) -> CoresToFeed:
    """The rule of the module docstring. ``host_cores``: the host's cores (physical where
    known). Exactly the consumption counts as enough. A worker count timed only inside its
    start-up (``Delivered.unrated``) hides whether it would have been enough: met before a
    count that covers the step, or with none covering it, the answer is ``Feeding.STARTUP``.
    0 workers is never a candidate; with no other count measured the answer is
    ``Feeding.NOT_REACHED`` (more workers than measured) without a rate."""
    swept = sorted((d for d in sweep if d.workers > 0 and (d.rate.known or d.unrated)),
                   key=lambda d: d.workers)
    zero = inline(sweep)
    if demand is None or not demand.known or not (swept or zero):
        return CoresToFeed(Feeding.NOT_MEASURED, demand, host_cores)
    if not swept:
        return CoresToFeed(Feeding.NOT_REACHED, demand, host_cores, measured_up_to=0,
                           inline=zero)
    top = swept[-1].workers
    few = demand.n < MIN_OK
    for d in swept:
        if d.unrated:
            return CoresToFeed(Feeding.STARTUP, demand, host_cores, measured_up_to=top,
                               inline=zero, at_least=lower_bound(demand, swept))
        if d.rate.median >= demand.median:
            verdict = Feeding.INSUFFICIENT if few or d.rate.n < MIN_OK else Feeding.FED
            return CoresToFeed(verdict, demand, host_cores, d.workers, d, None, top, zero)
    best = max(swept, key=lambda d: d.rate.median)  # every count rated: none returned above
    if few or best.rate.n < MIN_OK:
        verdict = Feeding.INSUFFICIENT
    else:
        verdict = Feeding.SHORT if top >= host_cores else Feeding.NOT_REACHED
    return CoresToFeed(verdict, demand, host_cores, None, best,
                       demand.median - best.rate.median, top, zero,
                       lower_bound(demand, swept))


def host_limit(sweep: Sequence[Delivered], cores: int) -> Delivered | None:
    """The most a host of ``cores`` cores was measured to deliver to a step it feeds: the best
    rate with one to that many workers (with none, every decode is the step's wait). A device
    that consumes more than this waits for its data there. None where a count within the cores
    was timed only inside its start-up: it may deliver more."""
    if any(d.unrated and 0 < d.workers <= cores for d in sweep):
        return None
    within = [d for d in sweep if d.rate.known and 0 < d.workers <= cores]
    return max(within, key=lambda d: d.rate.median) if within else None


def per_worker(sweep: Sequence[Delivered]) -> float | None:
    """One worker's rate: the slope of the ideal line (w workers deliver w times it)."""
    one = [d for d in sweep if d.workers == 1 and d.rate.known]
    return one[0].rate.median if one else None
