"""Every topic page's answer blocks read as prose, on the built fixture site: the bold lead is
a sentence, or the text after it goes on with it, without naming its subject twice, and an
answer gives each figure with its interval once (the Cite line apart)."""

from __future__ import annotations

import html
import re

from conftest import Built

_ANSWER = re.compile(r'<div class="tk-answer" id="([^"]+)">\s*<p><strong>(.*?)</strong>(.*?)</p>',
                     re.S)
_FIGURE = re.compile(r"[\d.,]+(?:×| samples/s)? \(95% CI [^)]+\)")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _answers(fixture_site: Built) -> list[tuple[str, str, str, str]]:
    found = []
    for page in sorted((fixture_site.site / "generated").glob("*.html")):
        for anchor, lead, rest in _ANSWER.findall(page.read_text(encoding="utf-8")):
            found.append((page.name, anchor, _text(lead), _text(rest)))
    return found


def test_every_answer_lead_ends_a_sentence_or_the_text_continues_it(fixture_site: Built) -> None:
    answers = _answers(fixture_site)
    assert {page for page, *_ in answers} >= {"feeding.html", "cpu-vs-gpu.html",
                                              "cudnn-benchmark.html"}
    for page, anchor, lead, rest in answers:
        ends = lead.endswith((".", ":", "?"))
        continues = rest[:1].islower() or rest[:1] in ",;:(" or not rest
        assert ends or continues, f"{page}#{anchor}: {lead!r} runs into {rest[:60]!r}"
        last = " ".join(lead.rstrip(".").split()[-3:])
        assert not rest.startswith(last), f"{page}#{anchor} names {last!r} twice"


def test_an_answer_gives_each_figure_with_its_interval_once(fixture_site: Built) -> None:
    for page, anchor, lead, rest in _answers(fixture_site):
        figures = _FIGURE.findall(f"{lead} {rest}")
        repeated = {f for f in figures if figures.count(f) > 1}
        assert not repeated, f"{page}#{anchor} repeats {sorted(repeated)}"


def test_every_break_even_a_recommendation_quotes_is_the_top_of_the_tables_range(
        fixture_site: Built) -> None:
    """The cudnn.benchmark page quotes "more than N iterations" (the slowest replicate against
    the smallest saving); its break-even table shows the median with that range, so N is the
    upper end of one of its cells, and the home page's decisions quote the same N."""
    page = _text((fixture_site.site / "generated" / "cudnn-benchmark.html").read_text(
        encoding="utf-8"))
    quoted = set(re.findall(r"jobs of more than ([\d,]+) iterations per input shape", page))
    ranges = set(re.findall(r"[\d,]+ \([\d,]+ to ([\d,]+)\)", page))
    assert quoted and quoted <= ranges, f"quoted {sorted(quoted)}, table tops {sorted(ranges)}"
    home = _text((fixture_site.site / "index.html").read_text(encoding="utf-8"))
    decided = set(re.findall(r"jobs of more than ([\d,]+) iterations per shape", home))
    assert decided and decided <= quoted


def test_no_step_is_fed_by_zero_workers(fixture_site: Built) -> None:
    """With 0 workers a step's own process decodes between its steps: the feeding page never
    says 0 workers feed a step (the fixture's 0-worker pipelines decode faster than some of its
    steps consume), and says what 0 workers would cost the headline step instead."""
    raw = (fixture_site.site / "generated" / "feeding.html").read_text(encoding="utf-8")
    page = _text(raw)
    assert "0 loader workers feed" not in page
    rows = re.findall(r"<td>[\d,.]+ samples/s</td>\s*<td>[\w-]+</td>\s*<td>(\d+)</td>\s*"
                      r"<td>[^<]*</td>\s*<td>enough workers</td>", raw)
    assert rows and "0" not in rows, rows
    assert re.search(r"With 0 workers, decoding between steps at [\d,.]+ samples/s .*?, the "
                     r"step would wait [\d.]+% of the time", page)
