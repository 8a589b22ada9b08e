"""One vocabulary: every word a page judges in is an enum's, defined once on the Methodology
page, and no page calls a measured-but-thin finding "not measured"."""

from __future__ import annotations

import html
import re
from pathlib import Path

from conftest import Built

from bench.report.vocabulary import (
    MEANINGS,
    ClaimVerdict,
    Feeding,
    Noise,
    Numerics,
    Power,
    Stance,
    Tradeoff,
    Trust,
    Verdict,
)

#: The words the pages judge in, each of which the Methodology page must define.
DEFINED = (Verdict, ClaimVerdict, Stance, Power, Feeding, Noise, Numerics, Tradeoff, Trust)

#: What the old labels said of a finding measured but too thin to judge.
CONTRADICTIONS = re.compile(r"not measured[^.<]{0,20}:\s*measured|not measured here|"
                            r"\binsufficient\b", re.IGNORECASE)


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "assets" not in p.parts)


def test_every_word_has_one_meaning() -> None:
    words = [(type(word), word) for word, _ in MEANINGS]
    assert len(words) == len(set(words)), "a word is defined twice"
    assert set(words) == {(enum, w) for enum in DEFINED for w in enum}


def test_the_methodology_page_defines_every_word(fixture_site: Built) -> None:
    page = " ".join(_text(fixture_site.site / "methodology.html").split())
    for word, meaning in MEANINGS:
        row = f"{word} {' '.join(meaning.split())}"
        assert row in page, f"the Methodology page does not define {word!r} as {meaning!r}"


def test_pages_judge_only_in_the_enums_words(fixture_site: Built) -> None:
    pair_words = {str(w) for w in Verdict}
    claim_words = {str(w) for w in ClaimVerdict}
    seen_pairs, seen_claims = set(), set()
    for page in _pages(fixture_site.site):
        source = page.read_text(encoding="utf-8")
        for found in re.findall(r'<span class="tk-verdict [^"]*">([^<]*)</span>', source):
            assert html.unescape(found) in pair_words, f"{page.name}: verdict {found!r}"
            seen_pairs.add(html.unescape(found))
        if page.name == "claims.html":
            for found in re.findall(r'<div class="tk-answer"[^>]*>\s*<p><strong>([^<]*)</strong>',
                                    source):
                assert found.lower() in claim_words, f"claims: verdict {found!r}"
                seen_claims.add(found.lower())
    assert {"faster", "slower", "too few replicates"} <= seen_pairs
    assert {"supported", "contradicted", "cannot tell"} <= seen_claims


def test_no_page_calls_a_measured_finding_not_measured(fixture_site: Built) -> None:
    for page in _pages(fixture_site.site):
        hit = CONTRADICTIONS.search(_text(page))
        assert hit is None, f"{page.relative_to(fixture_site.site)}: {hit.group(0)!r}"


def test_the_contradiction_check_can_fail() -> None:
    for old in ("not measured here: measured, but too few ok replicates",
                "Not measured: measured, but thin", "2 insufficient"):
        assert CONTRADICTIONS.search(old), old
    for fine in ("too few replicates (2 of 3); not measured on a GPU.",
                 "not measured | no run measured what the claim is about"):
        assert not CONTRADICTIONS.search(fine), fine
