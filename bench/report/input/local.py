"""Which machine is the reader's own: the one a site built after a local run should lead with.

A reader who runs ``bench run`` and then ``bench report`` wants their machine first, not the
reference machines committed with the project. Their runs are the ones git does not hold yet
(untracked or changed files under the reports folder); ``--focus MACHINE`` names one instead.
A tree with no uncommitted run, such as the published one, names none, and the pages lead
with the reference machines.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.report.input.load import RunFiles

#: How long a git query may take before the build goes on without it.
GIT_TIMEOUT_S = 20.0


class FocusError(ValueError):
    """``--focus`` names no machine of the results tree."""


def uncommitted(root: Path) -> frozenset[Path] | None:
    """The files under ``root`` (relative to it) that git does not hold as committed:
    untracked, added or changed; None where ``root`` is not in a git work tree or git is
    missing, so nothing is taken for the reader's own."""
    git = shutil.which("git")
    if git is None:
        return None
    top = _git(git, root, "rev-parse", "--show-toplevel")
    status = _git(git, root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                  "--", ".")
    if top is None or status is None:
        return None
    here = root.resolve().relative_to(Path(top.strip()).resolve())
    found = set()
    entries = iter(status.split("\0"))
    for entry in entries:
        code, path = entry[:2], Path(entry[3:])
        if "R" in code or "C" in code:
            next(entries, None)  # a rename's or copy's old path follows: not a file here now
        if len(entry) > 3 and "D" not in code and path.is_relative_to(here):
            found.add(path.relative_to(here))
    return frozenset(found)


def _git(git: str, root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run([git, "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def yours(root: Path, runs: Sequence[RunFiles], focus: str | None = None) -> frozenset[str]:
    """The fingerprint ids of the reader's own machine: those ``focus`` names (a machine name,
    a fingerprint id or its first characters), else those of the runs with a file git does
    not hold yet. Raises :class:`FocusError` naming the valid choices when ``focus`` matches
    no run."""
    if focus is not None:
        return _focused(runs, focus)
    changed = uncommitted(Path(root))
    if not changed:
        return frozenset()
    folders = {p.parent for p in changed}
    return frozenset(r.fingerprint_id for r in runs if r.results.parent in folders
                     and r.fingerprint_id)


def _focused(runs: Iterable[RunFiles], focus: str) -> frozenset[str]:
    runs = list(runs)
    want = focus.strip()
    found = frozenset(r.fingerprint_id for r in runs if want and (
        r.machine == want or r.fingerprint_id.startswith(want)
        or f"{r.machine}-{r.fingerprint_id}".startswith(want)))
    if found:
        return found
    names = sorted({r.machine for r in runs if r.machine})
    choices = ", ".join(names) if names else "none: the results tree has no runs"
    raise FocusError(f"--focus {focus!r}: no machine of that name or fingerprint in the "
                     f"results; valid choices: {choices}")
