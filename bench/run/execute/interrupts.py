"""SIGINT, SIGTERM and SIGUSR2: the first one stops the run; the ones after it are only noted.

Why SIGUSR2: it is Slurm's warning before a job's time limit or a preemption (submitit asks
for it, ``--signal=USR2@90``), and Slurm sends it to every process of the job's step, this
runner included. Without a handler it would kill the runner outright, and the replicate in
flight would get no row; handled, it ends that replicate as ``interrupted``, like SIGTERM.

Why only the first: stopping takes seconds (the running child is ended and reaped, its row
written, the fork server closed). A second Ctrl-C, or a supervisor's SIGTERM after the
user's Ctrl-C, that raised in the middle of that would leave a child to its own alarm, lose
its row and end in a traceback instead of the "resume with" line. So once a signal has
arrived, later ones are counted and the shutdown runs to its end; the exit code is the first
signal's: 130 for SIGINT, 143 for SIGTERM, 140 for SIGUSR2 (128 + its number; 159 on macOS).
``closing()`` goes one step further for the very end of a run: a first signal is noted too,
not raised, so a shutdown that has begun is never cut short.

Why a flag checked by our own handler and not a signal mask: Python runs signal handlers in
the main thread whichever OS thread received the signal, so the flag is reliable where a
thread's signal mask is not (a process-directed signal may land on any thread that does not
block it, tqdm's monitor thread for one). Inside ``critical()`` a first signal is remembered
and raised as soon as the section ends, so a row and its samples are written together or
not at all.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

#: The signals that stop a run; SIGUSR2 where the platform has it (not on Windows).
STOPPING: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, *(
    (signal.SIGUSR2,) if hasattr(signal, "SIGUSR2") else ()))
#: The exit code of a run stopped by each signal (128 + its number, as a shell reports it).
EXIT_CODES = {sig: 128 + int(sig) for sig in STOPPING}


class Interrupted(KeyboardInterrupt):
    """A stopping signal (SIGINT, SIGTERM or SIGUSR2), taking the Ctrl-C path; ``signum``
    says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Interrupts:
    """The run's handler of the stopping signals and what it has seen."""

    def __init__(self) -> None:
        self.installs = 0
        self.critical_depth = 0
        self.first: int | None = None  # the signal that stopped the run
        self.later = 0  # signals after it: noted, never raised
        self._pending = False  # the first came inside a critical section
        self._closing = False

    def handler(self, signum: int, frame: Any) -> None:
        if self.first is not None:
            self.later += 1
            return
        self.first = signum
        if self._closing:
            return
        if self.critical_depth:
            self._pending = True
            return
        raise Interrupted(signum)

    def exit_code(self, code: int) -> int:
        """``code``, or the first signal's exit code if one came."""
        return EXIT_CODES.get(signal.Signals(self.first), 130) if self.first is not None \
            else code

    @contextlib.contextmanager
    def critical(self) -> Iterator[None]:
        self.critical_depth += 1
        try:
            yield
        finally:
            self.critical_depth -= 1
            if not self.critical_depth and self._pending:
                self._pending = False
                assert self.first is not None
                raise Interrupted(self.first)

    def closing(self) -> None:
        """From now on a signal is noted, not raised: the run is closing down."""
        self._closing = True

    @contextlib.contextmanager
    def installed(self) -> Iterator[Interrupts]:
        """Route the stopping signals through ``handler`` (main thread only; else a no-op).

        Nested use shares the outer installation and its state: the CLI installs it for the
        whole command, the runner again for its loop.
        """
        if self.installs:
            self.installs += 1
            try:
                yield self
            finally:
                self.installs -= 1
            return
        self.first, self.later, self._pending, self._closing = None, 0, False, False
        try:
            old = {sig: signal.signal(sig, self.handler) for sig in STOPPING}
        except ValueError:  # not the main thread: leave signals alone
            yield self
            return
        self.installs = 1
        try:
            yield self
        finally:
            self.installs = 0
            for sig, previous in old.items():
                signal.signal(sig, previous)


INTERRUPTS = Interrupts()
