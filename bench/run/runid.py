"""Run ids: a new run's folder name, and how the runs of one profile are found again.

A run id starts with its UTC start time and ends with its profile's name, so the newest run
of a profile is the largest of the names that end with it (``--resume`` without ``--out``).
"""

from __future__ import annotations

import datetime as dt


def new_run_id(profile: str, when: dt.datetime | None = None) -> str:
    """``20261130T005557Z-gpu``: the time (now, in UTC, unless ``when``) and the profile."""
    when = when or dt.datetime.now(dt.timezone.utc)
    return f"{when:%Y%m%dT%H%M%SZ}-{profile}"


def pattern(profile: str) -> str:
    """The glob that matches the run ids of ``profile`` (``new_run_id``'s)."""
    return f"*-{profile}"
