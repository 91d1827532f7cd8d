"""What every part of the package shares: the names of numpy's modes and
options, file kinds, paths and URLs, and numpy's warnings."""

from __future__ import annotations

import errno
import os
import sys
import warnings
from typing import Any, Literal

from . import _native


_ZIP_PREFIX = b"PK\x03\x04"
_ZIP_SUFFIX = b"PK\x05\x06"
_MAGIC = b"\x93NUMPY"
_ENCODINGS = ("ASCII", "latin1", "bytes")

Locking = None | float | Literal["blocking", "nonblocking"]
Sharing = Literal["numpy", "strict"]


def _strict(sharing: str) -> bool:
    """Whether ``sharing`` asks for strict mappings (the one check of the word)."""
    if sharing not in ("numpy", "strict"):
        raise ValueError(f"sharing must be 'numpy' or 'strict', not {sharing!r}")
    return sharing == "strict"


def _is_url(file: Any) -> bool:
    return isinstance(file, str) and _native.is_url(file)


def _path(file: Any) -> str | None:
    """The path of a str or path-like, else None (a file object)."""
    if isinstance(file, (str, bytes, os.PathLike)):
        path = os.fspath(file)
        return os.fsdecode(path)
    return None


class _Closing:
    """``with`` support for objects with a ``close()``."""

    def close(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_encoding(encoding: str) -> None:
    if encoding not in _ENCODINGS:
        raise ValueError("encoding must be 'ASCII', 'latin1', or 'bytes'")


def _open_mapped(path: str, mode: str, *args: Any) -> tuple:
    """``_native.open_mapped`` with numpy's mode names (long ones too), and
    a directory as ``IsADirectoryError`` (as ``open()`` says it) rather than
    npy-mmap's "not a regular file"."""
    try:
        return _native.open_mapped(path, _MODE_NAMES.get(mode, mode), *args)
    except OSError as error:
        if error.errno == errno.EINVAL and os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path) from None
        raise


# How much of a file's beginning is read to sniff it (its magic): one page,
# as cheap as reading six bytes.
_HEAD_READ = 4096

# numpy.memmap's modes and their long names.
_MODE_NAMES = {"readonly": "r", "copyonwrite": "c", "readwrite": "r+", "write": "w+"}


def _load_mode(mmap_mode: Any) -> str | None:
    """load's mmap_mode as 'r', 'r+' or 'c' (None: no mapping)."""
    if mmap_mode is None:
        return None
    mode = _MODE_NAMES.get(mmap_mode, mmap_mode)
    if mode not in ("r", "r+", "c", "w+"):
        # numpy.memmap's own words for a mode it does not know.
        raise ValueError(f"mode must be one of {['r', 'c', 'r+', 'w+', *_MODE_NAMES]} (got {mmap_mode!r})")
    if mode == "w+":
        # numpy's load truncates the file to 0 bytes, then fails with
        # "TypeError: object of type 'NoneType' has no len()": refuse first.
        raise ValueError(
            f"mmap_mode={mmap_mode!r} would create (truncate) the file, which load cannot do: "
            "use 'r', 'r+' or 'c' to map an existing file, or open_memmap(..., mode='w+', "
            "dtype=..., shape=...) to create one"
        )
    return mode


def _header_limit(max_header_size: int, allow_pickle: bool) -> int:
    """numpy's rule: ``allow_pickle=True`` trusts the file, so lifts
    ``max_header_size`` (npy-core's header parser is linear in its input)."""
    return sys.maxsize if allow_pickle else max_header_size


_PYTHON2_HEADER = (
    "Reading `.npy` or `.npz` file required additional header parsing as it was created on Python 2. "
    "Save the file again to speed up loading and avoid this warning."
)


def _warn_python2() -> None:
    """numpy's UserWarning for a header written by Python 2 (a ``2L`` long in
    the shape), which npy-core reads as numpy does. The Rust half calls it
    when npy-core's parse says so (the header is read once)."""
    warnings.warn(_PYTHON2_HEADER, UserWarning, stacklevel=4)


_FORMAT_WARNINGS = {
    # numpy's words, typo included ("beread").
    2: "Stored array in format 2.0. It can only beread by NumPy >= 1.9",
    3: "Stored array in format 3.0. It can only be read by NumPy >= 1.17",
}


def _warn_format(descr: str, shape: tuple[int, ...], fortran: bool) -> None:
    """numpy's UserWarning when the header needs format 2.0 (longer than
    65535 bytes) or 3.0 (a character outside latin-1)."""
    if len(descr) < 65000 and descr.isascii():
        return  # version 1.0 for sure: no need to build the header
    major = _native.header_bytes(descr, shape, fortran)[6]
    if major in _FORMAT_WARNINGS:
        warnings.warn(_FORMAT_WARNINGS[major], UserWarning, stacklevel=3)
