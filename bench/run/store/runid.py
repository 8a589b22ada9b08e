"""Run ids: a new run's folder name, and how the runs of one profile are found again.

A run id starts with its UTC start time and ends with its profile's name, so the newest run
of a profile is the largest of the names that end with it (``--resume`` without ``--out``).
"""

from __future__ import annotations

import datetime as dt
import re

#: What a run id may be: one folder name, safe on every file system and in a URL.
VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


def new_run_id(profile: str, when: dt.datetime | None = None) -> str:
    """``20261130T005557Z-gpu``: the time (now, in UTC, unless ``when``) and the profile."""
    when = when or dt.datetime.now(dt.timezone.utc)
    return f"{when:%Y%m%dT%H%M%SZ}-{profile}"


def pattern(profile: str) -> str:
    """The glob that matches the run ids of ``profile`` (``new_run_id``'s)."""
    return f"*-{profile}"


def problem(run_id: str) -> str | None:
    """Why ``run_id`` (``--run-id``) cannot name a run folder, in one line; None if it can. A
    run id is one folder under its machine's: ``a/b`` or ``../x`` would write elsewhere."""
    if VALID.fullmatch(run_id) and ".." not in run_id:
        return None
    return (f"--run-id {run_id!r}: a run id is one folder name of letters, digits, '.', '_' "
            "and '-', starting with a letter or digit, at most 96 characters, without '..'")
