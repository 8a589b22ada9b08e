"""Command line: ``python -m bench run | status | env | check | pack | add | report |
advise``.

The one parser, built from the commands' own classes (``bench.commands.COMMANDS``: each
declares its options and runs itself), and the dispatch to them. Bad input ends in one
``error:`` line naming the problem and the valid choices, exit code 2, and nothing written
(``bench.commands.exits``). torch is only ever imported in child processes; ``report`` never
imports it at all, and its own dependencies load only when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from bench.commands import COMMANDS
from bench.commands.exits import USAGE


class Parser(argparse.ArgumentParser):
    """argparse with the project's one-line errors: the problem and the valid choices as
    argparse words them, and where the options are listed, instead of a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: each command adds its own sub-parser (of this ``Parser``
    class, so theirs refuse in one line too)."""
    parser = Parser(
        prog="python -m bench",
        description="Measure PyTorch backend settings (cudnn.benchmark, determinism, TF32, "
                    "AMP, channels_last) and CPU vs GPU, and publish the results.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.setup(sub)
    return parser


#: Options whose value may begin with "-" (a negative duration), which argparse would take
#: for an option and answer "expected one argument": joined to it, the value reaches the
#: duration's own error, which names the valid forms.
_DASHED_VALUES = ("--budget",)


def _joined(argv: list[str]) -> list[str]:
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in _DASHED_VALUES and arg.startswith("-") and arg[1:2].isdigit():
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(_joined(sys.argv[1:] if argv is None else argv))
    return int(args.func(args))
