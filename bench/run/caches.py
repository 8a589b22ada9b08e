"""On-disk kernel caches: one folder per replicate, so a cold pass pays what it would really pay.

Why: some of what a first iteration costs is compiling kernels, and several layers keep those
compilations on disk between processes: the CUDA driver's JIT cache (PTX compiled to machine
code; cuDNN 9 builds some of its engines at run time), PyTorch's own cache of run-time compiled
kernels, and Inductor's and Triton's caches for ``torch.compile``. A process that finds them
filled by an earlier one skips that work. Measured against the machine's own shared cache, the
first replicate of a cell pays the compilation and every later one looks cheap, so a median
over replicates describes neither a fresh machine nor a warm one. That this is the cause of
the cheap later replicates seen on an H200 is a hypothesis until a GPU run with these folders
confirms it; the ``kernel_cache_*_bytes`` columns of every row show whether the folder filled.

The runner (parent side) creates the folders; the child points the caches at its own folder
before anything can initialise CUDA. The fork server never touches them. Standard library only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import MutableMapping
from pathlib import Path

#: Environment variable → subfolder of the replicate's cache folder.
CACHE_VARS = {
    "CUDA_CACHE_PATH": "cuda-jit",  # the CUDA driver's JIT cache (read at cuInit)
    "PYTORCH_KERNEL_CACHE_PATH": "torch-kernels",  # PyTorch's NVRTC-compiled kernels
    "TORCHINDUCTOR_CACHE_DIR": "inductor",  # torch.compile's FX graph and code caches
    "TRITON_CACHE_DIR": "triton",  # Triton's compiled kernels
}


def make_fresh(folder: Path) -> None:
    """An empty cache folder (anything left from an earlier attempt is removed first)."""
    remove(folder)
    folder.mkdir(parents=True)


def make_copy(source: Path, folder: Path) -> None:
    """A cache folder that starts as a copy of ``source`` (a warm cache), its own from then on.

    Copied entry by entry rather than with ``shutil.copytree``, which gathers its failures into
    one ``shutil.Error`` without an errno: a full disk here must reach the runner as the
    ``OSError`` it is, so that it stops the run instead of passing for the cell's crash.
    """
    remove(folder)
    folder.mkdir(parents=True)
    for root, dirs, files in os.walk(source, onerror=_raise):
        here = folder / os.path.relpath(root, source)
        for name in [*dirs, *files]:
            src, dst = os.path.join(root, name), here / name
            if os.path.islink(src):  # kept as a link (os.walk does not follow one)
                os.symlink(os.readlink(src), dst)
            elif os.path.isdir(src):
                dst.mkdir()
            else:
                shutil.copy2(src, dst)


def _raise(exc: OSError) -> None:
    raise exc


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def point_at(folder: str | Path, environ: MutableMapping[str, str] = os.environ) -> None:
    """Aim every on-disk kernel cache of this process at ``folder`` (before CUDA starts)."""
    for var, sub in CACHE_VARS.items():
        path = Path(folder) / sub
        path.mkdir(parents=True, exist_ok=True)
        environ[var] = str(path)


def size_bytes(folder: str | Path) -> int:
    """Bytes in the files under ``folder`` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue  # a file removed while we walk
    return total
