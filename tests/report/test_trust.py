"""Trust beside every machine, and one page per hardware model with the spread between its
machines: runs of one model from different physical machines (``machine_uid``) share a page,
agree or not, and a machine that disagrees is named.

Every tree here is built in a temporary folder from copies of the fixture runs (made-up
data, ``tests/fixtures/reports/FIXTURE.md``); the copies say so in their run ids and names.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.report.input.errors import LoadError
from bench.report.input.load import load_reports
from bench.report.vocabulary import Trust

from .builders import FIXTURE_REPORTS, render_tree

GPU_RUN = FIXTURE_REPORTS / "fixture-gpu-box" / "fixture-20261129T120000Z-gpu"
#: The fixture GPU's model page (made-up hardware).
GPU_MODEL = "nvidia-h200-fixture-not-a-real-measurement"


def _manifest(uid: str | None, trust: str = "contributed", name: str = "fixture-box"
              ) -> dict[str, Any]:
    return {"manifest_version": 1, "files": {}, "commit": None, "code": None,
            "machine_name": name, "machine_uid": uid, "price": None, "trust": trust,
            "contributor": None}


def _copy(root: Path, machine: str, fingerprint: str, *, slower: float = 1.0,
          manifest: dict[str, Any] | None = None) -> Path:
    """A copy of the fixture GPU run as machine ``machine`` under fingerprint ``fingerprint``
    (12 hex), its step times scaled by ``slower``; a fixture, not a measurement."""
    old_fp = json.loads((GPU_RUN / "env.json").read_text())["fingerprint_id"]
    dest = root / machine / f"{GPU_RUN.name}-{machine}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(GPU_RUN, dest)
    for name in ("env.json", "results.csv", "samples.csv"):
        path = dest / name
        path.write_text(path.read_text().replace(old_fp, fingerprint)
                        .replace("fixture-gpu-box", machine))
    if slower != 1.0:
        _scale(dest / "results.csv", ("steady_median_s", "steady_p10_s", "steady_p90_s",
                                      "steady_p95_s", "steady_p99_s", "steady_mean_s"), slower)
        _scale(dest / "samples.csv", ("seconds",), slower)
    if manifest is not None:
        (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def _scale(path: Path, columns: tuple[str, ...], factor: float) -> None:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames or [], list(reader)
    for row in rows:
        for c in columns:
            if row.get(c):
                row[c] = repr(float(row[c]) * factor)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _two_machines(root: Path) -> None:
    _copy(root, "fixture-box-a", "aaaaaaaaaaaa", manifest=_manifest("00000000000000a1"))
    _copy(root, "fixture-box-b", "bbbbbbbbbbbb", manifest=_manifest("00000000000000b2"))


def _page(tmp_path: Path, root: Path) -> tuple[str, Any]:
    generated = tmp_path / "docs" / "generated"
    render_tree(root, generated)
    machines = generated / "machines"
    return (machines / f"{GPU_MODEL}.md").read_text(encoding="utf-8"), generated


def test_two_machines_of_one_model_share_a_page_with_the_spread(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    _two_machines(root)
    page, generated = _page(tmp_path, root)
    # one page for both fingerprints, each a section with its old anchor and its trust
    assert "## Fingerprint aaaaaaaa (reproduced) {: #fp-aaaaaaaa }" in page
    assert "## Fingerprint bbbbbbbb (reproduced) {: #fp-bbbbbbbb }" in page
    assert "## Machines of this model (2)" in page
    assert "are *reproduced*" in page and "disagrees with the rest" not in page
    # beside each cell's figures, the spread between the two machines
    cells = (generated / "fragments" / "fixture-box-a-aaaaaaaa-cells.html").read_text()
    assert "slowest machine over fastest" in cells and "; 1.00× of 2 machines</td>" in cells
    assert not list((generated / "machines").glob("fixture-box-a.md"))  # no page per name
    home = (generated / "snippets" / "home.md").read_text(encoding="utf-8")
    assert "(reproduced)](generated/machines/" in home
    assert "Fingerprints by trust" in home and "2 reproduced" in home


def test_a_machine_that_disagrees_is_named_and_leaves_the_model_contributed(
        tmp_path: Path) -> None:
    root = tmp_path / "reports"
    _two_machines(root)
    _copy(root, "fixture-box-slow", "cccccccccccc", slower=1.5,
          manifest=_manifest("00000000000000c3", name="fixture-box-slow"))
    page, generated = _page(tmp_path, root)
    assert "## Machines of this model (3)" in page
    assert "are *reproduced*" not in page
    for fp8 in ("aaaaaaaa", "bbbbbbbb", "cccccccc"):
        assert f"## Fingerprint {fp8} (contributed)" in page
    warning = page.split('!!! warning "A machine that disagrees"', 1)[1].split("\n\n", 1)[0]
    assert "fixture-box-slow, machine 00000000000000c3" in " ".join(warning.split())
    assert "1.50×" in warning or "1.5×" in warning
    assert page.count("disagrees with the rest") >= 2  # its row of the table, and the warning
    cells = (generated / "fragments" / "fixture-box-slow-cccccccc-cells.html").read_text()
    assert "; 1.50× of 3 machines</td>" in cells


def test_runs_without_a_manifest_are_reference_when_committed(tmp_path: Path) -> None:
    """No manifest: a run that names its profile is the project's own (a tree in no git work
    tree is taken as committed); once git holds the tree but not a run, that run is not."""
    root = tmp_path / "reports"
    _copy(root, "fixture-box-a", "aaaaaaaaaaaa")
    assert {r.trust for r in load_reports(root).runs} == {Trust.REFERENCE}
    page, _ = _page(tmp_path, root)
    assert "## Fingerprint aaaaaaaa (reference)" in page
    assert "machine not recorded: each run counted as its own" in page
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture")
    _copy(root, "fixture-box-b", "bbbbbbbbbbbb")  # not committed: someone else's for now
    trust = {r.machine: r.trust for r in load_reports(root).runs}
    assert trust == {"fixture-box-a": Trust.REFERENCE, "fixture-box-b": Trust.CONTRIBUTED}


def test_a_manifest_says_the_trust_and_the_machine(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    _copy(root, "fixture-box-a", "aaaaaaaaaaaa",
          manifest=_manifest("00000000000000a1", trust="reference", name="lab-box"))
    (run,) = load_reports(root).runs
    assert (run.trust, run.machine_uid, run.machine_name) == (
        Trust.REFERENCE, "00000000000000a1", "lab-box")


@pytest.mark.parametrize("change, said", [
    ({"trust": "reproduced"}, "manifest field 'trust' is 'reproduced'; valid choices: "
                              "reference, contributed"),
    ({"machine_uid": 7}, "manifest field 'machine_uid' is int, expected a string or null"),
    ({"manifest_version": 2}, "manifest field 'manifest_version' is 2"),
])
def test_a_bad_manifest_is_one_line_naming_the_file_and_field(
        tmp_path: Path, change: dict[str, Any], said: str) -> None:
    root = tmp_path / "reports"
    run = _copy(root, "fixture-box-a", "aaaaaaaaaaaa",
                manifest={**_manifest("00000000000000a1"), **change})
    with pytest.raises(LoadError) as err:
        load_reports(root)
    assert str(err.value).startswith(f"{run / 'manifest.json'}:0: {said}")
    assert "\n" not in str(err.value)
    kept = load_reports(root, skip_bad=True)  # listed; the run kept, vouched for by no one
    assert [r.trust for r in kept.runs] == [Trust.CONTRIBUTED]
    assert any("manifest.json" in line for line in kept.skipped)


def _drop_cell(run: Path, cell_id: str) -> None:
    """Leave one cell out of a fixture run copy (its rows and their samples)."""
    for name in ("results.csv", "samples.csv"):
        path = run / name
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames or [], list(reader)
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(r for r in rows if r["cell_id"] != cell_id)


def test_two_names_for_one_stack_share_one_fingerprint_section(tmp_path: Path) -> None:
    """The fingerprint hashes a stack, not a host: two machines of one model and stack that
    their contributors named apart share it. Their rows are one fingerprint's, under one name,
    that of the run measured first (a page keeps its address when a machine joins it later),
    and the build neither fails nor splits them, even where one of them measured a cell the
    other did not."""
    root = tmp_path / "reports"
    _copy(root, "fixture-box-a", "dddddddddddd", manifest=_manifest("00000000000000a1"))
    later = _copy(root, "fixture-box-b", "dddddddddddd", manifest=_manifest("00000000000000b2"))
    for name in ("env.json", "results.csv", "samples.csv"):  # a run of a day later
        path = later / name
        path.write_text(path.read_text().replace("2026-11-29T", "2026-11-30T")
                        .replace("20261129T", "20261130T"))
    _drop_cell(later, "3b373a8156")
    page, generated = _page(tmp_path, root)
    assert page.count("## Fingerprint dddddddd") == 1
    assert "## Machines of this model (2)" in page
    [fragment] = (generated / "fragments").glob("*-dddddddd-cells.html")
    assert fragment.name == "fixture-box-a-dddddddd-cells.html"
    cells = fragment.read_text()
    assert "; 1.00× of 2 machines</td>" in cells
    assert 'id="cell-dddddddd-3b373a8156"' in cells  # the cell only the first one measured
