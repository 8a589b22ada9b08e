"""Home opens with a picture: switches × machines, each cell the decision for that machine's
default workload, linked to its answer; then from the default to the fastest measured."""

from __future__ import annotations

import re

from conftest import Built

LINK = re.compile(r"\]\(generated/([\w.-]+\.md)#([\w-]+)\)")


def _home(site: Built) -> list[str]:
    return (site.generated / "snippets" / "home.md").read_text(encoding="utf-8").splitlines()


def test_the_grid_comes_first_and_every_cell_is_a_decision(fixture_site: Built) -> None:
    lines = _home(fixture_site)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| Switch |"))
    first_headline = next(i for i, ln in enumerate(lines) if ln.startswith("- **"))
    assert start < first_headline
    rows = [ln for ln in lines[start + 2:] if ln.startswith("| ")][:6]
    assert [r.split(" | ")[0] for r in rows] == [
        "| cudnn.benchmark", "| GPU over CPU", "| Lower precision", "| channels&#95;last",
        "| cudnn.deterministic", "| torch.compile"]
    header = lines[start]
    gpu_column = header.split(" | ").index(next(c for c in header.split(" | ") if "(GPU)" in c))
    for row in rows:
        cells = row.strip("| ").split(" | ")
        for i, cell in enumerate(cells[1:], start=1):
            # a CUDA switch on a CPU-only machine is not applicable, never "not measured"
            if row.startswith(("| cudnn", "| GPU over")) and i != gpu_column:
                assert cell == "n/a (no GPU)", row
            assert cell.startswith("[**") or cell in (
                "n/a (no GPU)", "not measured", "too few runs", "flagged by bench check"), cell


def test_every_grid_link_lands_on_an_answer(fixture_site: Built) -> None:
    lines = _home(fixture_site)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| Switch |"))
    grid = "\n".join(ln for ln in lines[start + 2:start + 8])
    links = LINK.findall(grid)
    assert len(links) >= 6
    for page, anchor in links:
        text = (fixture_site.generated / page).read_text(encoding="utf-8")
        assert f'id="{anchor}"' in text, (page, anchor)


def test_the_default_to_fastest_lines_give_figure_interval_and_rows(fixture_site: Built) -> None:
    lines = _home(fixture_site)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("**From the default"))
    gains = [ln for ln in lines[at:at + 12] if ln.startswith("- [")]
    assert gains, lines[at:at + 12]
    for ln in gains:
        assert "(rows: [default](" in ln and "[fastest](" in ln, ln
        assert "95% CI" in ln or "too few replicates for an interval" in ln, ln


def test_every_workload_from_the_default_to_the_fastest(fixture_site: Built) -> None:
    lines = _home(fixture_site)
    at = next(i for i, ln in enumerate(lines)
              if ln.startswith('??? note "From the default to the fastest measured'))
    rows = [ln for ln in lines[at + 3:] if ln.startswith("    | [")]
    lead = next(ln for ln in lines if ln.startswith("- [") and "[fastest](" in ln)
    assert len(rows) >= 2
    # the line above quotes one of these rows: the same rows, the same figure
    assert any(ln.strip().strip("|").split(" | ")[-1].strip() in lead for ln in rows)
    for ln in rows:
        cells = ln.strip().strip("|").split(" | ")
        assert "[default](" in cells[-1] and "[fastest](" in cells[-1], ln
        assert "best of" in cells[3], ln
