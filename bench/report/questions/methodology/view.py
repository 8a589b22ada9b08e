"""The Methodology page's figures, as the snippets the hand-written page includes, formatted
from :class:`bench.report.questions.methodology.model.MethodologyPage`."""

from __future__ import annotations

from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.methodology.model import (
    CacheCost,
    MachineGaps,
    MethodologyPage,
    Tolerance,
)
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page, table
from bench.report.render.paths import (
    CEILINGS_SNIPPET,
    CUDNN_PAGE,
    KERNEL_CACHE_SNIPPET,
    METHODOLOGY,
    SNIPPETS,
)
from bench.report.render.words import numerics
from bench.report.render.writer import Writer

#: The numerics check's tolerances, as the Methodology page includes them.
NUMERICS_SNIPPET = f"{SNIPPETS}/numerics.md"

#: How the page names each matmul ceiling's arithmetic.
_OPS = {"matmul-bf16": "bf16", "matmul-tf32": "TF32", "matmul-fp32": "strict FP32"}
_MODES = {"train": "training", "infer": "inference"}
_CACHES = {"fresh": "a fresh (empty) kernel cache", "shared": "the machine's shared cache"}


def methodology_snippets(writer: Writer, model: MethodologyPage, shared: Shared) -> None:
    p = Page(METHODOLOGY, shared.labels)
    writer.page(CEILINGS_SNIPPET, "ceiling-gaps.md.j2",
                machines=[_gaps(p, m) for m in model.ceilings])
    writer.page(KERNEL_CACHE_SNIPPET, "kernel-cache.md.j2",
                costs=[_cost(p, c) for c in model.caches], more=model.more_caches,
                cudnn=p.link("cudnn.benchmark page", CUDNN_PAGE))
    writer.page(NUMERICS_SNIPPET, "numerics.md.j2", table=_tolerances(model.tolerances),
                sources=[f"{t.math.value}: {t.source}" for t in model.tolerances])


def _tolerances(found: tuple[Tolerance, ...]) -> Md:
    """One row per arithmetic: the bounds a check must keep to agree."""
    rows = [[t.math.value, f"≤ {numerics.error(t.rel_err)}", f"≥ {numerics.cosine(t.cosine)}",
             f"≤ {numerics.error(t.loss_rel_diff)}", f"≤ {numerics.error(t.param_drift)}"]
            for t in found]
    return table(["Arithmetic run", "Relative error of the outputs", "Cosine similarity",
                  "Loss after the same steps", "Parameter drift"], rows)


def _gaps(p: Page, m: MachineGaps) -> Md:
    """``on nvidia-h200 (2026-12-04), 793 TFLOP/s in bf16 against 680 sustained (16.7%
    more), …``"""
    figures = [cat(p.row_link(f"{fmt.num(g.best)} {g.unit}", m.machine.page, g.anchor),
                   f" in {_OPS.get(g.op, g.op)} against {fmt.num(g.sustained)} sustained "
                   f"({fmt.pct(g.more)} more)")
               for g in m.gaps]
    return cat("On ", p.machine_link(m.machine.machine, m.machine.page),
               f" (measured {m.machine.days}), the matmuls' best windows reached ",
               _joined(figures), ".")


def _cost(p: Page, c: CacheCost) -> Md:
    page = c.machine.page
    kept = (f", so the warm cache left {fmt.pct(c.warm_share)} of the fresh one's cost"
            if c.warm_share is not None else "")
    return cat(
        "On ", p.machine_link(c.machine.machine, page), f" (measured {c.machine.days}), ",
        "turning ", Md("`cudnn.benchmark`"), " on changed the first pass of ",
        f"{c.model} {_MODES.get(c.mode, c.mode)} ({c.precision}, batch {c.batch_size}) by "
        f"{fmt.signed_seconds(c.cold_extra_s)} with {_CACHES.get(c.cold_cache, c.cold_cache)} (",
        p.row_link(f"up to {fmt.signed_seconds(c.cold_extra_max_s)}", page, c.cold_anchor),
        f", the slowest replicate) against {fmt.signed_seconds(c.warm_extra_s)} with a warm "
        "one (", p.row_link(f"up to {fmt.signed_seconds(c.warm_extra_max_s)}", page,
                            c.warm_anchor), f"){kept}.")


def _joined(items: list[Md]) -> Md:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) < 2:
        return cat(*items)
    head = [part for item in items[:-1] for part in (item, Md(", "))][:-1]
    return cat(*head, " and ", items[-1])
