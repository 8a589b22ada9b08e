"""``python -m bench report``: the site, built by ``bench.report.build`` (its options are
``bench.report.options``'). Its dependencies (pandas and the rest) load only when it runs."""

from __future__ import annotations

import argparse


def cmd_report(args: argparse.Namespace) -> int:
    from bench.report import build  # the report's dependencies, loaded only for this command

    return int(build.main(args))
