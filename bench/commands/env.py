"""``python -m bench env``: the environment fingerprint as JSON, from a probe child."""

from __future__ import annotations

import argparse
import json

from bench.commands.base import Command
from bench.commands.exits import fail
from bench.run.execute import launch
from bench.run.execute import probe as probing


class EnvCommand(Command):
    """What a run would record of this machine, without running anything: the probe alone."""

    name = "env"
    help = "print the environment fingerprint as JSON"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--launcher", choices=("forkserver", "spawn"), default="spawn")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        with launch.by_name(args.launcher) as launcher:
            try:
                with probing.probe_folder() as tmp:
                    probe = probing.probe(launcher, tmp)
            except RuntimeError as exc:
                return fail(str(exc))
        print(json.dumps(probe.env, indent=2, sort_keys=True))
        return 0
