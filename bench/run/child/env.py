"""The environment fingerprint: what a number was measured on.

One small ``collect_*`` function per source of facts (the shape pyperf uses). Each fills a
flat dict and never raises when its source is missing, because the measuring side must run
in a bare environment. Optional helpers are used when installed: psutil (physical cores),
py-cpuinfo (the CPU's brand string, kept as ``cpu.brand`` beside the fingerprinted
``cpu.model`` from /proc, so installing it never changes a machine's fingerprint) and
nvidia-ml-py (``pynvml``: driver, clocks, power limit and throttle reasons without a
subprocess); without them /proc and ``nvidia-smi`` are read.

The fingerprint id (``bench.fingerprint``, which the runner and the report recompute) hashes only
stable facts, so two runs on the same machine and stack share an id and can be resumed or
compared, while a driver, torch or cuDNN upgrade, or a change to what a measured step does
(``bench.schema.WORKLOAD_VERSION``), gets a new id and is never pooled.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import platform
import re
import shutil
import subprocess
from typing import Any, Callable

from bench.fingerprint import fingerprint_id
from bench.run.child.flags import available_cores, flag_defaults
from bench.schema import SCHEMA_VERSION


def collect_python() -> dict[str, Any]:
    return {"version": platform.python_version(),
            "implementation": platform.python_implementation()}


def collect_os() -> dict[str, Any]:
    return {"system": platform.system(), "release": platform.release(),
            "platform": platform.platform()}


def _proc_cpuinfo() -> tuple[str, int | None]:
    model, cores = "", set()
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8",
                                            errors="replace") as info:
        phys = core = ""
        for line in info:
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name" and not model:
                model = value
            elif key == "physical id":
                phys = value
            elif key == "core id":
                core = value
                cores.add((phys, core))
    return model, (len(cores) or None)


def collect_cpu(torch: Any | None = None) -> dict[str, Any]:
    model, physical = _proc_cpuinfo()
    brand = ""
    with contextlib.suppress(Exception):
        import cpuinfo  # py-cpuinfo, optional: described, never fingerprinted

        brand = str(cpuinfo.get_cpu_info().get("brand_raw") or "")
    with contextlib.suppress(Exception):
        import psutil  # optional

        physical = psutil.cpu_count(logical=False) or physical
    out: dict[str, Any] = {
        "model": model or platform.processor() or platform.machine(),
        "arch": platform.machine(),
        "physical_cores": physical,
        "logical_cpus": os.cpu_count(),
        "affinity": available_cores(),
    }
    if brand:
        out["brand"] = brand
    if torch is not None:
        out["torch_threads"] = torch.get_num_threads()
        with contextlib.suppress(Exception):
            out["capability"] = torch.backends.cpu.get_cpu_capability()
    return out


#: What is asked of the driver per GPU, under nvidia-smi's query names.
SMI_FIELDS = ("driver_version", "clocks.max.sm", "clocks.max.mem", "clocks.sm", "clocks.mem",
              "power.limit", "pstate")


def _nvidia_smi() -> list[dict[str, str]]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    with contextlib.suppress(Exception):
        out = subprocess.run([exe, f"--query-gpu={','.join(SMI_FIELDS)}",
                              "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return [dict(zip(SMI_FIELDS, (v.strip() for v in line.split(","))))
                for line in out.strip().splitlines()]
    return []


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_gpu(nvml: Any, handle: Any) -> dict[str, str]:
    """One GPU's facts from NVML, written as nvidia-smi writes them ("1980 MHz", "700.00 W",
    "P0"), so env.json reads the same whichever source filled it. A fact NVML cannot give
    (an old driver, a GPU without it) is left out."""
    sm, mem = getattr(nvml, "NVML_CLOCK_SM", 1), getattr(nvml, "NVML_CLOCK_MEM", 2)
    reads: dict[str, Callable[[], str]] = {
        "clocks.max.sm": lambda: f"{nvml.nvmlDeviceGetMaxClockInfo(handle, sm)} MHz",
        "clocks.max.mem": lambda: f"{nvml.nvmlDeviceGetMaxClockInfo(handle, mem)} MHz",
        "clocks.sm": lambda: f"{nvml.nvmlDeviceGetClockInfo(handle, sm)} MHz",
        "clocks.mem": lambda: f"{nvml.nvmlDeviceGetClockInfo(handle, mem)} MHz",
        "power.limit":
            lambda: f"{nvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000:.2f} W",
        "pstate": lambda: f"P{nvml.nvmlDeviceGetPerformanceState(handle)}",
        "clocks_throttle_reasons.active":
            lambda: f"0x{nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle):016x}",
    }
    out: dict[str, str] = {}
    for key, read in reads.items():
        with contextlib.suppress(Exception):
            out[key] = read()
    return out


def _nvml() -> list[dict[str, str]]:
    """Per GPU, the driver, clocks, power limit and throttle reasons from nvidia-ml-py
    (``pynvml``), without starting a process; empty when it is missing or finds no driver."""
    try:
        import pynvml
    except Exception:  # missing, or an install that does not load
        return []
    try:
        pynvml.nvmlInit()
    except Exception:
        return []
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        return [{"driver_version": driver,
                 **_nvml_gpu(pynvml, pynvml.nvmlDeviceGetHandleByIndex(i))}
                for i in range(pynvml.nvmlDeviceGetCount())]
    except Exception:
        return []
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def gpu_driver_facts() -> list[dict[str, str]]:
    """NVML when it answers, else nvidia-smi, else nothing."""
    return _nvml() or _nvidia_smi()


def collect_gpus(torch: Any) -> list[dict[str, Any]]:
    gpus: list[dict[str, Any]] = []
    with contextlib.suppress(Exception):
        if not torch.cuda.is_available():
            return []
        smi = gpu_driver_facts()
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            gpu: dict[str, Any] = {
                "index": i, "name": p.name, "total_memory_bytes": int(p.total_memory),
                "capability": f"{p.major}.{p.minor}",
                "multi_processor_count": int(p.multi_processor_count),
            }
            if i < len(smi):
                gpu["driver"] = smi[i].get("driver_version", "")
                gpu["clocks"] = {k: v for k, v in smi[i].items() if k != "driver_version"}
            gpus.append(gpu)
    return gpus


def collect_torch(torch: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"version": torch.__version__, "cuda": torch.version.cuda,
                            "cudnn": None, "hip": getattr(torch.version, "hip", None),
                            "debug": bool(getattr(torch.version, "debug", False))}
    with contextlib.suppress(Exception):
        import torchvision

        info["torchvision"] = torchvision.__version__
    with contextlib.suppress(Exception):
        info["cudnn"] = torch.backends.cudnn.version()
    with contextlib.suppress(Exception):
        info["mps"] = bool(torch.backends.mps.is_available())
    return info


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def machine_slug(env: dict[str, Any]) -> str:
    """A readable folder name: the GPU if there is one, otherwise the CPU and its cores."""
    gpus = env.get("gpus") or []
    if gpus:
        name = slug(gpus[0]["name"])
        return name + (f"-x{len(gpus)}" if len(gpus) > 1 else "")
    cpu = env.get("cpu", {})
    model = slug(re.sub(r"\((R|TM)\)|CPU|Processor|@.*$", "", str(cpu.get("model", "cpu"))))
    return f"cpu-{model[:40].strip('-')}-{cpu.get('affinity', '?')}c"


def collect_memory() -> dict[str, Any]:
    """Installed system memory: part of what a machine comparison lists, not of the
    fingerprint (a RAM upgrade does not change a step's time, and a resume must not fail on it)."""
    out: dict[str, Any] = {}
    with contextlib.suppress(ValueError, OSError, AttributeError):
        out["total_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return out


def collect_conv_api(torch: Any) -> dict[str, Any]:
    """Whether this torch's convolutions take an ``algo`` argument, asked of torch itself.

    Popular advice says a cuDNN algorithm can be chosen per call with ``algo=``; the site
    answers from what the installed torch does, not from its documentation. Tiny CPU tensors:
    nothing touches CUDA. Per entry point: ``accepts_algo`` (None when the call failed for
    another reason) and the error's first line.
    """
    out: dict[str, Any] = {}
    x = torch.zeros(1, 1, 3, 3)
    calls = {
        "torch.nn.functional.conv2d": lambda: torch.nn.functional.conv2d(
            x, torch.zeros(1, 1, 1, 1), algo=0),
        "torch.nn.Conv2d.forward": lambda: torch.nn.Conv2d(1, 1, 1)(x, algo=0),
    }
    for name, call in calls.items():
        try:
            call()
        except TypeError as exc:
            text = str(exc).strip().splitlines()
            out[name] = {"accepts_algo": False,
                         "error": f"TypeError: {text[0] if text else ''}"[:300]}
        except Exception as exc:  # failed for another reason: whether it takes algo is unknown
            out[name] = {"accepts_algo": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
        else:
            out[name] = {"accepts_algo": True, "error": ""}
    return out


#: Where a machine keeps its own stable id, in the order read: systemd's, D-Bus's, the board's.
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id",
                    "/sys/class/dmi/id/product_uuid")
#: Mixed into the hash so the recorded id matches no other program's hash of the same file.
MACHINE_UID_SALT = b"torch-knobs machine_uid 1\0"


def machine_uid(paths: tuple[str, ...] = MACHINE_ID_FILES) -> str | None:
    """An anonymous id of the physical machine: the first 16 hex digits of a salted sha256 of
    the first readable machine id; None where none is readable.

    Why: contributed runs of one machine can then be told from another's of the same model,
    without a host name or the id itself ever leaving the machine. Outside the fingerprint
    (``bench.fingerprint`` hashes only its listed facts): two identical machines share their
    fingerprint, and a reinstall must not make a run another environment."""
    for path in paths:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(path, encoding="ascii") as f:
                value = f.read().strip()
            if value:
                return hashlib.sha256(MACHINE_UID_SALT + value.encode()).hexdigest()[:16]
    return None


def collect_bench() -> dict[str, Any]:
    from bench import __version__
    from bench.run.child.workloads import WORKLOAD_VERSION

    return {"version": __version__, "workload_version": WORKLOAD_VERSION}


def collect(torch: Any) -> dict[str, Any]:
    """The whole fingerprint. Call it in a fresh process so ``flag_defaults`` are defaults."""
    env: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "collected_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "flag_defaults": flag_defaults(torch),
        "python": collect_python(),
        "os": collect_os(),
        "torch": collect_torch(torch),
        "cpu": collect_cpu(torch),
        "memory": collect_memory(),
        "gpus": collect_gpus(torch),
        "bench": collect_bench(),
    }
    with contextlib.suppress(Exception):  # a fact about this torch, outside the fingerprint
        env["conv_api"] = collect_conv_api(torch)
    env["machine_uid"] = machine_uid()
    env["fingerprint_id"] = fingerprint_id(env)
    env["machine"] = machine_slug(env)
    return env
