"""What every test may rely on, whichever pytest-xdist worker runs it."""

from __future__ import annotations

import os
import signal
import threading

# An xdist worker starts with SIGINT ignored (a Ctrl-C is the controller's to handle), so a
# test that sends itself SIGINT would see nothing. The runner's tests need Python's own
# handler, as a plain pytest run and every user's terminal have it.
if os.environ.get("PYTEST_XDIST_WORKER") and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)
