"""The ``report`` sub-command's options: argparse alone, so the one command-line parser can
declare them without loading pandas, matplotlib or MkDocs (``run`` never needs them)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``report`` sub-command's options."""
    parser.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        help="folder of runs: <machine>/<run>/results.csv (default: reports)",
    )
    parser.add_argument(
        "--site-dir",
        type=Path,
        default=Path("site"),
        help="where the built site goes (default: site)",
    )
    parser.add_argument(
        "--docs-dir",
        type=Path,
        default=Path("site_src"),
        help="MkDocs docs folder; pages are generated into its generated/ "
        "folder (default: site_src)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=Path("mkdocs.yml"),
        help="MkDocs configuration (default: mkdocs.yml)",
    )
    parser.add_argument(
        "--skip-bad-rows",
        action="store_true",
        help="report bad rows on stderr and leave them out instead of stopping",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        default=None,
        help="TOML file of machine prices, for images/s per dollar "
        "(format: see the site's 'Prices file' page)",
    )
    parser.add_argument(
        "--no-mkdocs",
        action="store_true",
        help="only render the Markdown and charts; do not run mkdocs",
    )
