"""Apply a cell's backend flags before any CUDA work, then read back what actually applied.

Why read back: a row must say what ran, not what was asked for. The classic trap is "fp32"
on an Ampere-or-newer GPU, where cuDNN convolutions run in TF32 by default
(``torch.backends.cudnn.allow_tf32`` is True) while matmuls do not
(``torch.backends.cuda.matmul.allow_tf32`` is False). ``eff_conv_math`` names the arithmetic
the convolutions really used, so the report can label it honestly.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any

from bench.run.plan.matrix import Cell
from bench.run.protocol import Flags
from bench.schema import flag


def available_cores() -> int:
    """Cores this process may run on (affinity-aware, unlike os.cpu_count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS/Windows
        return os.cpu_count() or 1


def apply(torch: Any, cell: Cell) -> None:
    """Set threads, cuDNN switches and TF32 for one cell, before any CUDA work."""
    threads = cell.cpu_threads or available_cores()
    torch.set_num_threads(threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # newer torch nudges towards fp32_precision; both work
        cudnn = torch.backends.cudnn
        if cell.device == "cuda":
            cudnn.benchmark = cell.cudnn_benchmark == "on"
            cudnn.deterministic = cell.cudnn_deterministic == "on"
            if cell.cudnn_benchmark_limit is not None and hasattr(cudnn, "benchmark_limit"):
                cudnn.benchmark_limit = cell.cudnn_benchmark_limit
        if cell.precision == "fp32-strict":
            cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.set_float32_matmul_precision("highest")
        if cell.kind == "ceiling" and cell.model == "matmul-tf32":
            torch.backends.cuda.matmul.allow_tf32 = True


def autocast_dtype(torch: Any, cell: Cell) -> Any:
    """The autocast dtype for an AMP precision, or None for the fp32 variants."""
    return {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(cell.precision)


def autocast_dtypes(torch: Any, device: str) -> list[str]:
    """The autocast dtypes (``bfloat16``, ``float16``) that really change a matmul's dtype on
    ``device``: an unsupported one is not an error, torch only warns and runs fp32."""
    out = []
    for name in ("bfloat16", "float16"):
        dtype = getattr(torch, name)
        with contextlib.suppress(Exception), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if device == "cuda" and name == "bfloat16" and not torch.cuda.is_bf16_supported():
                continue
            with torch.autocast(device_type=device, dtype=dtype):
                x = torch.ones(8, 8, device=device)
                product = x @ x
            if product.dtype == dtype:
                out.append(name)
    return out


def conv_math(torch: Any, cell: Cell) -> str:
    """The arithmetic the convolutions actually use, after the flags were applied."""
    if cell.precision == "amp-bf16":
        return "bf16"
    if cell.precision == "amp-fp16":
        return "fp16"
    if cell.device == "cuda" and torch.backends.cudnn.allow_tf32 and _tf32_capable(torch):
        return "tf32"
    return "fp32"


def _tf32_capable(torch: Any) -> bool:
    with contextlib.suppress(Exception):
        return bool(torch.cuda.get_device_capability()[0] >= 8)
    return False


def read_back(torch: Any, cell: Cell) -> Flags:
    """The effective value of every flag, as strings for the CSV (empty = not applicable)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cudnn = torch.backends.cudnn
        on_cuda = cell.device == "cuda"
        dtype = autocast_dtype(torch, cell)
        return Flags(
            eff_cudnn_enabled=flag(bool(cudnn.enabled)) if on_cuda else "",
            eff_cudnn_benchmark=flag(bool(cudnn.benchmark)) if on_cuda else "",
            eff_cudnn_deterministic=flag(bool(cudnn.deterministic)) if on_cuda else "",
            eff_cudnn_benchmark_limit=str(getattr(cudnn, "benchmark_limit", ""))
            if on_cuda else "",
            eff_cudnn_allow_tf32=flag(bool(cudnn.allow_tf32)) if on_cuda else "",
            eff_matmul_allow_tf32=flag(bool(torch.backends.cuda.matmul.allow_tf32))
            if on_cuda else "",
            eff_float32_matmul_precision=str(torch.get_float32_matmul_precision()),
            eff_deterministic_algorithms=flag(bool(
                torch.are_deterministic_algorithms_enabled())),
            eff_num_threads=str(torch.get_num_threads()),
            eff_autocast_dtype=str(dtype).replace("torch.", "")
            if dtype is not None and cell.kind == "model" else "",
            eff_conv_math=conv_math(torch, cell),
        )


def flag_defaults(torch: Any) -> dict[str, Any]:
    """Every flag's default in a fresh process, for the environment fingerprint."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cudnn = torch.backends.cudnn
        out: dict[str, Any] = {
            "cudnn.enabled": bool(cudnn.enabled),
            "cudnn.benchmark": bool(cudnn.benchmark),
            "cudnn.deterministic": bool(cudnn.deterministic),
            "cudnn.benchmark_limit": getattr(cudnn, "benchmark_limit", None),
            "cudnn.allow_tf32": bool(cudnn.allow_tf32),
            "cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
            "num_threads": torch.get_num_threads(),
            "num_interop_threads": torch.get_num_interop_threads(),
        }
        # torch >= 2.9 also exposes the newer fp32_precision switches; record them when present
        for path, obj in (("cudnn.conv", getattr(cudnn, "conv", None)),
                          ("cuda.matmul", torch.backends.cuda.matmul)):
            if obj is not None and hasattr(obj, "fp32_precision"):
                with contextlib.suppress(Exception):
                    out[f"{path}.fp32_precision"] = str(obj.fp32_precision)
        return out
