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

import errno
import itertools
import math
import os
import re
import uuid
import zipfile
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.array.core import normalize_chunks

from . import _convert, _io, _mapping, _native, _npz, _pin
from ._pin import SourceChanged

__all__ = ["Source", "SourceChanged", "NpyTarget", "default_chunk_bytes", "from_npy", "to_npy"]


@dataclass(frozen=True)
class Source:
    """Where one task reads its chunk: small and picklable, never the data.

    Attributes
    ----------
    kind : {'file', 'npz', 'url'}
    location : str
        Path or URL.
    member : str or None
        The npz member, for kind 'npz' (a local archive or a URL's).
    descr : str
        The dtype as numpy writes it in a header.
    shape : tuple of int
        The whole array's shape.
    fortran : bool
        Whether the data is in Fortran order (rows along the last axis).
    offset : int
        The data's byte offset in the file (for information), or in the
        member for a compressed npz member (where the task starts inflating).
    identity : tuple of int or None
        ``(device, inode, size)`` of the local file (or archive) the graph
        was built from: every task checks it, with the header.
    e_tag : str or None
        For a URL (an ``.npy`` or an archive), the object's version (ETag)
        the graph was built from: every task checks it, and its reads are
        pinned to it.
    compressed : bool
        Whether the npz member is deflated (each task inflates up to its
        chunk and keeps only the chunk).
    """

    kind: str
    location: str
    member: str | None
    descr: str
    shape: tuple[int, ...]
    fortran: bool
    offset: int
    identity: tuple[int, int, int] | None = None
    e_tag: str | None = None
    compressed: bool = False

    @property
    def dtype(self) -> np.dtype:
        return _convert.dtype_of(self.descr)

    @property
    def row_axis(self) -> int:
        return len(self.shape) - 1 if self.fortran else 0


def _changed(source: Source, what: str) -> SourceChanged:
    where = source.location if source.member is None else f"{source.location} (member {source.member!r})"
    return _pin.changed(source.location, where, what, "the graph", "from_npy read it; call from_npy again")


def _check_local(source: Source) -> None:
    """Refuses a file (or archive) that is not the one the graph was built
    from: another device, inode or size, or another header."""
    differs = _pin.check_identity(source.location, source.identity)
    if differs is not None:
        raise _changed(source, differs)
    if source.kind == "file":
        with open(source.location, "rb") as fid:
            _check_header(source, fid.read(source.offset))


def _check_header(source: Source, head: bytes) -> None:
    differs = _pin.check_header(head, (source.descr, source.shape, source.fortran, source.offset))
    if differs is not None:
        raise _changed(source, differs)


def _chunk_shape(source: Source, index: tuple[slice, ...]) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in index)


def _lazy_member(source: Source) -> Any:
    """The member, opened again by a task (or by the driver, for its
    blocks): refused unless it is the version and header the graph was
    built from."""
    if source.kind == "url":
        # build=False: one pass per task over a member without an index
        # would cost more than reading up to the chunk.
        member = _native.LazyMember.open_url(source.location, source.member, build=False)
        found = member.e_tag
        if source.e_tag is not None and found != source.e_tag:
            member.close()
            raise _changed(source, f"ETag {source.e_tag} then, {found} now")
    else:
        member = _native.LazyMember.open_path(source.location, source.member, 1 << 24, False, "ASCII", build=False)
    found = (member.descr, tuple(member.shape), member.fortran, member.data_offset)
    pinned = (source.descr, source.shape, source.fortran, source.offset)
    if found != pinned:
        member.close()
        raise _changed(source, f"header {pinned[:3]} then, {found[:3]} now")
    return member


def _read_member_rows(source: Source, rows: slice, local: tuple[slice, ...]) -> np.ndarray:
    """A chunk of an npz member read by rows in Rust, the GIL released: a
    deflated member inflates only the blocks holding its rows (the block
    index our writer records, or checkpoints saved in ``<archive>.idx`` by
    ``npy index`` / ``NpzFile.save_index``); a local member with neither
    inflates from its start up to the chunk's rows (never the whole member
    per task). In object storage only the chunk's bytes (stored) or blocks
    (deflated) are fetched, pinned to the archive's ETag. Memory: the chunk
    and its blocks."""
    member = _lazy_member(source)
    try:
        block = _convert.from_parts(*member.read_rows(rows.start, rows.stop))
    finally:
        member.close()
    return np.array(block[local])


def _block_aligned(source: Source, rows: tuple[int, ...]) -> tuple[int, ...]:
    """Row chunks of about the sizes ``rows`` gives, cut where the deflated
    member's blocks start (so a task inflates whole blocks), when it has a
    block index at hand; else ``rows``."""
    member = _lazy_member(source)
    try:
        starts = sorted(set(member.block_rows()))
    finally:
        member.close()
    total = sum(rows)
    target = max(rows) if rows else 0
    starts = [r for r in starts if 0 < r < total]
    if not starts or target == 0:
        return rows
    cuts = []
    last = 0
    for start in starts:
        if start - last >= target:
            cuts.append(start)
            last = start
    edges = [0, *cuts, total]
    return tuple(b - a for a, b in itertools.pairwise(edges) if b > a)


def _read_chunk(source: Source, index: tuple[slice, ...]) -> np.ndarray:
    """One task: read the chunk ``index`` of ``source``, touching only its rows."""
    if source.kind != "url":
        _check_local(source)
    if not source.shape:  # 0-d: one element, read whole
        if source.member is not None:
            member = _lazy_member(source)
            try:
                return np.array(_convert.from_parts(*member.read_all()))
            finally:
                member.close()
        if source.kind == "url":
            remote = _remote(source)
            return np.array(_convert.from_parts(*remote.read_all()))
        whole = _io.load(source.location)
        return np.array(whole[source.member] if source.kind == "npz" else whole)
    if 0 in _chunk_shape(source, index) or 0 in source.shape:
        # Nothing to read (a (5, 0) array has no bytes).
        return np.empty(_chunk_shape(source, index), dtype=source.dtype)
    axis = source.row_axis
    rows = index[axis]
    local = list(index)
    local[axis] = slice(0, rows.stop - rows.start)
    local = tuple(local)
    if source.kind == "file":
        # No close(): the window (and its lock) goes with its last view,
        # which may outlive this frame for a moment (distributed's sampling
        # profiler holds frames), and close() would refuse then.
        window = _mapping.mapped(source.location, "r", rows=(rows.start, rows.stop)).array
        if window.dtype != source.dtype:
            raise _changed(source, f"dtype {source.dtype} then, {window.dtype} now")
        chunk = np.array(window[local])
        del window
        # The file mapped is the one checked (not replaced meanwhile).
        _check_local(source)
        return chunk
    if source.member is not None and (source.kind == "url" or source.compressed):
        return _read_member_rows(source, rows, local)
    if source.kind == "url":
        # One stream per task: the tasks are the parallelism. Rows are
        # along the row axis, the last one in Fortran order (columns are
        # contiguous there): one ranged GET of exactly the chunk's bytes.
        remote = _remote(source)
        return np.array(_convert.from_parts(*remote.read_rows(rows.start, rows.stop))[local])
    archive = _npz.NpzFile(source.location, mmap_mode="r")
    try:
        array = archive[source.member]
        if (array.dtype, array.shape) != (source.dtype, source.shape):
            raise _changed(source, f"member {array.dtype} {array.shape} now")
        return np.array(array[index])
    finally:
        archive.close()


def _remote(source: Source) -> Any:
    """The object, opened again by a task: refused unless it is the
    version the graph was built from (its reads are pinned to it)."""
    remote = _native.Remote(source.location, 1 << 24, False, "ASCII", 1 << 40, 1)
    if source.e_tag is not None and remote.e_tag != source.e_tag:
        raise _changed(source, f"ETag {source.e_tag} then, {remote.e_tag} now")
    found = (remote.descr, tuple(remote.shape), remote.fortran, remote.data_offset)
    pinned = (source.descr, source.shape, source.fortran, source.offset)
    if found != pinned:
        raise _changed(source, f"header {pinned[:3]} then, {found[:3]} now")
    return remote


def _member_name(archive: zipfile.ZipFile, member: str) -> str:
    """The archive entry numpy's key ``member`` names (``x`` is ``x.npy``)."""
    names = set(archive.namelist())
    if member + ".npy" in names:
        return member + ".npy"
    if member in names:
        return member
    raise KeyError(f"{member} is not a file in the archive")


def _read_file(source: Source, index: tuple[slice, ...]) -> np.ndarray:
    """One task of a directory: one whole ``.npy`` file (mapped, then
    copied), checked to be the file the graph was built from."""
    _check_local(source)
    whole = _mapping.mapped(source.location, "r").array
    chunk = np.array(whole[index])
    del whole
    _check_local(source)
    return chunk


def _source(path_or_url: Any, member: str | None, max_header_size: int) -> Source:
    location = os.fspath(path_or_url) if not isinstance(path_or_url, str) else path_or_url
    if _native.is_url(location):
        if member is not None:
            lazy = _native.LazyMember.open_url(location, member)
            try:
                return Source(
                    "url",
                    location,
                    member,
                    lazy.descr,
                    tuple(lazy.shape),
                    lazy.fortran,
                    lazy.data_offset,
                    e_tag=lazy.e_tag,
                    compressed=lazy.compressed,
                )
            finally:
                lazy.close()
        remote = _native.Remote(location, max_header_size)
        return Source(
            "url",
            location,
            None,
            remote.descr,
            tuple(remote.shape),
            remote.fortran,
            remote.data_offset,
            e_tag=remote.e_tag,
        )
    # Absolute: workers may run elsewhere (another working directory).
    location = os.path.abspath(location)
    if member is not None:
        identity = _pin.identity(location)
        with zipfile.ZipFile(location) as archive:
            name = _member_name(archive, member)
            compressed = archive.getinfo(name).compress_type != zipfile.ZIP_STORED
            # The header only: the first bytes of the member, inflated if need be.
            with archive.open(name) as stream:
                head = stream.read(max_header_size + 12)
        if not head.startswith(b"\x93NUMPY"):
            raise ValueError(f"{location}: member {member!r} is not .npy data")
        descr, shape, fortran, offset = _native.parse_header(head, max_header_size, False)
        return Source("npz", location, member, descr, tuple(shape), fortran, offset, identity, None, compressed)
    (descr, shape, fortran, offset), identity = _pin.header_of(location, max_header_size)
    return Source("file", location, None, descr, shape, fortran, offset, identity)


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
        graph[(name, i) + (0,) * (len(s.shape) - 1)] = (_read_file, s, index)
    chunks = (tuple(s.shape[0] for s in sources),) + tuple((n,) for n in first.shape[1:])
    return da.Array(graph, name, chunks, meta=np.empty((0,) * len(first.shape), dtype=first.dtype))


def default_chunk_bytes() -> int:
    """The chunk size ``from_npy`` aims at by default, in bytes.

    Dask's ``array.chunk-size`` (128 MiB unless configured), but at most an
    eighth of a worker's memory per thread when a ``distributed`` client is
    active: a task holds its chunk, its copy, and the temporaries of what
    is computed on it (``std`` of float32 makes float64 ones), and a worker
    runs one task per thread. A mapped source makes small chunks cheap
    (each is a window of its own bytes), so the bound costs little.
    """
    limit = int(dask.utils.parse_bytes(dask.config.get("array.chunk-size")))
    try:
        from distributed import default_client

        client = default_client()
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
    except (ImportError, ValueError, AttributeError, TypeError):
        return limit
    shares = [
        int(w["memory_limit"]) // max(1, int(w.get("nthreads", 1)))
        for w in workers.values()
        if w.get("memory_limit")
    ]
    if shares:
        limit = min(limit, max(1 << 20, min(shares) // 8))
    return limit


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
        other axes whole, so every chunk is one contiguous byte range;
        'auto' sizes chunks by :func:`default_chunk_bytes` (Dask's
        ``array.chunk-size``, at most an eighth of a worker's memory per
        thread). An array with no elements is one chunk.
    member : str, optional
        The member of an ``.npz``, local or behind a URL (local stored
        members are mapped, not copied; in object storage each task fetches
        only its chunk's bytes, or a deflated member's blocks).
    max_header_size : int, optional

    Returns
    -------
    dask.array.Array
        Each task maps (or range-reads, or for a deflated member inflates
        up to) only its chunk: no task ever holds the whole array. Each
        task checks that the file (device, inode, size, header) or object
        (ETag, header) is the one read here, and raises
        :class:`SourceChanged` if it was replaced.
    """
    location = os.fspath(path_or_url) if not isinstance(path_or_url, str) else path_or_url
    if not _native.is_url(location) and os.path.isdir(location):
        return _from_directory(os.path.abspath(location), max_header_size)
    source = _source(location, member, max_header_size)
    dtype, shape = source.dtype, source.shape
    if chunks == "auto" and shape:
        if math.prod(shape) == 0:
            # No bytes: one empty chunk (Dask's sizing divides by the row size).
            chunks = tuple(-1 for _ in shape)
        else:
            chunks = tuple("auto" if axis == source.row_axis else -1 for axis in range(len(shape)))
    automatic = chunks == "auto" or (
        isinstance(chunks, (tuple, list, dict))
        and any(isinstance(c, str) and c == "auto" for c in (chunks.values() if isinstance(chunks, dict) else chunks))
    )
    limit = default_chunk_bytes() if automatic else None
    normalized = normalize_chunks(chunks, shape, dtype=dtype, limit=limit)
    if automatic and source.member is not None and source.compressed and shape and math.prod(shape):
        axis = source.row_axis
        aligned = _block_aligned(source, normalized[axis])
        normalized = normalized[:axis] + (aligned,) + normalized[axis + 1 :]
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

    The driver's target keeps the file it created mapped (and so locked)
    until :meth:`commit` or :meth:`abort`: ``npy tidy`` judges a
    ``.NAME.partial-…`` file stale only when nobody holds its lock, and a
    live target between tasks is held. The mapping is not pickled.
    """

    def __init__(self, path: Any, shape: tuple[int, ...], dtype: Any, *, reserve: bool = True) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        directory, name = os.path.split(self.path)
        self.partial = os.path.join(directory, f".{name}.partial-{uuid.uuid4().hex[:12]}")
        try:
            # Kept (mapped and locked) by the driver for the target's life.
            self._created: Any = _native.create(self.partial, _convert.descr_of(self.dtype), self.shape, False, reserve)
        except FileNotFoundError:
            if os.path.isdir(directory):
                raise
            raise FileNotFoundError(
                errno.ENOENT, f"cannot write {self.path}: its folder {directory} does not exist", self.path
            ) from None

    def __getstate__(self) -> dict:
        """What a worker gets: the paths, shape and dtype, never the mapping."""
        state = self.__dict__.copy()
        state["_created"] = None
        return state

    def __setitem__(self, region: tuple[slice, ...], block: np.ndarray) -> None:
        if not isinstance(region, tuple):
            region = (region,)
        # No close() (see _read_chunk): the window goes with its last view.
        if not self.shape:
            whole = _mapping.mapped(self.partial, "r+").array
            whole[...] = block
            del whole
            return
        rows = region[0] if region else slice(None)
        start, stop, _ = rows.indices(self.shape[0])
        local = (slice(0, stop - start),) + tuple(region[1:])
        window = _mapping.mapped(self.partial, "r+", rows=(start, stop)).array
        window[local] = block
        del window

    def commit(self) -> None:
        """Commit the finished file under its name through the one atomic
        commit (npy-mmap's AtomicFile): synced, renamed over the old file
        (whose mode it keeps, as np.save's replacement does), folder synced."""
        _native.commit_prepared(self.partial, self.path)
        self._created = None

    def abort(self) -> None:
        """Remove the unfinished file: nothing is left under the target name."""
        self._created = None
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
