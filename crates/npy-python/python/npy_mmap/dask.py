"""Dask: one ``.npy`` array read and written by a cluster, locally or in
object storage.

:func:`from_npy` makes a ``dask.array.Array`` whose tasks each hold a small
picklable :class:`Source` (where, offset, dtype, shape, order) and map
(local file, npz member) or range-read (URL) only their own chunk on the
worker. :func:`to_npy` writes a Dask array as one ``.npy``: locally the file
is created once (blocks reserved), every task writes its rows through a
window mapping of its own, disjoint bytes, so no global lock; in object
storage the driver plans a multipart upload, every task uploads its parts,
and the driver completes it, or aborts it so that no object is left.
"""

from __future__ import annotations

import itertools
import os
import re
import uuid
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.array.core import normalize_chunks

from . import _api, _convert, _native

__all__ = ["Source", "NpyTarget", "from_npy", "to_npy"]


@dataclass(frozen=True)
class Source:
    """Where one task reads its chunk: small and picklable, never the data.

    Attributes
    ----------
    kind : {'file', 'npz', 'url'}
    location : str
        Path or URL.
    member : str or None
        The npz member, for kind 'npz'.
    descr : str
        The dtype as numpy writes it in a header.
    shape : tuple of int
        The whole array's shape.
    fortran : bool
        Whether the data is in Fortran order (rows along the last axis).
    offset : int
        The data's byte offset in the file (for information).
    """

    kind: str
    location: str
    member: str | None
    descr: str
    shape: tuple[int, ...]
    fortran: bool
    offset: int

    @property
    def dtype(self) -> np.dtype:
        return _convert.dtype_of(self.descr)

    @property
    def row_axis(self) -> int:
        return len(self.shape) - 1 if self.fortran else 0


def _read_chunk(source: Source, index: tuple[slice, ...]) -> np.ndarray:
    """One task: read the chunk ``index`` of ``source``, touching only its rows."""
    if not source.shape:  # 0-d: one element, read whole
        whole = _api.load(source.location)
        return np.array(whole[source.member] if source.kind == "npz" else whole)
    axis = source.row_axis
    rows = index[axis]
    local = list(index)
    local[axis] = slice(0, rows.stop - rows.start)
    local = tuple(local)
    if source.kind == "file":
        # No close(): the window (and its lock) goes with its last view,
        # which may outlive this frame for a moment (distributed's sampling
        # profiler holds frames), and close() would refuse then.
        window = _api.mapped(source.location, "r", rows=(rows.start, rows.stop), locking="blocking").array
        chunk = np.array(window[local])
        del window
        return chunk
    if source.kind == "url":
        # One stream per task: the tasks are the parallelism.
        remote = _native.Remote(source.location, 10000, False, "ASCII", 1 << 40, 1)
        if source.fortran:
            return np.array(_convert.from_parts(*remote.read_all())[index])
        return np.array(_convert.from_parts(*remote.read_rows(rows.start, rows.stop))[local])
    archive = _api.NpzFile(source.location, mmap_mode="r")
    try:
        return np.array(archive[source.member][index])
    finally:
        archive.close()


def _read_file(path: str, index: tuple[slice, ...]) -> np.ndarray:
    """One task of a directory: one whole ``.npy`` file (mapped, then copied)."""
    whole = _api.mapped(path, "r", locking="blocking").array
    chunk = np.array(whole[index])
    del whole
    return chunk


def _source(path_or_url: Any, member: str | None, max_header_size: int) -> Source:
    location = os.fspath(path_or_url) if not isinstance(path_or_url, str) else path_or_url
    if _native.is_url(location):
        remote = _native.Remote(location, max_header_size)
        return Source(
            "url", location, None, remote.descr, tuple(remote.shape), remote.fortran, remote.data_offset
        )
    if member is not None:
        npz = _native.MappedArchive(location, max_header_size, False, "ASCII")
        kind, parts = npz.get(member)
        npz.close()
        if kind != "array":
            raise ValueError(f"{location}: member {member!r} is not .npy data")
        _buffer, descr, shape, fortran = parts
        return Source("npz", location, member, descr, tuple(shape), fortran, 0)
    with open(location, "rb") as fid:
        head = fid.read(65536 + 12)
    descr, shape, fortran, offset = _native.parse_header(head, max_header_size, False)
    return Source("file", location, None, descr, tuple(shape), fortran, offset)


def _natural(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _from_directory(path: str, max_header_size: int) -> da.Array:
    """A directory of ``.npy`` files (``np.save`` per block, names in natural
    order) as one array along axis 0, without Dask's ``info`` file."""
    names = sorted((n for n in os.listdir(path) if n.endswith(".npy")), key=_natural)
    if not names:
        raise ValueError(f"{path}: no .npy files in the directory")
    sources = [_source(os.path.join(path, n), None, max_header_size) for n in names]
    first = sources[0]
    for s in sources:
        if s.descr != first.descr or s.shape[1:] != first.shape[1:] or s.fortran or not s.shape:
            raise ValueError(
                f"{s.location}: every file must be C-ordered with the dtype {first.descr} and rows "
                f"of shape {first.shape[1:]}, like {first.location}"
            )
    name = "from-npy-dir-" + dask.base.tokenize(path, [(s.location, s.shape) for s in sources])
    graph = {}
    for i, s in enumerate(sources):
        index = tuple(slice(0, n) for n in s.shape)
        graph[(name, i) + (0,) * (len(s.shape) - 1)] = (_read_file, s.location, index)
    chunks = (tuple(s.shape[0] for s in sources),) + tuple((n,) for n in first.shape[1:])
    return da.Array(graph, name, chunks, meta=np.empty((0,) * len(first.shape), dtype=first.dtype))


def from_npy(
    path_or_url: Any,
    chunks: Any = "auto",
    *,
    member: str | None = None,
    max_header_size: int = 10000,
) -> da.Array:
    """A Dask array over one ``.npy`` file, npz member, URL or directory.

    Parameters
    ----------
    path_or_url : str or path-like
        A local ``.npy``; an ``.npz`` with ``member``; a URL (``s3://``,
        ``gs://``, ``az://``, ``http(s)://``); or a directory of ``.npy``
        files (``np.save`` per block, natural name order) read as one array
        along axis 0, without Dask's ``info`` file.
    chunks : 'auto', int, tuple or dict, optional
        As ``dask.array.from_array``. The default chunks the slow axis
        (rows: axis 0 in C order, the last in Fortran order) and keeps the
        other axes whole, so every chunk is one contiguous byte range.
    member : str, optional
        The member of an ``.npz`` (stored members are mapped, not copied).
    max_header_size : int, optional

    Returns
    -------
    dask.array.Array
        Each task maps (or range-reads) only its chunk: no task ever holds
        the whole array.
    """
    location = os.fspath(path_or_url) if not isinstance(path_or_url, str) else path_or_url
    if not _native.is_url(location) and os.path.isdir(location):
        return _from_directory(location, max_header_size)
    source = _source(location, member, max_header_size)
    dtype, shape = source.dtype, source.shape
    if chunks == "auto" and shape:
        chunks = tuple("auto" if axis == source.row_axis else -1 for axis in range(len(shape)))
    normalized = normalize_chunks(chunks, shape, dtype=dtype)
    name = "from-npy-" + dask.base.tokenize(source, normalized)
    graph = {}
    offsets = [list(itertools.accumulate((0,) + c)) for c in normalized]
    for block in itertools.product(*(range(len(c)) for c in normalized)):
        index = tuple(slice(offsets[a][b], offsets[a][b + 1]) for a, b in enumerate(block))
        graph[(name,) + block] = (_read_chunk, source, index)
    return da.Array(graph, name, normalized, meta=np.empty((0,) * len(shape), dtype=dtype))


class NpyTarget:
    """A ``.npy`` file being written by many tasks: a ``darr.store(...)``
    target. Created (and its blocks reserved) under a temporary name beside
    ``path``; each ``target[region] = block`` maps the rows of ``region``
    read-write (a window: disjoint rows are disjoint bytes and locks, so
    tasks write in parallel) and writes the block. :meth:`commit` renames it
    to ``path``; :meth:`abort` removes it. Picklable: workers get the path.
    """

    def __init__(self, path: Any, shape: tuple[int, ...], dtype: Any, *, reserve: bool = True) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        directory, name = os.path.split(self.path)
        self.partial = os.path.join(directory, f".{name}.partial-{uuid.uuid4().hex[:12]}")
        # Made and released at once: the buffer's only reference goes here.
        _native.create(self.partial, _convert.descr_of(self.dtype), self.shape, False, reserve)

    def __setitem__(self, region: tuple[slice, ...], block: np.ndarray) -> None:
        if not isinstance(region, tuple):
            region = (region,)
        # No close() (see _read_chunk): the window goes with its last view.
        if not self.shape:
            whole = _api.mapped(self.partial, "r+", locking="blocking").array
            whole[...] = block
            del whole
            return
        rows = region[0] if region else slice(None)
        start, stop, _ = rows.indices(self.shape[0])
        local = (slice(0, stop - start),) + tuple(region[1:])
        window = _api.mapped(self.partial, "r+", rows=(start, stop), locking="blocking").array
        window[local] = block
        del window

    def commit(self) -> None:
        """Rename the finished file to its name (atomic on one file system)."""
        os.replace(self.partial, self.path)

    def abort(self) -> None:
        """Remove the unfinished file: nothing is left under the target name."""
        try:
            os.remove(self.partial)
        except FileNotFoundError:
            pass


def _upload_part(block: np.ndarray, plan: str, index: int) -> tuple[int, str]:
    """One task: upload part ``index`` of a plan (its rows, C order)."""
    data = _convert.data_bytes(np.ascontiguousarray(block), False)
    return index, _native.plan_upload_part(plan, index, data)


def to_npy(
    darr: da.Array,
    path_or_url: Any,
    *,
    part_size: int | None = None,
    reserve: bool = True,
    **compute_kwargs: Any,
) -> None:
    """Write a Dask array as one ``.npy`` (C order), computed by the cluster.

    Parameters
    ----------
    darr : dask.array.Array
    path_or_url : str or path-like
        A local path: created once under a temporary name (blocks reserved:
        a full disk fails here), every task writes its rows through its own
        window mapping, and the file is renamed into place when every task
        succeeded; on failure it is removed. A URL: a multipart upload
        planned by the driver (parts of whole rows, at least 5 MiB), the
        array rechunked to whole parts, every task uploading its part; the
        driver completes it, or aborts it on failure (no object is left).
        A retried task rewrites the same rows or the same part.
    part_size : int, optional
        The smallest part of a remote upload (default 64 MiB).
    reserve : bool, optional
        Reserve the local file's blocks at creation.
    **compute_kwargs
        Passed to ``dask.compute``.
    """
    location = os.fspath(path_or_url) if not isinstance(path_or_url, str) else path_or_url
    if darr.dtype.hasobject:
        raise ValueError("Array can't be memory-mapped: Python objects in dtype.")
    if _native.is_url(location):
        _to_url(darr, location, part_size, compute_kwargs)
        return
    if darr.ndim:
        # Whole rows per block: each task maps exactly its rows.
        darr = darr.rechunk({axis: -1 for axis in range(1, darr.ndim)})
    target = NpyTarget(location, darr.shape, darr.dtype, reserve=reserve)
    try:
        da.store(darr, target, lock=False, compute=True, **compute_kwargs)
    except BaseException:
        target.abort()
        raise
    target.commit()


def _to_url(darr: da.Array, url: str, part_size: int | None, compute_kwargs: dict) -> None:
    descr = _convert.descr_of(darr.dtype)
    shape = tuple(int(n) for n in darr.shape)
    plan = _native.plan_create(url, descr, shape, False, part_size)
    try:
        parts = _native.plan_parts(plan)
        if darr.ndim:
            rows = tuple(stop - start for _index, start, stop in parts)
            darr = darr.rechunk((rows,) + tuple((n,) for n in shape[1:]))
            blocks = darr.to_delayed().reshape(-1)
        else:
            blocks = [dask.delayed(np.asarray)(darr)]
        tasks = [dask.delayed(_upload_part)(block, plan, index) for (index, _s, _e), block in zip(parts, blocks, strict=True)]
        receipts = dask.compute(*tasks, **compute_kwargs)
        _native.plan_complete(plan, list(receipts))
    except BaseException:
        _native.plan_abort(plan)
        raise
