"""Charts: byte-identical for the same input, data labels inert, sane sizes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.report.render import charts
from bench.report.vocabulary import Verdict

ROWS = [
    charts.SpeedupRow("resnet50 · train", 1.24, 1.2, 1.3, "faster"),
    charts.SpeedupRow("vit $x$ <script>" + "v" * 500, 1.0, 0.97, 1.03, "no clear difference"),
    charts.SpeedupRow("mobilenet", 0.9, 0.88, 0.93, "slower"),
    charts.SpeedupRow("thin", 1.1, math.nan, math.nan, Verdict.INSUFFICIENT),
]


def test_speedup_chart_is_byte_identical(tmp_path: Path) -> None:
    a = charts.speedup_chart(ROWS, tmp_path / "a.svg", title="t $5", xlabel="x", delta=0.03)
    b = charts.speedup_chart(ROWS, tmp_path / "b.svg", title="t $5", xlabel="x", delta=0.03)
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    assert "<dc:date>" not in text  # no build date in the metadata
    assert "<script" not in text


def test_other_charts_are_byte_identical(tmp_path: Path) -> None:
    points = [
        charts.SeriesPoint(s, b, b * k, b * k * 0.9, b * k * 1.1)
        for s, k in (("r18 $y$", 0.5), ("m", 0.2))
        for b in (1, 8, 32, 128)
    ]
    for name in ("a", "b"):
        charts.lines_chart(points, tmp_path / f"l{name}.svg", title="t", xlabel="b", ylabel="s")
        charts.break_even_chart(
            [charts.BreakEvenRow("x", 12.0), charts.BreakEvenRow("y", None)],
            tmp_path / f"e{name}.svg",
            title="t",
        )
    assert (tmp_path / "la.svg").read_bytes() == (tmp_path / "lb.svg").read_bytes()
    assert (tmp_path / "ea.svg").read_bytes() == (tmp_path / "eb.svg").read_bytes()


def test_dollar_labels_do_not_become_mathtext(tmp_path: Path) -> None:
    """Mathtext would set ``$x$`` as an italic x; escaped, the label stays literal text."""
    row = charts.SpeedupRow("cost $x$", 1.1, 1.05, 1.2, "faster")
    out = charts.speedup_chart([row], tmp_path / "d.svg", title="t", xlabel="x", delta=0.03)
    text = out.read_text()
    assert ">cost $x$</text>" in text
    assert "italic" not in text.lower() and "oblique" not in text.lower()
    # Control: the same label unescaped does turn into mathtext, so the check above can fail.
    from matplotlib.figure import Figure

    with charts._style():
        fig = Figure()
        fig.add_subplot().set_title("cost $x$")
        fig.savefig(tmp_path / "raw.svg", format="svg")
    raw = (tmp_path / "raw.svg").read_text().lower()
    assert "italic" in raw or "oblique" in raw


def test_too_many_rows_is_refused(tmp_path: Path) -> None:
    rows = [
        charts.SpeedupRow(str(i), 1.0, 0.9, 1.1, "no clear difference")
        for i in range(charts.MAX_ROWS + 1)
    ]
    with pytest.raises(ValueError, match="split"):
        charts.speedup_chart(rows, tmp_path / "x.svg", title="t", xlabel="x", delta=0.03)


def test_row_labels_stand_where_the_y_ticks_would() -> None:
    """The rows' labels are drawn as texts beside a line of tick marks, not as y ticks (a
    tick is five artists); each label ends and centres where matplotlib's tick label would."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    labels = ["resnet50 · train", "a much longer label of a row", "x"]
    ys = [2, 1, 0]
    boxes = []
    for mine in (True, False):
        with charts._style():
            fig, ax = charts._frame(len(ys), labels)
            if mine:
                charts._row_labels(ax, ys, labels)
                texts = ax.texts
                assert len(ax.get_yticks()) == 0 and len(ax.lines) == 1
            else:
                ax.set_yticks(ys, labels)
                texts = ax.get_yticklabels()
            ax.set_ylim(-0.7, len(ys) - 0.3)
            renderer = FigureCanvasAgg(fig).get_renderer()
            fig.draw(renderer)
            assert [t.get_text() for t in texts] == labels
            boxes.append([t.get_window_extent(renderer) for t in texts])
    for drawn, tick in zip(*boxes, strict=True):
        assert abs(drawn.x1 - tick.x1) <= 1.0 and abs(drawn.y0 - tick.y0) <= 1.0, (drawn, tick)


def _tick_texts(svg: str) -> list[str]:
    import re

    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_log_axes_label_their_ticks_in_plain_text(tmp_path: Path) -> None:
    """A log axis reads ``1,000`` and ``20 ms``, never matplotlib's mathtext ``10^{3}``: over
    several decades each power of ten is labelled; over less than one, the ticks between are,
    so the axis is never left without a figure."""
    from bench.report.render import costcharts

    wide = charts.break_even_chart([charts.BreakEvenRow("a", 4913.0),
                                    charts.BreakEvenRow("b", 12.0)], tmp_path / "e.svg",
                                   title="t").read_text()
    assert {"1", "10", "100", "1,000", "10,000"} <= set(_tick_texts(wide))
    narrow = costcharts.step_chart(
        [costcharts.StepPoint("cpu", b, 0.02 + 0.005 * i) for i, b in enumerate((1, 8, 32))],
        tmp_path / "s.svg", title="t").read_text()
    seconds = [t for t in _tick_texts(narrow) if t.endswith(" ms")]
    assert len(seconds) >= 2, _tick_texts(narrow)  # 0.02-0.03 s: no power of ten within
    for svg in (wide, narrow):
        assert "mathdefault" not in svg and "times10" not in svg
    # Control: matplotlib's own log formatter writes mathtext, which the checks above find.
    from matplotlib.figure import Figure

    with charts._style():
        fig = Figure()
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_xlim(1, 5000)
        fig.savefig(tmp_path / "raw.svg", format="svg")
    assert "mathdefault" in (tmp_path / "raw.svg").read_text()
