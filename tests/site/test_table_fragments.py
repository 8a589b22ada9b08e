"""The comparison pages' long tables bypass Markdown as HTML fragments: line for line the HTML
that Python-Markdown and MkDocs make of the same Markdown table, so moving a table out of
Markdown changes no page (``markdown.rendered_table`` against ``markdown.table``)."""

from __future__ import annotations

import re

import markdown
import pytest

from bench.report.render.escape import Md
from bench.report.render.markdown import Page, cell_html, rendered_table, table

HERE = Page("generated/precision.md")
HEADERS = ["Configuration", "Variant", "Speedup (95% CI)", "Verdict", "Rows"]
ROWS = [
    ["convnext_tiny infer b8 cl", "amp-bf16", "1.97× (1.91–2.06×)",
     Md('<span class="tk-verdict tk-faster">faster</span>'),
     Md(" · ".join([HERE.row_link("fp32", "amd-epyc", "cell-abc-1"),
                    HERE.row_link("amp-bf16", "amd-epyc", "cell-abc-2")]))],
    # data text with every character Markdown or HTML would read: escaped by ``md``
    ["a | b <x> & *y* _z_ `c` [d](e) \\ 5 # $", "x", "—",
     Md('<span class="tk-verdict tk-neutral">too few replicates</span> (fp32: 2 ok)'),
     HERE.link("Methodology", "methodology.md", "statistics")],
]


def _mkdocs_html(text: str) -> str:
    """What MkDocs writes for a Markdown table on a page: Python-Markdown's table, each link to
    a page's ``.md`` source written to its ``.html`` (``use_directory_urls: false``)."""
    html = markdown.markdown(text, extensions=["tables"])
    return re.sub(r'href="([^"#]*)\.md(#[^"]*)?"',
                  lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', html)


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], []], ids=["two", "one", "none"])
def test_a_table_fragment_is_the_html_mkdocs_makes_of_the_table(rows: list[list[object]]
                                                                 ) -> None:
    assert rendered_table(HEADERS, rows) == _mkdocs_html(table(HEADERS, rows))


@pytest.mark.parametrize("cell", [Md("**bold**"), Md("`code`"), Md("a_b_"), Md("[x]"),
                                  Md("\\*")])
def test_a_cell_with_other_markdown_is_refused_rather_than_written_otherwise(cell: Md) -> None:
    with pytest.raises(ValueError, match="Markdown a fragment cannot hold"):
        cell_html(cell)
