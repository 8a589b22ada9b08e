"""No hand-written figure: a measured number on a hand-written page (``site_src/*.md``,
``site_src/guide/*.md``) comes from the data through a generated snippet, or names the run it
comes from. The scan below finds every literal figure (a number with a unit: ×, s, ms, GiB,
TFLOP/s, %, samples/s, W, J, …) and fails on any outside the allowlist, naming file:line.

The allowlist holds what is not a measurement (a setting of the method, a definition, a
format's example, a quoted claim) and history no snippet can recompute, which must name its
source in the same paragraph. Where a setting is a constant of the code, the entry says which,
and the test holds the page's figure to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FIXTURE_REPORTS, ROOT, Built

from bench.report import fmt
from bench.report.analysis import CONFIDENCE, analyse
from bench.report.analysis.pairs import NOISY_CV
from bench.report.input.load import load_reports
from bench.run.plan.limits import PACE
from bench.schema import DRIFT, ENERGY_MIN_WINDOW_S

SITE_SRC = ROOT / "site_src"

#: A number with a unit; a list of numbers sharing one unit ("812 and 420 TFLOP/s",
#: "3.0 and 4.7 s", "90.7–91.6%") is one figure. Line breaks count as spaces.
_UNIT = (r"(?:×|x(?![\w])|-fold\b|%|s(?![\w/])|ms\b|µs\b|us\b|min\b|h(?![\w])|GiB|MiB|KiB|"
         r"GB/s|GB\b|MB\b|TB\b|[KMGTP]?FLOP/s|TFLOPs?\b|samples/s|images/s|W\b|J\b|kWh\b|"
         r"MHz\b|GHz\b|Hz\b|°C|times\b|hours?\b|minutes?\b|seconds?\b)")
_NUM = r"\d+(?:[.,]\d+)*"
FIGURE = re.compile(
    rf"(?<![\w.#/-]){_NUM}(?:(?:\s*[–-]\s*|,\s+|\s+(?:and|or|to)\s+){_NUM})*\s?{_UNIT}")


@dataclass(frozen=True)
class Allowed:
    """A literal figure a hand-written page may keep, and why."""

    page: str  # relative to site_src/
    figure: str  # as the scan finds it, spaces collapsed
    why: str
    names: str = ""  # history: what its paragraph must name (the run, machine, date, source)
    code: str = ""  # a setting: the figure as the code's constant formats it


_SIM = "tests/speed/coverage.py"
ALLOWED = (
    # The confidence level and its complement: the method's setting (analysis.CONFIDENCE).
    *(Allowed(page, "95%", "the confidence level", code=fmt.pct(CONFIDENCE))
      for page in ("methodology.md", "guide/advise.md", "guide/contributing.md",
                   "guide/reading.md", "guide/running.md")),
    Allowed("methodology.md", "5%", "the error the confidence level leaves",
            code=fmt.pct(1 - CONFIDENCE)),
    # Settings of the method, each held to its constant.
    Allowed("methodology.md", "10%", "the spread above which a figure reads noisy",
            code=fmt.pct(NOISY_CV)),
    Allowed("guide/running.md", "2×", "bench check's drift threshold", code=f"{DRIFT:g}×"),
    *(Allowed(page, "1 s", "the shortest energy window",
              code=f"{ENERGY_MIN_WINDOW_S:g} s")
      for page in ("guide/running.md", "guide/reading.md")),
    # Settings of the method with no single constant to hold them to.
    Allowed("guide/running.md", "0.1 s", "the minimum timed duration of the gpu profile's "
            "CPU-vs-GPU study, a profile setting"),
    Allowed("guide/running.md", "20 Hz", "how often the NVML thread samples, a setting"),
    Allowed("guide/running.md", "0.1 to 1.8 seconds", "the range of a profile's [pace] "
            "window_s, a setting", code="{:g} to {:g} seconds".format(*PACE["pace.window_s"])),
    Allowed("guide/budgets.md", "90%", "the speed check's target for timed work, a target"),
    Allowed("guide/budgets.md", "15%", "the speed check's target for the estimate, a target"),
    Allowed("guide/contributing.md", "6 minutes", "the suite's time target (suite_time.py)"),
    Allowed("guide/clusters.md", "90 s", "when Slurm's warning is asked for, a setting"),
    Allowed("guide/clusters.md", "6 minutes", "the limit below which it comes in the last "
            "quarter instead, a setting"),
    # Examples of a syntax or a format, not measurements.
    Allowed("guide/budgets.md", "90s", "the --budget option's syntax"),
    Allowed("guide/budgets.md", "1h", "the --budget option's syntax"),
    Allowed("guide/advise.md", "60 s", "an example budget"),
    Allowed("methodology.md", "2x", "graph_break_reasons' format"),
    Allowed("methodology.md", "1x", "graph_break_reasons' format"),
    Allowed("guide/running.md", "1x", "graph_break_reasons' format"),
    Allowed("methodology.md", "1.1398–1.1412×", "how an interval's digits are printed"),
    # A claim quoted, not a measurement.
    Allowed("guide/running.md", "50×", "the 'up to 50×' claim the Claims page checks"),
    # The coverage simulation: its settings and results, from the named script, not a run.
    *(Allowed("methodology.md", f, "the coverage simulation", names=_SIM)
      for f in ("3%", "1%", "90.7–91.6%", "96.5–96.8%", "95.2–96.5%", "90%")),
    Allowed("methodology.md", "98.3–98.6%", "the coverage simulation",
            names="in the simulation"),
    # History no snippet recomputes: each names where and when it was seen.
    Allowed("methodology.md", "27 times", "FlopCounterMode's old backward count",
            names="on\n   `cpu-amd-epyc-2c` with torch 2.14.1 on 2026-11-30"),
    *(Allowed("methodology.md", f, "memorised synthetic batch at lr 0.01",
              names="run `20261130T005557Z-gpu`, 2026-11-30")
      for f in ("0.1 s", "1.7 s")),
    Allowed("methodology.md", "300 times", "Inductor's compile-worker start-up",
            names="seen on `cpu-amd-epyc-2c` on 2026-12-01"),
)


def handwritten_pages() -> list[Path]:
    return sorted(SITE_SRC.glob("*.md")) + sorted((SITE_SRC / "guide").glob("*.md"))


def literal_figures(text: str) -> list[tuple[int, str, str]]:
    """Each literal figure of ``text``: (line, figure with spaces collapsed, its paragraph)."""
    found = []
    for m in FIGURE.finditer(text):
        start = text.rfind("\n\n", 0, m.start())
        end = text.find("\n\n", m.end())
        paragraph = text[start + 2 if start >= 0 else 0:end if end >= 0 else len(text)]
        found.append((text.count("\n", 0, m.start()) + 1, " ".join(m.group(0).split()),
                      paragraph))
    return found


def unlisted(page: str, text: str, allowed: tuple[Allowed, ...] = ALLOWED) -> list[str]:
    """``page:line: figure`` for every literal figure ``allowed`` does not hold, or whose
    paragraph does not name what its entry says it must."""
    mine = {a.figure: a for a in allowed if a.page == page}
    out = []
    for line, figure, paragraph in literal_figures(text):
        entry = mine.get(figure)
        if entry is None:
            out.append(f"site_src/{page}:{line}: {figure}")
        elif entry.names and entry.names not in paragraph:
            out.append(f"site_src/{page}:{line}: {figure} (its paragraph must name "
                       f"{entry.names!r})")
    return out


def _rel(path: Path) -> str:
    return path.relative_to(SITE_SRC).as_posix()


def test_no_handwritten_page_quotes_a_figure() -> None:
    pages = handwritten_pages()
    assert any(p.name == "methodology.md" for p in pages)
    found = [hit for p in pages for hit in unlisted(_rel(p), p.read_text(encoding="utf-8"))]
    assert not found, ("literal figures on hand-written pages: include a generated snippet, "
                       "name the run, or allowlist a setting with why", found)


def test_every_allowed_figure_is_still_on_its_page() -> None:
    """A stale entry would let the figure come back unnoticed."""
    on_pages = {(_rel(p), f) for p in handwritten_pages()
                for _, f, _ in literal_figures(p.read_text(encoding="utf-8"))}
    stale = [(a.page, a.figure) for a in ALLOWED if (a.page, a.figure) not in on_pages]
    assert not stale, stale


@pytest.mark.parametrize("entry", [a for a in ALLOWED if a.code],
                         ids=lambda a: f"{a.page}:{a.figure}")
def test_an_allowed_setting_is_the_codes(entry: Allowed) -> None:
    assert entry.figure == entry.code, entry


def test_a_figure_on_a_made_up_page_is_found(tmp_path: Path) -> None:
    page = tmp_path / "made-up.md"
    page.write_text(
        "# Made up\n\nThe best windows reached 812\nand 420 TFLOP/s against 703 sustained.\n\n"
        "A replicate paid 16.0 s, the later ones 3.0 and 4.7 s; memory grew by 5.21 GiB, "
        "throughput 1,234 samples/s (+29.5%), 300\ntimes slower, 250 W.\n\n"
        "At the 95% confidence level, cell `abc123`, batch 128, version 2.14.1.\n",
        encoding="utf-8")
    found = unlisted("made-up.md", page.read_text(encoding="utf-8"))
    assert found == [
        "site_src/made-up.md:3: 812 and 420 TFLOP/s",
        "site_src/made-up.md:6: 16.0 s",
        "site_src/made-up.md:6: 3.0 and 4.7 s",
        "site_src/made-up.md:6: 5.21 GiB",
        "site_src/made-up.md:6: 1,234 samples/s",
        "site_src/made-up.md:6: 29.5%",
        "site_src/made-up.md:6: 300 times",  # where it starts
        "site_src/made-up.md:7: 250 W",
        "site_src/made-up.md:9: 95%",
    ]


def test_history_that_drops_its_source_is_found() -> None:
    entry = Allowed("p.md", "1.7 s", "history", names="run `r1`, 2026-11-30")
    named = "In run `r1`, 2026-11-30, steps grew to 1.7 s.\n"
    unnamed = "Steps grew to 1.7 s.\n\nIn run `r1`, 2026-11-30, nothing.\n"
    assert unlisted("p.md", named, (entry,)) == []
    assert unlisted("p.md", unnamed, (entry,)) == [
        "site_src/p.md:1: 1.7 s (its paragraph must name 'run `r1`, 2026-11-30')"]


def test_methodology_includes_its_figures_from_the_data() -> None:
    text = (SITE_SRC / "methodology.md").read_text(encoding="utf-8")
    for name in ("ceilings", "kernel-cache"):
        assert f'--8<-- "generated/snippets/{name}.md"' in text
    assert "hypothesis" not in text


def test_the_snippets_figures_come_from_the_data(fixture_site: Built) -> None:
    """Each figure the snippets print is the analysis' own, formatted: the fixture GPU's matmul
    ceilings (best window, sustained, the gap) and cudnn.benchmark's extra first pass with a
    fresh and a warm kernel cache."""
    a = analyse(load_reports(FIXTURE_REPORTS))
    snippets = fixture_site.generated / "snippets"
    ceilings = (snippets / "ceilings.md").read_text(encoding="utf-8")
    gpu = a.ceilings.loc[(a.ceilings["device"] == "cuda")
                         & a.ceilings["op"].str.startswith("matmul-")]
    assert len(gpu)
    for r in gpu.itertuples():
        assert f"{fmt.num(r.burst)} {r.unit}" in ceilings, r
        assert f"against {fmt.num(r.achieved)} sustained ({fmt.pct(r.burst / r.achieved - 1)}"\
            f" more)" in ceilings, r
    caches = (snippets / "kernel-cache.md").read_text(encoding="utf-8")
    b = a.benchmark
    pairs = b.loc[(b["kernel_cache"] != "warm") & b["warm_extra_cold_pass_s"].notna()]
    assert len(pairs)
    for r in pairs.itertuples():
        for figure in (r.extra_cold_pass_s, r.extra_cold_pass_max_s,
                       r.warm_extra_cold_pass_s, r.warm_extra_cold_pass_max_s):
            assert fmt.signed_seconds(figure) in caches, (figure, caches)
        assert f"left {fmt.pct(r.warm_extra_cold_pass_s / r.extra_cold_pass_s)}" in caches


def test_without_the_data_the_snippets_say_so(tmp_path: Path) -> None:
    """A results tree with no GPU and no warm-cache pair: the snippets say in words that
    nothing here measured them, and quote no figure."""
    import shutil

    from bench.report.questions.answers import judge
    from bench.report.questions.methodology.view import methodology_snippets
    from bench.report.render.markdown import environment
    from bench.report.render.writer import Writer

    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    answers = judge(analyse(load_reports(reports)))
    assert not answers.methodology.ceilings and not answers.methodology.caches
    docs = tmp_path / "docs"
    methodology_snippets(Writer(docs, environment()), answers.methodology, answers.shared)
    ceilings = (docs / "generated" / "snippets" / "ceilings.md").read_text(encoding="utf-8")
    caches = (docs / "generated" / "snippets" / "kernel-cache.md").read_text(encoding="utf-8")
    assert ceilings.startswith("No GPU in these reports has measured")
    assert caches.startswith("No run in these reports has measured")
    assert not literal_figures(ceilings + caches)
