"""One module per command of ``python -m bench``, each with the one class that owns the
command's name, help, options and run (``base.Command``); ``COMMANDS`` lists them in the order
``--help`` shows, and ``bench.cli`` builds the one parser from it. Beside them: ``feed``
(``advise --images``), ``advise_plan`` (what advise measures), ``measure`` (the run session
advise and feed share), ``unmeasured`` (why cells were not measured, said at the end of run
and advise), ``audit`` (the rules ``check --all`` and ``add`` hold a run folder to) and
``exits`` (the one way a command refuses).
"""

from __future__ import annotations

from bench.commands.add import AddCommand
from bench.commands.advise import AdviseCommand
from bench.commands.base import Command
from bench.commands.check import CheckCommand
from bench.commands.env import EnvCommand
from bench.commands.pack import PackCommand
from bench.commands.report import ReportCommand
from bench.commands.run import RunCommand
from bench.commands.status import StatusCommand

#: Every command, in the order ``python -m bench --help`` lists them.
COMMANDS: tuple[type[Command], ...] = (RunCommand, StatusCommand, EnvCommand, CheckCommand,
                                       PackCommand, AddCommand, ReportCommand, AdviseCommand)
