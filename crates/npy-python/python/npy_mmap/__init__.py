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

from ._api import (
    LazyMember,
    LiveArray,
    MappedFile,
    NpzFile,
    RemoteArray,
    append,
    load,
    mapped,
    memmap,
    open_live,
    open_memmap,
    open_remote,
    read_header,
    save,
    savez,
    savez_compressed,
    take,
)
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
