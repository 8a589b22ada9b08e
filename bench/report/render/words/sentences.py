"""Recommendations in words: one sentence per regime, with its numbers, CI and evidence links.

:mod:`bench.report.judge.advice` returns structured ``Recommendation`` records (one per regime, and
per job length for cudnn.benchmark). This module groups them by regime and writes what a
reader needs: the decision first, then the measured numbers behind it, then links to the exact
table rows. Every number comes from the record; every string from the data is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.report import fmt
from bench.report.judge import DELTA, Caveat, Recommendation, Regime, Rule, Setting
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.words import caveats
from bench.report.render.words.caveats import CAVEATS
from bench.report.vocabulary import Action, Verdict

#: How many evidence rows get their own link in a sentence.
EVIDENCE_LINKS = 6


def workload(r: Recommendation, *, with_precision: bool = True) -> str:
    """``resnet models (resnet50) · train · fp32 · dynamic shapes · batch 32`` (plain text;
    escaped by the caller).

    Advice is per model family, but the family is only as wide as what was measured: naming
    the models lets a reader asking about ResNet-50 see that the row is about ResNet-50.
    """
    family = f"{r.model_family} models"
    if ":" in r.model_family:  # a user's model is a family of one, named with its source hash
        family = r.model_family
    elif r.models:
        family += f" ({', '.join(r.models)})"
    parts = [family, r.mode]
    if with_precision and r.precision:
        parts.append(r.precision)
    if r.memory_format and r.memory_format != "nchw":
        parts.append(r.memory_format)
    if r.shapes and r.shapes != "static":
        parts.append(f"{r.shapes} shapes")
    if r.batch_size:
        parts.append(f"batch {r.batch_size}")
    return " · ".join(parts)


def detail(r: Recommendation) -> str:
    """``(95% CI 1.18–1.29×)`` for one configuration; ``(median of 4 configurations, whose 95%
    CIs span 1.18–1.29×)`` for several: the figure is their median, the range the envelope of
    their intervals (each configuration's own is in its table row), not one interval."""
    ci = fmt.ci(r.ci_low, r.ci_high)
    if r.n_sufficient > 1:
        span = f", whose 95% CIs span {ci}" if ci != fmt.MISSING else ""
        return f" (median of {r.n_sufficient} configurations{span})"
    return f" (95% CI {ci})" if ci != fmt.MISSING else ""


def speedup_text(r: Recommendation) -> str:
    """``1.24× (95% CI 1.18–1.29×)``, or with several configurations their median (see
    ``detail``)."""
    if r.speedup is None:
        return "no sufficient measurement"
    return fmt.ratio(r.speedup) + detail(r)


def evidence_links(p: Page, evidence: Sequence[tuple[str, str]]) -> Md:
    """``rows 1 2 3 … (+4 more)``, each number linking to one table row."""
    if not evidence:
        return Md("")
    shown = evidence[:EVIDENCE_LINKS]
    links = " ".join(p.row_link(str(i + 1), page, anchor) for i, (page, anchor) in enumerate(shown))
    more = len(evidence) - len(shown)
    return cat("rows ", Md(links), f" (+{more} more)" if more else "")


#: Regimes an answer names where a switch pays; the decision tables list every one.
PAYS_SHOWN = 3


def extra_costs(r: Recommendation) -> str:
    """``; with it on, first pass +29.5 s, peak memory +5.21 GiB``: what switching it on costs
    one regime besides its step time, where measured (cudnn.benchmark's search)."""
    parts = []
    if fmt.present(r.extra_cold_s):
        parts.append(f"first pass {fmt.signed_seconds(r.extra_cold_s)}")
    if fmt.present(r.extra_peak_mem_bytes):
        parts.append(f"peak memory {fmt.bytes_(r.extra_peak_mem_bytes, signed=True)}")
    return f"; with it on, {', '.join(parts)}" if parts else ""


def where_it_pays(pays: Sequence[Regime], shown: int = PAYS_SHOWN) -> str:
    """`` Where it pays: <workload>: <decision> (1.14×); …``: the regimes, besides the default
    workload's, whose advice is to switch it on."""
    if not pays:
        return ""
    told = [f"{workload(g.main)}: {decision(g)} ({fmt.ratio(g.main.speedup)})"
            for g in pays[:shown]]
    more = len(pays) - len(told)
    return " Where it pays: " + "; ".join(told) + (f"; and {more} more" if more else "") + "."


def decision(regime: Regime) -> str:
    """The decision in a few words, for a table cell."""
    r = regime.main
    if (
        r.setting == Setting.CUDNN_BENCHMARK
        and r.action in (Action.ENABLE, Action.KEEP_OFF)
        and r.verdict == Verdict.FASTER
    ):
        return (
            f"enable for jobs of more than {fmt.iterations(r.break_even_iters)} iterations "
            "per shape"
            if fmt.present(r.break_even_iters)
            else Action.ENABLE
        )
    if r.setting in (Setting.PRECISION, Setting.MEMORY_FORMAT):
        return {
            Action.ENABLE: f"use {r.variant_value}",
            Action.KEEP_OFF: f"keep {r.baseline_value}",
            Action.LEAVE_DEFAULT: f"no clear difference: keep {r.baseline_value}",
        }.get(r.action, ACTION_WORDS.get(r.action, r.action))
    if r.setting == Setting.DEVICE:
        if r.from_batch is not None:
            at = (f"GPU at batch {r.from_batch}, {_which_batch(r)}"
                  if Caveat.LARGEST_BATCH_ONLY in r.caveats else f"GPU from batch {r.from_batch}")
            if Caveat.SMALLER_BATCHES_INSUFFICIENT in r.caveats:
                return f"{at}; not enough data below it"
            return at
        return {Action.KEEP_OFF: "GPU never clearly faster"}.get(
            r.action, ACTION_WORDS.get(r.action, r.action)
        )
    if r.rule == Rule.DET_UNCHECKED:
        return "only if you need reproducibility (not checked here)"
    if r.rule == Rule.DET_REPRODUCES_IN_SOME:
        return "only if you need reproducibility (re-runs matched in some configurations only)"
    return ACTION_WORDS.get(r.action, r.action)


ACTION_WORDS = {
    Action.ENABLE: Action.ENABLE,
    Action.KEEP_OFF: Action.KEEP_OFF,
    Action.LEAVE_DEFAULT: "leave the default (off)",
    Action.INSUFFICIENT: "not enough data",
    Action.DEPENDS: "depends on the model",
    Action.ENABLE_IF_NEEDED: "only if you need reproducibility",
}


def caveat_text(r: Recommendation, code: str) -> str:
    """A caveat in words (``caveats.caveat_text``, which advise prints too), the memory one
    with the first pass's workspace as well where the page has it."""
    text = caveats.caveat_text(code, r.extra_peak_mem_bytes, r.extra_peak_mem_share)
    if code == Caveat.EXTRA_MEMORY and fmt.present(r.extra_peak_mem_bytes) and \
            fmt.present(r.workspace_bytes) and r.workspace_bytes:
        text += f"; its first pass held {fmt.bytes_(r.workspace_bytes)} above the steady state"
    return text


#: Caveats whose words carry figures of their own, never pooled into a list's notes.
_OWN_FIGURES = frozenset({Caveat.EXTRA_MEMORY, Caveat.SMALLER_BATCHES_INSUFFICIENT})


def common_notes(regimes: Sequence[Regime]) -> tuple[dict[str, int], list[str]]:
    """A list's caveats said once above it: each caveat (with fixed words) that two or more of
    its sentences carry becomes a numbered note, which those sentences cite by number; and a
    kernel cache that every cold cost of the list met is said once. Returns (the note number
    of each such caveat code, 0 for one said to all; the notes in words)."""
    recs = [g.main for g in regimes]
    counts: dict[str, int] = {}
    for r in recs:
        for c in dict.fromkeys(r.caveats):
            if c in CAVEATS and c not in _OWN_FIGURES:
                counts[c] = counts.get(c, 0) + 1
    numbered = [c for c in CAVEATS if counts.get(c, 0) >= 2]
    notes = [f"Note {i}: {caveat_text(recs[0], c)}" for i, c in enumerate(numbered, start=1)]
    said = {c: i for i, c in enumerate(numbered, start=1)}
    caches = {r.kernel_cache for r in recs if fmt.present(r.extra_cold_s)}
    costed = len(recs) > 1 and all(fmt.present(r.extra_cold_s) for r in recs)
    if costed and len(caches) == 1 and (cache := caches.pop()) in _CACHE_WORDS:
        said[f"cache:{cache}"] = 0
        notes.append(f"Every first-pass cost below was measured {_CACHE_WORDS[cache]}")
    return said, notes


def sentence(regime: Regime, p: Page, *, with_setting: bool = True,
             said: Mapping[str, int] | None = None) -> Md:
    """One recommendation as a sentence with its numbers and evidence links; ``said``: what
    the notes above its list say (``common_notes``), cited by number here."""
    said = said or {}
    r = regime.main
    where = cat(workload(r), " on ", p.machine_link(r.machine, r.page))
    if r.setting == Setting.CUDNN_BENCHMARK:
        body = _benchmark(r, said)
    elif r.setting == Setting.CUDNN_DETERMINISTIC:
        body = _determinism(r)
    elif r.setting in (Setting.PRECISION, Setting.MEMORY_FORMAT):
        body = _switch(r)
    else:
        body = _device(r)
    # the device sentence already leads with the thin smaller batches when there are any
    told = {*said, *({Caveat.SMALLER_BATCHES_INSUFFICIENT} if r.setting == Setting.DEVICE
                     else ())}
    caveats = [caveat_text(r, c) for c in r.caveats if c in CAVEATS and c not in told]
    cited = sorted(said[c] for c in set(r.caveats) if said.get(c))
    tail = (" Note: " + "; ".join(caveats) + ".") if caveats else ""
    if cited:
        tail += f" See note{'s' if len(cited) > 1 else ''} {', '.join(map(str, cited))}."
    lead = cat(Md("**"), r.setting, Md("**, ")) if with_setting else Md("")
    return cat(lead, where, ": ", body, tail, " (", evidence_links(p, r.evidence), ")")


#: How a cold cost's kernel cache reads in a sentence (``Recommendation.kernel_cache``).
_CACHE_WORDS = {
    "fresh": "with an empty kernel cache, as on a fresh machine or container",
    "shared": "against the machine's own shared kernel cache, which earlier processes of the "
    "run may already have filled, so a fresh machine can pay more",
    "warm": "with a warm kernel cache (filled by an earlier process of the same job), so a "
    "fresh machine pays more",
}


def cold_cost(r: Recommendation, said: Mapping[str, int] | None = None) -> tuple[str, str]:
    """A cold cost that is true of every replicate, and the sentences that qualify it:
    ``("up to 15.4 s", " (its slowest replicate's …). Measured with … With a warm cache …")``;
    the kernel cache left out where a note above the list says it (``common_notes``).
    """
    if not fmt.present(r.extra_cold_s):
        return "", ""
    detail_ = []
    if fmt.present(r.cold_pass_max_s) and fmt.present(r.base_cold_pass_s):
        detail_.append(f"its slowest replicate's first pass took {fmt.seconds(r.cold_pass_max_s)}"
                       f" against {fmt.seconds(r.base_cold_pass_s)} with it off")
    if fmt.present(r.extra_cold_median_s) and fmt.seconds(r.extra_cold_median_s) != fmt.seconds(
            r.extra_cold_s):
        detail_.append(f"the median replicate's extra was {fmt.seconds(r.extra_cold_median_s)}")
    tail = f" ({'; '.join(detail_)})." if detail_ else "."
    words = " and ".join(_CACHE_WORDS.get(c, c) for c in r.kernel_cache.split(", ") if c)
    if words and f"cache:{r.kernel_cache}" not in (said or {}):
        tail += f" Measured {words}."
    if fmt.present(r.warm_extra_cold_s) and r.kernel_cache != "warm":
        tail += f" With a warm kernel cache it adds up to {fmt.seconds(r.warm_extra_cold_s)}."
    return f"up to {fmt.seconds(r.extra_cold_s)}", tail


def _benchmark(r: Recommendation, said: Mapping[str, int] | None = None) -> Md:
    cost, qualified = cold_cost(r, said)
    if r.verdict == Verdict.FASTER:
        if fmt.present(r.break_even_iters):
            warm = (
                f" ({fmt.iterations(r.warm_break_even_iters)} with a warm kernel cache)"
                if fmt.present(r.warm_break_even_iters) and r.kernel_cache != "warm"
                else ""
            )
            head = cat(
                Md("**enable it for jobs of more than "),
                fmt.iterations(r.break_even_iters),
                Md(" iterations per input shape**"),
                warm,
            )
        else:
            head = Md("**enable it**")
        return cat(
            head,
            f": each step is {fmt.ratio(r.speedup)} faster{detail(r)}",
            f"; the first pass over the input shapes costs {cost} more{qualified}"
            if cost
            else ".",
        )
    cold = (
        f" Turning it on adds {cost} to the first pass over the input shapes{qualified}"
        if cost and r.extra_cold_s is not None and r.extra_cold_s > 0
        else ""
    )
    if r.verdict == Verdict.SLOWER:
        return _decided(_KEEP_OFF, f"it is slower, {speedup_text(r)}.{cold}")
    if r.verdict == Verdict.NO_CLEAR_DIFFERENCE:
        return _decided(_LEAVE_DEFAULT,
                        f"no clear difference, {speedup_text(r)}, {_band(r)}.{cold}")
    return _common(r)


#: The heads (``_decided``) that several settings' sentences begin with.
_KEEP_OFF = "**keep it off**: "
_LEAVE_DEFAULT = "**leave the default (off)**: "
_DEPENDS = "**depends on the model**: "


def _decided(head: str, reason: str) -> Md:
    """A sentence's body as most rules write it: the decision in bold (``head``, markdown of
    our own), then the reason, plain text that is escaped."""
    return cat(Md(head), reason)


def _band(r: Recommendation) -> str:
    """Whether "no clear difference" shows the effect is small, or only fails to show it is big.

    A tight interval inside 1 ± δ is evidence that the setting does not matter; a wide one that
    merely straddles the band is not, and saying "within 1 ± δ" of it would overstate.
    """
    band = f"1 ± {fmt.pct(DELTA)}"
    if r.in_band:
        return f"within {band}"
    return f"but the interval reaches beyond {band}, so more replicates could still show a change"


def _common(r: Recommendation) -> Md:
    if r.verdict == Verdict.MIXED or r.action == Action.DEPENDS:
        return _decided(_DEPENDS, f"the configurations disagree ({_range(r)}); check the tables.")
    return _decided("**not enough data**: ", "too few ok replicates to judge.")


def _determinism_speed(r: Recommendation) -> str:
    """What it costs in step time, said no more firmly than its interval: a 0.40% slowdown
    whose interval reaches into faster is no measured slowdown."""
    if r.speedup is None:
        return "its speed could not be compared"
    if r.verdict in (Verdict.FASTER, Verdict.SLOWER):
        return f"with it on, steps take {fmt.change(r.speedup)} ({speedup_text(r)})"
    if r.in_band:
        return (f"with it on, steps take no measurable extra time: {speedup_text(r)}, "
                f"within 1 ± {fmt.pct(DELTA)}")
    if r.not_slower:  # the methodology's "no measurable cost"
        return (f"with it on, there is no measurable cost: {speedup_text(r)}, which rules out "
                f"a slowdown beyond {fmt.pct(DELTA)}")
    return f"its cost in step time is not clear: {speedup_text(r)}, {_band(r)}"


#: How each determinism rule's sentence begins: its decision, in bold (the rest is its reason).
_CHECK_IT = "**enable it only if you need bitwise reproducibility, and check that you get it**: "
_IF_NEEDED = "**enable it only if you need bitwise reproducibility**: "
_DETERMINISM_HEADS: dict[str, str] = {  # keyed by Rule, a str
    Rule.DET_DOES_NOT_REPRODUCE: _KEEP_OFF,
    Rule.DET_DEFAULT_REPRODUCES: _LEAVE_DEFAULT,
    Rule.DET_REPRODUCES_IN_SOME: _CHECK_IT,
    Rule.DET_UNCHECKED: _CHECK_IT,
    Rule.DET_COSTS: _IF_NEEDED,
    Rule.DET_COST_UNCLEAR: _IF_NEEDED,
    Rule.DET_NO_MEASURABLE_COST: "**enable it** if reproducibility matters: ",
}


def _determinism(r: Recommendation) -> Md:
    head = _DETERMINISM_HEADS.get(r.rule)
    if head is None:
        return _common(r)
    return _decided(head, _determinism_reason(r))


def _determinism_reason(r: Recommendation) -> str:
    """What follows a determinism rule's head (``_DETERMINISM_HEADS``): why, and its cost."""
    speed = _determinism_speed(r)
    if r.rule == Rule.DET_DOES_NOT_REPRODUCE:
        return ("even with it on, two fresh processes were not "
                f"bitwise equal, so it does not buy reproducibility here; {speed}.")
    if r.rule == Rule.DET_DEFAULT_REPRODUCES:
        return f"with it off, two fresh processes already gave bitwise-equal results; {speed}."
    if r.rule == Rule.DET_REPRODUCES_IN_SOME:
        checks = r.variant_checks
        equal = [c for c in checks if c[3] is True]
        differ = [c for c in checks if c[3] is False]
        return (f"with it on, two fresh processes were bitwise equal {_configs(equal, checks)} "
                f"but not {_configs(differ, checks)}, so it does not buy reproducibility in "
                f"every configuration here; {speed}.")
    if r.rule == Rule.DET_UNCHECKED:
        checked = [c for c in r.variant_checks if c[3] is not None]
        if checked:  # checked, and equal, in some of the regime's configurations only
            unchecked = [c for c in r.variant_checks if c[3] is None]
            return (f"{speed}. With it on, two fresh processes were bitwise equal "
                    f"{_configs(checked, r.variant_checks)}; no two-process re-run check ran "
                    f"{_configs(unchecked, r.variant_checks)}, so whether it makes re-runs "
                    "bitwise equal there was not checked.")
        return (f"{speed}. No two-process re-run check ran with it on for this configuration, "
                "so whether it makes re-runs bitwise equal on this machine was not checked.")
    if r.rule == Rule.DET_COSTS:
        diff = (
            f" With it off, re-runs differed by up to {fmt.num(r.max_abs_diff_default)}."
            if fmt.present(r.max_abs_diff_default) and r.bitwise_equal_default is False
            else ""
        )
        return f"{speed}.{diff}"
    if r.rule == Rule.DET_COST_UNCLEAR:
        return f"{speed}, an interval too wide to rule out a cost above {fmt.pct(DELTA)}."
    return f"there is no measurable cost; {speed}."


def _configs(which: Sequence[tuple[str, str, str, bool | None]],
             among: Sequence[tuple[str, str, str, bool | None]]) -> str:
    """``for resnet18 with benchmark off`` (several joined with "and"): the configurations of a
    determinism record's re-run checks, named by the model and by whichever of
    cudnn.benchmark and the kernel cache vary among ``among``."""
    vary_bm = len({c[1] for c in among}) > 1
    vary_cache = len({c[2] for c in among}) > 1
    names = []
    for model, bm, cache, _ in which:
        extra = [f"benchmark {bm}"] if vary_bm else []
        if vary_cache:
            extra.append(f"a {cache} kernel cache")
        names.append(model + (f" with {' and '.join(extra)}" if extra else ""))
    return "for " + " and for ".join(dict.fromkeys(names))


def _switch(r: Recommendation) -> Md:
    base, var = r.baseline_value, r.variant_value
    if r.action == Action.ENABLE:
        return cat(
            Md("**use "),
            var,
            Md("** instead of "),
            base,
            ": ",
            f"{fmt.ratio(r.speedup)} faster{detail(r)}.",
        )
    if r.action == Action.KEEP_OFF:
        return cat(Md("**keep "), base, Md("**: "), f"{var} is slower, {speedup_text(r)}.")
    if r.action == Action.LEAVE_DEFAULT:
        return cat(Md("**no clear difference**, keep "), base,
                   f": {var} gives {speedup_text(r)}, {_band(r)}.")
    return _common(r)


def _which_batch(r: Recommendation) -> str:
    """A GPU verdict at the largest batch measured: whether it was also the only one."""
    return ("the only batch measured" if Caveat.ONE_BATCH_ONLY in r.caveats
            else "the largest batch measured")


def _device(r: Recommendation) -> Md:
    top = Caveat.LARGEST_BATCH_ONLY in r.caveats  # nothing measured above it: no "and up"
    if r.from_batch is not None and Caveat.SMALLER_BATCHES_INSUFFICIENT in r.caveats:
        return cat(
            Md("**the GPU is clearly faster at batch "),
            str(r.from_batch),
            Md(", the largest measured" if top else " and up"),
            Md("; there is not enough data below batch "),
            str(r.from_batch),
            Md("**: "),
            f"at batch {r.from_batch} it is {fmt.ratio(r.speedup)} faster than this machine's "
            f"CPU{detail(r)}.",
        )
    if r.from_batch is not None and top:
        return cat(
            Md("**use the GPU at batch "),
            str(r.from_batch),
            Md("**: "),
            f"it is clearly faster than this machine's CPU there, {_which_batch(r)} "
            f"({fmt.ratio(r.speedup)} faster{detail(r)}).",
        )
    if r.from_batch is not None:
        return cat(
            Md("**use the GPU from batch "),
            str(r.from_batch),
            Md("**: "),
            "from there up it is clearly faster than this machine's CPU; at batch "
            f"{r.from_batch} it is {fmt.ratio(r.speedup)} faster{detail(r)}.",
        )
    if r.action == Action.KEEP_OFF:
        return _decided("**the GPU is not clearly faster** ",
                        f"than this machine's CPU at every larger measured batch ({_range(r)}).")
    if r.action == Action.DEPENDS:
        return _decided(_DEPENDS, "its models cross over at different batch sizes, or not at "
                        f"all ({_range(r)}).")
    return _common(r)


def _range(r: Recommendation) -> str:
    if r.ci_low is None or r.ci_high is None:
        return "no interval"
    return f"intervals from {fmt.ratio(r.ci_low)} to {fmt.ratio(r.ci_high)}"
