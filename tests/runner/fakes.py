"""Fakes for the runner's tests (no torch): a launcher whose children end as told, on its own
clock (``fake_cli.py`` runs the whole ``bench run`` command with it).

The fakes stand in for the process launcher and the probe only: the runner's own scheduling,
timeout, classification and writing code, and the command's, is what runs.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.fingerprint import fingerprint_id
from bench.run.execute.launch import Exit, LaunchError
from bench.run.protocol import Flags, Metrics, Record, Sample, Task, Timeline

ENV = {"fingerprint_id": "f" * 12, "machine": "test-box", "cpu": {"affinity": 2}}


class FakeChild:
    """A child whose owner is the fake launcher: it times out on the launcher's fake clock."""

    def __init__(self, launcher: FakeLauncher, task: Seen, behaviour: str) -> None:
        self.pid = 4242
        self.launcher = launcher
        self.task = task
        self.behaviour = behaviour
        self.deadline = launcher.now + task.timeout_s

    def wait(self, poll_s: float) -> Exit | None:
        self.launcher.now += poll_s
        code = self._end()
        return code if code is None or isinstance(code, Exit) else Exit(code)

    def _end(self) -> int | Exit | None:
        b = self.behaviour
        task = self.task.task
        if b == "ok":
            if task.cache_dir:  # as a kernel compile would: the child leaves something there
                (Path(task.cache_dir) / f"kernel-{len(self.launcher.launched)}.bin").write_bytes(
                    b"k" * 4096)
            record = Record(
                flags=Flags(eff_num_threads="2"), cache_start_bytes=self.task.cache_bytes,
                notes=["flop count failed: TypeError: not a module"],
                metrics=Metrics(steady_median_s=0.5, steady_p10_s=0.4, steady_p90_s=0.6,
                                steady_iters=1, samples_per_s=2.0, flops_per_sample=1e9),
                samples=[Sample("cold", 0, 1, 224, 0.9), Sample("steady", 1, 1, 224, 0.5)],
                timeline=Timeline(build_start=0.0))
            Path(task.result_path).write_text(record.to_json())
            return 0
        if b == "oom":
            Path(task.result_path).write_text(Record(
                "oom", "OutOfMemoryError: CUDA out of memory").to_json())
            return 0
        if b == "segv":
            Path(task.log_path).write_text("about to fail\nFatal Python error\n")
            return -signal.SIGSEGV
        if b == "exit3":
            return 3
        if b == "bad-record":  # a result file that is not a record
            Path(task.result_path).write_text('{"status": "ok", "bogus": 1}')
            return 0
        if b == "hang":  # its owner ends it at the timeout, and says so
            return Exit(-signal.SIGTERM, timed_out=True) if self.launcher.now >= self.deadline \
                else None
        if b == "interrupt":
            raise KeyboardInterrupt
        if b == "garbage":
            raise LaunchError("fork server sent garbage: b'x'")
        raise AssertionError(b)

    def stop(self) -> None:
        self.launcher.stopped.append(self.task.task.cell.model)


@dataclass
class Seen:
    """A task as the fake launcher found it, with its kernel-cache folder at launch time."""

    task: Task
    timeout_s: float
    cache_files: list[str] = field(default_factory=list)
    cache_bytes: int = 0
    warm: str = ""  # what the launch asked the server to import first


def is_pace(task: Task) -> bool:
    """Whether ``task`` is one of a sitting's pace probes (``bench.run.plan.pace``)."""
    return "-pace" in Path(task.result_path).name


class FakeLauncher:
    """Launches ``FakeChild``s: the n-th behaves as ``behaviour[n]`` says (else ``default``),
    and ``at_launch[n]``, if given, runs as it starts (a test filling the disk then, say).

    A sitting's pace probes are not counted among the n: they are kept apart in ``paced``,
    and the probe named ``p`` (``cpu_matmul``) at the sitting's ``start`` or ``end`` behaves
    as ``pace["start:p"]``, else ``pace[p]``, says (else ``ok``)."""

    def __init__(self, behaviour: dict[int, str] | None = None, default: str = "ok",
                 at_launch: dict[int, Callable[[], object]] | None = None,
                 pace: dict[str, str] | None = None) -> None:
        self.behaviour = behaviour or {}
        self.default = default
        self.at_launch = at_launch or {}
        self.pace = pace or {}
        self.now = 0.0
        self.launched: list[Seen] = []
        self.paced: list[Seen] = []  # the pace probes' children, in order
        self.stopped: list[str] = []
        self.closed = False

    def __enter__(self) -> FakeLauncher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> FakeChild:
        seen = Seen(Task.from_json(task_path.read_text()), timeout_s, warm=warm)
        if is_pace(seen.task):
            self.paced.append(seen)
            tag, _, name = Path(seen.task.result_path).name.split(".")[0].partition(
                "-pace-")[2].partition("-")
            return FakeChild(self, seen, self.pace.get(f"{tag}:{name}",
                                                       self.pace.get(name, "ok")))
        n = len(self.launched)
        if seen.task.cache_dir:
            files = list(Path(seen.task.cache_dir).rglob("*"))
            seen.cache_files = sorted(p.name for p in files)
            seen.cache_bytes = sum(p.stat().st_size for p in files)
        self.launched.append(seen)
        if n in self.at_launch:
            self.at_launch[n]()
        return FakeChild(self, seen, self.behaviour.get(n, self.default))

    def close(self) -> None:
        self.closed = True

    def clock(self) -> float:
        return self.now


#: An environment whose fingerprint matches its facts, as a real probe's does.
LIVE_ENV: dict[str, object] = {"machine": "test-box", "cpu": {"affinity": 2, "model": "Test CPU"},
                               "torch": {"version": "2.14.1"}, "python": {"version": "3.11"}}
LIVE_ENV["fingerprint_id"] = fingerprint_id(LIVE_ENV)
