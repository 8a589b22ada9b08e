"""The Markdown kit: the page templates' environment and the blocks views build pages from.

Views turn analysis tables into page contexts with these: tables, links that know the page
they sit on, row anchors, verdict badges, fragment placeholders, safe titles. Where the pages
go is :mod:`bench.report.render.paths`; writing them is :mod:`bench.report.render.writer`.

How untrusted text is kept inert: the Jinja environment escapes every ``{{ value }}`` for
Markdown and HTML (:func:`bench.report.render.escape.md`) unless the value is an
:class:`~bench.report.render.escape.Md` built by this package from escaped parts; floats must be
formatted by :mod:`bench.report.fmt` first (a raw float is an error, so ``nan`` never leaks);
only a short list of filters exists (``join``, ``safe`` and friends would bypass Markdown
escaping); undefined names raise (``StrictUndefined``). Headings and navigation titles carry
only slugs, never data text, because MkDocs themes print page titles without escaping.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from bench.report import fmt
from bench.report.render.escape import Md, anchor, attr, md
from bench.report.render.paths import fingerprint_anchor, machine_file
from bench.report.vocabulary import Verdict

TEMPLATES = Path(__file__).parent / "templates"
#: Where templates are found: the kit's macros, then each question's own folder.
QUESTIONS = Path(__file__).parents[1] / "questions"


def _template_dirs() -> list[str]:
    return [str(TEMPLATES), *sorted(str(d) for d in QUESTIONS.iterdir() if d.is_dir()
                                    and any(d.glob("*.md.j2")))]

#: The only filters templates may use; each keeps values as they are (escaping happens after),
#: and ``indent`` (below) keeps built Markdown built.
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


def _indent(value: Any, width: int = 4, first: bool = False) -> Md:
    """Indent every line but the first (all of them with ``first``) by ``width`` spaces: how a
    table or list goes inside a collapsed block (``???``). Text from the data is escaped
    first, so indenting never lets it out."""
    text = value if isinstance(value, (Md, markupsafe.Markup)) else md(value)
    pad = " " * width
    lines = str(text).split("\n")
    out = [(pad + line if (i or first) and line else line) for i, line in enumerate(lines)]
    return Md("\n".join(out))


def environment() -> jinja2.Environment:
    """The Jinja environment for page templates (see the module docstring)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_template_dirs()),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters = {name: env.filters[name] for name in _FILTERS}
    env.filters["indent"] = _indent
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


#: A link as the pages write one (``Page.link``): escaped text, a relative target.
_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]+)\)")
#: What would make Python-Markdown write a cell otherwise than ``cell_html`` does: emphasis,
#: code, a bracket outside a link, an escape (``md`` writes every such character as an entity).
_MARKUP = re.compile(r"[*_`\[\]\\]")
#: A page's target as MkDocs writes it in HTML (``use_directory_urls: false``).
_MD_TARGET = re.compile(r"\.md(?=#|$)")


def cell_html(cell: object) -> str:
    """A table cell's HTML as Python-Markdown writes it on a MkDocs page, for what the pages'
    cells hold: text escaped by ``md`` (its entities kept as they are), inline HTML (verdict
    badges), and links, their ``.md`` targets written ``.html`` as MkDocs does. Raises
    ValueError for any other Markdown, which it would write differently."""
    text = md(cell)
    bare = _LINK.sub("", text) if "](" in text else text
    if _MARKUP.search(bare):
        raise ValueError(f"a table cell holds Markdown a fragment cannot hold: {text!r}")
    if bare is text:
        return text
    return _LINK.sub(lambda m: f'<a href="{_MD_TARGET.sub(".html", m.group(2))}">'
                               f"{m.group(1)}</a>", text)


def rendered_table(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """``table(headers, rows)`` as the HTML MkDocs makes of it, line for line (unlike
    ``html_table``, whose cells are HTML already and whose rows are one line each)."""
    def line(tag: str, cells: Sequence[object]) -> str:
        return "<tr>\n" + "".join(f"<{tag}>{cell_html(c)}</{tag}>\n" for c in cells) + "</tr>"

    # no rows: Python-Markdown writes a header row, a rule, and one row of empty cells
    body = "\n".join(line("td", row) for row in list(rows) or [[""] * len(headers)])
    return (f"<table>\n<thead>\n{line('th', headers)}\n</thead>\n<tbody>\n{body}\n</tbody>\n"
            "</table>")


def fragment_placeholder(name: str) -> Md:
    """Where :mod:`bench.report.render.mkdocs_hooks` splices ``generated/fragments/<name>.html``."""
    if not re.fullmatch(r"[a-z0-9._-]+", name):
        raise ValueError(f"fragment names are slugs, got {name!r}")
    return Md(f"<!-- torch-knobs:fragment {name} -->")


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
        """A link to one fingerprint's section of its machine's page."""
        return self.link(self.labels.get(page, text), machine_file(page),
                         fingerprint_anchor(page))

    def image(self, chart: str, alt: str) -> Md:
        """A chart image (``chart`` docs-relative) with alt text; styled as a light card."""
        return Md(f"![{md(alt, limit=1500)}]({self.url(chart)}){{ .tk-chart }}")


#: The CSS class of each verdict that has a colour of its own.
_BADGES = {Verdict.FASTER: "tk-faster", Verdict.SLOWER: "tk-slower"}


def verdict_badge(verdict: str) -> Md:
    """A verdict as coloured text (CSS classes; the words carry the meaning on their own)."""
    css = _BADGES.get(Verdict(verdict), "tk-neutral")
    return Md(f'<span class="tk-verdict {css}">{md(verdict)}</span>')


def row_anchor(row_id: str) -> Md:
    """The invisible target of a stable row link: ``<a id="cell-…">``."""
    return Md(f'<a class="tk-anchor" id="{attr(anchor(row_id))}"></a>')
