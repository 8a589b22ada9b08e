"""Hostile strings from CSVs and env.json render inert on every page and chart."""

from __future__ import annotations

import html as htmllib
import re

from conftest import Built
from hostile import GPU, IMG, LONG, SCRIPT
from htmlcheck import check_site


def html_pages(built: Built) -> dict[str, str]:
    return {
        p.relative_to(built.site).as_posix(): p.read_text(encoding="utf-8")
        for p in built.site.rglob("*.html")
    }


def test_no_markup_from_the_data_survives(hostile_site: Built) -> None:
    for name, html in html_pages(hostile_site).items():
        assert "<script>window" not in html, name
        assert not re.search(r"<[a-z]+[^<>]*\sonerror\s*=", html), name  # no live handler
        assert "<b>|" not in html, name
        assert "<strong>bold" not in html, name
        assert 'href="http://example.invalid"' not in html, name


def test_hostile_text_is_shown_escaped_not_dropped(hostile_site: Built) -> None:
    machine_pages = [  # the index and the redirects from the old addresses are not
        p
        for p in (hostile_site.site / "generated" / "machines").glob("*.html")
        if p.name != "index.html" and 'http-equiv="refresh"' not in p.read_text()
    ]
    assert len(machine_pages) == 1
    page = machine_pages[0].read_text(encoding="utf-8")
    shown = htmllib.unescape(page)  # what the reader sees as text
    assert SCRIPT not in page and SCRIPT in shown
    for piece in ("| pipe `tick` $x$ **bold** [link](http://example.invalid) &amp;", IMG):
        assert piece in shown
    assert LONG in page  # the 500-character name is there, wrapped by CSS, not cut
    assert GPU.split("\n")[0] in shown  # the GPU name from env.json


def test_tables_keep_their_columns(hostile_site: Built) -> None:
    """An unescaped ``|`` would add cells to a row; every row has its header's cell count."""
    for page in hostile_site.generated.rglob("*.md"):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if (
                not line.startswith("| ")
                or i + 1 >= len(lines)
                or not lines[i + 1].startswith("| ---")
            ):
                continue
            width = line.count(" | ")
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                assert row.count(" | ") == width, f"{page.name}: {row[:120]}"


def test_headings_titles_and_navigation_carry_no_data_markup(hostile_site: Built) -> None:
    for name, html in html_pages(hostile_site).items():
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        assert title and not re.search(r"[<>`$|]", title.group(1)), (name, title)
        for heading in re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", html, re.S):
            assert "&#60;" not in heading and "<script" not in heading, (name, heading)


def test_hostile_site_is_strict_and_sound(hostile_site: Built) -> None:
    assert check_site(hostile_site.site) == []
    charts = list((hostile_site.generated / "charts").glob("*.svg"))
    assert charts, "the hostile cudnn pair should still get a chart"
    for chart in charts:
        text = chart.read_text(encoding="utf-8")
        assert "<script" not in text and "onerror" not in text


def test_hostile_strings_reach_the_inputs() -> None:
    """Guard the guard: the fixture really contains what the tests above look for."""
    assert SCRIPT in GPU or IMG in GPU
    assert len(LONG) == 500
