"""Render the generated part of the site: Markdown pages (Jinja2) and SVG charts.

Layout under ``<docs_dir>/generated/`` (wiped and rebuilt on every build)::

    cudnn-benchmark.md  dynamic-shapes.md  determinism.md  precision.md  cpu-vs-gpu.md
    compare.md  data.md  machines/index.md  machines/<page>.md  charts/*.svg
    data/<machine>/<run>/{results.csv,samples.csv,env.json}
    snippets/home.md  snippets/constants.md   (included by hand-written pages)

How untrusted text is kept inert: the Jinja environment escapes every ``{{ value }}`` for
Markdown and HTML (:func:`bench.report.escape.md`) unless the value is an
:class:`~bench.report.escape.Md` built by this package from escaped parts; floats must be
formatted by :mod:`bench.report.fmt` first (a raw float is an error, so ``nan`` never leaks);
only a short list of filters exists (``join``, ``safe`` and friends would bypass Markdown
escaping); undefined names raise (``StrictUndefined``). Headings and navigation titles carry
only slugs, never data text, because MkDocs themes print page titles without escaping.
"""

from __future__ import annotations

import contextlib
import functools
import math
import multiprocessing
import os
import posixpath
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from bench.report import fmt
from bench.report.escape import Md, anchor, attr, md, slug

TEMPLATES = Path(__file__).parent / "templates"
GENERATED = "generated"

#: The only filters templates may use; each keeps values as they are (escaping happens after).
_FILTERS = ("length", "first", "last", "list", "default")


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}`` passes here before Jinja's own HTML autoescape."""
    if isinstance(value, (Md, markupsafe.Markup)):
        return value
    if isinstance(value, jinja2.Undefined):
        return str(value)  # StrictUndefined raises here, naming the missing variable
    if isinstance(value, bool):
        raise TypeError("a bool reached a template; turn it into words first")
    if isinstance(value, int):
        return Md(str(value))
    if isinstance(value, float):
        raise TypeError(
            f"an unformatted float ({value!r}) reached a template; use bench.report.fmt"
        )
    if isinstance(value, str):
        return md(value)
    raise TypeError(f"a {type(value).__name__} reached a template: {value!r}")


def environment() -> jinja2.Environment:
    """The Jinja environment for page templates (see the module docstring)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters = {name: env.filters[name] for name in _FILTERS}
    env.globals.update(table=table, fmt=fmt)
    return env


# ---------------------------------------------------------------------------------------------
# Building blocks that return Markdown (Md): tables, links, images.


def table(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> Md:
    """A Markdown table; every cell that is not already :class:`Md` is escaped."""
    head = "| " + " | ".join(md(h) for h in headers) + " |"
    rule = "|" + "|".join(" --- " for _ in headers) + "|"
    body = ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return Md("\n".join([head, rule, *body]))


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table from cells that are already HTML (see ``escape.html_text``)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"


def fragment_placeholder(name: str) -> Md:
    """Where :mod:`bench.report.mkdocs_hooks` splices ``generated/fragments/<name>.html``."""
    if not re.fullmatch(r"[a-z0-9._-]+", name):
        raise ValueError(f"fragment names are slugs, got {name!r}")
    return Md(f"<!-- torch-knobs:fragment {name} -->")


def machine_file(page: str) -> str:
    """The docs-relative path of a machine page, from stats' ``page`` key (untrusted text)."""
    return f"{GENERATED}/machines/{slug(page)}.md"


@functools.lru_cache(maxsize=4096)
def _relative(target: str, here: str) -> str:
    """Cached: a site has few (page, target) pairs but links them tens of thousands of times."""
    return posixpath.relpath(target, posixpath.dirname(here) or ".")


@dataclass(frozen=True)
class Page:
    """One output page; knows its own path so it can write relative links and image paths."""

    here: str  # docs-relative path of the page the Markdown ends up in
    #: Link text per machine-page key, where the machine name alone is ambiguous (one machine
    #: measured under several fingerprints); other machine links use the text they are given.
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def url(self, target: str, fragment: str | None = None) -> str:
        """``target`` (docs-relative) as a link relative to this page, with ``#fragment``."""
        rel = "" if target == self.here else _relative(target, self.here)
        return rel + (f"#{anchor(fragment)}" if fragment else "")

    def link(self, text: object, target: str, fragment: str | None = None) -> Md:
        return Md(f"[{md(text)}]({self.url(target, fragment)})")

    def row_link(self, text: object, page: str, row_anchor: str) -> Md:
        """A link to one table row on a machine page."""
        return self.link(text, machine_file(page), row_anchor)

    def machine_link(self, text: object, page: str) -> Md:
        return self.link(self.labels.get(page, text), machine_file(page))

    def image(self, chart: str, alt: str) -> Md:
        """A chart image (``chart`` docs-relative) with alt text; styled as a light card."""
        return Md(f"![{md(alt, limit=1500)}]({self.url(chart)}){{ .tk-chart }}")


def verdict_badge(verdict: str) -> Md:
    """A verdict as coloured text (CSS classes; the words carry the meaning on their own)."""
    css = {"faster": "tk-faster", "slower": "tk-slower"}.get(verdict, "tk-neutral")
    return Md(f'<span class="tk-verdict {css}">{md(verdict)}</span>')


def row_anchor(row_id: str) -> Md:
    """The invisible target of a stable row link: ``<a id="cell-…">``."""
    return Md(f'<a class="tk-anchor" id="{attr(anchor(row_id))}"></a>')


def safe_title(text: object, limit: int = 60) -> str:
    """Plain text with no markup characters at all, for headings and navigation titles."""
    kept = "".join(
        ch if ch.isascii() and (ch.isalnum() or ch in " ._-()") else " " for ch in str(text)
    )
    words = " ".join(kept.split())
    return words[:limit].strip() or "untitled"


# ---------------------------------------------------------------------------------------------
# Writing.


@dataclass
class SiteResult:
    """What the MkDocs step needs to know about the rendered pages."""

    machine_nav: list[tuple[str, str]] = field(default_factory=list)
    build_epoch: int = 0
    written: list[Path] = field(default_factory=list)


class Writer:
    """Writes pages and charts under the generated folder, refusing paths that escape it.

    Charts are the slowest part of a build (matplotlib), so with a ``pool`` they are drawn in
    worker processes while pages render here; :meth:`finish` waits for them and re-raises the
    first failure.
    """

    def __init__(
        self, docs_dir: Path, env: jinja2.Environment, pool: Executor | None = None
    ) -> None:
        self.docs_dir = docs_dir
        self.env = env
        self.pool = pool
        self.pending: list[Future[Path]] = []
        self.written: list[Path] = []

    def chart(self, draw: Callable[..., Path], rel: str, *args: Any, **kwargs: Any) -> None:
        """Draw a chart: ``draw(*args, path, **kwargs)``, now or in the pool."""
        out = self.path(rel)
        if self.pool is None:
            draw(*args, out, **kwargs)
        else:
            self.pending.append(self.pool.submit(draw, *args, out, **kwargs))
        self.written.append(out)

    def finish(self) -> None:
        for future in self.pending:
            future.result()
        self.pending.clear()

    def path(self, rel: str) -> Path:
        if not rel.startswith(f"{GENERATED}/") or ".." in rel.split("/"):
            raise ValueError(f"refusing to write outside {GENERATED}/: {rel!r}")
        out = self.docs_dir / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        return out

    def text(self, rel: str, text: str) -> None:
        out = self.path(rel)
        out.write_text(text, encoding="utf-8")
        self.written.append(out)

    def page(self, rel: str, template: str, **context: Any) -> None:
        text = self.env.get_template(template).render(**context)
        out = self.path(rel)
        out.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        self.written.append(out)

    def copy(self, source: Path, rel: str) -> None:
        out = self.path(rel)
        shutil.copyfile(source, out)
        self.written.append(out)


def reset(generated: Path) -> None:
    """Empty the generated folder (it is rebuilt from scratch every time)."""
    if generated.name != GENERATED:
        raise ValueError(f"refusing to wipe {generated}: not a {GENERATED!r} folder")
    if generated.exists():
        shutil.rmtree(generated)
    generated.mkdir(parents=True)


def epoch_of(timestamps: Iterable[str]) -> int:
    """The latest timestamp in the data as a Unix time (0 when there is none)."""
    import pandas as pd

    values = pd.to_datetime(pd.Series([t for t in timestamps if t]), utc=True, errors="coerce")
    values = values.dropna()
    if values.empty:
        return 0
    latest = values.max()
    return int(latest.timestamp()) if not math.isnan(latest.timestamp()) else 0


@contextlib.contextmanager
def chart_pool() -> Iterator[Executor | None]:
    """Worker processes for charts where forking is safe and there is a core to spare."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if sys.platform != "linux" or cores < 2:
        yield None
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(cores - 1, 3), mp_context=context) as pool:
        yield pool


def render_site(
    dataset: Any, reports_root: Path, generated: Path, *, prices: Path | None = None
) -> SiteResult:
    """Render every generated page and chart from ``dataset`` into ``generated``."""
    from bench.report import views

    reset(generated)
    with chart_pool() as pool:
        writer = Writer(generated.parent, environment(), pool)
        nav = views.render_all(dataset, Path(reports_root), writer, prices=prices)
        writer.finish()
    epoch = epoch_of(dataset.results["ended_at"].tolist()) if len(dataset.results) else 0
    return SiteResult(machine_nav=nav, build_epoch=epoch, written=list(writer.written))
