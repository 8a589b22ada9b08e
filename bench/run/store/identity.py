"""What a run folder measures, kept in its env.json, and the check that a resume is that run.

Why: ``--resume`` appends to a folder whose rows the report pools as one run. Resuming it
with another profile, other stopping settings or another set of cells would pool replicates
measured differently; resuming it on another machine or software stack would pool two
environments; and an env.json edited by hand would describe a stack the rows were not
measured on. So a resume compares the whole identity, and refuses with one line that names
what differs.

env.json keeps ``plan``: the profile's name and, per study, its settings (the stopping rule,
the replication, the timeout) and its cell ids. The fingerprint is recomputed from the live
environment and from the stored env.json's own facts, and both must give the stored id.
env.json must name this machine (the machine is not part of the fingerprint), and the rows
already written are checked too, since they are what the report pools: each must carry this
run's profile, fingerprint and machine. env.json is written before results.csv, so rows
without an env.json mean it was deleted: that is refused too. A shard of a cluster run
(env.json's ``shard``) resumes only as that shard: its plan is the whole profile's, so a resume
without its ``--shard K/N``, or with another, would run other shards' cells into its folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.fingerprint import differences, fingerprint_id
from bench.run.plan.matrix import Profile
from bench.schema import SchemaError

#: How many differences a refusal names before it says how many more there are.
SHOWN = 3


class ResumeError(SchemaError):
    """A resume that would mix two different runs in one folder; one line says how."""


def plan_of(profile: Profile) -> dict[str, Any]:
    """The part of a run's identity its profile decides, as env.json keeps it."""
    return {
        "profile": profile.name,
        "studies": {s.name: {"settings": asdict(s.settings),
                             "cells": [c.cell_id for c in s.cells]} for s in profile.studies},
    }


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def plan_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two plans, in words, most telling first."""
    out = []
    if old.get("profile") != new.get("profile"):
        out.append(f"it measured profile {old.get('profile')!r}, not {new.get('profile')!r}")
    before, now = old.get("studies") or {}, new.get("studies") or {}
    if not isinstance(before, dict):
        return [*out, "env.json's plan has no studies"]
    out += [f"study {name!r} is not in this profile" for name in before if name not in now]
    out += [f"study {name!r} is new" for name in now if name not in before]
    for name in (n for n in now if n in before):
        was, is_ = before[name] or {}, now[name]
        settings = was.get("settings") or {}
        for key, value in is_["settings"].items():
            if settings.get(key) != value:
                out.append(f"study {name!r}: {key} was {settings.get(key)!r}, now {value!r}")
        cells, cells_now = list(was.get("cells") or []), is_["cells"]
        added = [c for c in cells_now if c not in set(cells)]
        gone = [c for c in cells if c not in set(cells_now)]
        if added or gone:
            out.append(f"study {name!r}: other cells ({len(added)} new: {_ids(added) or '-'}; "
                       f"{len(gone)} gone: {_ids(gone) or '-'})")
    return out


def check_resume(stored: Mapping[str, Any] | None, live: Mapping[str, Any],
                 plan: Mapping[str, Any], env_path: Path,
                 rows: Sequence[Mapping[str, str]] = ()) -> None:
    """Refuse (``ResumeError``) a resume whose env.json or ``rows`` (the complete rows of its
    results.csv) are not this run's, in the order a reader would look: the file itself, then
    the environment, then the plan, then the rows."""
    where = env_path.parent
    if stored is None:  # env.json is written before results.csv: only a deletion leaves rows
        if rows:        # without it, and then nothing says what they measured
            raise ResumeError(f"cannot resume {where}: its results.csv holds {len(rows)} rows "
                              f"but there is no {env_path.name} (was it deleted?); "
                              "use a new --out")
        return
    recorded = stored.get("fingerprint_id")
    from_file = fingerprint_id(stored)
    if from_file != recorded:
        raise ResumeError(f"cannot resume {where}: {env_path.name}'s own facts give fingerprint "
                          f"{from_file}, not the {recorded} it records (was it edited?); "
                          "use a new --out")
    from_live = fingerprint_id(live)
    if from_live != recorded:
        named = differences(live, stored)[:SHOWN]
        raise ResumeError(f"cannot resume {where}: it was measured on fingerprint {recorded}, "
                          f"this environment is {from_live}" + (
                              f" ({'; '.join(named)})" if named else "")
                          + "; results are never mixed: use a new --out")
    if stored.get("machine") != live.get("machine"):
        raise ResumeError(f"cannot resume {where}: {env_path.name} names machine "
                          f"{stored.get('machine')!r}, this machine is {live.get('machine')!r} "
                          "(was it edited?); use a new --out")
    old_plan = stored.get("plan")
    if not isinstance(old_plan, dict):
        raise ResumeError(f"cannot resume {where}: {env_path.name} does not record what the "
                          "run measured; use a new --out")
    found = plan_differences(old_plan, plan)
    fewer = _fewer_studies(old_plan, plan)
    if found and all(f.endswith("is not in this profile") for f in found) and fewer:
        raise ResumeError(f"cannot resume {where}: its plan has studies {_ids(fewer[0])}, this "
                          f"one only {_ids(fewer[1]) or 'none'}; a resume finishes the whole "
                          "plan, so pass the same --only as its first sitting did (none if it "
                          "had none); with --budget the profile's first studies run first")
    if found:
        more = f" (and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""
        raise ResumeError(f"cannot resume {where}: {'; '.join(found[:SHOWN])}{more}; "
                          "use a new --out")
    check_rows(rows, {"profile": plan.get("profile"), "fingerprint_id": recorded,
                      "machine": live.get("machine")}, where)


def _fewer_studies(old: Mapping[str, Any], new: Mapping[str, Any]
                   ) -> tuple[list[str], list[str]] | None:
    """(the stored plan's studies, this one's) when this plan selects some of them, in the
    stored order, and adds none."""
    before, now = old.get("studies"), new.get("studies") or {}
    if not isinstance(before, dict) or any(name not in before for name in now):
        return None
    return list(before), [name for name in before if name in now]


def check_shard(stored: Mapping[str, Any] | None, spec: str | None, env_path: Path) -> None:
    """Refuse a resume whose ``--shard`` (``spec``; None: none) is not the one env.json
    records: the plan, and so ``check_resume``, is the same for every shard of a run."""
    if stored is None:
        return
    record = stored.get("shard")
    held = record.get("spec") if isinstance(record, dict) else None
    if _shard(held) == _shard(spec):
        return
    where = env_path.parent
    if held is None:
        raise ResumeError(f"cannot resume {where}: it holds a whole run, not a shard; resume "
                          f"it without --shard {spec}")
    if spec is None:
        raise ResumeError(f"cannot resume {where}: it holds shard {held} of a cluster run; "
                          f"pass --shard {held}, or the resume would run other shards' cells")
    raise ResumeError(f"cannot resume {where}: it holds shard {held} of a cluster run, not "
                      f"{spec}; pass --shard {held}")


def check_sittings(stored: Mapping[str, Any] | None, env_path: Path) -> None:
    """Refuse a resume whose env.json holds sitting records (``bench.run.store.source``) that are
    not a list: the resume adds its own record and keeps the others as they are."""
    records = (stored or {}).get("sittings", [])
    if not isinstance(records, list):
        raise ResumeError(f"cannot resume {env_path.parent}: {env_path.name}'s sittings is "
                          f"{type(records).__name__}, not a list (was it edited?); use a new "
                          "--out")


def _shard(spec: object) -> str | None:
    """``" 1/2"`` → ``"1/2"``: a spec as written, without its spaces."""
    return "".join(str(spec).split()) if spec else None


#: The columns of a row that say which run it belongs to.
ROW_IDENTITY = ("profile", "fingerprint_id", "machine")


def check_rows(rows: Sequence[Mapping[str, str]], live: Mapping[str, Any], where: Path) -> None:
    """Refuse a resume whose rows were measured as another run: the rows are the truth, and
    env.json can be edited (the machine is not part of the fingerprint)."""
    for column in ROW_IDENTITY:
        other = [r.get(column) for r in rows if r.get(column) != live[column]]
        if other:
            raise ResumeError(f"cannot resume {where}: {len(other)} of its {len(rows)} rows "
                              f"were measured with {column} {other[0]!r}, not "
                              f"{live[column]!r}; results are never mixed: use a new --out")
