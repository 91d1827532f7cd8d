"""``.npz`` archives as numpy's ``NpzFile``: lazy, or mapped member by member."""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _convert, _native
from ._common import _MODE_NAMES, _Closing, _header_limit
from ._remote import RemoteArray


class NpzFile(_Closing, np.lib.npyio.NpzFile):
    """A lazy ``.npz`` archive, as ``numpy.lib.npyio.NpzFile``: nothing is
    read until a member is asked for. Opened with ``mmap_mode='r'``, every
    stored ``.npy`` member is a read-only view of the archive's mapping
    (zero copy); compressed members are read into memory.

    A subclass of numpy's ``NpzFile``, so that code branching on
    ``isinstance(x, np.lib.npyio.NpzFile)`` (numpy's own tests among it)
    takes the same branch. numpy's constructor is not called: it would
    read the zip directory a second time with ``zipfile``; npy-core reads
    it once, and this class sets the attributes numpy's documents
    (``files``, ``zip``, ``fid``, ``f``, ``allow_pickle``,
    ``max_header_size``, ``pickle_kwargs``) and overrides every method.

    Attributes
    ----------
    files : list of str
        The member names, one trailing ``.npy`` removed.
    f : object
        Attribute access to members: ``npz.f.x`` is ``npz['x']``.
    zip : zipfile.ZipFile or None
        The archive as a ``zipfile.ZipFile`` (opened on first use, as a
        second reader; None once closed).
    fid : file object or None
        The archive's file when ``load`` opened it from a path (None for a
        file object the caller owns, and once closed), as numpy's.
    allow_pickle, max_header_size, pickle_kwargs
        What ``load`` was given, as numpy's attributes.
    """

    # As numpy's: safe in __del__/__exit__ even if __init__ failed.
    fid = None
    _zip = None
    _archive = None
    _MAX_REPR_ARRAY_COUNT = 5

    def __init__(
        self,
        source: Any,
        *,
        mmap_mode: str | None = None,
        allow_pickle: bool = False,
        encoding: str = "ASCII",
        max_header_size: int = 10000,
        fix_imports: bool = True,
        _bytes: bool = False,
    ) -> None:
        self._closed = False
        self._name = "<bytes>" if _bytes else source
        self._source = source
        self._bytes = _bytes
        self.allow_pickle = allow_pickle
        self.max_header_size = max_header_size
        self.pickle_kwargs = {"encoding": encoding, "fix_imports": fix_imports}
        limit = _header_limit(max_header_size, allow_pickle)
        if _bytes:
            self._archive = _BufferArchive(source, limit, allow_pickle, encoding)
        elif _MODE_NAMES.get(mmap_mode, mmap_mode) == "r":
            self._archive = _native.MappedArchive(source, limit, allow_pickle, encoding)
        else:
            self._archive = _native.NpzReader(source, limit, allow_pickle, encoding)
        if not _bytes:
            # numpy's np.load keeps the file it opened as ``fid``.
            self.fid = open(source, "rb")  # noqa: SIM115 - closed by close()
        self.files = list(self._archive.keys())
        self._names = list(self._archive.member_names())
        self.f = _Attributes(self)

    @property
    def zip(self) -> zipfile.ZipFile | None:
        """The archive as a ``zipfile.ZipFile`` (None once closed)."""
        if self._zip is None and not self._closed:
            if self._bytes:
                self._zip = zipfile.ZipFile(io.BytesIO(self._source))
            else:
                # fid is None for a file object the caller owns (read by path).
                self._zip = zipfile.ZipFile(self.fid if self.fid is not None else self._source)
        return self._zip

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str) or (key not in self.files and key not in self._names):
            raise KeyError(f"{key} is not a file in the archive")
        kind, value = self._archive.get(key)
        if kind == "raw":
            return value
        return _convert.from_parts(*value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in self.files or key in self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def keys(self):  # noqa: D102 - Mapping's
        return super().keys()

    def get(self, key: str, default: Any = None) -> Any:
        """``D[k]`` if ``k`` is in the archive, else ``default``."""
        return super().get(key, default)

    def lazy(self, key: str) -> Any:
        """Member ``key`` as a read-only lazy array: nothing of its data is
        read until rows are asked for.

        A deflated member is a :class:`LazyMember` (of the
        :class:`RemoteArray` family: ``shape``, ``dtype``, ``len``,
        ``rows(start, stop)``, ``a[...]`` gives an ndarray, ``read()``,
        ``np.asarray``): rows inflate only the blocks they lie in, on every
        core, the GIL released. Members our writer deflated carry a block
        index; others get checkpoints from one pass on first use (or from
        ``<archive>.idx``, see :meth:`save_index`). A stored member of an
        archive file is its read-only mapping (zero copy).
        """
        if not isinstance(key, str) or (key not in self.files and key not in self._names):
            raise KeyError(f"{key} is not a file in the archive")
        if self._closed:
            raise ValueError("the archive is closed")
        limit = _header_limit(self.max_header_size, self.allow_pickle)
        encoding = self.pickle_kwargs["encoding"]
        if self._bytes:
            native = _native.LazyMember.open_bytes(bytes(self._source), key, limit, self.allow_pickle, encoding)
        else:
            native = _native.LazyMember.open_path(self._source, key, limit, self.allow_pickle, encoding)
        if not native.compressed and not self._bytes:
            native.close()
            mapped = _native.MappedArchive(self._source, limit, self.allow_pickle, encoding)
            try:
                kind, value = mapped.get(key)
            finally:
                mapped.close()
            if kind == "array":
                return _convert.from_parts(*value)
        return LazyMember(native, f"{self._name!r}[{key!r}]" if isinstance(self._name, str) else key)

    def save_index(self, path: Any = None) -> int:
        """Save the checkpoints of the archive's deflated members that lack
        a block index of their own (numpy's) beside it, as ``npy index``
        does: to ``<archive>.idx`` unless ``path`` is given. Returns how many
        members it holds. Later lazy reads (and ``npy show --rows``) use it
        instead of a pass over each member; a stale file is refused."""
        if self._bytes or self._closed:
            raise ValueError("save_index writes beside an archive file")
        target = os.fspath(path) if path is not None else os.fspath(self._source) + ".idx"
        return _native.save_npz_index(self._source, target)

    def close(self) -> None:
        """Close the archive and its file (member arrays already returned
        stay valid). ``zip`` and ``fid`` become None, as in numpy."""
        self._closed = True
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        if self.fid is not None:
            self.fid.close()
            self.fid = None
        if self._archive is not None:
            self._archive.close()
        self.f = None  # numpy breaks the reference cycle the same way

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at collection
            pass

    def __repr__(self) -> str:
        keys = ", ".join(self.files[: self._MAX_REPR_ARRAY_COUNT])
        more = "..." if len(self.files) > self._MAX_REPR_ARRAY_COUNT else ""
        name = self._name if isinstance(self._name, str) else "object"
        return f"NpzFile {name!r} with keys: {keys}{more}"


class _BufferArchive:
    """An archive in bytes a file object gave: each member is read straight
    from them in Rust with the GIL released (the one copy is into the
    array's own memory), the bytes never converted or copied whole."""

    def __init__(self, data: Any, limit: int, allow_pickle: bool, encoding: str) -> None:
        self._data = data
        self._options = (limit, allow_pickle, encoding)
        self._keys, self._names = _native.npz_buffer_keys(data, *self._options)

    def keys(self) -> list[str]:
        return self._keys

    def member_names(self) -> list[str]:
        return self._names

    def get(self, key: str) -> Any:
        if self._data is None:
            raise ValueError("the archive is closed")
        return _native.npz_buffer_get(self._data, key, *self._options)

    def close(self) -> None:
        self._data = None


class _Attributes:
    def __init__(self, npz: NpzFile) -> None:
        self._npz = npz

    def __getattr__(self, key: str) -> Any:
        try:
            return self._npz[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self) -> list[str]:
        return list(self._npz.files)


class LazyMember(RemoteArray):
    """A deflated ``.npz`` member read lazily (:meth:`NpzFile.lazy`): of the
    :class:`RemoteArray` family, read-only. Rows inflate only the blocks
    holding them (each checked against its CRC-32); ``read()`` inflates
    every block on every core."""

    def __init__(self, native: Any, name: str) -> None:  # noqa: D107 - the class says it
        self._remote = native
        self.url = name
        self.dtype = _convert.dtype_of(native.descr)
        self.shape = tuple(native.shape)
        self.ndim = len(self.shape)
        self._fortran = native.fortran

    @classmethod
    def open_url(cls, url: str, key: str) -> LazyMember:
        """Member ``key`` of the ``.npz`` a URL names (``s3://``, ``gs://``,
        ``https://``...): one GET lists the archive, one more reads the
        member's header; a slice then fetches only the compressed blocks
        holding it, pinned to the version listed. A member another writer
        deflated (numpy's) gets its checkpoints on the first slice, by one
        pass over it; later slices fetch only their blocks."""
        return cls(_native.LazyMember.open_url(url, key), f"{url}[{key!r}]")

    def __repr__(self) -> str:
        return f"<npy_mmap.LazyMember {self.url} shape={self.shape} dtype={self.dtype}>"
