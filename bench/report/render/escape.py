"""Make untrusted text (anything read from a CSV or env.json) inert on a page or in a chart.

Every string that comes from data is hostile until proven otherwise: a GPU name, a model name,
an error message or a machine label can hold ``<script>``, a ``|`` that splits a table cell, a
backtick, ``$x$`` (matplotlib mathtext), a newline that starts a new Markdown block, or 500
characters with no space. The functions here are the only way such text reaches output:

- :func:`md` for Markdown prose and table cells (it is also HTML-safe);
- :func:`attr` for an HTML attribute value;
- :func:`mathtext` for a matplotlib label;
- :func:`slug` and :func:`anchor` for file names and element ids.

The Jinja environment in :mod:`bench.report.render.markdown` applies :func:`md` to every
``{{ value }}`` unless the value is an :class:`Md`, a string that code in this package built
from already escaped parts. So escaping is the default and skipping it takes a deliberate act.
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata

#: Characters that mean something to Markdown (or one of its extensions) or to HTML. Each is
#: written as a numeric character reference, which Markdown passes through untouched and the
#: browser shows as the character. ``&`` is among them, so an entity already in the data is
#: shown literally instead of being decoded.
_SPECIAL = frozenset("\\`*_{}[]<>#|$&\"'~^=")

#: Unicode format characters that reorder or hide text (bidi overrides, zero-width joiners).
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})

_SPACES = re.compile(r" {2,}")
#: ``str.translate`` table: each special character to its numeric character reference.
_ENTITIES = {ord(ch): f"&#{ord(ch)};" for ch in _SPECIAL}

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


class Md(str):
    """A string that is already safe to splice into Markdown (and HTML) as it is.

    ``__html__`` tells Jinja's autoescape (markupsafe) to leave it alone.
    """

    __slots__ = ()

    def __html__(self) -> str:
        return str(self)


def clean(text: object) -> str:
    """``text`` as one line of visible characters: controls and line breaks become spaces."""
    if text is None:
        return ""
    value = str(text)
    if not value.isprintable():  # fast path: printable text has no controls or line breaks
        value = "".join(
            " " if unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch.isspace() else ch
            for ch in value
        )
    if "  " in value:
        value = _SPACES.sub(" ", value)
    return value


def truncate(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` characters, ending in an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def md(text: object, *, limit: int | None = None) -> Md:
    """Escape ``text`` for Markdown prose or a table cell, and for the HTML it becomes.

    The result is one line (newlines cannot start a new block), contains no character that
    Markdown, its extensions or HTML treat specially, and no ``|`` that would split a cell.
    ``limit`` shortens very long values (the full value stays in the CSV).
    """
    if isinstance(text, Md):
        return text
    value = clean(text)
    if limit is not None:
        value = truncate(value, limit)
    return Md(value.translate(_ENTITIES))


def cat(*parts: object) -> Md:
    """Concatenate: :class:`Md` parts as they are, anything else escaped with :func:`md`."""
    return Md("".join(md(part) for part in parts))


def html_text(text: object, *, limit: int | None = None) -> str:
    """Escape ``text`` for HTML element content (fragments that bypass Markdown)."""
    value = clean(text)
    if limit is not None:
        value = truncate(value, limit)
    return html.escape(value, quote=True)


def attr(text: object) -> Md:
    """Escape ``text`` for a double-quoted HTML attribute value."""
    return Md(html.escape(clean(text), quote=True))


def mathtext(text: object, *, limit: int = 56) -> str:
    """Escape ``text`` for a matplotlib label: one short line with no mathtext.

    matplotlib treats a pair of ``$`` as mathtext, so every ``$`` is written ``\\$``. The SVG
    writer escapes XML itself.
    """
    return truncate(clean(text), limit).replace("$", r"\$")


def slug(text: object, *, limit: int = 64) -> str:
    """A file-name and URL-safe version of ``text`` (lower case, ``[a-z0-9._-]``).

    Distinct inputs that would map to the same slug are told apart by a short hash, so a
    hostile machine name can neither escape the output folder nor collide with another page.
    """
    raw = clean(text)
    base = re.sub(r"[^a-z0-9._-]+", "-", raw.lower()).strip("-.")[:limit].strip("-.")
    if base and base == raw:
        return base
    digest = hashlib.sha1(raw.encode("utf-8")).hexdigest()[:8]
    return f"{base}-{digest}" if base else f"x-{digest}"


def anchor(text: object) -> str:
    """An element id for ``text``: unchanged when already safe, else a stable hashed form.

    The same function builds the ``id=`` on a table row and every link to it, so the two agree.
    """
    raw = clean(text)
    if _SAFE_ID.fullmatch(raw):
        return raw
    return "id-" + slug(raw, limit=48)
