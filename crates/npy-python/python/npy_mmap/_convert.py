"""Native parts <-> numpy objects.

The Rust half hands back *parts*: the data (a ``Buffer`` lent through the
buffer protocol, or a list of Python objects for an object array), the
dtype as the descr literal numpy writes in a header, the shape and the
order. numpy's own ``descr_to_dtype`` turns the descr into a dtype, so the
dtype is exactly the one ``np.load`` would give.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

import numpy as np
from numpy.lib import format as _format

from . import _native


@functools.lru_cache(maxsize=1024)
def dtype_of(descr: str) -> np.dtype:
    """The numpy dtype of a header's descr literal (``"'<f8'"``, ``"[('x', '<i4')]"``)."""
    return _format.descr_to_dtype(ast.literal_eval(descr))


def descr_of(dtype: np.dtype) -> str:
    """The descr literal numpy writes in a header for ``dtype``."""
    return repr(_format.dtype_to_descr(dtype))


def array_over(
    owner: Any,
    dtype: np.dtype,
    shape: tuple[int, ...],
    fortran: bool,
    *,
    subtype: type = np.ndarray,
) -> np.ndarray:
    """The one door out: a numpy array over the bytes of ``owner`` (a
    ``_native.Buffer``: memory Rust owns, or one of our mappings), without
    a copy. Every array of the package over Rust memory is made here.

    ``np.ndarray(buffer=owner)`` takes a buffer export, reads the address,
    releases the export at once, and keeps ``owner`` itself as the array's
    ``.base``: nothing stands between the array and the object that owns
    its bytes, so nothing Python code can reach (``.base.release()`` on a
    ``memoryview``, say) frees them under the array. The owner frees its
    bytes only when it is freed itself, that is when no array (nor
    anything else) reaches it. (``numpy.frombuffer`` would keep a
    ``memoryview`` as the base instead, whose ``release()`` dropped the
    owner's last reference under a live array: issue 39.)
    """
    shape = tuple(int(n) for n in shape)
    return np.ndarray.__new__(subtype, shape, dtype=dtype, buffer=owner, order="F" if fortran else "C")


NO_COPY = (
    "Unable to avoid copy while creating an array as requested.\n"
    "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy when "
    "needed (no behavior change in NumPy 1.x).\n"
    "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
    "#adapting-to-changes-in-the-copy-keyword."
)


def array_protocol(array: np.ndarray, dtype: Any, copy: Any, fresh: bool = False) -> np.ndarray:
    """numpy's ``__array__(dtype=None, copy=None)`` protocol over ``array``:
    ``copy=True`` always gives new memory, ``copy=False`` raises numpy's
    ``ValueError`` when a copy (a dtype change) is needed, ``copy=None``
    copies only when needed. ``fresh`` says ``array`` is new memory nobody
    else holds (so it needs no second copy)."""
    wanted = array.dtype if dtype is None else np.dtype(dtype)
    if copy is False:
        if wanted != array.dtype:
            raise ValueError(NO_COPY)
        return array
    if copy and not fresh:
        return np.array(array, dtype=wanted, copy=True, subok=False)
    return array if wanted == array.dtype else array.astype(wanted)


_OBJECT = np.dtype(object)


def objects(values: list, shape: tuple[int, ...], fortran: bool) -> np.ndarray:
    """An object array of ``values`` (in the header's order)."""
    if not fortran:
        # numpy's own unpickling: the list's items become the array's (a
        # list stays one element), in C order, a little faster than fromiter.
        array = np.ndarray.__new__(np.ndarray, (0,), "b")
        array.__setstate__((1, tuple(shape), _OBJECT, False, values))
        return array
    # fromiter stores each value as it is (a list stays one element).
    flat = np.fromiter(values, dtype=object, count=len(values))
    return flat.reshape(tuple(shape), order="F" if fortran else "C")


def from_parts(payload: Any, descr: str, shape: tuple[int, ...], fortran: bool) -> np.ndarray:
    """The numpy array of native parts."""
    if isinstance(payload, list):
        return objects(payload, shape, fortran)
    return array_over(payload, dtype_of(descr), shape, fortran)


def scalar_from_bytes(descr: str, data: bytes) -> Any:
    """A numpy scalar of dtype ``descr`` from its bytes."""
    return np.frombuffer(data, dtype=dtype_of(descr), count=1)[0]


def saved_order(array: np.ndarray) -> bool:
    """np.save's order rule: Fortran only for F-contiguous arrays that are not C-contiguous."""
    return bool(array.flags.f_contiguous and not array.flags.c_contiguous)


def data_bytes(array: np.ndarray, fortran: bool) -> np.ndarray:
    """The array's bytes in the saved order, as a flat uint8 array (no copy
    when the array is contiguous in that order)."""
    data = array.T if fortran else np.ascontiguousarray(array)
    if data.dtype.itemsize == 0 or data.size == 0:
        return np.empty(0, dtype=np.uint8)
    return data.reshape(-1).view(np.uint8)


def to_parts(value: Any) -> tuple[str, str, tuple[int, ...], bool, Any] | None:
    """What npy-core needs to pickle a numpy array or scalar inside an object
    array: ``(kind, descr, shape, fortran, payload)``; None for anything else."""
    if type(value) is np.ndarray:
        fortran = saved_order(value)
        if value.dtype == object:
            order = "F" if fortran else "C"
            return ("objects", "'|O'", value.shape, fortran, list(value.ravel(order=order)))
        if value.dtype.hasobject:
            return None
        return ("array", descr_of(value.dtype), value.shape, fortran, data_bytes(value, fortran).tobytes())
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        if value.dtype.hasobject:
            return None
        return ("scalar", descr_of(value.dtype), (), False, value.tobytes())
    return None


def native_buffer(array: np.ndarray) -> tuple[Any, int] | None:
    """The ``Buffer`` whose bytes ``array`` views, and the array's byte offset
    in it; None when the array is not over one of ours."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, _native.Buffer):
        buffer = base
        offset = array.__array_interface__["data"][0] - buffer.address
        if 0 <= offset <= len(buffer):
            return buffer, offset
    return None
