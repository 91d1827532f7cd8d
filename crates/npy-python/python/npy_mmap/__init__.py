"""npy_mmap: numpy's ``.npy``/``.npz`` functions over Rust's npy-mmap.

Replace ``np.load``, ``np.save``, ``np.savez``, ``np.savez_compressed`` and
``numpy.lib.format.open_memmap`` by the same names here: same arguments,
same arrays, byte-identical files. What you gain:

* mappings shared as numpy shares them (workers filling one ``r+`` file,
  readers beside writers), whose byte-range locks keep Rust code holding
  references to the same bytes and them apart, in any process;
* :func:`mapped` with a ``close()`` that releases the file at once and
  refuses while numpy views are alive;
* ``load(npz, mmap_mode='r')`` maps stored members without copying;
* ``allow_pickle=True`` decodes object arrays without running code;
* ``open_memmap(..., reserve=True)``, :func:`append`, :func:`open_live`,
  :func:`take` with the GIL released, and ``s3://`` (gs, az, http) URLs.
"""

# The one re-export layer: each name comes from the module that defines it,
# one concern per module, each importing only those below it:
#   _common   numpy's mode names and options, paths and URLs, warnings
#   _remote   arrays in object storage (RemoteArray, open_remote)
#   _mapping  mapped files (memmap, open_memmap, mapped)
#   _npz      archives (NpzFile)
#   _io       whole arrays (load, save, savez, savez_compressed)
#   _rows     read_header, append, take
#   _windows  sampled windows of rows (windows, prefetch/release_windows)
#   _live     live arrays (open_live)
from ._io import load, save, savez, savez_compressed
from ._live import LiveArray, open_live
from ._mapping import MappedFile, mapped, memmap, open_memmap
from ._npz import LazyMember, NpzFile
from ._remote import RemoteArray, open_remote
from ._rows import append, read_header, take
from .virtual import virtualize
from ._windows import prefetch_windows, release_windows, windows
from . import data  # npy_mmap.data without importing it by name

__version__ = "0.1.0"

__all__ = [
    "LazyMember",
    "LiveArray",
    "MappedFile",
    "NpzFile",
    "RemoteArray",
    "append",
    "load",
    "mapped",
    "memmap",
    "open_live",
    "open_memmap",
    "open_remote",
    "read_header",
    "save",
    "savez",
    "savez_compressed",
    "take",
    "virtualize",
    "windows",
    "prefetch_windows",
    "release_windows",
]
