"""The answer a topic page opens with, per machine: the decision in words, its figure with
the interval, its scope, the rows it rests on, and a Cite line ready to paste."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from bench.report import fmt
from bench.report.judge import Machine
from bench.report.judge.common import Scope
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, anchor, attr, slug
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
    """A finding as one sentence to paste, up to its build: what was measured, where (the
    machine, its model, torch's and cuDNN's versions), the verdict, the data's date and the
    site's name. :func:`anchored` ends it with the commit that built the page."""
    return f"{said} on {m.machine} ({software(m)}), {verdict}; torch-knobs, data of {days}"


def software(m: Machine) -> str:
    """``NVIDIA H200, torch 2.11.0, cuDNN 9.19.0``: a machine's model and the versions its
    figures depend on (no cuDNN on a machine without a GPU, where a CUDA build of torch still
    reports one that ran nothing)."""
    parts = [m.hardware or "unknown hardware"]
    if m.torch:
        parts.append(f"torch {m.torch}")
    if m.cudnn and m.gpu:
        parts.append(f"cuDNN {fmt.cudnn_version(m.cudnn)}")
    return ", ".join(parts)


def built_words(build: BuildInfo) -> str:
    """``built from commit abc1234``: what a Cite line says built its page."""
    if not build.commit:
        return "built outside version control"
    changed = " with uncommitted changes" if build.changed else ""
    return f"built from commit {build.commit}{changed}"


# ---------------------------------------------------------------------------------------------
# Anchors that outlive a rebuild.
#
# An answer's anchor is ``<question>-<machine>--<workload>``: the question (``answer``, or on
# the precision page ``answer-precision`` and ``answer-layout``), the machine's key and the
# workload its Cite line quotes (``resnet50-train-b128-fp32-nchw``), the last left out where
# it quotes none. A machine's key is its model (``nvidia-h200``); where several machines of one
# model answer the same question, the one measured first (its first day, then its page key)
# keeps the bare model and each other one adds its machine name (``nvidia-h200-gpu02``; not
# where a machine of that name came before it: another fingerprint of the same machine), then
# its torch version, then its first day, then its fingerprint, until the key is unique. No key
# holds ``--``, so the workload starts at the first one.
#
# Every block also carries, in empty blocks just before it, its machine's anchor without the
# workload (``answer-nvidia-h200``) and its old fingerprint-keyed id (``answer-<page key>``,
# which other pages' links still use). A later build may quote another
# workload: ``site_src/assets/cite-anchors.js`` then takes a cited fragment that names no
# element to the answer whose anchor is its longest prefix (at ``--``, else at ``-``).

#: Between a machine's key and the workload in an answer's anchor.
WORKLOAD_MARK = "--"
#: The most characters of a machine's model in its key, of each word that tells two machines
#: of one model apart, of the whole key, and of a workload.
MODEL_LIMIT, PART_LIMIT, KEY_LIMIT, WORKLOAD_LIMIT = 32, 24, 80, 64


def key(text: object, limit: int = 32) -> str:
    """``NVIDIA H200`` → ``nvidia-h200``: lower-case letters and digits between single
    hyphens, at most ``limit`` characters (``x`` where nothing is left)."""
    found = re.sub(r"[^a-z0-9]+", "-", str(text or "").lower()).strip("-")
    return found[:limit].strip("-") or "x"


def workload_key(r: Any) -> str:
    """``resnet50-train-b128-fp32-nchw``: the workload a Cite line quotes (its model, mode,
    batch, precision and layout; the parts it does not carry left out)."""
    parts = [getattr(r, "model", ""), getattr(r, "mode", "")]
    batch = getattr(r, "batch_size", None)
    if batch is not None and fmt.present(batch):
        parts.append(f"b{int(batch)}")
    parts += [getattr(r, "precision", ""), getattr(r, "memory_format", "")]
    return key("-".join(str(p) for p in parts if p not in ("", None)), WORKLOAD_LIMIT)


def machine_keys(machines: Sequence[Machine]) -> dict[str, str]:
    """Page key → the key of each machine answering one question (see above)."""
    keys: dict[str, str] = {}
    named: set[tuple[str, str]] = set()  # (model, machine name) of those keyed so far
    for m in sorted(machines, key=lambda m: (m.first_day or "9999", m.page)):
        model = key(m.hardware, MODEL_LIMIT)
        tries = [model]
        # a machine's name tells nothing apart from a fingerprint of the same machine
        name = () if (model, m.machine) in named else (m.machine,)
        for more in (*name, f"torch {m.torch}", m.first_day, m.fingerprint_id[:8]):
            tries.append(key(f"{tries[-1]}-{key(more, PART_LIMIT)}", KEY_LIMIT))
        named.add((model, m.machine))
        n = 2
        while all(t in keys.values() for t in tries):  # nothing left to tell them apart by
            tries.append(key(f"{tries[-1][:KEY_LIMIT - 4]}-{n}", KEY_LIMIT))
            n += 1
        keys[m.page] = next(t for t in tries if t not in keys.values())
    return keys


def answer(p: Page, here: str, question: str, m: Machine, decision: str, text: Md, cite: str,
           quoted: Any = None) -> dict[str, Any]:
    """One machine's answer block (``_macros.md.j2``'s ``answer``), its anchors and Cite line
    still to fill in by :func:`anchored` (``question``: ``answer``, or the precision page's
    ``answer-precision`` and ``answer-layout``; ``cite``: :func:`cite_sentence`'s; ``quoted``:
    the row whose workload the Cite line quotes)."""
    name = p.labels.get(m.page, m.machine)
    return {"machine": m, "question": question, "here": here,
            "workload": workload_key(quoted) if quoted is not None else "",
            "lead": f"{name} ({m.hardware}): {decision}", "text": text, "said": cite}


def anchored(blocks: Iterable[dict[str, Any] | None], build: BuildInfo) -> list[dict[str, Any]]:
    """``blocks`` (one page's :func:`answer` s, None where a machine has none) with their
    anchors and Cite lines: the sentence ended with the commit that built the page, and its
    permalink under ``build.site_url``."""
    found = [b for b in blocks if b is not None]
    used: set[str] = set()
    for question in dict.fromkeys(b["question"] for b in found):
        mine = [b for b in found if b["question"] == question]
        keys = machine_keys([b["machine"] for b in mine])
        for b in mine:
            m = b["machine"]
            machine_id = f"{question}-{keys[m.page]}"  # letters, digits and hyphens: an id as is
            primary = f"{machine_id}{WORKLOAD_MARK}{b['workload']}" if b["workload"] \
                else machine_id
            ids = [i for i in dict.fromkeys((primary, machine_id,
                                             anchor(f"{question}-{slug(m.page)}")))
                   if i not in used]
            used.update(ids)
            b.update(anchor=ids[0], aliases=[attr(i) for i in ids[1:]],
                     cite=f"{b['said']}, {built_words(build)}." if b["said"] else "",
                     permalink=Md(f"[permalink]({cite_url(build, b['here'], ids[0])})"))
    return found


def cite_url(build: BuildInfo, here: str, fragment: str) -> str:
    """The absolute address of ``here``'s ``#fragment`` under the site's ``site_url`` (a
    relative one where the configuration names none)."""
    page = here[:-3] + ".html" if here.endswith(".md") else here
    if not build.site_url:
        return f"#{fragment}"
    return f"{build.site_url.rstrip('/')}/{page}#{fragment}"
