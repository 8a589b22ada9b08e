"""What every test may rely on, whichever pytest-xdist worker runs it."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

# Two xdist workers on a 2-core machine often run torch at once, each child with a thread per
# core. OpenMP's default is to spin while it waits for work, so each spinning thread takes a
# core the other run's threads need: two smoke runs side by side took 160 s this way and 20 s
# with passive waiting (one alone: 16 s). Every child inherits this; what the tests check of a
# run is unchanged, and a number measured here is never a result anyone quotes.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Some environments set PYTHONDONTWRITEBYTECODE. Under it, every xdist worker rewrites and
# compiles every test module again while collecting (4 of its 12 CPU-seconds), and each of
# the suite's few hundred subprocesses (a CLI, a fork server, a fake runner) compiles the
# project's modules anew. The suite keeps their bytecode (``__pycache__``, ignored by git);
# the workers and subprocesses, started after this file is read, inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# An xdist worker starts with SIGINT ignored (a Ctrl-C is the controller's to handle), so a
# test that sends itself SIGINT would see nothing. The runner's tests need Python's own
# handler, as a plain pytest run and every user's terminal have it.
if os.environ.get("PYTEST_XDIST_WORKER") and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _weight(item: pytest.Item) -> int:
    """0 for a file of real runs (marked ``e2e``), 1 for a site test (builds, a browser),
    2 for the rest: quick unit tests."""
    if item.get_closest_marker("e2e") is not None:
        return 0
    return 1 if "site" in item.path.parts else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files of real runs first, then the site's, then the quick ones, each kind in the order
    collected. The xdist workers take whole files in this order (``--no-loadscope-reorder``
    in ``noxfile.PYTEST_ARGS``), so the cores end the session on short unit tests instead of
    one worker finishing a long run alone: by its default order (most tests first) the
    budgeted end-to-end run, a single test of 36 s, started last."""
    weight: dict[object, int] = {}
    for item in items:
        weight[item.path] = min(weight.get(item.path, 2), _weight(item))
    items.sort(key=lambda item: weight[item.path])
