"""``python -m bench env``: the environment fingerprint as JSON, from a probe child."""

from __future__ import annotations

import argparse
import json

from bench.commands.exits import fail
from bench.run.execute import launch
from bench.run.execute import probe as probing


def cmd_env(args: argparse.Namespace) -> int:
    with launch.by_name(args.launcher) as launcher:
        try:
            with probing.probe_folder() as tmp:
                probe = probing.probe(launcher, tmp)
        except RuntimeError as exc:
            return fail(str(exc))
    print(json.dumps(probe.env, indent=2, sort_keys=True))
    return 0
