"""Pinned sources: what a Dask task or a data-loader worker reads must be
the file (or object) that was read when the graph or dataset was made. One
mechanism for ``npy_mmap.dask`` and ``npy_mmap.data``: a local file is
pinned by its device, inode and size (and an ``.npy`` by its header), an
object by its ETag; a changed one is refused with :class:`SourceChanged`,
never read."""

from __future__ import annotations

import errno
import os

from . import _native


class SourceChanged(OSError):
    """A task found its file or object no longer the one the graph was
    built from (replaced, or rewritten with another header): it refuses to
    read rather than return other data. Build the graph again."""


def identity(path: str) -> tuple[int, int, int]:
    """``(device, inode, size)`` of a local file."""
    info = os.stat(path)
    return (info.st_dev, info.st_ino, info.st_size)


def changed(location: str, where: str, what: str, made: str, again: str) -> SourceChanged:
    """The refusal: ``where`` is not what ``made`` was built from (``what``
    differs); ``again`` says how to start over."""
    return SourceChanged(
        errno.ESTALE,
        f"{where} is not what {made} was built from ({what}): it was replaced or rewritten "
        f"after {again}",
        location,
    )


def check_identity(location: str, pinned: tuple[int, int, int] | None) -> str | None:
    """What differs between the file at ``location`` and its pinned
    identity (None when nothing does, or nothing was pinned)."""
    now = identity(location)
    if pinned is not None and now != tuple(pinned):
        return f"device, inode and size {tuple(pinned)} then, {now} now"
    return None


def check_header(head: bytes, pinned: tuple) -> str | None:
    """What differs between the ``.npy`` header at the start of ``head``
    and the pinned ``(descr, shape, fortran, offset)`` (None when nothing)."""
    try:
        found = _native.parse_header(head, 1 << 24, False)
    except ValueError as error:
        return f"no header like it: {error}"
    if (found[0], tuple(found[1]), found[2], found[3]) != tuple(pinned):
        return f"header {tuple(pinned)[:3]} then, {tuple(found[:3])} now"
    return None


def header_of(path: str, max_header_size: int) -> tuple:
    """The ``(descr, shape, fortran, offset)`` of the ``.npy`` at ``path``,
    with the identity of the file read: ``(header, identity)``."""
    with open(path, "rb") as fid:
        info = os.fstat(fid.fileno())
        head = fid.read(max_header_size + 12)
    descr, shape, fortran, offset = _native.parse_header(head, max_header_size, False)
    return (descr, tuple(shape), fortran, offset), (info.st_dev, info.st_ino, info.st_size)
