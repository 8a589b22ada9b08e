"""The reader's own machine first: a site built after a local run leads home and every answer
with that machine, labelled as theirs; ``--focus`` names one; a tree of committed runs alone
leads with the reference machines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_REPORTS, ROOT, Built, build_copy

from bench.report.input.load import RunFiles
from bench.report.input.local import FocusError, uncommitted, yours

ANSWER = re.compile(r'<div class="tk-answer" id="[^"]*" markdown>\n\*\*(.*?)\*\*', re.S)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def _git_tree(where: Path) -> Path:
    """A git work tree holding a copy of the fixture runs, committed (fixtures, as such)."""
    reports = where / "reports"
    shutil.copytree(FIXTURE_REPORTS, reports)
    subprocess.run([*GIT, "init", "-q", str(where)], check=True)
    subprocess.run([*GIT, "-C", str(where), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(where), "commit", "-qm", "fixture runs"], check=True)
    return reports


def _answers(built: Built) -> dict[str, list[list[str]]]:
    """Each page's answer leads, per section (Precision holds two sets: precisions and
    layouts), in page order; sections without an answer left out."""
    out = {}
    for p in sorted(built.generated.glob("*.md")):
        sections = [ANSWER.findall(s) for s in p.read_text(encoding="utf-8").split("\n## ")]
        out[p.name] = [s for s in sections if s]
    return out


def _grid_columns(built: Built) -> list[str]:
    """The machines of home's grid, in its order (the link texts of its header row)."""
    home = (built.generated / "snippets" / "home.md").read_text(encoding="utf-8")
    header = next(ln for ln in home.splitlines() if ln.startswith("| Switch |"))
    return re.findall(r"\[([^\]]+)\]\(", header)


@pytest.mark.e2e
def test_a_site_built_after_a_local_run_leads_with_that_machine(tmp_path: Path) -> None:
    reports = _git_tree(tmp_path / "repo")
    run = subprocess.run([sys.executable, "-m", "bench", "run", "--profile", "smoke",
                          "--reports", str(reports)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    [env] = [p for p in reports.glob("*/*/env.json")
             if not p.parent.parent.name.startswith("fixture-")]
    machine = json.loads(env.read_text(encoding="utf-8"))["machine"]
    built = build_copy(tmp_path / "project", reports, run_mkdocs=False)

    assert _grid_columns(built)[0].startswith(f"your machine {machine}")
    pages = {name: sets for name, sets in _answers(built).items() if sets}
    mine = {name: [leads for leads in sets if any(ln.startswith("your machine") for ln in leads)]
            for name, sets in pages.items()}
    # the smoke profile measures layouts and a re-run check on the CPU: those pages at least
    assert {"precision.md", "determinism.md"} <= {k for k, v in mine.items() if v}, pages
    for name, sets in mine.items():
        for leads in sets:
            assert leads[0].startswith(f"your machine {machine}"), (name, leads)
    home = (built.generated / "snippets" / "home.md").read_text(encoding="utf-8")
    layout = next(ln for ln in home.splitlines() if ln.startswith("| channels&#95;last |"))
    # its first cell is the smoke run's layouts (measured, whatever they decide)
    assert layout.split(" | ")[1] != "not measured", layout


def test_committed_runs_alone_lead_with_the_reference_machines(fixture_site: Built) -> None:
    """The fixture site is built from committed runs: nobody's machine is labelled as theirs,
    and the machines come in page order."""
    columns = _grid_columns(fixture_site)
    assert columns and not any(c.startswith("your machine") for c in columns)
    assert columns[0].startswith("fixture-gpu-box")  # the GPU first, then the rest
    for sets in _answers(fixture_site).values():
        assert not any("your machine" in lead for leads in sets for lead in leads)


def test_focus_leads_with_the_machine_it_names(tmp_path: Path) -> None:
    built = build_copy(tmp_path / "project", FIXTURE_REPORTS, run_mkdocs=False,
                       focus="fixture-cpu-laptop")
    assert _grid_columns(built)[0].startswith("your machine fixture-cpu-laptop")
    led = 0
    for name, sets in _answers(built).items():
        for leads in sets:
            if any("fixture-cpu-laptop" in lead for lead in leads):
                assert leads[0].startswith("your machine fixture-cpu-laptop"), (name, leads)
                led += 1
    assert led >= 3  # precision, layout and at least one more
    # home's headline for a switch the laptop decided is the laptop's, not the GPU's
    home = (built.generated / "snippets" / "home.md").read_text(encoding="utf-8")
    layout = next(ln for ln in home.splitlines() if ln.startswith("- **channels_last**"))
    assert "on [your machine fixture-cpu-laptop" in layout, layout


def test_an_unknown_focus_is_one_line_naming_the_choices(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", "report", "--reports",
                           str(FIXTURE_REPORTS), "--site-dir", str(tmp_path / "site"),
                           "--docs-dir", str(tmp_path), "--no-mkdocs", "--focus", "nosuch"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "error: --focus 'nosuch': no machine of that name or fingerprint in the results; "
        "valid choices: fixture-cpu-laptop, fixture-gpu-box"], proc.stderr
    assert not (tmp_path / "generated").exists()  # nothing written


def _run(machine: str, fp: str, folder: str) -> RunFiles:
    rel = Path(machine) / folder
    return RunFiles(machine, folder, fp, rel / "results.csv", rel / "samples.csv",
                    rel / "env.json")


def test_uncommitted_names_what_git_does_not_hold(tmp_path: Path) -> None:
    reports = _git_tree(tmp_path / "repo")
    assert uncommitted(reports) == frozenset()
    new = reports / "laptop" / "r1"
    new.mkdir(parents=True)
    (new / "results.csv").write_text("x\n", encoding="utf-8")
    staged = reports / "laptop" / "r2"
    staged.mkdir()
    (staged / "results.csv").write_text("x\n", encoding="utf-8")
    subprocess.run([*GIT, "-C", str(reports), "add", "laptop/r2"], check=True)
    changed = next(reports.glob("fixture-gpu-box/*/results.csv"))
    changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert uncommitted(reports) == {Path("laptop/r1/results.csv"),
                                    Path("laptop/r2/results.csv"),
                                    changed.relative_to(reports)}
    runs = [_run("laptop", "aaaa", "r1"), _run("desk", "bbbb", "r0"),
            _run("fixture-gpu-box", "cccc", changed.parent.name)]
    assert yours(reports, runs) == {"aaaa", "cccc"}
    assert yours(reports, runs, focus="desk") == {"bbbb"}
    assert yours(reports, runs, focus="cc") == {"cccc"}  # a fingerprint's first characters
    with pytest.raises(FocusError, match="valid choices: desk, fixture-gpu-box, laptop"):
        yours(reports, runs, focus="nosuch")


def test_outside_git_nothing_is_taken_for_the_readers_own(tmp_path: Path) -> None:
    (tmp_path / "m" / "r").mkdir(parents=True)
    assert uncommitted(tmp_path) is None
    assert yours(tmp_path, [_run("m", "aaaa", "r")]) == frozenset()
