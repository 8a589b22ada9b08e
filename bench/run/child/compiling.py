"""torch.compile as a knob: wrap the model, and read what compiling cost from torch itself.

Why in the child, after the flags and before the cold pass: compilation is lazy, so the first
call of each new shape compiles, and that is exactly what the cold pass times. The cold pass
of a compiled cell is therefore what a user waits for before their first step, as with
cudnn.benchmark; the steady state is what they get after it. Inductor's and Triton's on-disk
caches are the replicate's own folder (``bench.run.caches``), so ``fresh`` pays a
first run's compilation and ``warm`` what a rerun of the same job on the same box pays.

What torch reports is kept apart from what we time. ``compile_time_s`` is torch's own account
(``torch._dynamo.utils.calculate_time_spent``: graph capture and Inductor for the forward, and
the backward's compilation, which AOT autograd does at the first backward); ``compiles`` is
the frames Dynamo compiled, ``recompiles`` those compiled during the steady state (a healthy
static cell has none), ``graphs`` the graphs it compiled, and ``graph_breaks`` every break it
met in the replicate, with the most frequent reasons (``bench.run.child.breaks``). Dynamo meets
a model's breaks when it traces a frame, that is in the cold pass's compile, so those are the
model's own; ``steady_graph_breaks``, the breaks met after the cold pass, only a steady-state
recompile adds. The counters are process-wide and one process is one replicate; each figure is
the difference of two readings, so nothing before the first one counts. These are private
APIs: where the installed torch lacks one, the figure is left empty and the row's notes say so.
A frame Dynamo gives up on (a break it cannot resume from, such as one in a loop) runs eagerly,
with no graph and no break counted; the notes name it.

On the CPU, Inductor builds its kernels with a C++ compiler; a cell whose compiler is missing
or broken is ``skipped`` before its model is built (``cxx_problem``), and one whose compile
still finds none is ``skipped`` too (``guard``), not an error.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.child import breaks, factory
from bench.run.plan.matrix import Cell

#: What the C++ check builds: a shared library with a standard header, as Inductor's CPU
#: kernels are, so a compiler that runs but lacks its headers or its linker fails here too.
_CXX_PROBE = '#include <cstdint>\nextern "C" int64_t knobs_probe(int64_t x) { return x + 1; }\n'
#: Longer than any working compiler takes for that file (about 0.03 s with g++ on 2 cores).
_CXX_TIMEOUT_S = 60.0
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
        problem = cxx_problem(inductor_cxx())
        if problem:
            return ("no-cxx-compiler: torch.compile on the CPU needs a working C++ compiler; "
                    + problem)
    if cell.device == "cuda":
        try:
            import triton  # noqa: F401
        except ImportError:
            return "no-triton: torch.compile on CUDA needs Triton, which is not installed"
    return None


def inductor_cxx() -> tuple[str | None, ...]:
    """The compilers Inductor's CPU backend searches, in its order: ``config.cpp.cxx``, which
    torch fills at import from ``CXX`` or the platform's default, so the check sees what
    Inductor will use (its None, a gcc downloaded through conda on request, is not tried)."""
    try:
        from torch._inductor import config

        cxx = config.cpp.cxx
    except Exception:  # no Inductor config: its long-standing default
        cxx = (None, os.environ.get("CXX", "clang++" if sys.platform == "darwin" else "g++"))
    return tuple(cxx) if isinstance(cxx, (list, tuple)) else (cxx,)


def _fails(cmd: list[str]) -> str:
    """Why ``cmd`` did not exit 0, in a few words (empty when it did)."""
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=_CXX_TIMEOUT_S, check=False)
    except FileNotFoundError:
        return "not found"
    except subprocess.TimeoutExpired:
        return f"no answer in {_CXX_TIMEOUT_S:.0f} s"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    if done.returncode == 0:
        return ""
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return f"exit status {done.returncode}" + (f": {said[0][:200]}" if said else "")


def cxx_problem(search: tuple[str | None, ...]) -> str:
    """Why Inductor would find no working C++ compiler in ``search``, or empty when it would.

    Inductor takes the first entry that answers ``--version`` (its ``cpp_compiler_search``)
    and builds every CPU kernel with it, so that one must also build a small shared library:
    a ``g++`` that is on PATH but broken is no compiler. About 0.05 s, before the model is
    built, so a replicate is not spent discovering it.
    """
    tried = []
    for cxx in search:
        if not cxx:
            continue
        try:
            cmd = shlex.split(cxx)  # as Inductor splits it ("ccache g++")
        except ValueError as exc:
            tried.append(f"`{cxx}`: {exc}")
            continue
        why = _fails([*cmd, "--version"])
        if why:
            tried.append(f"`{cxx} --version`: {why}")
            continue
        with tempfile.TemporaryDirectory(prefix="knobs-cxx-") as tmp:
            src, lib = Path(tmp) / "probe.cpp", Path(tmp) / "probe.so"
            src.write_text(_CXX_PROBE, encoding="utf-8")
            why = _fails([*cmd, "-shared", "-fPIC", str(src), "-o", str(lib)])
        return f"{cxx} cannot build a small shared library ({why})" if why else ""
    return "; ".join(tried) or "Inductor's cpp.cxx names no compiler"


def _no_cxx(exc: BaseException) -> str:
    """The first line of Inductor's InvalidCxxCompiler in ``exc``'s chain, or empty."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__name__ == "InvalidCxxCompiler":
            lines = [line.strip() for line in str(cur).splitlines() if line.strip()]
            return f"InvalidCxxCompiler: {lines[0] if lines else ''}"[:300]
        cur = cur.__cause__ or cur.__context__
    return ""


def guard(cell: Cell, step: Callable[[int], Any]) -> Callable[[int], Any]:
    """A compiled cell's step, whose compile finding no C++ compiler after all is ``skipped``
    (``factory.NotApplicable``), as ``skip_reason`` would have made it: a safety net for an
    Inductor that searches differently from that check. Eager steps are left as they are."""
    if cell.compile == "off":
        return step

    def guarded(i: int) -> Any:
        try:
            return step(i)
        except Exception as exc:
            why = _no_cxx(exc)
            if not why:
                raise
            raise factory.NotApplicable(
                f"no-cxx-compiler: Inductor found no working C++ compiler ({why})") from exc

    return guarded


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


Counts = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Snapshot:
    """torch's compile counters at one instant (None: this torch does not keep that one).

    ``frames`` are the frames Dynamo compiled, ``tried`` those it set out to; ``breaks`` and
    ``gave_up`` are ``counters["graph_break"]`` and ``counters["unimplemented"]`` as they stand:
    each of torch's reasons with its count so far."""

    time_s: float | None
    frames: int | None
    graphs: int | None = None
    breaks: Counts | None = None
    tried: int | None = None
    gave_up: Counts | None = None

    @property
    def graph_breaks(self) -> int | None:
        return None if self.breaks is None else sum(n for _, n in self.breaks)


def _counts(counter: Any) -> Counts:
    return tuple((str(k), int(v)) for k, v in counter.items())


def snapshot(torch: Any) -> Snapshot:
    """Read Dynamo's counters now; they are process-wide, and one process is one replicate."""
    try:
        from torch._dynamo import utils
    except Exception:
        return Snapshot(None, None)
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
    if counters is None:
        return Snapshot(time_s, None)
    return Snapshot(time_s, int(counters["frames"].get("ok", 0)),
                    int(counters["stats"].get("unique_graphs", 0)),
                    _counts(counters["graph_break"]), int(counters["frames"].get("total", 0)),
                    _counts(counters["unimplemented"]))


@dataclass(frozen=True)
class Figures:
    """The compile columns of one replicate, and what could not be read."""

    compile_time_s: float | None
    compiles: int | None
    recompiles: int | None
    graph_breaks: int | None
    steady_graph_breaks: int | None
    graphs: int | None
    graph_break_reasons: str | None
    notes: tuple[str, ...]


def _diff(a: Any, b: Any) -> Any:
    return None if a is None or b is None else b - a


def _gave_up_note(start: Snapshot, end: Snapshot) -> str:
    """What the notes say of frames Dynamo gave up on in the replicate, or empty."""
    tried, done = _diff(start.tried, end.tried), _diff(start.frames, end.frames)
    if tried is None or done is None or tried <= done:
        return ""
    tallied = breaks.tally(breaks.grown(start.gave_up, end.gave_up) or ())
    # the most frequent reason, the first of a tie
    why = f" ({max(tallied, key=lambda k: tallied[k])})".replace(";", ",") if tallied else ""
    return (f"torch.compile: Dynamo gave up on {tried - done} frame(s), which ran eagerly, "
            f"with no graph or break counted{why}")


def figures(start: Snapshot, after_cold: Snapshot, end: Snapshot) -> Figures:
    """The compile columns from three snapshots: process start, after the cold pass, the end.

    Compile time, compiles, graphs and graph breaks are the whole replicate's; recompiles and
    steady graph breaks the steady state's (after the cold pass), the figures that say whether
    compiling is done."""
    notes = []
    if end.time_s is None:
        notes.append("compile time: this torch does not report it")
    if end.frames is None:
        notes.append("compile counts (compiles, recompiles, graphs, graph breaks): this torch "
                      "does not report them")
    grew = breaks.grown(start.breaks, end.breaks)
    gave_up = _gave_up_note(start, end)
    if gave_up:
        notes.append(gave_up)
    return Figures(
        compile_time_s=_diff(start.time_s, end.time_s),
        compiles=_diff(start.frames, end.frames),
        recompiles=_diff(after_cold.frames, end.frames),
        graph_breaks=_diff(start.graph_breaks, end.graph_breaks),
        steady_graph_breaks=_diff(after_cold.graph_breaks, end.graph_breaks),
        graphs=_diff(start.graphs, end.graphs),
        graph_break_reasons=None if grew is None else schema.break_reasons(breaks.tally(grew)),
        notes=tuple(notes),
    )
