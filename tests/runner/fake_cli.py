"""``bench run`` with the fake launcher and probe of ``fakes.py``, in a process of its own, so a
test can signal it, fill its disk and read its exit code and stderr as the real command's:

    python -m tests.runner.fake_cli [--env FILE] [--at N=ACTION:PATH ...] -- RUN-ARGS...

``--env`` is a JSON file the probe answers with (default ``fakes.LIVE_ENV``); ``--at`` runs
ACTION as the N-th child is launched: ``fill`` takes every free byte of the file system at
PATH, ``read-only`` remounts it read-only. Every child ends ok.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from functools import partial
from pathlib import Path

from bench import cli
from bench.run import runner
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


ACTIONS = {"fill": fill, "read-only": read_only}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", type=Path)
    parser.add_argument("--at", action="append", default=[])
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    env = json.loads(opts.env.read_text()) if opts.env else dict(LIVE_ENV)
    at_launch = {}
    for spec in opts.at:
        n, _, what = spec.partition("=")
        action, _, path = what.partition(":")
        at_launch[int(n)] = partial(ACTIONS[action], path)
    cli._launcher = lambda name: FakeLauncher(at_launch=at_launch)  # type: ignore[assignment]
    runner.probe = lambda launcher, workdir, timeout_s=600.0: Probe(  # type: ignore[assignment]
        dict(env), MODELS, False)
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    return cli.main(["run", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
