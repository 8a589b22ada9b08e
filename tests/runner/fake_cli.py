"""``bench run`` with the fake launcher and probe of ``fakes.py``, in a process of its own, so a
test can signal it, fill its disk and read its exit code and stderr as the real command's:

    python -m tests.runner.fake_cli [--env FILE] [--refuse PATH] [--at N=ACTION:PATH ...] \
        -- RUN-ARGS...

``--env`` is a JSON file the probe answers with (default ``fakes.LIVE_ENV``); ``--at`` runs
ACTION as the N-th child is launched: ``fill`` takes every free byte of the file system at
PATH, ``read-only`` remounts it read-only, ``refuse`` has every later attempt to create or
write a file or folder under PATH fail as on a read-only file system (EROFS), without root:
``os.open`` and ``os.mkdir``, which every write of the run store goes through, are patched.
``--refuse`` does that from the start. Every child ends ok.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

from bench import cli
from bench.run.execute import launch
from bench.run.execute import probe as probing
from bench.run.protocol import Probe

from .fakes import LIVE_ENV, FakeLauncher

MODELS = ["resnet18", "mobilenet_v3_small"]


def fill(path: str) -> None:
    with open(Path(path) / "filler", "ab", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def read_only(path: str) -> None:
    subprocess.run(["mount", "-o", "remount,ro", path], check=True, timeout=30)


def refuse(path: str) -> None:
    root = os.path.realpath(path)
    real_open, real_mkdir = os.open, os.mkdir
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def check(target: Any) -> None:
        where = os.path.realpath(os.fsdecode(target))
        if where == root or where.startswith(root + os.sep):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(target))

    def guarded_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writes:
            check(file)
        return real_open(file, flags, *args, **kwargs)

    def guarded_mkdir(file: Any, *args: Any, **kwargs: Any) -> None:
        if os.path.lexists(file):  # as the kernel does: EEXIST before EROFS
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fsdecode(file))
        check(file)
        real_mkdir(file, *args, **kwargs)

    os.open, os.mkdir = guarded_open, guarded_mkdir  # type: ignore[assignment]


ACTIONS = {"fill": fill, "read-only": read_only, "refuse": refuse}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", type=Path)
    parser.add_argument("--at", action="append", default=[])
    parser.add_argument("--refuse")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    env = json.loads(opts.env.read_text()) if opts.env else dict(LIVE_ENV)
    at_launch = {}
    for spec in opts.at:
        n, _, what = spec.partition("=")
        action, _, path = what.partition(":")
        at_launch[int(n)] = partial(ACTIONS[action], path)
    launch.by_name = lambda name: FakeLauncher(at_launch=at_launch)  # type: ignore[assignment]
    probing.probe = (  # type: ignore[assignment]
        lambda launcher, workdir, timeout_s=600.0, models=(): Probe(dict(env), MODELS, False))
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    if opts.refuse:
        refuse(opts.refuse)
    return cli.main(["run", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
