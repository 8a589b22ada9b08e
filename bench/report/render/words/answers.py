"""The answer a topic page opens with, per machine: the decision in words, its figure with
the interval, its scope, the rows it rests on, and a Cite line ready to paste."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import Machine
from bench.report.judge.common import Scope
from bench.report.render.escape import Md
from bench.report.render.markdown import Page
from bench.report.vocabulary import Noise

#: How many models a short scope names before "and N more".
NAMED_MODELS = 3


def figure(r: Any) -> str:
    """``1.00× (95% CI 0.99–1.00×)``: a pair's speedup and its interval (the speedup alone
    where there is no interval); ``noisy`` and why beside it where its pair is (a spread too
    wide gives the spread instead of the interval), and where a slower sitting's replicates
    were left out, that it comes from the sittings that agree."""
    noise = getattr(r, "noise", "") or ""
    ci = fmt.ci(r.ci_low, r.ci_high)
    if noise == Noise.SPREAD:
        text = (fmt.ratio(r.speedup) + f" (noisy: replicates spread {fmt.pct(r.spread)}, "
                "too far for a useful interval)")
    else:
        text = fmt.ratio(r.speedup) + (f" (95% CI {ci})" if ci != fmt.MISSING else "")
        text += f", noisy ({noise})" if noise else ""
    left = int(getattr(r, "n_left_out", 0) or 0)
    if left and ci != fmt.MISSING:
        text += (f", from the sittings that agree ({fmt.count(left, 'replicate')} of a slower "
                 "sitting left out)")
    return text


def short_scope(scope: Scope, *, name_models: bool = True) -> str:
    """``resnet50 and vit_b_16, train and infer, fp32 and amp-bf16, batch 32 to 128``: what an
    answer covers, in few words (every model up to three, the batch as a range; only how many
    models where the answer names them one by one)."""
    found = dict(scope)
    parts = []
    models = list(found.get("model", ()))
    if models and not name_models and len(models) > 1:
        parts.append(f"{len(models)} models")
    elif models:
        more = len(models) - NAMED_MODELS
        parts.append(fmt.and_list(models) if more <= 0 else
                     ", ".join(models[:NAMED_MODELS]) + f" and {more} more models")
    by_mode = found.get("batch_by_mode", ())
    for col in ("mode", "precision"):
        if found.get(col) and not (col == "mode" and by_mode):
            parts.append(fmt.and_list(list(found[col])))
    if found.get("memory_format") and found["memory_format"] != ("nchw",):
        parts.append(fmt.and_list(list(found["memory_format"])))
    if found.get("shapes") and found["shapes"] != ("static",):
        parts.append(fmt.and_list(list(found["shapes"])) + " shapes")
    batches = found.get("batch_size", ())
    if by_mode:  # the modes were measured at different batches: each with its own
        parts.append(fmt.and_list([
            f"{m} at batch {lo}" + (f" to {hi}" if hi != lo else "")
            for m, lo, hi in zip(by_mode[::3], by_mode[1::3], by_mode[2::3])]))
    elif batches:
        parts.append(f"batch {batches[0]}" if len(batches) == 1 else
                     f"batch {batches[0]} to {batches[-1]}")
    return ", ".join(parts)


def cite_sentence(said: str, m: Machine, verdict: str, days: str) -> str:
    """A finding as one sentence to paste: what was measured, where, the verdict, the data's
    date and the site's name."""
    return f"{said} on {m.machine} ({m.hardware}), {verdict}; torch-knobs, data of {days}."


def answer(p: Page, here: str, anchor: str, m: Machine, decision: str, text: Md, cite: str
           ) -> dict[str, Any]:
    """One machine's answer block (``_macros.md.j2``'s ``answer``)."""
    name = p.labels.get(m.page, m.machine)
    return {"anchor": anchor, "lead": f"{name} ({m.hardware}): {decision}", "text": text,
            "cite": cite, "permalink": p.link("permalink", here, anchor)}
