"""The environment fingerprint id: a hash of the stable facts in an env.json.

Standard library only and free of torch, so the child computes it where it collects the
environment, and the runner recomputes it, from a live probe and from a stored env.json: a
resume refuses a run whose env.json no longer gives the id it records (edited by hand), or
whose environment is not this one.

Only stable facts count (hardware and software versions, not clocks or dates), so two runs
on the same machine and stack share an id and can be resumed or compared, while a driver,
torch or cuDNN upgrade, or a change to what a measured step does (the workload version),
gets a new id and is never pooled with the old.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

_STABLE = (("python", "version"), ("os", "system"), ("os", "release"), ("torch", "version"),
           ("torch", "torchvision"), ("torch", "cuda"), ("torch", "cudnn"), ("cpu", "model"),
           ("cpu", "logical_cpus"), ("cpu", "affinity"), ("bench", "workload_version"))


def stable_facts(env: Mapping[str, Any]) -> dict[str, Any]:
    """The facts the id hashes, by dotted name (a part that is not an object hashes as is)."""
    facts: dict[str, Any] = {}
    for a, b in _STABLE:
        part = env.get(a, {})
        facts[f"{a}.{b}"] = part.get(b) if isinstance(part, dict) else part
    gpus = env.get("gpus", [])
    facts["gpus"] = [(g.get("name"), g.get("total_memory_bytes"), g.get("driver"))
                     if isinstance(g, dict) else g for g in gpus] \
        if isinstance(gpus, list) else gpus
    return facts


def fingerprint_id(env: Mapping[str, Any]) -> str:
    blob = json.dumps(stable_facts(env), sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def differences(here: Mapping[str, Any], there: Mapping[str, Any]) -> list[str]:
    """``"torch.version 2.14.1 here, 2.13.0 there"`` for every stable fact that differs."""
    a, b = stable_facts(here), stable_facts(there)
    return [f"{key} {json.dumps(a[key], default=str)} here, "
            f"{json.dumps(b[key], default=str)} there" for key in a if a[key] != b[key]]
