"""The probe: one child asked what this machine is, before anything is planned or written.

What the parent knows of the machine comes from it: the fingerprint, the installed torchvision
models, whether CUDA exists, and its answers about the user's models, so bad input is refused
with the real list of valid models before anything is written. It runs in a scratch folder of
its own, through the same launcher as the replicates, and leaves no row. Once the plan is
known, ``paced`` times the machine's pace now where committed runs of this kind of machine
can teach the estimate the plan's costs (``bench.run.plan.pace``); the env keeps it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from bench.run.execute import pacing
from bench.run.execute.launch import Launcher
from bench.run.execute.outcome import run_child
from bench.run.plan import learned, pace, usermodels
from bench.run.plan.matrix import Cell, Settings
from bench.run.protocol import ModelCheck, Probe, new_task
from bench.run.store.store import StoreError
from bench.schema import Status


@contextlib.contextmanager
def probe_folder() -> Iterator[Path]:
    """A scratch folder for the probe under TMPDIR, removed after. A TMPDIR that cannot hold
    one (full, read-only) is one line (``RuntimeError``, as the probe's own failures are), and
    a removal that fails there is left to the system's cleaning."""
    try:
        tmp = tempfile.TemporaryDirectory(prefix="torch-knobs-probe-")
    except OSError as exc:
        raise RuntimeError(f"cannot make a scratch folder under {tempfile.gettempdir()} (the "
                           f"runner's scratch space, TMPDIR): {exc.strerror or exc}") from None
    try:
        yield Path(tmp.name)
    finally:
        with contextlib.suppress(OSError):
            tmp.cleanup()


def probe(launcher: Launcher, workdir: Path, timeout_s: float = 600.0,
          models: Sequence[ModelCheck] = ()) -> Probe:
    """Ask a child what this machine is, and whether the user ``models`` run (its answers are
    in ``Probe.user_models``); raises RuntimeError with a one-line reason."""
    task = replace(new_task("probe", Cell(), Settings(), 0, workdir), models=list(models))
    try:
        out = run_child(launcher, task, timeout_s)
    except (StoreError, OSError) as exc:  # its own files under TMPDIR: one line, not a trace
        raise RuntimeError(f"could not inspect the environment: {exc}") from None
    if out.status != Status.OK or out.record is None or out.record.probe is None:
        # the user's code may have taken it down: then say whose, not "is torch installed?"
        died = usermodels.probe_death(Path(task.log_path), out.status, out.reason) if models \
            else ""
        raise RuntimeError(died or f"could not inspect the environment (is torch installed?): "
                                   f"{out.status}: {out.reason}")
    return out.record.probe


def paced(launcher: Launcher, workdir: Path, found: Probe, reports: Path,
          cells: Iterable[Cell], window_s: float = pace.WINDOW_S) -> Probe:
    """``found`` with the machine's pace now in its env (``bench.run.plan.pace``), where a run
    under ``reports`` that the estimate learns from can be compared with it and measured one
    of ``cells`` on the CPU (``learned.has_reference``); else ``found`` as it is.
    ``window_s``: the CPU probe's steady window (the profile's ``[pace]``)."""
    cpu = {c.cell_id for c in cells if c.device == "cpu"}
    if not cpu or not learned.has_reference(reports, found.env, cpu):
        return found
    now = pacing.measure(launcher, workdir, window_s)
    return replace(found, env={**found.env, pace.ENV_KEY: now}) if now else found
