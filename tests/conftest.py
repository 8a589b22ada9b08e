"""What every test may rely on, whichever pytest-xdist worker runs it."""

from __future__ import annotations

import os
import signal
import threading

# Two xdist workers on a 2-core machine often run torch at once, each child with a thread per
# core. OpenMP's default is to spin while it waits for work, so each spinning thread takes a
# core the other run's threads need: two smoke runs side by side took 160 s this way and 20 s
# with passive waiting (one alone: 16 s). Every child inherits this; what the tests check of a
# run is unchanged, and a number measured here is never a result anyone quotes.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# An xdist worker starts with SIGINT ignored (a Ctrl-C is the controller's to handle), so a
# test that sends itself SIGINT would see nothing. The runner's tests need Python's own
# handler, as a plain pytest run and every user's terminal have it.
if os.environ.get("PYTEST_XDIST_WORKER") and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)
