"""What the xdist workers of one test session make once and share: a folder filled under a
lock by the first worker that asks (a real run, a built site), read by every other."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``make`` fills, once per test session however many xdist workers ask: the
    first fills it under a lock while the others wait, then they all read it. Without xdist,
    a folder of this session's own."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = factory.mktemp(name)
        make(folder)
        return folder
    root = factory.getbasetemp().parent  # this session's, shared by its workers
    folder = root / name
    with open(root / f"{name}.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if not (folder / ".made").exists():  # none made it, or the one that tried failed
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder
