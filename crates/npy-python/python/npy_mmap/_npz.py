"""``.npz`` archives as numpy's ``NpzFile``: lazy, or mapped member by member."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _convert, _native
from ._common import _MODE_NAMES, _Closing, _header_limit


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
            self._archive = _native.NpzReader.from_bytes(source, limit, allow_pickle, encoding)
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
            self._zip = zipfile.ZipFile(io.BytesIO(self._source) if self._bytes else self.fid)
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
