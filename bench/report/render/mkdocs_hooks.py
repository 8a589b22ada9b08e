"""MkDocs hook: splice pre-rendered HTML fragments into pages, after Markdown; and copy the
charts last, once the report has drawn them (``on_env``, ``on_post_build``).

A machine page lists every cell and every failed replicate: tens of thousands of table rows
for a large results tree. Run through Python-Markdown, that volume alone would take longer than
the whole build is allowed (see ``tests/speed/report_build.py``). So
:mod:`bench.report.questions.pages`
writes those tables as HTML fragments under ``generated/fragments/`` (escaped for HTML there,
excluded from the docs) and leaves a placeholder comment in the page; this hook replaces the
placeholder in the finished page and registers the fragment's element ids with MkDocs, so
``--strict`` anchor validation still covers every ``#cell-…`` link. The comparison pages'
tables of every configuration on every machine take the same way (``Writer.table``): written
as the HTML MkDocs would make of them, their links already resolved to ``.html``, which
``--strict`` does not see; the tests check every link of a built site instead.

Configured in ``mkdocs.yml`` under ``hooks:``. Importing it never imports torch, nor pandas,
matplotlib or Jinja: only :mod:`bench.report.render.paths`, where the fragments and charts are
written.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from bench.report.render.paths import CHARTS, PROVENANCE_SNIPPET, fragment_file

#: The environment variable naming the pipe on which ``python -m bench report`` says that the
#: charts are drawn (see ``on_env``).
CHARTS_READY_FD = "TORCH_KNOBS_CHARTS_READY_FD"

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


#: Charts MkDocs leaves to this hook to copy once they are drawn: (source, destination).
_held: list[tuple[str, str]] = []


def on_env(env: Any, config: Any, files: Any) -> Any:
    """Keep the report's charts out of MkDocs's file copy when they are still being drawn.

    ``python -m bench report`` draws the charts while MkDocs reads the pages; until then each
    chart is an empty file, there for MkDocs to list and validate links against. They are
    copied at the end (``on_post_build``) instead, once drawn. Without the variable (MkDocs
    run by hand) the charts are already drawn and are copied as any file.
    """
    if os.environ.get(CHARTS_READY_FD):
        for file in [f for f in files if f.src_uri.startswith(f"{CHARTS}/")]:
            _held.append((file.abs_src_path, file.abs_dest_path))
            files.remove(file)
    return env


def on_post_build(config: Any) -> None:
    """Wait for the charts, then copy them into the site (see ``on_env``).

    The report writes ``ok`` on the pipe once every chart is drawn. A pipe that closes without
    it means a chart failed: the build stops here, and the report names the failure.
    """
    fd = os.environ.pop(CHARTS_READY_FD, "")
    if fd:
        with os.fdopen(int(fd), "rb") as pipe:
            said = pipe.read()
        if said != b"ok":
            from mkdocs.exceptions import PluginError

            raise PluginError("the report's charts were not drawn (see the report's error)")
    for source, dest in _held:
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
    _held.clear()


#: What a page's own provenance line is marked with (the generated pages write theirs).
PROVENANCE_MARK = "tk-provenance"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """End every hand-written page with the site's provenance line: which runs its data comes
    from and which commit built it (``paths.PROVENANCE_SNIPPET``, written by the report). A
    generated page carries its own; a page that includes the home snippet gets the home's."""
    if PROVENANCE_MARK in markdown or "snippets/home.md" in markdown:
        return markdown
    path = Path(config["docs_dir"]) / PROVENANCE_SNIPPET
    try:
        line = path.read_text(encoding="utf-8")
    except OSError:
        return markdown  # MkDocs run by hand on a tree the report did not render
    return markdown.rstrip("\n") + "\n\n" + line


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
