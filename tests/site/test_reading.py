"""Every built page, read in a real browser as its two readers would, at 1400×900 and on a
phone (390×844): nothing scrolls the page sideways, no table is wider than its column, a topic
page answers in at most 1,500 visible words with a Cite line, every page says where its figures
come from and which commit built it, and a page citing rows of an older step definition says so
in a banner with the run's date and torch version.

The facts it checks against come from the data (env.json), not from the pages: which
fingerprints are of an older step, and their dates and torch versions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_REPORTS, Built
from test_browser import CHROMIUM, LAUNCH_ARGS, _require_browser, serve

from bench import schema

pytestmark = pytest.mark.browser

#: The pages that answer a question, and so must open with an answer and stay short.
TOPIC_PAGES = ("generated/claims.html", "generated/cudnn-benchmark.html",
               "generated/dynamic-shapes.html", "generated/determinism.html",
               "generated/precision.html", "generated/cpu-vs-gpu.html",
               "generated/torch-compile.html", "generated/feeding.html",
               "generated/compare.html")
WORD_BUDGET = 1500
ANSWER_WORDS = 120  # an answer block's words, its Cite line apart
VIEWPORTS = ((1400, 900), (390, 844))

#: What the browser reads off a page: its width against the window's, every table's width
#: against its column's (with every collapsed block opened), the words a reader sees with the
#: blocks closed, the provenance line, the Cite lines and the warnings.
_READ = """() => {
  const main = document.querySelector('.md-content__inner');
  const words = (() => {
    const clone = main.cloneNode(true);
    clone.querySelectorAll('details').forEach(d => {
      [...d.children].forEach(c => { if (c.tagName !== 'SUMMARY') c.remove(); });
    });
    return (clone.innerText || clone.textContent).split(/\\s+/).filter(Boolean).length;
  })();
  main.querySelectorAll('details').forEach(d => d.open = true);
  const column = main.getBoundingClientRect().width;
  const tables = [...main.querySelectorAll('table')].map(t => [
    (t.querySelector('th') || t).textContent.trim().slice(0, 40), t.scrollWidth]);
  const provenance = [...document.querySelectorAll('.tk-provenance')].map(e => e.textContent);
  const answers = [...main.querySelectorAll('.tk-answer')].map(a => {
    const clone = a.cloneNode(true);
    clone.querySelectorAll('.tk-cite').forEach(c => c.remove());
    return [a.id, clone.textContent.split(/\\s+/).filter(Boolean).length];
  });
  const first = main.querySelector('.tk-answer');
  return {
    answers, answer_top: first ? first.getBoundingClientRect().top + window.scrollY : null,
    screen: window.innerHeight,
    page: document.documentElement.scrollWidth, window: window.innerWidth, column,
    tables, words, provenance,
    cites: document.querySelectorAll('.tk-cite').length,
    warnings: [...document.querySelectorAll('.admonition.warning')].map(e => e.textContent),
  };
}"""


def _pages(site: Path) -> list[str]:
    """Every page of the site a reader can land on (not the old addresses' redirects)."""
    out = []
    for path in sorted(site.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in text or path.name == "404.html":
            continue
        out.append(path.relative_to(site).as_posix())
    return out


def _older_runs(reports: Path) -> dict[str, tuple[str, str]]:
    """Fingerprint prefix → (first day, torch version) of every run measured under an older
    step definition than the runner's, read from env.json."""
    out: dict[str, tuple[str, str]] = {}
    for env_file in sorted(reports.rglob(schema.ENV_FILE)):
        env = json.loads(env_file.read_text(encoding="utf-8"))
        step = int((env.get("bench") or {}).get("workload_version", 1))
        if step < schema.WORKLOAD_VERSION:
            out[str(env["fingerprint_id"])[:8]] = (str(env.get("collected_at", ""))[:10],
                                                   str(env["torch"]["version"]))
    return out


def read_site(site: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """(page, window width) → what the browser read off it."""
    sync_api = _require_browser()
    found: dict[tuple[str, int], dict[str, Any]] = {}
    with serve(site) as base, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            for width, height in VIEWPORTS:
                page = browser.new_page(viewport={"width": width, "height": height})
                for path in _pages(site):
                    page.goto(base + path, wait_until="load")
                    found[(path, width)] = page.evaluate(_READ)
                page.close()
        finally:
            browser.close()
    return found


def problems(found: dict[tuple[str, int], dict[str, Any]], commit: str,
             older: dict[str, tuple[str, str]]) -> list[str]:
    """Every way the pages read fail the rules above, one line each."""
    out = []
    for (path, width), got in sorted(found.items()):
        where = f"{path} at {width}px"
        if got["page"] > got["window"]:
            out.append(f"{where}: the page scrolls sideways ({got['page']}px)")
        if width == 1400:
            out += [f"{where}: table '{name}' is {w}px, its column {got['column']:.0f}px"
                    for name, w in got["tables"] if w > got["column"] + 1]
            out += _reads(path, got, commit, older)
    return out


def _reads(path: str, got: dict[str, Any], commit: str,
           older: dict[str, tuple[str, str]]) -> list[str]:
    out = []
    if not any(f"commit {commit}" in line for line in got["provenance"]):
        out.append(f"{path}: no provenance line naming the build commit {commit}")
    if path in TOPIC_PAGES:
        if got["words"] > WORD_BUDGET:
            out.append(f"{path}: {got['words']} visible words, over {WORD_BUDGET}")
        if not got["cites"]:
            out.append(f"{path}: no Cite line")
        top = got["answer_top"]
        if top is None or top > got["screen"]:
            out.append(f"{path}: no answer in the first screen (first at {top})")
        out += [f"{path}: answer {name} has {n} words, over {ANSWER_WORDS}"
                for name, n in got["answers"] if n > ANSWER_WORDS]
    cited = " ".join(got["provenance"])
    warnings = " ".join(got["warnings"])
    for fp8, (day, torch) in older.items():
        if re.search(rf"\b{fp8}\b", cited) and not (day in warnings and torch in warnings):
            out.append(f"{path}: cites the older run {fp8} without a banner naming {day} and "
                       f"torch {torch}")
    return out


def test_every_page_reads_as_its_readers_need(fixture_site: Built) -> None:
    older = _older_runs(FIXTURE_REPORTS)
    assert older, "the fixtures hold runs of an older step definition: the banner is tested"
    found = read_site(fixture_site.site)
    assert {p for p, _ in found} >= {"index.html", *TOPIC_PAGES}
    assert problems(found, "fixture", older) == []


def test_the_checks_find_what_they_are_for() -> None:
    """Each rule, fed a page read that breaks it, names it (so the test above can fail)."""
    fine = {"page": 1400, "window": 1400, "column": 900, "tables": [["Configuration", 800]],
            "words": 400, "answers": [["answer-box", 90]], "answer_top": 400, "screen": 900,
            "provenance": ["Data: box 1bd04eba run. Built from commit fixture on 2026-11-30."],
            "cites": 1,
            "warnings": ["Older run: box 1bd04eba: one run of 2026-11-30 (torch 2.11.0)"]}
    older = {"1bd04eba": ("2026-11-30", "2.11.0")}
    page = "generated/cudnn-benchmark.html"
    assert problems({(page, 1400): fine}, "fixture", older) == []
    broken = [
        {"page": 1500}, {"tables": [["Configuration", 1204]]}, {"words": 3600},
        {"provenance": ["Data: box 1bd04eba run."]}, {"cites": 0}, {"warnings": []},
        {"answers": [["answer-box", 140]]}, {"answer_top": 1200}, {"answer_top": None},
    ]
    for change in broken:
        assert len(problems({(page, 1400): {**fine, **change}}, "fixture", older)) == 1, change
