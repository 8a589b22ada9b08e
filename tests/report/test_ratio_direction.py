"""Every ratio a page prints reads the same way (above 1 is faster) and agrees with the numbers
beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.report import build, fmt

from .builders import axes, cell, env_for

ENV = env_for("box", "run-1")
#: Where one table cell ends and the next begins: in Markdown, or in a page's HTML fragment.
_NEXT = r"(?: \| |</td>\n<td>)"
#: a table's "ratio (CI) | verdict" cells (no CI ends where the replicates are identical)
RATIO = re.compile(
    rf"(?:\| |<td>)([\d.]+)× \((?:([\d.]+)–([\d.]+)×|replicates identical)\){_NEXT}"
    r"<span class=\"tk-verdict tk-(\w+)\">"
)
GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "site" / "golden"


def test_dynamic_shapes_table_and_chart_agree_that_slower_is_below_one(write_tree, tmp_path):
    """Dynamic shapes 0.6× as fast per FLOP as static: the table, like the chart, says < 1.

    The table used to print time per FLOP (1.6×, "slower") beside a chart of throughput
    (0.6×), so a reader had to invert one of them.
    """
    rows = cell(ENV, axes(), [0.1] * 3)
    rows += cell(ENV, axes(shapes="dynamic"), [0.1] * 3, shape_count=4, samples_per_s=384)
    docs = tmp_path / "site_src"
    docs.mkdir()
    build.build(write_tree([(ENV, rows, [])]), tmp_path / "site", docs_dir=docs,
                run_mkdocs=False, quiet=True)
    page = (docs / "generated" / "dynamic-shapes.md").read_text()
    found = RATIO.findall(page)
    # identical replicates: no interval to print, and no fake 0.60–0.60×
    assert found == [("0.60", "", "", "slower")]
    assert "dynamic: 0.60× (CI replicates identical, slower)" in page  # the chart's alt text
    assert "0.60× (95% CI replicates identical)" in page.split("## On")[0]  # and the answer


def test_every_printed_verdict_matches_the_side_of_one_its_ratio_is_on() -> None:
    """Over the committed fixture site: "faster" rows print a ratio above 1, "slower" below."""
    checked = 0
    for page in [*GOLDEN.rglob("*.md"), *GOLDEN.rglob("fragments/*.html")]:
        for ratio, low, high, verdict in RATIO.findall(page.read_text()):
            if verdict == "faster":
                assert float(low or ratio) > 1, (page.name, ratio, low, high)
                checked += 1
            elif verdict == "slower":
                assert float(high or ratio) < 1, (page.name, ratio, low, high)
                checked += 1
    assert checked > 10


_UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}
_PAIR = re.compile(
    rf"(?:\| |<td>)([\d.,]+) (s|ms|µs) → ([\d.,]+) (s|ms|µs){_NEXT}([\d.]+)× \("
)


def test_cpu_vs_gpu_rows_print_the_step_times_their_speedup_divides() -> None:
    """CPU step ÷ GPU step, as printed, is the printed speedup (to the printed precision).

    The table used to print each side's samples/s from the mean step, which a drifting
    replicate pulls away from the median the speedup uses (1.90 vs 53.2 samples/s beside
    8.35×, on a real run).
    """
    pages = [GOLDEN / "cpu-vs-gpu.md", *GOLDEN.glob("fragments/cpu-vs-gpu--*.html")]
    rows = [row for page in pages for row in _PAIR.findall(page.read_text())]
    assert len(rows) > 10
    for cpu, cpu_unit, gpu, gpu_unit, speedup in rows:
        ratio = (float(cpu.replace(",", "")) * _UNITS[cpu_unit]) / (
            float(gpu.replace(",", "")) * _UNITS[gpu_unit]
        )
        assert ratio == pytest.approx(float(speedup), rel=0.01), (cpu, gpu, speedup)


@pytest.mark.parametrize(("value", "text"), [
    (1.0349, "1.03×"), (0.966, "0.97×"), (9.994, "9.99×"), (42.83, "42.8×"), (237.73, "238×"),
])
def test_ratios_keep_two_decimals_near_one_and_three_figures_above_ten(value, text) -> None:
    assert fmt.ratio(value) == text


def test_an_interval_uses_the_precision_of_its_larger_end() -> None:
    assert fmt.ci(0.986, 1.031) == "0.99–1.03×"
    assert fmt.ci(8.6, 12.31) == "8.6–12.3×"
    assert fmt.ci(202.87, 241.63) == "203–242×"
