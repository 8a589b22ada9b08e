"""A real browser opens the built site: every chart loads, nothing errors, nothing runs.

Headless Chromium (the Debian ``chromium`` package) driven by Playwright's Python package, over
a local HTTP server on 127.0.0.1. The test runs whenever Chromium is installed; under CI
(``CI`` set) a missing Chromium or Playwright is a failure, not a skip. Screenshots go to
pytest's temporary folder and, when ``TORCH_KNOBS_ARTIFACTS`` is set, to that folder too.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import Built

from bench.report.judge.claims import load_claims
from bench.report.vocabulary import ClaimVerdict

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def _require_browser() -> Any:
    """The Playwright sync API, or a skip (a failure under CI) when it cannot run here."""
    missing = None
    try:
        from playwright import sync_api
    except ImportError:
        missing = "the playwright Python package is not installed"
    if missing is None and CHROMIUM is None:
        missing = "chromium is not on PATH (Debian: apt-get install chromium)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run under CI: {missing}")
        pytest.skip(missing)
    return sync_api


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (ephemeral port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _save(shot: Path, name: str) -> None:
    artifacts = os.environ.get("TORCH_KNOBS_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / name)


def _visit(
    sync_api: Any, site: Path, pages: list[str], shots: Path, screenshot: dict[str, str]
) -> dict[str, Any]:
    """Open each page; return per-page chart widths, console errors and script side effects."""
    results: dict[str, Any] = {}
    with serve(site) as base, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            for scheme in ("light", "dark"):
                # Every page in the light scheme; the dark one for the screenshot pages only.
                visit = pages if scheme == "light" else [p for p in pages if p in screenshot]
                context = browser.new_context(
                    viewport={"width": 1280, "height": 900}, color_scheme=scheme
                )
                page = context.new_page()
                errors: list[str] = []
                page.on(
                    "console",
                    lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                # A request cut short by moving to the next page is aborted, not broken.
                page.on(
                    "requestfailed",
                    lambda r, errors=errors: (
                        None
                        if "ERR_ABORTED" in (r.failure or "")
                        else errors.append(f"request failed: {r.url} ({r.failure})")
                    ),
                )
                for path in visit:
                    errors.clear()
                    page.goto(base + path, wait_until="load")
                    widths = page.eval_on_selector_all(
                        "img",
                        "imgs => imgs.map(i => [i.getAttribute('src'), i.complete, "
                        "i.naturalWidth])",
                    )
                    pwned = page.evaluate(
                        "() => window.__pwned === undefined ? null : window.__pwned"
                    )
                    results[f"{scheme}:{path}"] = {
                        "images": widths,
                        "errors": list(errors),
                        "pwned": pwned,
                    }
                    if path in screenshot:
                        name = f"{screenshot[path]}-{scheme}.png"
                        page.screenshot(path=str(shots / name), full_page=False)
                        _save(shots / name, name)
                context.close()
        finally:
            browser.close()
    return results


def _pages(site: Path) -> list[str]:
    return sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html"
    )


def test_every_page_loads_its_charts_without_console_errors(
    fixture_site: Built, tmp_path: Path
) -> None:
    sync_api = _require_browser()
    pages = _pages(fixture_site.site)
    assert "generated/cudnn-benchmark.html" in pages and "generated/claims.html" in pages
    results = _visit(
        sync_api,
        fixture_site.site,
        pages,
        tmp_path,
        {
            "index.html": "home",
            "generated/cudnn-benchmark.html": "cudnn-benchmark",
            "generated/cpu-vs-gpu.html": "cpu-vs-gpu",
            "generated/claims.html": "claims",
        },
    )
    charts = 0
    for key, result in results.items():
        assert result["errors"] == [], (key, result["errors"])
        for src, complete, width in result["images"]:
            assert complete and width > 0, (key, src)
            charts += src.endswith(".svg")
    assert charts >= 8  # the fixture has eight charts or more
    for name in (
        "home-light.png",
        "home-dark.png",
        "cudnn-benchmark-light.png",
        "cudnn-benchmark-dark.png",
        "claims-light.png",
    ):
        assert (tmp_path / name).stat().st_size > 10_000, name


def test_hostile_data_runs_no_script_in_the_browser(hostile_site: Built, tmp_path: Path) -> None:
    sync_api = _require_browser()
    pages = _pages(hostile_site.site)
    machine = next(p for p in pages if p.startswith("generated/machines/box"))
    results = _visit(sync_api, hostile_site.site, pages, tmp_path, {machine: "hostile-machine"})
    for key, result in results.items():
        assert result["pwned"] is None, key
        assert result["errors"] == [], (key, result["errors"])
        for src, complete, width in result["images"]:
            assert complete and width > 0, (key, src)


def test_the_claims_page_shows_every_verdict_with_its_rows(fixture_site: Built) -> None:
    """Opened in the browser as a reader would: one section per claim, each with its verdict
    box, and every row link on it lands on a row of a machine page."""
    sync_api = _require_browser()
    with serve(fixture_site.site) as base, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.goto(base + "generated/claims.html", wait_until="load")
            sections = page.eval_on_selector_all("h2[id^='claim-']", "hs => hs.length")
            boxes = page.eval_on_selector_all(
                "h2[id^='claim-'] + .tk-answer > p:first-child > strong:first-child",
                "ts => ts.map(t => t.textContent)")
            rows = page.eval_on_selector_all("a[href*='#cell-'], a[href*='#repro-']",
                                             "as => as.map(a => a.getAttribute('href'))")
            anchors: dict[str, set[str]] = {}  # every row link, the collapsed ones too
            for href in rows:
                target, _, anchor = href.partition("#")
                anchors.setdefault(target, set()).add(anchor)
            missing = []
            for target, ids in sorted(anchors.items()):
                page.goto(base + "generated/" + target, wait_until="load")
                gone = page.evaluate("ids => ids.filter(id => !document.getElementById(id))",
                                     sorted(ids))
                missing += [f"{target}#{a}" for a in gone]
        finally:
            browser.close()
    expected = len(load_claims())
    assert sections == expected and len(boxes) == expected, (sections, len(boxes), expected)
    words = tuple(str(v).capitalize() for v in ClaimVerdict)
    assert all(b.strip() in words for b in boxes), boxes
    assert rows and missing == [], missing
