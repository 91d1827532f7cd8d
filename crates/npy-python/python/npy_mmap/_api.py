"""numpy's names over npy-mmap, gathered from the package's parts: one
concern per module, each importing only those below it.

- ``_common``: numpy's mode names and options, paths and URLs, warnings;
- ``_remote``: arrays in object storage (``RemoteArray``, ``open_remote``);
- ``_mapping``: mapped files (``memmap``, ``open_memmap``, ``mapped``);
- ``_npz``: archives (``NpzFile``);
- ``_io``: whole arrays (``load``, ``save``, ``savez``, ``savez_compressed``);
- ``_rows``: ``read_header``, ``append``, ``take``;
- ``_live``: live arrays (``open_live``).
"""

from __future__ import annotations

from ._io import load, save, savez, savez_compressed
from ._live import LiveArray, open_live
from ._mapping import MappedFile, mapped, memmap, open_memmap
from ._npz import LazyMember, NpzFile
from ._remote import RemoteArray, open_remote
from ._rows import append, read_header, take

__all__ = [
    "load",
    "save",
    "savez",
    "savez_compressed",
    "open_memmap",
    "memmap",
    "LazyMember",
    "NpzFile",
    "MappedFile",
    "mapped",
    "append",
    "take",
    "LiveArray",
    "open_live",
    "RemoteArray",
    "open_remote",
    "read_header",
]
