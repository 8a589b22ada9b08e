"""The commands' shape: one class per command owns its options (``bench.cli`` declares none),
and ``bench advise`` and its ``--images`` question open their run session through the one
helper (``bench.commands.measure``), not each a copy of it."""

from __future__ import annotations

import argparse
import ast
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from bench import cli
from bench.commands import COMMANDS, advise, feed
from bench.commands import measure as measuring
from bench.commands.base import Command
from bench.run.execute.launch import Launcher

from .conftest import ROOT

COMMANDS_DIR = ROOT / "bench" / "commands"


def _options(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """What a parser takes, action by action (``--help`` left out: every parser has it)."""
    return [(tuple(a.option_strings), a.dest, a.default, a.type, a.choices, a.nargs, a.metavar,
             a.help, type(a).__name__) for a in parser._actions
            if not isinstance(a, argparse._HelpAction)]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_each_command_is_one_class_that_owns_all_its_options() -> None:
    subparsers = _subparsers(cli.build_parser())
    assert list(subparsers) == [c.name for c in COMMANDS] == [
        "run", "status", "env", "check", "pack", "add", "report", "advise"]
    for command in COMMANDS:
        assert issubclass(command, Command) and command.help
        alone = argparse.ArgumentParser()
        command.add_arguments(alone)  # the class by itself declares every option...
        assert _options(alone), command.name
        # ...and the command line holds exactly those, and dispatches to the class's own run
        assert _options(subparsers[command.name]) == _options(alone), command.name
        assert subparsers[command.name].get_default("func") == command.run


def _calls(path: Path, name: str) -> list[int]:
    """The lines of ``path`` that call ``name`` (a function or a method of that name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == name:
                found.append(node.lineno)
    return found


def test_options_are_declared_only_by_the_commands() -> None:
    """Not in ``bench.cli``, nor in a module of the report: in ``bench/commands/`` and the
    cluster executor's options, which the run command adds to its own parser."""
    declaring = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bench").rglob("*.py")
                 if _calls(p, "add_argument")}
    assert "bench/cli.py" not in declaring
    assert declaring - {p.relative_to(ROOT).as_posix() for p in COMMANDS_DIR.glob("*.py")} == {
        "bench/run/cluster/executor.py"}
    assert not (ROOT / "bench" / "report" / "options.py").exists()


def test_only_the_session_helper_opens_and_runs_a_new_run() -> None:
    for path in COMMANDS_DIR.glob("*.py"):
        if path.name != "measure.py":
            assert not _calls(path, "run_new"), path.name
    assert _calls(COMMANDS_DIR / "measure.py", "run_new")
    assert _calls(COMMANDS_DIR / "advise.py", "measure")
    assert _calls(COMMANDS_DIR / "feed.py", "measure")


class _Opened(Exception):
    """Raised by the launcher: the session began, and where from is in the traceback."""


def _opener(name: str) -> Launcher:
    raise _Opened(name)


def _who_opens(argv: list[str], run: Callable[[argparse.Namespace,
                                              Callable[[str], Launcher]], int]) -> str:
    args = cli.build_parser().parse_args(argv)
    with pytest.raises(_Opened) as opened:
        run(args, _opener)
    caller = traceback.extract_tb(opened.value.__traceback__)[-2]  # the frame that opened it
    return f"{Path(caller.filename).name}:{caller.name}"


def test_advise_and_feed_open_their_session_through_the_one_helper(tmp_path: Path) -> None:
    images = tmp_path / "images"
    images.mkdir()
    (images / "a.jpg").write_bytes(b"\xff\xd8\xff")  # only its name is looked at before
    helper = f"measure.py:{measuring.measure.__name__}"
    assert _who_opens(["advise", "resnet18", "--dry-run"], advise.cmd_advise) == helper
    assert _who_opens(["advise", "resnet18", "--dry-run", "--images", str(images)],
                      advise.cmd_advise) == helper
    assert _who_opens(["advise", "resnet18", "--dry-run", "--images", str(images)],
                      feed.cmd_feed) == helper
