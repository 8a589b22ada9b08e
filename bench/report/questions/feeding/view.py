"""The "Feeding the GPU" page, formatted from
:class:`bench.report.questions.feeding.model.FeedingPage`:
per machine, how many loader workers its measured steps need, then the delivered rate against
workers (with the ideal line), every step's cores to feed, the end-to-end check, and the
popular claim that the CPU handles the data preprocessing, checked."""

from __future__ import annotations

from typing import Any

from bench import schema
from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.feeding.chart import FeedPoint, Level, feed_chart
from bench.report.questions.feeding.model import (
    CoresToFeed,
    EndToEnd,
    FeedingPage,
    FeedingSection,
    Need,
    Rate,
    Sweep,
)
from bench.report.render.downloads import feeding_csv
from bench.report.render.escape import cat
from bench.report.render.markdown import Page, table
from bench.report.render.paths import FEEDING_PAGE, chart_file
from bench.report.render.words.answers import anchored, answer, cite_sentence
from bench.report.render.words.comparisons import not_drawn
from bench.report.render.words.context import banner, page, provenance, section_anchor
from bench.report.render.words.feeding import step_name
from bench.report.render.words.labels import alt_list
from bench.report.render.writer import Writer
from bench.report.vocabulary import Feeding

#: Consumption lines the chart draws at most (the table has them all).
CHART_LEVELS = 3
_RECIPE = {"train": "training", "infer": "evaluation"}


def rate_ci(r: Rate) -> str:
    """``1,234 samples/s (95% CI 1,200–1,260)``, the interval where there is one."""
    if fmt.present(r.low) and fmt.present(r.high):
        return f"{fmt.rate(r.median)} (95% CI {fmt.num(r.low)}–{fmt.num(r.high)})"
    return fmt.rate(r.median)


def sweep_name(s: Sweep) -> str:
    where = " from the user's images" if s.images else ""
    return f"{_RECIPE.get(s.mode, s.mode)} recipe, {s.decoder}, batch {s.batch_size}{where}"


def need_text(n: Need, subject: str = "") -> str:
    """What one step's cores-to-feed answer says, with its figures; ``subject`` names the
    step where the sentence follows one that named it ("It"), else the step's name."""
    a = n.answer
    demand = fmt.rate(a.demand.median) if a.demand else fmt.MISSING
    subject = subject or step_name(n)
    if a.verdict == Feeding.STARTUP:
        return f"{subject} consumes {demand}{bound_text(a)}"
    if a.delivered is None and a.inline is not None:  # the 0-worker figure, said once here
        wait = f": the step would wait {fmt.pct(a.inline_wait)} of the time" \
            if a.inline_wait is not None else ""
        return (f"{subject} consumes {demand}; only 0 workers were measured for its batch, the "
                f"{_RECIPE.get(n.mode, n.mode)} pipeline ({n.decoder}) decoding between steps "
                f"at {rate_ci(a.inline.rate)}{wait}")
    if a.delivered is None:
        return f"{subject} consumes {demand}; no pipeline of its batch was measured"
    got = f"{rate_ci(a.delivered.rate)} with {fmt.count(a.delivered.workers, 'worker')}"
    if a.workers is not None:
        clear = "" if a.clear else " (its interval reaches below the step's rate)"
        return (f"{subject} consumes {demand}; the {_RECIPE.get(n.mode, n.mode)} pipeline "
                f"({n.decoder}) delivered {got}{clear}")
    short = fmt.rate(a.shortfall)
    return (f"{subject} consumes {demand}; the best the pipeline ({n.decoder}) delivered "
            f"was {got}, {short} short{bound_text(a)}")


def bound_text(a: CoresToFeed) -> str:
    """The bound the rated worker counts give where none covers the step, labelled as one."""
    b = a.at_least
    if b is None:
        return ""
    return (f"; at perfect scaling that takes at least {fmt.count(b.workers, 'worker')}, a "
            f"bound, not a measurement: {fmt.count(b.source.workers, 'worker')} delivered at "
            f"most {fmt.rate(b.ceiling)} (the top of its 95% interval)")


def inline_text(n: Need) -> str:
    """What 0 workers would cost the step, where they decoded faster than it consumes (a
    reader may take them for enough): the process running the step decodes each batch between
    its steps, so the step waits for every decode (``CoresToFeed.inline_wait``)."""
    a = n.answer
    wait = a.inline_wait
    if a.inline is None or wait is None or a.delivered is None or not a.inline_keeps_pace:
        return ""  # need_text gives the 0-worker figure where it is the only one
    return (f"With 0 workers, decoding between steps at {rate_ci(a.inline.rate)}, the step "
            f"would wait {fmt.pct(wait)} of the time.")


def _decision(s: FeedingSection) -> str:
    n = s.headline
    if n is None:
        return str(Feeding.NOT_MEASURED) if s.gpu else "no GPU here; the pipeline's own rate below"
    a = n.answer
    if a.verdict == Feeding.FED and a.workers is not None:
        verb = "feeds" if a.workers == 1 else "feed"
        return f"{fmt.count(a.workers, 'loader worker')} {verb} {step_name(n)}"
    if a.beyond_host and a.at_least is not None:
        return (f"This host's {s.host_cores} cores cannot feed {step_name(n)} with this "
                f"pipeline: it takes at least {a.at_least.workers} loader workers")
    if a.verdict == Feeding.STARTUP:
        return f"No worker count is given for {step_name(n)}: the pipeline was {a.verdict}"
    if a.verdict == Feeding.SHORT:
        return f"{step_name(n)} needs {a.verdict}: its {s.host_cores} cores fall short"
    return f"{step_name(n)}: {a.verdict}"


def limit_text(s: FeedingSection) -> str:
    """The claim, checked: from which device rate this host becomes the bottleneck, and how
    many measured steps consume more.

    The bottleneck is the top of the best worker count's interval, not its median: the median
    is a typical replicate, others delivered more, and "at most the median" or "a step
    consuming more waits" would be false of them."""
    if s.limit is None or s.limit_sweep is None:
        return ""
    rate = s.limit.rate
    top = rate.high if fmt.present(rate.high) else rate.median
    waits = [n for n in s.needs if n.answer.demand is not None
             and n.answer.demand.median > top]
    told = (f" Of the steps measured here, {len(waits)} of {len(s.needs)} consume more than "
            f"{fmt.rate(top)}." if s.needs else "")
    beyond = "the top of that interval" if fmt.present(rate.high) else "that"
    return (f"With its {s.host_cores} cores this host delivered {rate_ci(rate)} at its best "
            f"worker count ({sweep_name(s.limit_sweep)}, "
            f"{fmt.count(s.limit.workers, 'worker')}): a device whose step consumes more than "
            f"{beyond} waits for data here, however fast it is.{told}")


def startup_text(s: FeedingSection) -> str:
    """What the pipelines timed inside their workers' start-up were, once: which worker
    counts and end-to-end checks, why they give no rate, and what was rated beside them."""
    unrated = sorted({pt.delivered.workers for sw in s.sweeps for pt in sw.points
                      if pt.delivered.unrated})
    ends = sum(1 for e in s.ends if e.startup and not e.rate.known)
    if not unrated and not ends:
        return ""
    counts = fmt.and_list([str(w) for w in unrated]) if unrated else ""
    where = [f"with {counts} worker{'' if unrated == [1] else 's'}"] if unrated else []
    where += [f"in the {fmt.count(ends, 'end-to-end check')}"] if ends else []
    lead = fmt.and_list(where)
    text = (f"{lead[0].upper()}{lead[1:]}, every replicate "
            f"timed only batches the workers were handed when the loader started "
            f"({schema.PREFETCH_FACTOR} each), which arrive in a burst: no rate they sustain "
            f"was measured. ")
    ref = s.limit_sweep
    rated = [pt.delivered for pt in ref.points if pt.delivered.rate.known] if ref else []
    if ref is not None and rated:
        text += "Past the start-up, " + fmt.and_list(
            [f"{fmt.count(d.workers, 'worker')} delivered {rate_ci(d.rate)}" for d in rated]
        ) + f" with the {_RECIPE.get(ref.mode, ref.mode)} recipe ({ref.decoder}, batch " \
            f"{ref.batch_size}). "
    return text + "This version of the runner times past the start-up: re-run the feeding " \
                  "studies."


def _answer(p: Page, s: FeedingSection) -> dict[str, Any]:
    m = s.machine
    text: list[str] = []
    cite = ""
    if s.headline is not None:
        # the host's limit (its best rate over its cores) is its section's, said there once
        text.append(need_text(s.headline, "It") + f"; this host has {s.host_cores} cores.")
        text.append(inline_text(s.headline))
        if s.headline.answer.verdict != Feeding.STARTUP:  # no figure to cite
            cite = cite_sentence(need_text(s.headline), m, str(s.headline.answer.verdict),
                                 m.days)
    text.append(startup_text(s))
    if not s.gpu:
        text.append("Not measured for a GPU: this machine has none.")
    return answer(p, FEEDING_PAGE, "answer", m, _decision(s) + ".",
                  cat(" ".join(t.strip() for t in text if t.strip())), cite,
                  s.headline if cite else None)


def _chart(writer: Writer, p: Page, s: FeedingSection) -> dict[str, Any] | None:
    points = [FeedPoint(sweep_name(sw), float(pt.delivered.workers), pt.delivered.rate.median,
                        pt.delivered.rate.low, pt.delivered.rate.high)
              for sw in s.sweeps for pt in sw.points if pt.delivered.rate.known]
    if not points:
        return None
    if s.charts_on is not None:
        return not_drawn(p, s.charts_on, section_anchor("on", s.charts_on))
    ideal = [(sweep_name(sw), sw.one_worker or float("nan")) for sw in s.sweeps]
    levels: list[Level] = []
    seen: set[str] = set()
    for n in s.needs:
        if n.answer.demand is not None and step_name(n) not in seen and \
                len(levels) < CHART_LEVELS:
            seen.add(step_name(n))
            levels.append(Level(f"{step_name(n)} consumes", n.answer.demand.median))
    path = chart_file("feeding", s.machine.page)
    writer.chart(feed_chart, path, points, ideal, levels,
                 title=f"Delivered samples/s by workers: {s.machine.title}")
    return {"path": path, "left_out": 0, "shown": len(points),
            "caption": "Delivered samples/s against DataLoader workers, with 95% intervals; "
                       "dashed: the ideal line (each worker adding one worker's rate); dotted: "
                       "what a measured step consumes.",
            "alt": "Delivered samples/s by workers: " + alt_list(
                f"{pt.series}, {fmt.count(int(pt.workers), 'worker')}: {fmt.rate(pt.rate)}"
                for pt in points)}


def _delivered(rate: Rate, startup: bool) -> str:
    """A rate with its interval, or why a measured pipeline gives none."""
    return f"{fmt.MISSING} ({Feeding.STARTUP})" if startup else rate_ci(rate)


def _sweep_rows(s: FeedingSection) -> list[list[Any]]:
    rows = []
    for sw in s.sweeps:
        one = sw.one_worker
        for pt in sw.points:
            d = pt.delivered
            ideal = fmt.pct(d.rate.median / (one * d.workers)) if one and d.workers \
                else fmt.MISSING
            rows.append([sweep_name(sw), str(d.workers), _delivered(d.rate, d.unrated), ideal,
                         fmt.seconds(pt.first_batch_s),
                         "— (its CPU time spans the cut start-up)" if pt.cpu_spans_startup
                         else fmt.seconds(pt.cpu_s_per_sample), fmt.integer(pt.decode_errors)])
    return rows


def _need_row(p: Page, n: Need) -> list[Any]:
    a = n.answer
    got = rate_ci(a.delivered.rate) if a.delivered else fmt.MISSING
    workers = str(a.workers) if a.workers is not None else (
        f"> {a.measured_up_to}" if a.measured_up_to is not None
        and a.verdict != Feeding.STARTUP else fmt.MISSING)
    return [step_name(n), fmt.rate(a.demand.median) if a.demand else fmt.MISSING, n.decoder,
            workers, got, str(a.verdict), p.row_link("row", n.page, n.anchor)]


def _end_rows(s: FeedingSection) -> list[list[Any]]:
    return [[e.name, _delivered(e.rate, bool(e.startup) and not e.rate.known),
             _synthetic(e), fmt.ratio(e.ratio), fmt.pct(e.wait)] for e in s.ends]


def _synthetic(e: EndToEnd) -> str:
    """The twin's rate, naming cudnn.benchmark where it is on: the cores table quotes the
    same step at its fastest setting, and the two must not read as one figure twice."""
    if e.synthetic is None:
        return fmt.MISSING
    return fmt.rate(e.synthetic.median) + (" (cudnn.benchmark on)" if e.benchmark == "on"
                                           else "")


def _section(writer: Writer, p: Page, s: FeedingSection) -> dict[str, Any]:
    m = s.machine
    return {
        "heading": m.title, "anchor": section_anchor("on", m), "chart": _chart(writer, p, s),
        "cores": s.host_cores,
        "sweeps": table(["Pipeline", "Workers", "Delivered", "Of ideal", "First batch",
                         "CPU per sample", "Bad files"], _sweep_rows(s)) if s.sweeps else None,
        "needs": table(["Step", "Consumes", "Decoder", "Workers", "Delivered", "Verdict",
                        "Row"], [_need_row(p, n) for n in s.needs]) if s.needs else None,
        "ends": table(["End to end", "Delivered", "Synthetic input", "Ratio", "Step waited"],
                      _end_rows(s)) if s.ends else None,
        "limit": limit_text(s),
    }


def feeding_page(writer: Writer, model: FeedingPage, shared: Shared, common: dict[str, Any]
                 ) -> None:
    p = page(shared, FEEDING_PAGE)
    writer.page(FEEDING_PAGE, "feeding.md.j2", p=p, banners=banner(model.sources),
                answers=anchored([_answer(p, s) for s in model.sections], common["build"]),
                sections=[_section(writer, p, s) for s in model.sections],
                gpu_measured=model.gpu_measured,
                provenance=provenance(common["build"], model.sources),
                downloads=[feeding_csv(writer, model.sections)], **common)
