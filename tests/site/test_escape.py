"""Unit tests of the escaping layer: the only way data text reaches a page or a chart."""

from __future__ import annotations

import markdown
import pytest

from bench.report.render import markdown as pages
from bench.report.render.escape import Md, anchor, cat, mathtext, md, slug

HOSTILE = "<script>alert(1)</script> | `x` $x$ **b** [l](u) &amp; {: #i }\nnext"


def render(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "attr_list", "md_in_html"])


def test_md_leaves_no_markup_or_table_syntax() -> None:
    out = md(HOSTILE)
    for ch in "<>|`$*[]{}&\n":
        assert ch not in out.replace("&#", ""), ch
    html = render(out)
    assert "<script" not in html and "<strong>" not in html and "<a " not in html
    assert "<code>" not in html


def test_md_inside_a_table_cell_keeps_the_column_count() -> None:
    text = "| a | b |\n| --- | --- |\n| " + md(HOSTILE) + " | 2 |"
    html = render(text)
    assert html.count("<td>") == 2


def test_md_passes_md_through_and_cat_escapes_the_rest() -> None:
    safe = Md("**bold**")
    assert md(safe) is safe
    assert cat(safe, "<i>") == "**bold**&#60;i&#62;"


def test_md_limit_truncates_long_values() -> None:
    assert len(md("x" * 500, limit=40)) == 40


def test_mathtext_escapes_dollars_and_newlines() -> None:
    assert mathtext("a $x$ b\nc") == r"a \$x\$ b c"
    assert len(mathtext("y" * 500)) <= 56


def test_slug_and_anchor_are_safe_and_distinct() -> None:
    assert slug("fixture-gpu-box-abd10753") == "fixture-gpu-box-abd10753"
    hostile = slug("../../etc/passwd <x>")
    assert "/" not in hostile and ".." not in hostile.split("-")
    assert slug("A B") != slug("a-b")
    assert anchor("cell-0123abcd") == "cell-0123abcd"
    assert anchor('cell-"><script>') != anchor('cell-"><script')
    assert all(ch.isalnum() or ch in "-_." for ch in anchor('x"><script>'))


def test_templates_escape_by_default_and_refuse_raw_floats() -> None:
    env = pages.environment()
    assert env.from_string("{{ v }}").render(v="<b>|") == "&#60;b&#62;&#124;"
    assert env.from_string("{{ v }}").render(v=Md("<b>")) == "<b>"
    with pytest.raises(TypeError, match="unformatted float"):
        env.from_string("{{ v }}").render(v=0.1)
    with pytest.raises(Exception, match="undefined"):
        env.from_string("{{ missing }}").render()
    with pytest.raises(Exception, match="safe"):
        env.from_string("{{ v|safe }}").render(v="<b>")


def test_table_escapes_cells() -> None:
    out = pages.table(["h|1"], [["<a>|b"], [Md("[x](y)")]])
    assert out.splitlines()[2] == "| &#60;a&#62;&#124;b |"
    assert out.splitlines()[3] == "| [x](y) |"


def test_the_report_side_never_imports_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, bench.report.build, bench.report.questions.pages, "
        "bench.report.render.mkdocs_hooks; "
        "sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
