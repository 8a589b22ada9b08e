"""``python -m bench report``: the site, built by ``bench.report.build``.

Its options are declared here with argparse alone, so that the one parser can list them (for
``bench run`` too) without loading pandas, matplotlib, jinja2, scipy or MkDocs; those load
only when the report is built, in ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.base import Command


class ReportCommand(Command):
    """Results CSVs in, the site out; the one command that needs the report extra."""

    name = "report"
    help = "build the report site from results CSVs"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add = parser.add_argument
        add("--reports", type=Path, default=Path("reports"),
            help="folder of runs: <machine>/<run>/results.csv (default: reports)")
        add("--site-dir", type=Path, default=Path("site"),
            help="where the built site goes (default: site)")
        add("--docs-dir", type=Path, default=Path("site_src"),
            help="MkDocs docs folder; pages are generated into its generated/ folder "
                 "(default: site_src)")
        add("--config", type=Path, default=Path("mkdocs.yml"),
            help="MkDocs configuration (default: mkdocs.yml)")
        add("--skip-bad-rows", action="store_true",
            help="report bad rows on stderr and leave them out instead of stopping")
        add("--prices", type=Path, default=None,
            help="TOML file of machine prices, for images/s per dollar (format: see the "
                 "site's 'Prices file' page)")
        add("--focus", metavar="MACHINE", default=None,
            help="lead every page with this machine (its name or fingerprint id); by default "
                 "the machine of the runs under --reports that git does not hold yet")
        add("--no-mkdocs", action="store_true",
            help="only render the Markdown and charts; do not run mkdocs")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from bench.report import build  # the report's dependencies, loaded only for this command

        return int(build.main(args))
