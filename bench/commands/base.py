"""What a command of ``python -m bench`` is: a class that owns its name, its help, its options
and its run, as asv's ``Command`` classes do. ``bench.cli`` only iterates over the registry
(``bench.commands.COMMANDS``), so a command's options are declared in one place, beside the
code that reads them.
"""

from __future__ import annotations

import argparse
from typing import ClassVar, TypeVar

#: The parser class of the command line (``bench.cli.Parser``), which its sub-parsers share.
P = TypeVar("P", bound=argparse.ArgumentParser)


class Command:
    """One sub-command. A subclass sets ``name`` and ``help`` (and ``description`` for a
    longer text under ``--help``), declares its options in ``add_arguments`` and does its work
    in ``run``, which returns the exit code. Class methods only: a command holds no state
    between parsing and running but its ``args``."""

    name: ClassVar[str]
    help: ClassVar[str]
    description: ClassVar[str | None] = None

    @classmethod
    def setup(cls, subparsers: argparse._SubParsersAction[P]) -> P:
        """Add this command's parser to ``subparsers``, with its options, dispatching to
        ``run`` (``args.func``)."""
        parser = subparsers.add_parser(cls.name, help=cls.help, description=cls.description)
        cls.add_arguments(parser)
        parser.set_defaults(func=cls.run)
        return parser

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Declare the command's options on ``parser`` (argparse only: nothing heavy may be
        imported to list them, since every command's options are declared for any one)."""

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        """Do the command; the exit code."""
        raise NotImplementedError(cls.__name__)
