"""torch.compile as a knob: wrap the model, and read what compiling cost from torch itself.

Why in the child, after the flags and before the cold pass: compilation is lazy, so the first
call of each new shape compiles, and that is exactly what the cold pass times. The cold pass
of a compiled cell is therefore what a user waits for before their first step, as with
cudnn.benchmark; the steady state is what they get after it. Inductor's and Triton's on-disk
caches are the replicate's own folder (``bench.run.caches``), so ``fresh`` pays a first run's
compilation and ``warm`` what a rerun of the same job on the same box pays.

What torch reports is kept apart from what we time. ``compile_time_s`` is torch's own account
(``torch._dynamo.utils.calculate_time_spent``: graph capture and Inductor for the forward, and
the backward's compilation, which AOT autograd does at the first backward); ``compiles`` is
the frames Dynamo compiled, ``recompiles`` those compiled during the steady state (a healthy
static cell has none), and ``graph_breaks`` the breaks Dynamo met. These are private APIs:
where the installed torch lacks one, the figure is left empty and the row's notes say so.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.run.matrix import Cell

#: C++ compilers Inductor's CPU backend can use (its default is ``g++``; ``CXX`` overrides).
_CXX = ("g++", "c++", "clang++")
_DYNAMIC = {"auto": None, "true": True, "false": False}
#: Modes whose compiled graph replays through CUDA graphs.
_CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")


class InjectedCompileError(RuntimeError):
    """Raised by the ``compile-error`` fault's backend, where a real backend would fail."""


def skip_reason(torch: Any, cell: Cell) -> str | None:
    """Why this torch cannot compile this cell at all (a ``skipped`` row), or None."""
    if cell.compile == "off":
        return None
    if not hasattr(torch, "compile"):
        return "no-torch-compile: this torch has no torch.compile"
    if cell.device == "cpu":
        cxx = os.environ.get("CXX")
        if not any(shutil.which(c) for c in ((cxx,) if cxx else ()) + _CXX):
            return ("no-cxx-compiler: torch.compile on the CPU needs a C++ compiler "
                    f"({', '.join(_CXX)} not found)")
    if cell.device == "cuda":
        try:
            import triton  # noqa: F401
        except ImportError:
            return "no-triton: torch.compile on CUDA needs Triton, which is not installed"
    return None


def _failing_backend(gm: Any, example_inputs: Any) -> Any:
    raise InjectedCompileError("injected compile failure")


def wrap(torch: Any, model: Any, cell: Cell, fail: bool = False) -> Callable[..., Any]:
    """The callable a step runs: the model itself when eager, else ``torch.compile(model)``.

    ``fail`` (the ``compile-error`` fault) compiles with a backend that raises, so the real
    error path of a compile that fails, at the first call, is what a test exercises.
    """
    if cell.compile == "off":
        return model  # type: ignore[no-any-return]
    kwargs: dict[str, Any] = {"dynamic": _DYNAMIC[cell.compile_dynamic]}
    if fail:
        kwargs["backend"] = _failing_backend
    elif cell.compile != "default":
        kwargs["mode"] = cell.compile
    return torch.compile(model, **kwargs)  # type: ignore[no-any-return]


def step_begin(torch: Any, cell: Cell) -> Callable[[], None]:
    """What each step calls first: with CUDA graphs, mark a new step, so a replay may reuse
    the memory of the last one's outputs (torch's advice for training loops); else nothing."""
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    if cell.device == "cuda" and cell.compile in _CUDAGRAPH_MODES and mark is not None:
        return mark  # type: ignore[no-any-return]
    return lambda: None


def settle(torch: Any) -> None:
    """After the cold pass: stop Inductor's pool of compile workers.

    The pool starts in the background when Inductor first compiles and keeps starting after a
    cache hit made it unneeded; on a 2-core machine its start-up made a warm-cache replicate's
    first second of steady state 300 times slower (0.086 s a step against 0.28 ms with
    compilation done in-process). A real job's steady state lasts far longer than that start-up,
    so the steady state is measured without it. A recompile after this starts a new pool, as
    it would in a real job, and is counted in ``recompiles``.
    """
    try:
        from torch._inductor import async_compile
    except Exception:
        return
    shutdown = getattr(async_compile, "shutdown_compile_workers", None)
    if shutdown is not None:
        shutdown()


@dataclass(frozen=True)
class Snapshot:
    """torch's compile counters at one instant (None: this torch does not keep that one)."""

    time_s: float | None
    frames: int | None
    graph_breaks: int | None


def snapshot(torch: Any) -> Snapshot:
    """Read Dynamo's counters now; they are process-wide, and one process is one replicate."""
    try:
        from torch._dynamo import utils
    except Exception:
        return Snapshot(None, None, None)
    time_s = None
    spent = getattr(utils, "calculate_time_spent", None)
    if spent is not None:
        try:
            parts = spent()
            time_s = float(parts.get("total_wall_time", parts.get("entire_frame_compile", 0.0)
                                     + parts.get("entire_backward_compile", 0.0)))
        except Exception:
            time_s = None
    counters = getattr(utils, "counters", None)
    frames = breaks = None
    if counters is not None:
        frames = int(counters["frames"].get("ok", 0))
        breaks = int(sum(counters["graph_break"].values()))
    return Snapshot(time_s, frames, breaks)


@dataclass(frozen=True)
class Figures:
    """The compile columns of one replicate, and what could not be read."""

    compile_time_s: float | None
    compiles: int | None
    recompiles: int | None
    graph_breaks: int | None
    notes: tuple[str, ...]


def figures(start: Snapshot, after_cold: Snapshot, end: Snapshot) -> Figures:
    """The compile columns from three snapshots: process start, after the cold pass, the end."""
    notes = []
    if end.time_s is None:
        notes.append("compile time: this torch does not report it")
    if end.frames is None:
        notes.append("compile counts: this torch does not report them")

    def diff(a: float | int | None, b: float | int | None) -> Any:
        return None if a is None or b is None else b - a

    return Figures(
        compile_time_s=diff(start.time_s, end.time_s),
        compiles=diff(start.frames, end.frames),
        recompiles=diff(after_cold.frames, end.frames),
        graph_breaks=diff(start.graph_breaks, end.graph_breaks),
        notes=tuple(notes),
    )
