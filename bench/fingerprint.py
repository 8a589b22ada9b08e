"""The environment fingerprint id: a hash of the stable facts in an env.json.

Standard library only and free of torch, and shared by both sides: the child computes it where
it collects the environment; the runner recomputes it, from a live probe and from a stored
env.json, so a resume refuses a run whose env.json no longer gives the id it records (edited by
hand) or whose environment is not this one; the report's loader recomputes it from each
env.json it reads, so an edited file is refused instead of shown.

Only stable facts count (hardware and software versions, not clocks or dates), so two runs
on the same machine and stack share an id and can be resumed or compared, while a driver,
torch or cuDNN upgrade, or a change to what a measured step does (the workload version),
gets a new id and is never pooled with the old.

The definition has changed once, and a stored id is recomputed by the definition it was
written under (``definition_of``):

1. the facts of ``_STABLE`` without ``bench.workload_version``: env.json had no ``bench``
   object then (the committed runs of 2026-11-29/30 before the training step's lr=0 change);
2. (``DEFINITION``, since the workload version joined the fingerprint) the same facts plus
   ``bench.workload_version``, which every env.json the runner writes carries in ``bench``.

A file without a ``bench`` object is of definition 1 or not the runner's at all (the test
fixtures' synthetic env.json hash other facts), so only definition 2 is checked where the
file cannot say; a later definition must be recognisable from the file it is written in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: The definition every env.json written now is under.
DEFINITION = 2

_STABLE = (("python", "version"), ("os", "system"), ("os", "release"), ("torch", "version"),
           ("torch", "torchvision"), ("torch", "cuda"), ("torch", "cudnn"), ("cpu", "model"),
           ("cpu", "logical_cpus"), ("cpu", "affinity"), ("bench", "workload_version"))
#: What each older definition did not hash yet.
_NOT_YET = {1: ("bench.workload_version",)}


def stable_facts(env: Mapping[str, Any], definition: int = DEFINITION) -> dict[str, Any]:
    """The facts the id hashes, by dotted name (a part that is not an object hashes as is)."""
    facts: dict[str, Any] = {}
    for a, b in _STABLE:
        part = env.get(a, {})
        facts[f"{a}.{b}"] = part.get(b) if isinstance(part, dict) else part
    gpus = env.get("gpus", [])
    facts["gpus"] = [(g.get("name"), g.get("total_memory_bytes"), g.get("driver"))
                     if isinstance(g, dict) else g for g in gpus] \
        if isinstance(gpus, list) else gpus
    for key in _NOT_YET.get(definition, ()):
        del facts[key]
    return facts


def fingerprint_id(env: Mapping[str, Any], definition: int = DEFINITION) -> str:
    blob = json.dumps(stable_facts(env, definition), sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def definition_of(env: Mapping[str, Any]) -> int | None:
    """The definition a stored env.json's id was computed under, when the file says: 2 when
    it records the workload version; None when it does not (definition 1, or a file the
    runner did not write)."""
    bench = env.get("bench")
    return DEFINITION if isinstance(bench, dict) and "workload_version" in bench else None


def differences(here: Mapping[str, Any], there: Mapping[str, Any]) -> list[str]:
    """``"torch.version 2.14.1 here, 2.13.0 there"`` for every stable fact that differs."""
    a, b = stable_facts(here), stable_facts(there)
    return [f"{key} {json.dumps(a[key], default=str)} here, "
            f"{json.dumps(b[key], default=str)} there" for key in a if a[key] != b[key]]
