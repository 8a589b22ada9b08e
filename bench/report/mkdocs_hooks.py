"""MkDocs hook: splice pre-rendered HTML fragments into pages, after Markdown.

A machine page lists every cell and every failed replicate: tens of thousands of table rows
for a large results tree. Run through Python-Markdown, that volume alone would take longer than
the whole build is allowed (see ``tests/speed/report_build.py``). So :mod:`bench.report.views`
writes those tables as HTML fragments under ``generated/fragments/`` (escaped for HTML there,
excluded from the docs) and leaves a placeholder comment in the page; this hook replaces the
placeholder in the finished page and registers the fragment's element ids with MkDocs, so
``--strict`` anchor validation still covers every ``#cell-…`` link.

Configured in ``mkdocs.yml`` under ``hooks:``. Importing it never imports torch, nor pandas,
matplotlib or Jinja: only :mod:`bench.report.paths`, where the fragments are written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.report.paths import fragment_file

PLACEHOLDER = re.compile(r"<!-- torch-knobs:fragment ([a-z0-9._-]+) -->")
_ID = re.compile(r'\bid="([^"]+)"')


class FragmentError(RuntimeError):
    """A page names a fragment that was not rendered."""


def read_fragment(name: str, docs_dir: Path) -> str:
    path = docs_dir / fragment_file(name)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FragmentError(f"fragment {name!r} missing ({path}): {exc}") from None


def fragment_ids(html: str, docs_dir: Path) -> set[str]:
    """The element ids of every fragment ``html`` names."""
    ids: set[str] = set()
    for name in PLACEHOLDER.findall(html):
        ids.update(_ID.findall(read_fragment(name, docs_dir)))
    return ids


def splice(html: str, docs_dir: Path) -> str:
    """``html`` with every placeholder replaced by its fragment."""
    return PLACEHOLDER.sub(lambda m: read_fragment(m.group(1), docs_dir), html)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Register the fragments' ids, so links to ``#cell-…`` rows validate under --strict."""
    if "torch-knobs:fragment" in html and getattr(page, "present_anchor_ids", None) is not None:
        page.present_anchor_ids.update(fragment_ids(html, Path(config["docs_dir"])))
    return html


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Splice the fragments into the finished page.

    After the search plugin has indexed the page, so the search index holds the page's prose
    and small tables but not tens of thousands of cell rows.
    """
    if "torch-knobs:fragment" not in output:
        return output
    return splice(output, Path(config["docs_dir"]))
