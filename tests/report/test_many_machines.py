"""A tree of many machines: past ``EVERY_ONE_UP_TO`` fingerprints on a page, the charts are
drawn for one per hardware model (its fingerprint that measured the most configurations) and
for the reader's own; every other section says so once and keeps its tables.

Made from copies of the fixture GPU run (made-up data) under fingerprints of their own."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd

from bench.report.judge.machines import EVERY_ONE_UP_TO, Machine, mark_charted, representatives
from bench.report.questions.cudnn import model as cudnn_model
from bench.report.questions.cudnn.model import CudnnSection

from .builders import render_tree
from .test_trust import _copy


def _machine(n: int, model: str, *, yours: bool = False) -> Machine:
    page = f"box-{n:03d}-{n:08d}"
    return Machine(page=page, machine=f"box-{n:03d}", fingerprint_id=f"{n:012d}", title=page,
                   hardware=model, gpu=True, yours=yours, model=model)


def _cells(counts: dict[str, int]) -> pd.DataFrame:
    return pd.DataFrame({"page": [page for page, k in counts.items() for _ in range(k)]})


def test_up_to_the_limit_every_fingerprint_is_shown_whole() -> None:
    machines = [_machine(n, "A") for n in range(EVERY_ONE_UP_TO)]
    assert representatives(machines, _cells({})) == {m.page for m in machines}


def test_past_it_the_most_measured_of_each_model_and_yours() -> None:
    a = [_machine(n, "A") for n in range(6)]
    b = [_machine(10 + n, "B") for n in range(6)]
    mine = _machine(20, "A", yours=True)
    cells = _cells({a[3].page: 7, a[1].page: 5, b[0].page: 2, b[5].page: 2, mine.page: 1})
    assert representatives([*a, *b, mine], cells) == {a[3].page, b[0].page, mine.page}
    sections = [CudnnSection(m, None, (), (), (), pays_back=False, no_saving=False)  # type: ignore[arg-type]
                for m in (*a, *b, mine)]
    marked = mark_charted(sections, cells)
    assert [s.machine for s in marked] == [s.machine for s in sections]  # order kept
    assert [s.machine.page for s in marked if s.charts_on is None] == [a[3].page, b[0].page,
                                                                       mine.page]
    # every other section points to its own model's charts, never to the reader's machine
    assert {s.machine.model: s.charts_on for s in marked if s.charts_on} == {"A": a[3],
                                                                              "B": b[0]}


def test_a_page_of_many_fingerprints_draws_one_per_model(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    n = EVERY_ONE_UP_TO + 1
    for k in range(n):
        _copy(root, f"fixture-box-{k:02d}", f"{k:02d}" * 6)
    generated = tmp_path / "docs" / "generated"
    rendered = render_tree(root, generated)
    page = (generated / "cudnn-benchmark.md").read_text(encoding="utf-8")
    drawn = [c.path.name for c in rendered.charts if c.path.name.startswith("cudnn-speedup-")]
    assert len(drawn) == 1  # one hardware model: the charts of one fingerprint
    [charted] = [s for s in page.split("\n## On ")[1:]
                 if "(charts/cudnn-speedup-" in s]
    anchor = charted.split("{: #", 1)[1].split(" }", 1)[0]
    said = page.count(f"Past {EVERY_ONE_UP_TO} fingerprints a page draws the charts of one per "
                      f"hardware model (the one that measured the most configurations) and of "
                      f"yours; those of this model are in the section [on ")
    assert said == n - 1 == page.count(f"](#{anchor}), and the figures here are in the tables")
    assert page.count("Speedup of every configuration") == n  # every section keeps its tables
    # the Machines index names three of the model's fingerprints and links its page for the rest
    [row] = [ln for ln in (generated / "machines" / "index.md").read_text(
        encoding="utf-8").splitlines() if ln.startswith("| [")]
    assert row.count("(reference, torch ") == 3, row
    assert f"; and [{n - 3} more fingerprints](" in row and "each a section of its page" in row
    assert re.search(r"\| \d{1,3}(,\d{3})+ / \d+ \|$", row), row  # thousands set apart
    home = (generated / "snippets" / "home.md").read_text(encoding="utf-8")
    assert re.search(r"from \d{1,3}(,\d{3})+ result rows on 9 machine", home)
    assert f"GPUs.*\n\nOf {n} machine fingerprints, the grid and the gains below show one " \
           "per hardware model" in home  # a paragraph of its own, under the grid's caption


def test_a_section_without_charts_does_not_speak_of_a_chart(tmp_path: Path, monkeypatch) -> None:
    """Where no configuration repays its first pass, a section with charts says there is no
    break-even to chart; one whose charts are elsewhere says only that none repays it."""
    def none_pays(*args: object, **kwargs: object) -> CudnnSection:
        return replace(section(*args, **kwargs), pays_back=False, no_saving=True)

    section = cudnn_model.cudnn_section
    monkeypatch.setattr(cudnn_model, "cudnn_section", none_pays)
    root = tmp_path / "reports"
    n = EVERY_ONE_UP_TO + 1
    for k in range(n):
        _copy(root, f"fixture-box-{k:02d}", f"{k:02d}" * 6)
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    sections = (generated / "cudnn-benchmark.md").read_text(encoding="utf-8").split(
        "\n## On ")[1:]
    assert sum("so none repays its first pass" in s for s in sections) == n
    assert [("no break-even to chart" in s) for s in sections] == [
        "(charts/cudnn-speedup-" in s for s in sections]
    assert sum("(charts/cudnn-speedup-" in s for s in sections) == 1
