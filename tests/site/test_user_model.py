"""A user's model in a profile: a real CPU run with ``bench run``, then a real site build with
the committed fixtures beside it, on which the model has its cells, its comparisons and its
own family in the advice."""

from __future__ import annotations

import csv
import hashlib
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_REPORTS, ROOT, Built, build_copy

pytestmark = pytest.mark.e2e

MODEL = "tests/advise/model.py:build"
PROFILE = f"""
[defaults]
device = "cpu"
model = "{MODEL}"
input_shape = "3,32,32"
batch_size = 4
replicates = 3
warmup_iters = 1
min_iters = 5
min_time_s = 0.05
max_time_s = 0.3
timeout_s = 60

[studies.layout]
mode = "infer"
memory_format = ["nchw", "channels_last"]
"""


def _text(path: Path) -> str:
    """A page's visible text, tags dropped and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("user-model")
    reports = base / "reports"
    shutil.copytree(FIXTURE_REPORTS, reports)
    profile = base / "mine.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TORCH_KNOBS_FAULT", None)
    proc = subprocess.run([sys.executable, "-m", "bench", "run", "--profile", str(profile),
                           "--reports", str(reports)], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "done: ok=6" in proc.stderr
    return build_copy(base / "project", reports)


def test_the_user_model_has_its_machine_page_beside_the_fixtures(built: Built) -> None:
    machines = built.site / "generated" / "machines"
    pages = {p.name: _text(p) for p in machines.glob("*.html")
             if p.name != "index.html" and 'http-equiv="refresh"' not in p.read_text()}
    mine = [name for name, text in pages.items() if MODEL in text]
    assert len(mine) == 1 and not mine[0].startswith("fixture-")
    assert len(pages) == 3  # the fixtures' two hardware models' pages are still there
    text = pages[mine[0]]
    assert f"{MODEL} cpu infer b4 in=3,32,32 fp32 channels_last static src=" in text


def test_the_layout_finding_names_the_model_and_its_source(built: Built) -> None:
    text = _text(built.site / "generated" / "precision.html")
    assert MODEL in text
    family = re.search(re.escape(MODEL) + r"@([0-9a-f]{10})", text)
    assert family, "a user model is a family of its own, named with its source hash"
    decisions = (built.generated / "data" / "comparisons" / "decisions.csv").read_text()
    assert f"{MODEL}@{family.group(1)}" in decisions


def test_the_home_page_gives_the_family_its_own_verdict(built: Built) -> None:
    """The home page's layout table has a row for the user's model, apart from the torchvision
    families, with the decision and the verdict the report's comparison table holds."""
    digest = hashlib.sha1((ROOT / "tests/advise/model.py").read_bytes()).hexdigest()[:10]
    family = f"{MODEL}@{digest}"
    text = _text(built.site / "index.html")
    row = re.search(re.escape(family) + r" · infer · fp32 · batch 4\n([^\n]+)\n"
                    r"[0-9.]+× \([^)\n]+\)\n(faster|slower|no clear difference)"
                    r"( \(a replicate drifted\))?\n", text)  # a real run may drift
    assert row, "the home page names the family with a decision and a verdict"
    with open(built.generated / "data" / "comparisons" / "memory-format.csv", newline="",
              encoding="utf-8") as f:
        (pair,) = [r for r in csv.DictReader(f) if r["model"] == MODEL]
    assert pair["variant_value"] == "channels_last" and pair["verdict"] == row.group(2)
    with open(built.generated / "data" / "comparisons" / "decisions.csv", newline="",
              encoding="utf-8") as f:
        (decision,) = [r for r in csv.DictReader(f) if r["model_family"] == family]
    assert decision["verdict"] == row.group(2) and decision["action"]
