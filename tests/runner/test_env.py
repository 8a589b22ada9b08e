"""The environment fingerprint: what identifies a machine's results and what only describes it."""

from __future__ import annotations

import copy

from bench.run.child import env

ENV = {
    "python": {"version": "3.11.7"},
    "os": {"system": "Linux", "release": "6.1"},
    "torch": {"version": "2.14.1", "torchvision": "0.29.1", "cuda": "13.0", "cudnn": 92400},
    "cpu": {"model": "Some CPU", "logical_cpus": 8, "affinity": 8},
    "gpus": [{"name": "Some GPU", "total_memory_bytes": 2**34, "driver": "1.0"}],
    "bench": {"workload_version": 2},
    "memory": {"total_bytes": 2**35},
}


def test_system_memory_describes_the_machine_but_does_not_fingerprint_it() -> None:
    """A RAM upgrade must not split a machine's results or make --resume refuse its run."""
    more_ram = copy.deepcopy(ENV)
    more_ram["memory"] = {"total_bytes": 2**36}
    assert env.fingerprint_id(more_ram) == env.fingerprint_id(ENV)
    other_gpu = copy.deepcopy(ENV)
    other_gpu["gpus"][0]["name"] = "Another GPU"  # type: ignore[index]
    assert env.fingerprint_id(other_gpu) != env.fingerprint_id(ENV)


def test_collect_memory_reads_the_installed_total() -> None:
    total = env.collect_memory()["total_bytes"]
    assert isinstance(total, int) and total > 2**20
