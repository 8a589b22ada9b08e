"""The environment fingerprint: what identifies a machine's results and what only describes it."""

from __future__ import annotations

import copy
import sys
import types
from typing import Any

import pytest

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


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)


def test_py_cpuinfo_describes_the_cpu_but_never_changes_the_fingerprint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Installing py-cpuinfo between a run and its --resume must not make it another machine."""
    monkeypatch.setitem(sys.modules, "cpuinfo", None)  # not installed
    without = env.collect_cpu()
    _fake_module(monkeypatch, "cpuinfo",
                 get_cpu_info=lambda: {"brand_raw": "Vendor Fancy Name 9000 @ 9 GHz"})
    with_it = env.collect_cpu()
    assert with_it["brand"] == "Vendor Fancy Name 9000 @ 9 GHz" and "brand" not in without
    assert with_it["model"] == without["model"]
    fingerprints = {env.fingerprint_id({**ENV, "cpu": cpu}) for cpu in (without, with_it)}
    assert len(fingerprints) == 1


class FakeNvml:
    """The parts of nvidia-ml-py the fingerprint reads, for two GPUs; no driver needed."""

    def __init__(self, broken: str = "") -> None:
        self.broken = broken
        self.calls: list[str] = []

    def module(self) -> dict[str, Any]:
        def call(name: str, value: Any) -> Any:
            def fn(*args: Any) -> Any:
                self.calls.append(name)
                if name == self.broken:
                    raise RuntimeError(f"NVML: {name} failed")
                return value(*args) if callable(value) else value
            return fn

        return {
            "NVML_CLOCK_SM": 1, "NVML_CLOCK_MEM": 2,
            "nvmlInit": call("nvmlInit", None), "nvmlShutdown": call("nvmlShutdown", None),
            "nvmlSystemGetDriverVersion": call("nvmlSystemGetDriverVersion", b"570.86.15"),
            "nvmlDeviceGetCount": call("nvmlDeviceGetCount", 2),
            "nvmlDeviceGetHandleByIndex": call("nvmlDeviceGetHandleByIndex", lambda i: i),
            "nvmlDeviceGetMaxClockInfo": call("nvmlDeviceGetMaxClockInfo",
                                              lambda h, c: {1: 1980, 2: 3201}[c]),
            "nvmlDeviceGetClockInfo": call("nvmlDeviceGetClockInfo",
                                           lambda h, c: {1: 345 + h, 2: 3201}[c]),
            "nvmlDeviceGetPowerManagementLimit": call("nvmlDeviceGetPowerManagementLimit",
                                                      700000),
            "nvmlDeviceGetPerformanceState": call("nvmlDeviceGetPerformanceState", 0),
            "nvmlDeviceGetCurrentClocksThrottleReasons": call(
                "nvmlDeviceGetCurrentClocksThrottleReasons", 4),
        }


def _no_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("no subprocess when NVML answers")

    monkeypatch.setattr(env.subprocess, "run", refuse)
    monkeypatch.setattr(env.shutil, "which", lambda name: "/usr/bin/" + name)


def test_nvml_gives_driver_clocks_power_and_throttle_reasons_without_a_subprocess(
        monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml()
    _fake_module(monkeypatch, "pynvml", **nvml.module())
    _no_nvidia_smi(monkeypatch)
    facts = env.gpu_driver_facts()
    assert facts[1] == {"driver_version": "570.86.15", "clocks.max.sm": "1980 MHz",
                        "clocks.max.mem": "3201 MHz", "clocks.sm": "346 MHz",
                        "clocks.mem": "3201 MHz", "power.limit": "700.00 W", "pstate": "P0",
                        "clocks_throttle_reasons.active": "0x0000000000000004"}
    assert len(facts) == 2 and nvml.calls[-1] == "nvmlShutdown"


def test_a_fact_nvml_cannot_give_is_left_out_and_the_rest_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_module(monkeypatch, "pynvml",
                 **FakeNvml(broken="nvmlDeviceGetCurrentClocksThrottleReasons").module())
    _no_nvidia_smi(monkeypatch)
    facts = env.gpu_driver_facts()
    assert "clocks_throttle_reasons.active" not in facts[0]
    assert facts[0]["power.limit"] == "700.00 W"


def test_without_a_driver_nvml_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_module(monkeypatch, "pynvml", **FakeNvml(broken="nvmlInit").module())
    smi = [{"driver_version": "570.86.15", "pstate": "P0"}]
    monkeypatch.setattr(env, "_nvidia_smi", lambda: smi)
    assert env.gpu_driver_facts() == smi
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed at all
    assert env.gpu_driver_facts() == smi


def test_gpus_in_the_fingerprint_take_their_driver_from_nvml(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_module(monkeypatch, "pynvml", **FakeNvml().module())
    _no_nvidia_smi(monkeypatch)
    props = types.SimpleNamespace(name="Some GPU", total_memory=2**34, major=9, minor=0,
                                  multi_processor_count=132)
    cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 1,
                                 get_device_properties=lambda i: props)
    gpus = env.collect_gpus(types.SimpleNamespace(cuda=cuda))
    assert gpus[0]["driver"] == "570.86.15" and gpus[0]["clocks"]["pstate"] == "P0"
    assert gpus[0]["capability"] == "9.0" and "driver_version" not in gpus[0]["clocks"]


def test_the_conv_algo_argument_is_asked_of_the_installed_torch() -> None:
    """The claim "pass algo= to conv2d" is answered by calling torch, not by reading docs."""
    import types

    import torch

    from bench.run.child import env

    real = env.collect_conv_api(torch)
    assert {k: v["accepts_algo"] for k, v in real.items()} == {
        "torch.nn.functional.conv2d": False, "torch.nn.Conv2d.forward": False}
    assert all(v["error"].startswith("TypeError") for v in real.values())

    # a torch whose functional conv2d did take it (and whose module fails another way)
    def conv2d(x: object, w: object, algo: int = 0) -> object:
        return x

    class Conv2d:
        def __init__(self, *args: object) -> None:
            pass

        def __call__(self, x: object, algo: int = 0) -> object:
            raise RuntimeError("no kernel for this input")

    fake = types.SimpleNamespace(
        zeros=torch.zeros, nn=types.SimpleNamespace(
            functional=types.SimpleNamespace(conv2d=conv2d), Conv2d=Conv2d))
    found = env.collect_conv_api(fake)
    assert found["torch.nn.functional.conv2d"] == {"accepts_algo": True, "error": ""}
    assert found["torch.nn.Conv2d.forward"]["accepts_algo"] is None
