"""Appends that land whole or not at all, and the torn tails a kill can still leave.

Why this module: a run writes its store for hours on a box that can fill its disk, lose its
NFS mount or be killed at any instant, and every row already written must stay readable.

- An append is one ``os.write`` of complete lines (looped: a full disk takes part of a write
  and refuses the rest), then ``fsync``. If any of it fails (ENOSPC, EIO, EROFS, ...), the
  file is truncated back to where the append began, which is the end of its last complete
  line, and ``StoreError`` says what failed. A half line is never left for the next append
  to be glued onto.
- Only a kill in the middle of a write (or a power cut) can still leave a torn last record.
  ``complete_end`` finds where the complete records end (a newline outside quotes, so a
  multi-line error message is not cut), and ``set_aside`` moves whatever follows into a file
  of its own next to the original before the original is truncated: nothing already written
  is destroyed, and what is left is whole records only.

The runner's scratch space (under TMPDIR: the task files, the kernel-cache folders, the
children's results and logs) fails the same way, and is no more the cell's fault:
``is_disk_fault`` tells such an error, and ``ScratchError`` stops the run like the store's.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

#: Errors after which every later write to the same file system fails too: a full disk or
#: quota, an I/O error, a file system that turned read-only.
DISK_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})
#: A child's exit code when it cannot write its own files (sysexits' EX_IOERR), and the mark
#: of the line it then tries to leave in its log.
SCRATCH_EXIT = 74
SCRATCH_MARK = "scratch write failed:"


def is_disk_fault(exc: BaseException) -> bool:
    """Whether ``exc`` says the file system failed, not what was being written."""
    return isinstance(exc, OSError) and exc.errno in DISK_FAULTS


class StoreError(Exception):
    """Writing the run store failed (full disk, I/O error, read-only file system, ...).

    Not an ``OSError``, so that no handler meant for a child's or a cache's trouble takes it
    for one: a run stops on it. The message is one line naming the file and the reason.
    """

    #: What the file is part of, when it is not the run store itself.
    where = ""

    def __init__(self, path: Path, exc: OSError) -> None:
        self.path = path
        self.errno = exc.errno
        reason = exc.strerror or str(exc) or type(exc).__name__
        super().__init__(f"cannot write {path}{self.where}: {reason}")


class ScratchError(StoreError):
    """The runner's scratch space failed (a full disk, an I/O error, a read-only TMPDIR).

    A stop, like the store's: every later replicate would fail the same way, and its failure
    says nothing about the cell, so no row may claim that the cell crashed.
    """

    where = " (the runner's scratch space, under TMPDIR)"


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written; a short write is retried from where it
    stopped, and the error that ends it (a full disk) is raised."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def append(path: Path, data: bytes) -> int:
    """Append ``data`` (complete lines) durably; return the offset where it began.

    On failure the file is cut back to that offset (best effort: an I/O error may refuse
    that too, and ``set_aside`` deals with the tail at the next open) and ``StoreError``
    is raised.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(path, exc) from None
    try:
        start = os.fstat(fd).st_size
        try:
            write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
                os.fsync(fd)
            raise StoreError(path, exc) from None
    finally:
        os.close(fd)
    return start


def write_file(path: Path, data: bytes) -> None:
    """The whole file or none of it: written under a temporary name, fsynced, renamed."""
    tmp = path.with_name(f"{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StoreError(path, exc) from None


def truncate(path: Path, size: int) -> None:
    """Cut ``path`` back to ``size`` bytes (undoing an append of our own), durably."""
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(path, exc) from None


def _boundaries(data: bytes, stop: int) -> Iterator[int]:
    """Offsets just past each newline of ``data[:stop]`` that ends a record, last first.

    A record ends at a newline outside quotes (RFC 4180: a quoted field may hold newlines);
    the quote count is kept while walking back, so the file is counted once.
    """
    nl = data.rfind(b"\n", 0, stop)
    quotes = data.count(b'"', 0, nl) if nl >= 0 else 0
    while nl >= 0:
        if quotes % 2 == 0:
            yield nl + 1
        prev = data.rfind(b"\n", 0, nl)
        quotes -= data.count(b'"', max(prev, 0), nl)
        nl = prev


def complete_end(data: bytes) -> int:
    """The offset just past the last record that ends with its newline (0 when none): a tail
    cut inside a quoted field is not taken for a whole record."""
    return next(_boundaries(data, len(data)), 0)


def records_backwards(data: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every whole record of ``data``, the last one first."""
    bounds = _boundaries(data, len(data))
    end = next(bounds, 0)
    for start in bounds:
        yield start, end
        end = start
    if end:
        yield 0, end


def set_aside(path: Path, keep: int) -> Path | None:
    """Move everything of ``path`` after byte ``keep`` into ``<name>.torn-N`` (the first free
    N), then truncate ``path`` to ``keep``. The copy is on disk before the cut, so a failure
    at any point loses nothing. Returns the new file, or None when there was nothing to move.
    """
    try:
        with open(path, "rb") as f:
            f.seek(keep)
            tail = f.read()
    except OSError as exc:
        raise StoreError(path, exc) from None
    if not tail:
        return None
    n = 1
    while (aside := path.with_name(f"{path.name}.torn-{n}")).exists():
        n += 1
    try:
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        raise StoreError(aside, exc) from None
    try:
        write_all(fd, tail)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            aside.unlink()
        raise StoreError(aside, exc) from None
    os.close(fd)
    truncate(path, keep)
    return aside
