"""Sessions: ``nox -s tests``, ``nox -s lint``, ``nox -s bench report``, ``nox -s speed``.

Sessions that need torch install the pinned torch/torchvision from the ``torch`` dependency
group; the report session installs no torch at all (the report side never imports it).
nox's default virtualenv + pip backend is used on purpose: pip finds the pinned wheels on
local disk where uv would download gigabytes.
"""

from __future__ import annotations

import nox
from nox.command import CommandFailed

nox.options.default_venv_backend = "virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
REPRO_ENV = {"PYTHONHASHSEED": "0", "CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
#: How ``nox -s tests`` runs pytest (``tests/speed/suite_time.py`` reads it too): three xdist
#: workers on the 2-core machine the suite's time target is set on, each given whole files,
#: so a module's shared real run is made once; what files share (a real run of the session,
#: the Slurm cluster) is made once or taken in turn under a lock. Three, not one per core:
#: with two, a fifth of the cores' time went idle while tests waited on their subprocesses
#: (a Slurm job starting, a child timing out); with three the cores stay about 94% busy.
#: Files go out in the order ``tests/conftest.py`` sorts them (real runs first), not by
#: their number of tests.
PYTEST_ARGS = ("-n", "3", "--dist", "loadfile", "--no-loadscope-reorder")


def _groups(*names: str) -> list[str]:
    return list(nox.project.dependency_groups(PYPROJECT, *names))


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, end-to-end CPU, fault-injection, site and browser tests."""
    session.install(*_groups("torch", "test"))
    session.install("-e", ".")
    session.run("pytest", *PYTEST_ARGS, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy on the package."""
    session.install(*_groups("lint", "report"))
    session.run("ruff", "check", ".")
    session.run("mypy", "bench")


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmark (default profile chosen from the hardware); args after -- go to run."""
    session.install(*_groups("torch"), "tqdm")
    session.install(".")
    session.run("python", "-m", "bench", "run", *session.posargs, env=REPRO_ENV)


@nox.session
def report(session: nox.Session) -> None:
    """Build the report site from reports/ into site/ (no torch needed)."""
    session.install(*_groups("report"))
    session.install(".")
    session.run("python", "-m", "bench", "report")


#: The speed scripts with a target, each exiting non-zero when it misses it.
SPEED_SCRIPTS = ("tests/speed/overhead.py", "tests/speed/report_build.py",
                 "tests/speed/timed_work.py", "tests/speed/suite_time.py")


@nox.session(default=False)
def speed(session: nox.Session) -> None:
    """Print the speed-target figures: harness overhead per cell, the report built from 500
    runs against pandas reading their CSVs, a real cpu-profile run's timed work against its
    wall time, with the estimate's error, and the test suite's wall time. Every script runs
    (each prints its figures); the session fails, naming them, when any missed its target."""
    session.install(*_groups("torch", "test"))
    session.install("-e", ".")
    missed = []
    for script in SPEED_SCRIPTS:
        try:
            session.run("python", script)
        except CommandFailed:
            missed.append(script)
    if missed:
        session.error(f"missed a speed target: {', '.join(missed)}")


if __name__ == "__main__":
    nox.main()
