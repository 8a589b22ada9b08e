"""Apply a cell's backend flags before any CUDA work, then read back what actually applied.

Why read back: a row must say what ran, not what was asked for. The classic trap is "fp32"
on an Ampere-or-newer GPU, where cuDNN convolutions run in TF32 by default
(``torch.backends.cudnn.allow_tf32`` is True) while matmuls do not
(``torch.backends.cuda.matmul.allow_tf32`` is False). ``eff_conv_math`` names the arithmetic
the convolutions really used, so the report can label it honestly.

Since torch 2.9 the ``fp32_precision`` switches sit beside the old ``allow_tf32`` flags, and the
global one does not reach cuDNN convolutions (pytorch#179445): a cell's planned precision
(``planned``) therefore names every switch it sets, each is set on its own, and each is read
back (``verify``); one that does not read back as planned fails the replicate, naming it.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
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


class FlagError(RuntimeError):
    """A flag that did not read back as it was set: the row must not claim arithmetic it did
    not run."""


#: The legacy switch read through functions rather than an attribute.
MATMUL_PRECISION = "float32_matmul_precision"
#: The ``fp32_precision`` switches of torch >= 2.9 under ``torch.backends``: the global one,
#: CUDA's matmuls, cuDNN's (and its convolutions and RNNs), and oneDNN's, the CPU's (and its
#: matmuls, convolutions and RNNs). Strict fp32 sets every one to ``ieee``.
FP32_SWITCHES = ("fp32_precision", "cuda.matmul.fp32_precision", "cudnn.fp32_precision",
                 "cudnn.conv.fp32_precision", "cudnn.rnn.fp32_precision", "mkldnn.fp32_precision",
                 "mkldnn.matmul.fp32_precision", "mkldnn.conv.fp32_precision",
                 "mkldnn.rnn.fp32_precision")
#: Those TF32 applies to (CUDA), set to ``tf32`` where a cell plans TF32.
TF32_SWITCHES = ("cuda.matmul.fp32_precision", "cudnn.conv.fp32_precision",
                 "cudnn.rnn.fp32_precision")
_LEGACY = ("cudnn.allow_tf32", "cuda.matmul.allow_tf32")


def _path(torch: Any, path: str) -> tuple[Any, str] | None:
    """The object under ``torch.backends`` that holds ``path``'s last part, and that part;
    None where this torch lacks it."""
    obj = torch.backends
    *parents, name = path.split(".")
    for part in parents:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    try:
        getattr(obj, name)
    except AttributeError:
        return None
    except RuntimeError:  # there, but torch refuses to read it now (a mix of the two APIs)
        pass
    return obj, name


def read_flag(torch: Any, path: str) -> Any:
    """One switch's value as torch reads it back (``path`` under ``torch.backends``)."""
    if path == MATMUL_PRECISION:
        return torch.get_float32_matmul_precision()
    found = _path(torch, path)
    if found is None:
        raise FlagError(f"torch.backends.{path} does not exist in this torch")
    return getattr(*found)


def set_flag(torch: Any, path: str, value: Any) -> None:
    """Set one switch (``path`` under ``torch.backends``)."""
    if path == MATMUL_PRECISION:
        torch.set_float32_matmul_precision(value)
        return
    found = _path(torch, path)
    if found is None:
        raise FlagError(f"torch.backends.{path} does not exist in this torch")
    setattr(*found, value)


#: The global and per-backend switches: torch refuses to set an old flag while one of these
#: is other than ``none`` (it takes that for a mix of the two APIs).
_GROUPS = ("fp32_precision", "cudnn.fp32_precision", "mkldnn.fp32_precision")


def set_all(torch: Any, values: dict[str, Any]) -> None:
    """Set switches in order, the groups first cleared to ``none`` where old flags follow,
    so torch takes none of it for a mix of the two APIs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if any(p in values for p in (*_LEGACY, MATMUL_PRECISION)):
            for path in _GROUPS:
                if path in values:
                    set_flag(torch, path, "none")
        for path, value in values.items():
            set_flag(torch, path, value)


def planned(torch: Any, cell: Cell) -> dict[str, Any]:
    """Every TF32 switch a cell's precision sets, in the order it is set, with its value:
    fp32-strict sets every one strict, the TF32 matmul ceiling every CUDA one to TF32, the
    others leave PyTorch's defaults as they are (the plan is empty). The old flags come
    first, so the newer switches, set last, are the ones torch keeps."""
    if cell.precision == "fp32-strict":
        legacy: dict[str, Any] = {**dict.fromkeys(_LEGACY, False), MATMUL_PRECISION: "highest"}
        switches: tuple[str, ...] = FP32_SWITCHES
        value = "ieee"
    elif cell.kind == "ceiling" and cell.model == "matmul-tf32":
        legacy = {**dict.fromkeys(_LEGACY, True), MATMUL_PRECISION: "high"}
        switches, value = TF32_SWITCHES, "tf32"
    else:
        return {}
    return {**legacy, **{p: value for p in switches if _path(torch, p) is not None}}


def verify(torch: Any, plan: dict[str, Any]) -> None:
    """Read every planned switch back; the first that differs fails the replicate, named."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the newer switches first: the old cuDNN flag cannot be read at all once the conv
        # and RNN switches differ, and the switch that differs is the one to name
        for path, want in sorted(plan.items(), key=lambda kv: kv[0] in (*_LEGACY,
                                                                         MATMUL_PRECISION)):
            try:
                got = read_flag(torch, path)
            except RuntimeError as exc:
                raise FlagError(f"torch.backends.{path} could not be read back: "
                                f"{str(exc).splitlines()[0][:200]}") from None
            if got != want:
                name = f"torch.{'get_' if path == MATMUL_PRECISION else 'backends.'}{path}"
                raise FlagError(f"{name} read back {got!r} after it was set to {want!r}")


#: The reference configuration of the numerics check: fp32 with every TF32 switch off.
STRICT = Cell(precision="fp32-strict")


@contextlib.contextmanager
def strict(torch: Any) -> Iterator[None]:
    """Every TF32 switch strict (``STRICT``'s plan) for a reference computed inside, then the
    cell's own values back; both read back (``verify``), so neither side runs other math."""
    plan = planned(torch, STRICT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = {path: read_flag(torch, path) for path in plan}
    set_all(torch, plan)
    verify(torch, plan)
    try:
        yield
    finally:
        set_all(torch, before)
        verify(torch, before)


def apply(torch: Any, cell: Cell) -> None:
    """Set threads, cuDNN switches and TF32 for one cell, before any CUDA work, then read the
    TF32 switches back (``verify``)."""
    plan = planned(torch, cell)
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
    set_all(torch, plan)
    verify(torch, plan)


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
    if cell.device == "cuda" and _conv_tf32(torch) and _tf32_capable(torch):
        return "tf32"
    return "fp32"


def _conv_tf32(torch: Any) -> bool:
    """Whether cuDNN convolutions may use TF32: the newer switch where torch has it (the old
    flag cannot be read once conv and RNN switches differ), else the old flag."""
    conv = _path(torch, "cudnn.conv.fp32_precision")
    if conv is not None:
        return str(getattr(*conv)) == "tf32"
    return bool(torch.backends.cudnn.allow_tf32)


def _precision(torch: Any, path: str) -> str:
    """An ``fp32_precision`` switch as read back, empty where this torch lacks it."""
    found = _path(torch, path)
    return str(getattr(*found)) if found is not None else ""


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
            eff_matmul_fp32_precision=_precision(torch, "cuda.matmul.fp32_precision"),
            eff_conv_fp32_precision=_precision(torch, "cudnn.conv.fp32_precision"),
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
