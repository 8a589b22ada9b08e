"""Where the generated part of the site lives: docs-relative POSIX paths under ``generated/``.

One home for these names, because three parties must agree on them: the views that write the
files and link to them, the writer that refuses any path outside ``generated/``, and the MkDocs
hook that splices fragments back in (it runs in MkDocs's own process). ``mkdocs.yml`` names the
same pages in its navigation.

Layout (wiped and rebuilt on every build)::

    cudnn-benchmark.md  dynamic-shapes.md  determinism.md  precision.md  cpu-vs-gpu.md
    torch-compile.md  feeding.md  compare.md  data.md  claims.md
    machines/index.md  machines/<model>.md  (one page per hardware model)
    charts/*.svg
    fragments/<page>-cells.html  fragments/<page>-failures.html   (spliced by the hook)
    fragments/<question>--<section>[-<table>].html   (a comparison page's long tables)
    data/<machine>/<run>/{results.csv,samples.csv,env.json}  data/comparisons/*.csv
    snippets/home.md  snippets/constants.md  snippets/ceilings.md  snippets/kernel-cache.md
        (included by hand-written pages)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import PurePath

from bench.report.render.escape import clean, slug

GENERATED = "generated"
CHARTS = f"{GENERATED}/charts"
FRAGMENTS = f"{GENERATED}/fragments"
DATA = f"{GENERATED}/data"
COMPARISONS = f"{DATA}/comparisons"
SNIPPETS = f"{GENERATED}/snippets"
MACHINES = f"{GENERATED}/machines"

#: The hand-written home page, which includes the home snippet.
HOME = "index.md"
HOME_SNIPPET = f"{SNIPPETS}/home.md"
CONSTANTS_SNIPPET = f"{SNIPPETS}/constants.md"
#: The hand-written Methodology page, and the figures from the data it includes: each current
#: GPU's ceilings (best window against sustained), and cudnn.benchmark's first pass with a
#: fresh and a warm kernel cache.
METHODOLOGY = "methodology.md"
CEILINGS_SNIPPET = f"{SNIPPETS}/ceilings.md"
KERNEL_CACHE_SNIPPET = f"{SNIPPETS}/kernel-cache.md"
#: The words of the vocabulary and what each means (the Methodology page includes it).
VOCABULARY_SNIPPET = f"{SNIPPETS}/vocabulary.md"
#: Where the whole site's figures come from and what built it: the line the MkDocs hook adds to
#: every hand-written page (the generated ones carry their own).
PROVENANCE_SNIPPET = f"{SNIPPETS}/provenance.md"
CUDNN_PAGE = f"{GENERATED}/cudnn-benchmark.md"
SHAPES_PAGE = f"{GENERATED}/dynamic-shapes.md"
DETERMINISM_PAGE = f"{GENERATED}/determinism.md"
PRECISION_PAGE = f"{GENERATED}/precision.md"
CPU_GPU_PAGE = f"{GENERATED}/cpu-vs-gpu.md"
COMPILE_PAGE = f"{GENERATED}/torch-compile.md"
FEEDING_PAGE = f"{GENERATED}/feeding.md"
COMPARE_PAGE = f"{GENERATED}/compare.md"
DATA_PAGE = f"{GENERATED}/data.md"
CLAIMS_PAGE = f"{GENERATED}/claims.md"
MACHINES_INDEX = f"{MACHINES}/index.md"
#: Every decision of the rule engine; the pages that cap their advice lists link here.
DECISIONS_CSV = f"{COMPARISONS}/decisions.csv"


#: Analysis page key → the slug of its hardware model's page, for this build (see
#: ``use_models``). A module's table rather than an argument because every view links to a
#: machine through ``Page.machine_link(text, page)``, which knows only the page key.
_MODELS: dict[str, str] = {}


def model_slug(model: str) -> str:
    """A hardware model's page name: ``NVIDIA H200`` → ``nvidia-h200``, ``AMD EPYC 9R14, 2
    vCPU`` → ``amd-epyc-9r14-2-vcpu``; the same model, the same address, build after build. A
    name with nothing safe in it (untrusted text) is a hash of itself."""
    raw = clean(model)
    base = re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")[:64].strip("-")
    return base or f"x-{hashlib.sha1(raw.encode('utf-8')).hexdigest()[:8]}"


def use_models(models: Mapping[str, str]) -> None:
    """Page key → model page slug for every fingerprint of this build (``model_slug``, told
    apart where two models would share one): where ``machine_file`` links."""
    _MODELS.clear()
    _MODELS.update(models)


def model_file(slug_: str) -> str:
    """The page of one hardware model, every fingerprint of it a section."""
    return f"{MACHINES}/{slug_}.md"


def machine_name(page: str) -> str:
    """The machine of an analysis ``page`` key (``<machine>-<8 characters of fingerprint>``)."""
    return page.rsplit("-", 1)[0] if "-" in page else page


def machine_file(page: str) -> str:
    """The page of a fingerprint's hardware model, every fingerprint of it a section, from an
    analysis ``page`` key (untrusted text): it lives at the model's name, so a new run or a
    new machine of the same model keeps its address. A key this build does not know (no
    ``use_models`` yet) falls back to its machine's name."""
    found = _MODELS.get(page)
    return model_file(found) if found else f"{MACHINES}/{slug(machine_name(page))}.md"


def name_file(page: str) -> str:
    """Where a machine's page lived while pages were named after machines, not models: a
    redirect to its fingerprint's section keeps links posted to it working."""
    return f"{MACHINES}/{slug(machine_name(page))}.html"


def fingerprint_anchor(page: str) -> str:
    """The section of one fingerprint on its machine's page."""
    return f"fp-{page.rsplit('-', 1)[-1]}"


def old_machine_file(page: str) -> str:
    """Where a fingerprint's page lived before machine pages were named after machines: a
    redirect to its section keeps links posted to it working."""
    return f"{MACHINES}/{slug(page)}.html"


def chart_file(kind: str, page: str) -> str:
    """One machine's chart of one kind."""
    return f"{CHARTS}/{kind}-{slug(page)}.svg"


def fragment_file(name: str) -> str:
    """A pre-rendered HTML table that the MkDocs hook splices into a page."""
    return f"{FRAGMENTS}/{name}.html"


def data_file(rel: PurePath) -> str:
    """Where a run's file (``rel``: relative to the reports root) is copied in the site."""
    parts = [slug(part) for part in PurePath(rel).parent.parts]
    return "/".join([DATA, *parts, PurePath(rel).name])
