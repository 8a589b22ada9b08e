"""How a command refuses: one ``error:`` line on stderr naming the problem (and the valid
choices), exit code 2, and nothing written. Every command refuses through ``fail``, so they
all read and exit alike."""

from __future__ import annotations

import sys

#: The exit code of a refused command (argparse's own, for a bad option).
USAGE = 2


def fail(msg: str) -> int:
    """Say ``error: msg`` on stderr; return ``USAGE`` for the command to exit with."""
    print(f"error: {msg}", file=sys.stderr)
    return USAGE
