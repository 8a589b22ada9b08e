"""Reading a run's env.json for the report: valid JSON, an object, and the types it relies on.

Why check the types: env.json is written by the runner but read from a shared tree, where a
hand edit or another tool's file can hold ``"gpus": 5`` or ``"cpu": "x"``. The analysis
reads nested fields from it (the GPU's name, the CPU's cores, the torch version), and a
wrong type there surfaced as a ``TypeError`` deep in a page; here it is one line naming the
file, the line of the key and what was expected.

Why recompute the fingerprint: the id names the environment the rows were measured on, and
env.json's facts are what the machine page shows. A hand-edited torch version would be shown
as measured while the id still pools the rows with the real ones. ``--resume`` refuses such a
file, and so does the report: the id is recomputed from the file's own facts by the
definition it was written under (``bench.fingerprint``). A file that does not say which (no
``bench.workload_version``: written before the workload version joined the fingerprint, or a
synthetic test file hashing other facts) is not recomputed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import fingerprint as fingerprints
from bench import schema
from bench.report.input.errors import LoadError

#: The keys the report reads, and the JSON type each must have when present.
_TYPES: dict[str, tuple[type, ...]] = {
    "fingerprint_id": (str,),
    "machine": (str,),
    "run_id": (str,),
    "profile": (str,),
    "collected_at": (str,),
    "schema_version": (int,),
    "planned_rows": (int,),
    "python": (dict,),
    "os": (dict,),
    "torch": (dict,),
    "cpu": (dict,),
    "memory": (dict,),
    "gpus": (list,),
    "flag_defaults": (dict,),
    "bench": (dict,),
    "plan": (dict,),
    "sittings": (list,),
    "machine_uid": (str, type(None)),  # an anonymous machine id; absent before it was kept
}
#: The nested keys the report reads (the machine summary), and their JSON types; null is
#: allowed, as for a fact the probe could not find.
_NESTED: dict[str, dict[str, tuple[type, ...]]] = {
    "cpu": {"model": (str,), "physical_cores": (int,), "logical_cpus": (int,),
            "torch_threads": (int,), "affinity": (int,)},
    "torch": {"version": (str,), "torchvision": (str,), "cuda": (str,), "cudnn": (int, str)},
    "python": {"version": (str,)},
    "os": {"platform": (str,), "system": (str,), "release": (str,)},
    "memory": {"total_bytes": (int,)},
}  # bench.workload_version is read leniently: text that is no number counts as version 1
_GPU: dict[str, tuple[type, ...]] = {"name": (str,), "total_memory_bytes": (int,),
                                     "driver": (str,)}
#: The keys of one sitting's record (``bench.run.store.source``) the report reads.
_SITTING: dict[str, tuple[type, ...]] = {"sitting": (int,), "started_at": (str,),
                                         "code": (str,), "commit": (str,),
                                         "wall_s": (float, int), "timed_s": (float, int)}
_WORDS = {str: "a string", int: "an integer", float: "a number", dict: "an object",
          list: "a list"}


def _wrong(value: Any, types: tuple[type, ...]) -> bool:
    return value is not None and (isinstance(value, bool) or not isinstance(value, types))


def _line_of(text: str, key: str, within: str = "") -> int:
    """The line where ``key`` is first written, after the key ``within`` where one is named
    (1 when it cannot be found)."""
    start = 0
    if within:
        outer = re.search(rf'^\s*"{re.escape(within)}"\s*:', text, re.MULTILINE)
        start = outer.start() if outer else 0
    found = re.compile(rf'^\s*"{re.escape(key)}"\s*:', re.MULTILINE).search(text, start)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _type_problem(env: dict[str, Any], text: str) -> tuple[int, str] | None:
    for key, types in _TYPES.items():
        if key not in env:
            continue
        value = env[key]
        if isinstance(value, bool) or not isinstance(value, types):
            return _line_of(text, key), (
                f"{key} must be {_WORDS[types[0]]}, not {type(value).__name__} {value!r:.40}")
    for part, keys in _NESTED.items():
        for key, types in keys.items():
            value = (env.get(part) or {}).get(key)
            if _wrong(value, types):
                return _line_of(text, key, within=part), (
                    f"{part}.{key} must be {_WORDS[types[0]]}, not "
                    f"{type(value).__name__} {value!r:.40}")
    return (_items_problem(env, text, "gpus", _GPU)
            or _items_problem(env, text, "sittings", _SITTING))


def _items_problem(env: dict[str, Any], text: str, key: str,
                   types: dict[str, tuple[type, ...]]) -> tuple[int, str] | None:
    """The first item of the list ``env[key]`` that is no object, or holds a key of
    ``types`` with a value of another type."""
    for i, item in enumerate(env.get(key) or []):
        if not isinstance(item, dict):
            return _line_of(text, key), f"{key}[{i}] must be an object, not {item!r:.40}"
        for name, allowed in types.items():
            if _wrong(item.get(name), allowed):
                return _line_of(text, name, within=key), (
                    f"{key}[{i}].{name} must be {_WORDS[allowed[0]]}, not "
                    f"{type(item[name]).__name__} {item[name]!r:.40}")
    return None


def read_env(path: Path) -> dict[str, Any]:
    """The parsed env.json, or ``LoadError`` naming the file, the line and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
        env = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(path, 0, f"cannot read env.json: {exc}") from None
    if not isinstance(env, dict):
        raise LoadError(path, 1, "env.json is not a JSON object")
    fingerprint = env.get("fingerprint_id")
    if not isinstance(fingerprint, str) or not fingerprint:
        raise LoadError(path, 1, "env.json has no fingerprint_id")
    version = env.get("schema_version", schema.SCHEMA_VERSION)
    if isinstance(version, int) and not isinstance(version, bool) \
            and version > schema.SCHEMA_VERSION:
        raise LoadError(
            path,
            _line_of(text, "schema_version"),
            f"env.json schema_version {version!r} is newer than this code understands "
            f"(<= {schema.SCHEMA_VERSION}); upgrade torch-knobs to read it",
        )
    problem = _type_problem(env, text)
    if problem is not None:
        raise LoadError(path, *problem)
    definition = fingerprints.definition_of(env)
    if definition is not None:
        own = fingerprints.fingerprint_id(env, definition)
        if own != fingerprint:
            raise LoadError(
                path,
                _line_of(text, "fingerprint_id"),
                f"fingerprint_id {fingerprint!r} is not the {own!r} its own facts give "
                f"(fingerprint definition {definition}): edited by hand, or facts copied from "
                "another run? env.json must be the one its run wrote",
            )
    return env


@dataclass(frozen=True)
class SittingRecord:
    """What env.json records of one sitting of a run (``bench.run.store.source``): the measuring
    code it ran and, once it ended, its wall time and the timed work in it."""

    number: int
    code: str  # the digest of the measuring files
    commit: str = ""  # the git commit, where it could be named
    wall_s: float | None = None  # from its start, probe included, to its end
    timed_s: float | None = None  # its cold passes and steady iterations
    #: the pace probes at its start and end, as env.json keeps them (``bench.sittings``
    #: reads them): (phase, probe, steady p10 in s); empty where the sitting measured none
    pace: tuple[tuple[str, str, float], ...] = ()


def _seconds(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def _probes(pace: Any) -> tuple[tuple[str, str, float], ...]:
    """A sitting record's pace probes, those with a figure (a probe that failed has none)."""
    if not isinstance(pace, Mapping):
        return ()
    return tuple((phase, str(name), float(figures["steady_p10_s"]))
                 for phase in ("start", "end") if isinstance(pace.get(phase), Mapping)
                 for name, figures in pace[phase].items()
                 if isinstance(figures, Mapping) and _seconds(figures.get("steady_p10_s")))


def sitting_records(env: dict[str, Any] | None) -> tuple[SittingRecord, ...]:
    """env.json's sitting records that name their sitting and code (``read_env`` checked
    their types), by sitting."""
    found = {r["sitting"]: SittingRecord(r["sitting"], r["code"], r.get("commit") or "",
                                       _seconds(r.get("wall_s")), _seconds(r.get("timed_s")),
                                       _probes(r.get("pace")))
             for r in (env or {}).get("sittings") or []
             if isinstance(r.get("sitting"), int) and r.get("code")}
    return tuple(found[n] for n in sorted(found))
