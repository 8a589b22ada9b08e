"""How a failed model step is classified: running out of memory is ``oom`` whichever allocator
says so, in whichever words; anything else is ``error``."""

from __future__ import annotations

import types

import pytest

from bench.run.child.worker import classify

#: A torch without OutOfMemoryError types: only the words decide.
BARE = types.SimpleNamespace(cuda=types.SimpleNamespace())


@pytest.mark.parametrize("exc", [
    RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't "
                 "allocate memory: you tried to allocate 4000000000000 bytes. Error code 12 "
                 "(Cannot allocate memory)"),
    RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 8 GiB"),
    RuntimeError("std::bad_alloc"),
    OSError(12, "Cannot allocate memory"),
    MemoryError(),
    RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
    RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
])
def test_every_allocator_running_out_is_oom(exc: BaseException) -> None:
    assert classify(BARE, exc)[0] == "oom"


def test_other_failures_are_errors() -> None:
    assert classify(BARE, RuntimeError("shape mismatch")) == ("error",
                                                               "RuntimeError: shape mismatch")


def test_a_real_cpu_allocation_too_large_is_oom() -> None:
    """The allocator's own message, as a 1e9 batch gets it (it used to read ``error``)."""
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as info:
        torch.empty(2**50, dtype=torch.uint8)
    status, reason = classify(torch, info.value)
    assert status == "oom", reason
