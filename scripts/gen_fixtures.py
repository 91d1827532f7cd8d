#!/usr/bin/env python3
"""Regenerate tests/fixtures/ with numpy and record numpy's answers in manifest.json.

    .venv/bin/python scripts/gen_fixtures.py            # rewrite tests/fixtures/
    .venv/bin/python scripts/gen_fixtures.py --check    # regenerate in a temp dir, fail on any difference

Deterministic: fixed seeds, fixed zip timestamps, no wall-clock data. Must run on
x86-64 Linux (long double is the 80-bit x87 type stored as `<f16`) with the numpy
pinned in scripts/requirements.txt.

Layout of the output:

    tests/fixtures/*.npy        files numpy reads (written by numpy, or hand-crafted legacy layouts)
    tests/fixtures/bad/*.npy    files numpy rejects, with numpy's exact errors
    tests/fixtures/npz/*.npz    archives written by numpy or built with zipfile, good and bad
    tests/fixtures/manifest.json

manifest.json (schema 1):

    numpy_version, python_version, generator, schema
    npy: [entry]          one per good .npy file
    bad: [bad entry]      one per file under bad/
    npz: [archive entry]  one per archive under npz/
    object: [object entry] one per object array under object/ (dtype=object: pickled data)
    object_npz: [{file, members: {key: {array, str}}}]  npz archives holding object arrays
    not_fixtures: [note]  cases too big to store, tested by generating them in tests

entry (also used for npz members, under "npy"):
    file            path relative to tests/fixtures/ (absent for npz members)
    how             "np.save", "np.lib.format.write_array(version=(2, 0))", "open_memmap",
                    "hand-crafted", ...
    description     what the file exercises
    version         "1.0" | "2.0" | "3.0"
    header_len      the length field (bytes after it, up to and including the final newline)
    header_chars    the header's length in decoded characters (what max_header_size limits)
    max_header_size smallest max_header_size numpy needs to read it (only when > 10000)
    data_offset     offset of the first data byte
    descr           repr(numpy.lib.format.dtype_to_descr(dtype)): the descr text numpy writes
    shape           list of ints
    fortran_order   bool
    itemsize, nbytes
    file_size, trailing_bytes (bytes after the data, which numpy ignores)
    np_save_header  true when the header bytes equal what numpy's writer (np.save, version=None)
                    writes for (descr, fortran_order, shape)
    np_header_at_version  true when they equal numpy's writer forced to this file's version
    c_le_hex        the data converted to little-endian (each scalar, field by field), in C
                    order, hex; padding bytes as in the file (always zero in these fixtures)
    sha256          sha256 of those bytes
    values_kind     "bool" "int" "uint" "float" "complex" "bytes" "str" "datetime" "timedelta"
                    (absent for void, structured and subarray dtypes)
    values          the elements in logical C order: ints as JSON ints, floats as Python repr
                    strings ("nan", "-inf", "-0.0", "5e-324"), complex as [re, im] repr pairs,
                    bytes as latin-1 strings with numpy's trailing-NUL stripping, str as str,
                    datetime/timedelta as int64 counts (NaT = -9223372036854775808)
    load_warnings   warnings numpy emits while reading

object entry:
    file, how, description, shape, fortran_order, data_offset, file_size
    default_error   numpy's error from np.load without allow_pickle
    loads           {encoding: {"array": array, "str": str(arr)} | {"error": err}} from
                    np.load(allow_pickle=True, encoding=...) ("ASCII" always; Python 2 files also
                    "latin1" and "bytes")
    array           {descr, shape, fortran_order, hex (data in memory order) | objects (values in
                    memory order)}
    value           tagged JSON: ["none"] ["bool", b] ["int", "decimal"] ["float", repr]
                    ["complex", re, im] ["str", s] ["bytes", hex] ["bytearray", hex]
                    ["tuple"|"list"|"set"|"frozenset", [values]] ["dict", [[key, value]...]]
                    ["array", array] ["scalar", descr, hex]

bad entry:
    file, description
    expect          substrings: a reader's error message must contain at least one of them
                    (numpy's key wording; null = any error is right, numpy has no wording)
    numpy_header_ok true when numpy's header parser accepts it and reading the data fails
    errors          {"np.load": err, "read_array": err, "np.load(mmap_mode='r')": err}
                    err = {"type": "ValueError", "message": str(exception)}

archive entry:
    file, how, description
    open_error      numpy's error from np.load (null when the archive opens)
    files           NpzFile.files (member names with one trailing ".npy" removed)
    data_descriptors, zip64_local_extra   per-archive flags read from the local headers
    members: [{member (zip name), key (NpzFile key), compression ("stored"|"deflated"),
               crc32, compressed_size, file_size, header_offset,
               archive_data_offset (start of the member's bytes in the archive, stored only),
               kind ("npy"|"raw"), npy (entry) | raw_hex, error (err + expect) when access fails}]
"""

import argparse
import ast
import filecmp
import hashlib
import io
import json
import os
import pickle
import platform
import shutil
import struct
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
from numpy.lib import format as npf
from numpy.lib import _format_impl as npf_impl  # numpy's header writer/reader used by np.save/np.load

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
MAGIC = b"\x93NUMPY"
INT64_MIN = -(2**63)
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


# ---------------------------------------------------------------------------
# numpy's answers about a file


def err_of(fn):
    """numpy's exception from fn() as {"type", "message"}, or None if it succeeds."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - recording whatever numpy raises is the point
        t = type(e)
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        return {"type": name, "message": str(e)}
    return None


def le_descr(descr):
    """The same descr with every big-endian scalar made little-endian."""
    if isinstance(descr, str):
        return "<" + descr[1:] if descr.startswith(">") else descr
    if isinstance(descr, tuple):  # (base, shape) subarray type
        return (le_descr(descr[0]), descr[1])
    return [(f[0], le_descr(f[1]), *f[2:]) for f in descr]


def le_dtype(dt):
    """Little-endian twin of dt, field by field, same layout (offsets, padding, titles)."""
    return npf.descr_to_dtype(le_descr(npf.dtype_to_descr(dt)))


def swap_units(dt, offset, out):
    """Append (offset, width) of every byte run to reverse to make dt little-endian."""
    if dt.names is not None:
        for name in dt.names:
            fdt, foff = dt.fields[name][:2]
            swap_units(fdt, offset + foff, out)
    elif dt.subdtype is not None:
        base, shape = dt.subdtype
        for i in range(int(np.prod(shape))):
            swap_units(base, offset + i * base.itemsize, out)
    elif dt.byteorder == ">":
        unit = {"c": dt.itemsize // 2, "U": 4}.get(dt.kind, dt.itemsize)
        out.extend((offset + k, unit) for k in range(0, dt.itemsize, unit))


def c_le_bytes(arr):
    """arr's elements little-endian, in C order. Computed two independent ways that must agree."""
    le = np.zeros(arr.shape, le_dtype(arr.dtype))
    le[...] = arr
    by_numpy = le.tobytes(order="C")

    raw = np.frombuffer(arr.tobytes(order="C"), np.uint8).reshape(arr.size, arr.dtype.itemsize).copy()
    runs = []
    swap_units(arr.dtype, 0, runs)
    for off, width in runs:
        raw[:, off:off + width] = raw[:, off:off + width][:, ::-1]
    by_hand = raw.tobytes()
    assert by_numpy == by_hand, f"little-endian conversion disagrees for {arr.dtype}"
    return by_numpy


def values_of(arr):
    """(values_kind, values) in logical C order, or (None, None) for void/structured."""
    dt = arr.dtype
    if dt.names is not None or dt.subdtype is not None:
        return None, None
    flat = np.ascontiguousarray(arr).reshape(-1)
    kind = dt.kind
    if kind == "b":
        return "bool", [bool(x) for x in flat]
    if kind in "iu":
        return ("int" if kind == "i" else "uint"), [int(x) for x in flat]
    if kind == "f":
        return "float", [repr(float(x)) for x in flat]
    if kind == "c":
        return "complex", [[repr(float(x.real)), repr(float(x.imag))] for x in flat]
    if kind == "S":
        return "bytes", [bytes(x).decode("latin-1") for x in flat]
    if kind == "U":
        return "str", [str(x) for x in flat]
    if kind in "Mm":
        counts = flat.astype(dt.newbyteorder("<")).view("<i8")
        return ("datetime" if kind == "M" else "timedelta"), [int(x) for x in counts]
    return None, None


def version_str(v):
    return f"{v[0]}.{v[1]}"


def numpy_header(d, version):
    """What numpy's header writer (np.save / write_array) emits for dict d, or None if it refuses."""
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            npf_impl._write_array_header(buf, d, version)
    except (ValueError, UnicodeEncodeError):
        return None
    return buf.getvalue()


def describe_npy(data):
    """numpy's view of one .npy file's bytes (see the module doc for the fields)."""
    f = io.BytesIO(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        version = npf.read_magic(f)
        shape, fortran_order, dtype = npf_impl._read_array_header(f, version, max_header_size=2**64)
    data_offset = f.tell()
    prefix = 10 if version == (1, 0) else 12
    header_len = data_offset - prefix
    header_bytes = data[prefix:data_offset]
    header_chars = len(header_bytes.decode("utf-8" if version == (3, 0) else "latin-1"))
    max_header_size = max(10000, header_chars)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        arr = npf.read_array(io.BytesIO(data), max_header_size=max_header_size)
    load_warnings = sorted({str(w.message) for w in caught})
    assert arr.dtype == dtype and arr.shape == shape
    # Work from the file's bytes: numpy's reader leaves record padding uninitialised in memory.
    count = int(np.prod(shape))
    if count and dtype.itemsize:
        arr = np.frombuffer(data, dtype=dtype, count=count, offset=data_offset).reshape(
            shape, order="F" if fortran_order else "C")

    if dtype.kind == "f" and dtype.itemsize == 16 or dtype.kind == "c" and dtype.itemsize == 32:
        check_longdouble_padding(arr)

    header_dict = {"descr": npf.dtype_to_descr(dtype), "fortran_order": fortran_order, "shape": shape}
    le = c_le_bytes(arr)
    entry = {
        "version": version_str(version),
        "header_len": header_len,
        "header_chars": header_chars,
        "data_offset": data_offset,
        "descr": repr(npf.dtype_to_descr(dtype)),
        "shape": list(shape),
        "fortran_order": bool(fortran_order),
        "itemsize": dtype.itemsize,
        "nbytes": arr.nbytes,
        "file_size": len(data),
        "trailing_bytes": len(data) - data_offset - arr.nbytes,
        "np_save_header": numpy_header(header_dict, None) == data[:data_offset],
        "np_header_at_version": numpy_header(header_dict, version) == data[:data_offset],
        "c_le_hex": le.hex(),
        "sha256": hashlib.sha256(le).hexdigest(),
    }
    if header_chars > 10000:
        entry["max_header_size"] = header_chars
    kind, values = values_of(arr)
    if kind is not None:
        entry["values_kind"] = kind
        entry["values"] = values
    if load_warnings:
        entry["load_warnings"] = load_warnings
    return entry


def check_longdouble_padding(arr):
    """The 6 padding bytes of every 80-bit long double must be zero (else fixtures hold garbage)."""
    raw = np.frombuffer(arr.tobytes(), np.uint8).reshape(-1, 16)
    pad = raw[:, :6] if arr.dtype.byteorder == ">" else raw[:, 10:]
    assert not pad.any(), f"non-zero long double padding in {arr.dtype}"


# ---------------------------------------------------------------------------
# helpers that build arrays and files


def longdouble(values, byteorder="<", complex_=False):
    """`<f16`/`>f16` (or `c32`) from float64 values with the x87 padding bytes zeroed."""
    if complex_:
        parts = np.array(values, dtype=np.complex128).view(np.float64)
    else:
        parts = np.array(values, dtype=np.float64)
    ld = parts.astype(np.longdouble)
    raw = np.frombuffer(ld.tobytes(), np.uint8).reshape(-1, 16).copy()
    raw[:, 10:] = 0
    if byteorder == ">":
        raw = raw[:, ::-1]
    kind = "c32" if complex_ else "f16"
    return np.frombuffer(raw.tobytes(), f"{byteorder}{kind}").copy()


def header_bytes(text, version=(1, 0), align=64, prefix_for_align=None, end="\n", pad_char=" "):
    """A preamble + header from dict text, padded like numpy (or like older numpy)."""
    prefix = 10 if version == (1, 0) else 12
    encoded = text.encode("utf-8" if version == (3, 0) else "latin-1")
    if align:
        basis = prefix if prefix_for_align is None else prefix_for_align
        pad = align - ((basis + len(encoded) + len(end)) % align)
        encoded += pad_char.encode() * pad
    encoded += end.encode()
    length = struct.pack("<H" if version == (1, 0) else "<I", len(encoded))
    return MAGIC + bytes(version) + length + encoded


def dict_text(descr="<i4", fortran_order=False, shape=(2, 3)):
    return f"{{'descr': {descr!r}, 'fortran_order': {fortran_order!r}, 'shape': {shape!r}, }}"


class NonSeekable(io.RawIOBase):
    """A write-only stream without seek/tell, so zipfile must use data descriptors."""

    def __init__(self, sink):
        self.sink = sink

    def writable(self):
        return True

    def seekable(self):
        return False

    def write(self, b):
        return self.sink.write(b)


# ---------------------------------------------------------------------------
# object arrays (dtype=object): pickled data, numpy's answers with allow_pickle=True


def obj_json(o):
    """A Python value as tagged JSON (the manifest's "values" of object fixtures)."""
    if o is None:
        return ["none"]
    if isinstance(o, (bool, np.bool_)) and type(o) is bool:
        return ["bool", o]
    if type(o) is int:
        return ["int", str(o)]
    if type(o) is float:
        return ["float", repr(o)]
    if type(o) is complex:
        return ["complex", repr(o.real), repr(o.imag)]
    if type(o) is str:
        return ["str", o]
    if type(o) is bytes:
        return ["bytes", o.hex()]
    if type(o) is bytearray:
        return ["bytearray", bytes(o).hex()]
    if type(o) is tuple:
        return ["tuple", [obj_json(x) for x in o]]
    if type(o) is list:
        return ["list", [obj_json(x) for x in o]]
    if type(o) is dict:
        return ["dict", [[obj_json(k), obj_json(v)] for k, v in o.items()]]
    if type(o) is set:
        return ["set", [obj_json(x) for x in o]]
    if type(o) is frozenset:
        return ["frozenset", [obj_json(x) for x in o]]
    if isinstance(o, np.ndarray):
        return ["array", array_json(o)]
    if isinstance(o, np.generic):
        return ["scalar", repr(npf.dtype_to_descr(o.dtype)), o.tobytes().hex()]
    raise TypeError(f"no JSON form for {type(o)}")


def array_json(a):
    """An array: descr, shape, order and its data in memory order (or its objects in memory order)."""
    fortran = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    out = {"descr": repr(npf.dtype_to_descr(a.dtype)), "shape": list(a.shape), "fortran_order": fortran}
    order = "F" if fortran else "C"
    if a.dtype.hasobject:
        out["objects"] = [obj_json(x) for x in a.ravel(order=order)]
    else:
        out["hex"] = a.tobytes(order=order).hex()
    return out


def npy_with_pickle(arr, protocol, fix=None):
    """Header as np.save writes it, then pickle.dumps(arr, protocol), optionally rewritten by fix."""
    buf = io.BytesIO()
    npf_impl._write_array_header(buf, npf.header_data_from_array_1_0(arr), None)
    data = pickle.dumps(arr, protocol=protocol)
    if fix:
        data = fix(data)
    return buf.getvalue() + data


class Py2Pickle:
    """Hand-assembles protocol-2 pickles the way Python 2 numpy's np.save wrote them:
    GLOBAL numpy.core.multiarray, and Python 2 str (SHORT_BINSTRING/BINSTRING) for
    type codes, dtype strings, byte orders and numeric array data."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")

    def glob(self, module, name):
        self.out += b"c" + f"{module}\n{name}\n".encode()

    def py2str(self, b):
        self.out += (b"U" + bytes([len(b)]) if len(b) < 256 else b"T" + struct.pack("<i", len(b))) + b

    def unicode(self, s):
        e = s.encode("utf-8")
        self.out += b"X" + struct.pack("<I", len(e)) + e

    def int(self, n):
        self.out += b"K" + bytes([n]) if 0 <= n < 256 else b"J" + struct.pack("<i", n)

    def float(self, x):
        self.out += b"G" + struct.pack(">d", x)

    def dtype(self, code, order, elsize=-1, align=-1, flags=0):
        self.glob("numpy", "dtype")
        self.py2str(code)
        self.out += b"\x89\x88\x87R("
        self.int(3)
        self.py2str(order)
        self.out += b"NNN"
        for n in (elsize, align, flags):
            self.int(n)
        self.out += b"tb"

    def array_start(self, shape):
        self.glob("numpy.core.multiarray", "_reconstruct")
        self.glob("numpy", "ndarray")
        self.int(0)
        self.out += b"\x85"
        self.py2str(b"b")
        self.out += b"\x87R("
        self.int(1)
        for d in shape:
            self.int(d)
        self.out += {0: b")", 1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(shape)]

    def finish(self):
        return bytes(self.out + b".")


def py2_object_file():
    """A Python-2-era object array (like numpy's own py2-objarr.npy): str and
    unicode strings, an int, a float, and a nested int32 array whose data is a
    Python 2 str holding non-ASCII bytes."""
    p = Py2Pickle()
    p.array_start((6,))
    p.dtype(b"O8", b"|", flags=63)
    p.out += b"\x89](" # not fortran, list, MARK
    p.py2str(b"abc")
    p.py2str(b"\xe9t\xe9")
    p.unicode("\u00e9t\u00e9")
    p.int(7)
    p.float(2.5)
    p.array_start((3,))
    p.dtype(b"i4", b"<")
    p.out += b"\x89"
    p.py2str(struct.pack("<3i", 1, 200, -2))
    p.out += b"tb"
    p.out += b"etb"  # APPENDS, state TUPLE, BUILD
    header = io.BytesIO()
    npf_impl._write_array_header(header, {"descr": "|O", "fortran_order": False, "shape": (6,)}, (1, 0))
    return header.getvalue() + p.finish()


def object_fixtures(gen):
    d = gen.out / "object"
    d.mkdir(parents=True, exist_ok=True)

    def add(name, data, description, how, encodings=("ASCII",)):
        (d / name).write_bytes(data)
        entry = {"file": f"object/{name}", "how": how, "description": description}
        f = io.BytesIO(data)
        version = npf.read_magic(f)
        shape, fortran_order, dtype = npf_impl._read_array_header(f, version)
        entry["shape"] = list(shape)
        entry["fortran_order"] = bool(fortran_order)
        entry["data_offset"] = f.tell()
        entry["file_size"] = len(data)
        entry["default_error"] = err_of(lambda: np.load(io.BytesIO(data)))
        loads = {}
        for encoding in encodings:
            result = {}
            def load():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return np.load(io.BytesIO(data), allow_pickle=True, encoding=encoding)
            error = err_of(load)
            if error is not None:
                result["error"] = error
            else:
                arr = load()
                try:
                    result["array"] = array_json(arr)
                except RecursionError:
                    result["self_reference"] = True  # not a tree: no JSON form
                result["str"] = str(arr)
            loads[encoding] = result
        entry["loads"] = loads
        gen.objects.append(entry)

    def save(name, arr, description, **kw):
        buf = io.BytesIO()
        np.save(buf, arr)
        add(name, buf.getvalue(), description, "np.save", **kw)

    def objarray(values, shape=None):
        a = np.empty(len(values), dtype=object)
        a[:] = values
        return a if shape is None else a.reshape(shape)

    kinds = [None, True, False, 0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**31, 2**63 - 1, -2**63,
             2**63, 2**64, -2**100, 3**80, 1.5, -0.0, float("nan"), float("inf"), 1e-7, 1e16, 0.1,
             complex(1, 2), complex(-0.0, 1.5), "", "abc", "\u00e9t\u00e9 \u65e5\U0001F600", "it's", 'say "hi"',
             "a\nb\\c\x00", b"", b"xy", b"\x00\xff'", bytearray(b"ab\x80"), bytearray(), (), (1,), (1, "a"),
             (1, 2, 3), (1, 2, 3, 4, 5), [], [1, [2, [3]]], {}, {"k": 1, 2: [3], (4,): None}, set(), {1, 2, 3},
             frozenset(), frozenset({"x"}), np.float64(1.5), np.int32(-3), np.bool_(True), np.str_("s"),
             np.datetime64("2024-01-02", "D"), np.complex64(1 - 2j)]
    save("obj_kinds.npy", objarray(kinds), "every value kind np.save pickles, numpy scalars too")
    issue = objarray(["abc", 1, 2.5, None, b"xy", (1, 2), [3, "q"], {"k": 1}, np.arange(3)])
    save("obj_issue_example.npy", issue, "the issue's example row")
    save("obj_ragged.npy", objarray([np.arange(3), np.arange(5), np.arange(0)]), "ragged int64 arrays")
    rec = np.zeros(2, dtype=[("x", "<i4"), ("y", ">f8", (2,)), (("T", "t"), "S3")])
    rec["x"], rec["y"], rec["t"] = [1, -2], [[0.5, 1.5], [np.nan, -0.0]], [b"ab", b"c"]
    nested = [np.arange(4, dtype=">i2"), np.array(["a", "bc"]), np.array(["2024-01-01", "NaT"], dtype="M8[ns]"),
              np.array([5, -1], dtype="m8[10s]"), rec, np.array(1.25), np.array("x"), np.zeros((2, 0)),
              np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.array([1 + 2j, -1j]), np.array([True, False]),
              np.array([b"abc", b""], dtype="S5"), np.arange(12, dtype="<f4").reshape(2, 3, 2) / 3,
              np.array([1e-10, 1.0, 1e10]), np.array([0.1, 0.25, 100.0]), np.arange(2000),
              objarray([1, "a", None]), np.zeros(3, dtype="|V2"), np.array([1, 2], dtype="u8")]
    save("obj_nested_arrays.npy", objarray(nested), "nested arrays of many dtypes (structured, datetime, F order, 0-d, empty, long, objects)")
    zero_d = np.empty((), dtype=object)
    zero_d[()] = {"a": [1, 2], "b": (None,)}
    save("obj_0d.npy", zero_d, "0-d object array holding a dict")
    save("obj_empty.npy", np.empty((0,), dtype=object), "empty object array, shape (0,)")
    save("obj_empty_2d.npy", np.empty((0, 3), dtype=object), "empty object array, shape (0, 3)")
    f2 = objarray([1, "a", None, [1], (2,), {3}], (2, 3))
    save("obj_f_2d.npy", np.asfortranarray(f2), "Fortran-order (2, 3) object array")
    save("obj_c_2d.npy", f2, "C-order (2, 3) object array")
    save("obj_c_3d.npy", objarray(list(range(20)) + ["x", None, 2.5, b"z"], (2, 3, 4)), "C-order (2, 3, 4)")
    save("obj_big_strings.npy", objarray([f"s{i}" for i in range(2000)]), "2000 short strings: str() summarises")
    save("obj_big_2d.npy", objarray([i * 0.5 for i in range(40 * 50)], (40, 50)), "(40, 50) floats: summarised in 2-D")
    save("obj_long_row.npy", objarray([f"item{i}" for i in range(40)] + [np.arange(30) * 1.5]),
         "a row wider than 75 characters, and a nested array wider than a line")
    shared = [1, 2]
    save("obj_shared.npy", objarray([shared, shared, (shared,)]), "one list referenced three times (memo)")
    cyclic = []
    cyclic.append(cyclic)
    save("obj_self_reference.npy", objarray([cyclic]), "a list that holds itself: refused (not a tree)")
    for proto in (2, 3, 5):
        add(f"obj_protocol{proto}.npy", npy_with_pickle(objarray(kinds[:-6] + nested[:9]), proto),
            f"the value kinds and nested arrays pickled with protocol {proto}", f"pickle.dump(protocol={proto})")
    numpy1 = npy_with_pickle(issue, 2, lambda p: p.replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n"))
    add("obj_numpy1_names.npy", numpy1, "protocol 2 naming numpy.core.multiarray (numpy 1.x)",
        "pickle.dump(protocol=2), module renamed")
    add("obj_py2.npy", py2_object_file(), "Python 2 era: GLOBAL numpy.core.multiarray, py2 str (BINSTRING) "
        "for strings, dtype codes and numeric array data", "hand-assembled protocol 2 (Python 2 numpy's form)",
        encodings=("ASCII", "latin1", "bytes"))
    save("obj_py2_strings_bytes.npy", objarray([b"abc", "\u00e9"]), "bytes and str under every encoding",
         encodings=("ASCII", "latin1", "bytes"))

    # npz members holding object arrays.
    z = gen.out / "npz"
    np.savez(z / "objects.npz", obj=issue, num=np.arange(3), zero_d=zero_d)
    np.savez_compressed(z / "objects_compressed.npz", obj=issue, ragged=objarray([np.arange(2), np.arange(3)]))
    for name in ("objects.npz", "objects_compressed.npz"):
        members = {}
        with np.load(z / name, allow_pickle=True) as archive:
            for key in archive.files:
                arr = archive[key]
                members[key] = {"array": array_json(arr), "str": str(arr)}
        gen.object_npz.append({"file": f"npz/{name}", "members": members})


# ---------------------------------------------------------------------------
# the fixtures


class Generator:
    def __init__(self, out):
        self.out = out
        self.npy = []
        self.bad = []
        self.npz = []
        self.objects = []
        self.object_npz = []
        self.rng = np.random.default_rng(20240601)
        for sub in ("", "bad", "npz"):
            (out / sub).mkdir(parents=True, exist_ok=True)

    # -- writers -----------------------------------------------------------

    def _record(self, name, how, description):
        data = (self.out / name).read_bytes()
        entry = {"file": name, "how": how, "description": description}
        entry.update(describe_npy(data))
        self.npy.append(entry)

    def save(self, name, arr, description):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.save(self.out / name, arr)
        self._record(name, "np.save", description)

    def write_version(self, name, arr, version, description):
        with open(self.out / name, "wb") as f, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            npf.write_array(f, arr, version=version)
        self._record(name, f"np.lib.format.write_array(version={version!r})", description)

    def memmap(self, name, dtype, shape, fortran_order, description):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = npf.open_memmap(self.out / name, mode="w+", dtype=dtype, shape=shape,
                                fortran_order=fortran_order)
            del m
        self._record(name, f"open_memmap(mode='w+', fortran_order={fortran_order})", description)

    def craft(self, name, data, description, how="hand-crafted"):
        (self.out / name).write_bytes(data)
        self._record(name, how, description)

    # -- good files ----------------------------------------------------------

    def scalars(self):
        rng = self.rng
        self.save("b1.npy", np.array([True, False, True, True, False]), "bool")
        self.save("i1.npy", np.array([-128, -1, 0, 1, 127], dtype="|i1"), "int8 extremes")
        self.save("u1.npy", np.array([0, 1, 127, 128, 255], dtype="|u1"), "uint8 extremes")
        for bits in (16, 32, 64):
            n = bits // 8
            info_i, info_u = np.iinfo(f"i{n}"), np.iinfo(f"u{n}")
            ints = [info_i.min, -1, 0, 1, info_i.max, *rng.integers(info_i.min, info_i.max, 3, dtype=f"i{n}")]
            uints = [0, 1, info_u.max // 2 + 1, info_u.max, *rng.integers(0, info_u.max, 3, dtype=f"u{n}")]
            for bo, tag in (("<", "le"), (">", "be")):
                self.save(f"i{n}_{tag}.npy", np.array(ints, dtype=f"{bo}i{n}"), f"int{bits} {tag}: extremes and random")
                self.save(f"u{n}_{tag}.npy", np.array(uints, dtype=f"{bo}u{n}"), f"uint{bits} {tag}: extremes and random")

        for n in (2, 4, 8):
            finfo = np.finfo(f"f{n}")
            specials = [0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf,
                        finfo.smallest_subnormal, finfo.smallest_normal - finfo.smallest_subnormal,
                        finfo.smallest_normal, finfo.max, -finfo.max, 0.1]
            base = np.array(specials, dtype=f"<f{n}")
            base = np.concatenate([base, rng.standard_normal(3).astype(f"<f{n}")])
            for bo, tag in (("<", "le"), (">", "be")):
                self.save(f"f{n}_{tag}.npy", base.astype(f"{bo}f{n}"),
                          f"float{n * 8} {tag}: nan, inf, -0.0, subnormals, max, random")

        ld = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e300, 5e-324, 0.1]
        for bo, tag in (("<", "le"), (">", "be")):
            self.save(f"f16_{tag}.npy", longdouble(ld, bo),
                      f"long double {tag} (x87 80-bit in 16 bytes, padding zeroed), from float64 values")

        cvals = [0j, complex(-0.0, 0.0), 1.5 - 2.25j, complex(np.nan, 1.0), complex(-np.inf, np.inf), 0.1 + 0.2j]
        for bo, tag in (("<", "le"), (">", "be")):
            for n in (8, 16):
                self.save(f"c{n}_{tag}.npy", np.array(cvals, dtype=f"{bo}c{n}"),
                          f"complex{n * 8} {tag}: each half swapped separately")
            self.save(f"c32_{tag}.npy", longdouble(cvals, bo, complex_=True),
                      f"complex long double {tag}, padding zeroed")

        self.save("S5.npy", np.array([b"", b"a", b"ab\x00c", b"abcde", b"a\x00\x00", b"\xff\x80 \x00z"], dtype="|S5"),
                  "bytes: empty, interior NULs kept, trailing NULs stripped by numpy, high bytes")
        strs = ["", "a", "\u00e9t\u00e9", "\u65e5\u672c", "\U0001F600x", "a\x00b", "\U0001D11E"]
        for bo, tag in (("<", "le"), (">", "be")):
            self.save(f"U3_{tag}.npy", np.array(strs, dtype=f"{bo}U3"),
                      f"unicode {tag}: latin-1, CJK, astral (emoji, G clef), interior NUL")
        self.save("V4.npy", np.array([b"\x01\x02\x03\x04", b"\x00\x00\x00\x00", b"\xff\x00\xfe\x00"], dtype="|V4"),
                  "opaque void bytes")
        self.save("V0.npy", np.zeros(3, dtype="|V0"), "zero-itemsize void: header only, no data bytes")

        dt_cases = [
            ("M8_10s_le.npy", "<M8[10s]", ["2024-01-01T00:00:10", "NaT", "1969-12-31T23:59:50", "1970-01-01"]),
            ("M8_3D_le.npy", "<M8[3D]", ["2024-01-01", "NaT", "1969-12-29", "1970-01-01"]),
            ("M8_ms_le.npy", "<M8[ms]", ["2024-02-29T12:34:56.789", "NaT", "1900-01-01T00:00:00.001"]),
            ("M8_ns_be.npy", ">M8[ns]", ["2262-04-11T23:47:16.854775807", "NaT", "1677-09-21T00:12:43.145224193"]),
            ("M8_Y_le.npy", "<M8[Y]", ["2024", "NaT", "1", "-100"]),
            ("M8_us_be.npy", ">M8[us]", ["2000-01-01T00:00:00.000001", "NaT"]),
        ]
        for name, dtype, vals in dt_cases:
            self.save(name, np.array(vals, dtype=dtype), f"datetime64 {dtype} with NaT")
        td_cases = [
            ("m8_ms_le.npy", "<m8[ms]", [0, -1, 1500, "NaT", 2**62]),
            ("m8_7D_le.npy", "<m8[7D]", [1, -3, "NaT"]),
            ("m8_250ms_be.npy", ">m8[250ms]", [4, -4, "NaT"]),
            ("m8_ns_be.npy", ">m8[ns]", [1, 2**63 - 1, "NaT", -(2**63) + 1]),
        ]
        for name, dtype, vals in td_cases:
            self.save(name, np.array([np.timedelta64(v) if v == "NaT" else v for v in vals], dtype=dtype),
                      f"timedelta64 {dtype} with NaT")
        self.save("M8_generic_nat.npy", np.array(["NaT", "NaT"], dtype="M8"), "generic datetime64 '<M8': NaT only")
        self.save("M8_generic_empty.npy", np.array([], dtype="M8"), "generic datetime64 '<M8', empty")
        self.save("m8_generic.npy", np.array([1, -2, "NaT"], dtype="m8"), "generic timedelta64 '<m8'")

    def orders_and_shapes(self):
        c2 = np.arange(12, dtype="<f8").reshape(3, 4) + 0.5
        self.save("f8_c_2d.npy", c2, "float64 (3, 4) C order")
        self.save("f8_f_2d.npy", np.asfortranarray(c2), "float64 (3, 4) Fortran order")
        self.save("i2_be_f_2d.npy", np.asfortranarray((np.arange(12).reshape(3, 4) - 6).astype(">i2")),
                  "big-endian int16 (3, 4) Fortran order")
        c3 = np.arange(24, dtype="<f4").reshape(2, 3, 4) - 11.25
        self.save("f4_c_3d.npy", c3, "float32 (2, 3, 4) C order")
        self.save("f4_f_3d.npy", np.asfortranarray(c3), "float32 (2, 3, 4) Fortran order")
        self.save("u2_be_f_3d.npy", np.asfortranarray((np.arange(24).reshape(2, 3, 4) * 1000).astype(">u2")),
                  "big-endian uint16 (2, 3, 4) Fortran order")
        self.save("c16_be_f_2d.npy", np.asfortranarray((np.arange(6) + 1j * np.arange(6)[::-1]).astype(">c16").reshape(2, 3)),
                  "big-endian complex128 (2, 3) Fortran order")
        self.save("U2_f_2d.npy", np.asfortranarray(np.array([["a", "bc", "\u00e9"], ["\u65e5", "", "zz"]], dtype="<U2")),
                  "unicode (2, 3) Fortran order")
        self.save("f8_noncontiguous.npy", c2[:, ::2], "a strided slice: np.save writes it in C order")
        self.save("f8_0d.npy", np.array(3.25), "0-d float64")
        self.save("U5_0d.npy", np.array("h\u00e9llo"), "0-d unicode")
        self.save("M8_s_0d.npy", np.array("NaT", dtype="<M8[s]"), "0-d datetime64 NaT")
        self.save("f8_empty.npy", np.zeros(0), "shape (0,)")
        self.save("f8_3x0.npy", np.zeros((3, 0)), "shape (3, 0)")
        self.save("f8_0x5_c.npy", np.zeros((0, 5)), "shape (0, 5), C order")
        self.memmap("f8_0x5_f.npy", "<f8", (0, 5), True,
                    "shape (0, 5) with fortran_order True (np.save would write False for a zero-size array)")
        self.memmap("i4_4x3_f_memmap.npy", "<i4", (4, 3), True, "open_memmap w+ Fortran: zeros")
        self.save("i4_huge_dim_zero_size.npy", np.zeros((10**15, 0), dtype="<i4"),
                  "zero-size with a 16-digit first dim (growth padding shrinks to 5)")
        self.save("i2_64d.npy", np.full((1,) * 64, 7, dtype="<i2"), "64 dimensions, all of length 1")
        self.memmap("u1_f_growth_19_digits.npy", "|u1", (0, 10**18), True,
                    "zero-size Fortran order: growth padding follows the 19-digit last dim")

    def records(self):
        simple = np.zeros(3, dtype=[("x", "<i4"), ("y", "<f8")])
        simple["x"] = [1, -2, 3]
        simple["y"] = [0.5, np.nan, -np.inf]
        self.save("rec_simple.npy", simple, "structured: two fields")

        nested_dt = np.dtype([("a", [("b", "<i2"), ("c", ">f4")]), ("d", "|u1")])
        nested = np.zeros(2, nested_dt)
        nested["a"]["b"] = [7, -7]
        nested["a"]["c"] = [1.25, -0.0]
        nested["d"] = [200, 1]
        self.save("rec_nested.npy", nested, "structured: a nested record with a big-endian field")

        sub = np.zeros(2, dtype=[("x", "<i4"), ("y", ">f8", (2, 3))])
        sub["x"] = [1, 2]
        sub["y"] = np.arange(12).reshape(2, 2, 3) / 4
        self.save("rec_subarray.npy", sub, "structured: subarray field ('y', '>f8', (2, 3))")

        sub2_dt = np.dtype([("c", ("<f8", (5,)), (2,)), ("r", [("p", "<i2"), ("q", "|S2")], (2,))])
        sub2 = np.zeros(2, sub2_dt)
        sub2["c"] = np.arange(20).reshape(2, 2, 5)
        sub2["r"]["p"] = [[1, 2], [3, 4]]
        sub2["r"]["q"] = [[b"ab", b"c"], [b"", b"zz"]]
        self.save("rec_subarray_nested.npy", sub2, "structured: subarray of subarray, subarray of records")

        titled_dt = np.dtype({"names": ["x", "y"], "formats": ["<i4", ">f4"], "titles": ["X title", "Y"]})
        titled = np.zeros(2, titled_dt)
        titled["x"] = [5, 6]
        titled["y"] = [1.5, -1.5]
        self.save("rec_titles.npy", titled, "structured: (title, name) fields")

        aligned_dt = np.dtype([("a", "u1"), ("b", "<i4"), ("c", "u1"), ("d", "<f8")], align=True)
        aligned = np.zeros(2, aligned_dt)
        aligned["a"], aligned["b"], aligned["c"], aligned["d"] = [1, 2], [-3, 4], [5, 6], [0.25, 8]
        self.save("rec_aligned.npy", aligned, "structured: align=True layout, ('', '|V3') padding entries")

        offsets_dt = np.dtype({"names": ["a", "b"], "formats": ["<i2", ">i4"], "offsets": [2, 8], "itemsize": 16})
        offsets = np.zeros(3, offsets_dt)
        offsets["a"], offsets["b"] = [1, -1, 300], [70000, -70000, 0]
        self.save("rec_offsets_itemsize.npy", offsets, "structured: explicit offsets, leading gap and trailing padding")

        empty_name_dt = npf.descr_to_dtype([("", "<i4"), ("b", "<f4")])
        empty_name = np.zeros(2, empty_name_dt)
        empty_name[""] = [9, -9]
        empty_name["b"] = [0.5, 2]
        self.save("rec_empty_name.npy", empty_name, "structured: a non-void field named '' (kept by descr_to_dtype)")

        be_dt = np.dtype([("a", ">i4"), ("b", ">f8"), ("c", "<u2"), ("d", ">c8"), ("e", "|b1")])
        be = np.zeros(3, be_dt)
        be["a"], be["b"], be["c"] = [1, -2, 2**31 - 1], [np.pi, -0.0, np.inf], [1, 2, 65535]
        be["d"], be["e"] = [1 + 2j, -1j, np.nan], [True, False, True]
        self.save("rec_big_endian.npy", be, "structured: mixed byte orders")

        mixed_dt = np.dtype([("s", "|S3"), ("u", ">U2"), ("t", "<M8[ms]"), ("d", ">m8[s]"), ("v", "|V2"), ("g", ">f16")])
        mixed = np.zeros(2, mixed_dt)
        mixed["s"], mixed["u"] = [b"ab\x00", b"xyz"], ["\u00e9", "\U0001F600"]
        mixed["t"] = np.array(["2024-01-01T00:00:00.001", "NaT"], dtype="<M8[ms]")
        mixed["d"] = np.array([-5, "NaT"], dtype=">m8[s]")
        mixed["v"] = [b"\x01\x02", b"\xfe\xff"]
        mixed["g"] = longdouble([1.5, -2.0], ">")
        self.save("rec_strings_times.npy", mixed, "structured: bytes, unicode, datetime, timedelta, void, long double fields")

        f_rec = np.zeros((2, 3), dtype=[("x", "<i4"), ("y", ">f8")])
        f_rec["x"] = np.arange(6).reshape(2, 3)
        f_rec["y"] = np.arange(6).reshape(2, 3) * -0.5
        self.save("rec_f_2d.npy", np.asfortranarray(f_rec), "structured (2, 3) Fortran order")
        self.save("rec_0d.npy", simple[1:2].reshape(()), "0-d structured")
        self.save("rec_empty_fields.npy", np.zeros(2, dtype=npf.descr_to_dtype([])), "structured with no fields: descr []")

    def names_and_versions(self):
        def named(names, fmt="<i2"):
            arr = np.zeros(2, dtype=[(n, fmt) for n in names])
            for i, n in enumerate(names):
                arr[n] = [i + 1, -(i + 1)]
            return arr

        self.save("name_cafe_v1.npy", named(["caf\u00e9", "x"]), "latin-1 field name: stays v1, header byte 0xE9")
        self.save("name_cjk_v3.npy", named(["\u6570\u636e", "\u540d\u524d"]), "CJK field names: numpy picks v3 (UTF-8)")
        self.save("name_emoji_v3.npy", named(["\U0001F600"]), "astral field name: v3")
        self.save("name_single_quote.npy", named(["it's"]), "field name with ': repr uses double quotes")
        self.save("name_both_quotes.npy", named(["a'b\"c\\d"]), "field name with both quotes and a backslash: escaped")
        self.save("name_nonprintable.npy", named(["zero\u200bwidth", "tab\there", "nbsp\u00a0", "nl\n"]),
                  "non-printable chars in names: written as ASCII escapes (\\u200b, \\t, \\xa0, \\n), stays v1")

        long_names = [f"field_{i:03d}_" + "x" * 120 for i in range(500)]
        many = np.zeros(1, dtype=[(n, "|u1") for n in long_names])
        many[0] = tuple(i % 256 for i in range(500))
        self.save("v2_long_names.npy", many, "500 long field names: header > 65535 bytes, numpy picks v2")
        arr = np.array([1.0, -2.0, 3.5])
        self.write_version("v2_forced.npy", arr, (2, 0), "small array forced to version 2.0")
        self.write_version("v3_forced_ascii.npy", arr, (3, 0), "ASCII header forced to version 3.0")
        self.write_version("v1_forced.npy", np.arange(5, dtype="<u4"), (1, 0), "explicit version 1.0")

        # A header whose text + newline ends exactly on a 64-byte boundary: numpy still pads 64 spaces.
        for k in range(1, 200):
            candidate = np.zeros(2, dtype=[("a" * k, "<i4")])
            d = npf.header_data_from_array_1_0(candidate)
            raw = numpy_header(d, None)
            if raw.endswith(b" " * 64 + b"\n") and not raw.endswith(b" " * 65 + b"\n"):
                self.save("pad_exactly_64.npy", candidate, f"field name of {k} chars: text ends on a 64-byte boundary, 64 pad spaces")
                break
        else:
            raise AssertionError("no field name length gives a 64-space pad")

        # Growth padding: 128 vs 192 byte headers around the growth axis width.
        self.save("growth_192.npy", np.zeros((3, 1), dtype=[("name_" + "n" * 40, "<i2")]),
                  "header that needs 192 bytes (text + growth padding > 118)")

    def legacy(self):
        arr = np.array([1, -2, 3, -4, 5, -6], dtype="<i4").reshape(2, 3)
        data = arr.tobytes()
        text = dict_text()

        def craft(name, raw_header, description, tail=b""):
            self.craft(name, raw_header + data + tail, description)

        craft("legacy_align16_v1.npy", header_bytes(text, align=16),
              "numpy < 1.14: v1 padded to 16 bytes, no growth padding (data offset 80)")
        craft("legacy_v2_misaligned.npy", header_bytes(text, (2, 0), align=16, prefix_for_align=10),
              "numpy < 1.14 v2: padding computed with the v1 prefix size, data offset 82")
        craft("legacy_no_padding.npy", header_bytes(text, align=0), "no padding, just the newline")
        craft("legacy_no_newline.npy", header_bytes(text, align=0, end=""), "no padding and no newline")
        craft("legacy_crlf.npy", header_bytes(text, end="\r\n"), "padding ends with CRLF")
        craft("legacy_tabs.npy", header_bytes(text, pad_char="\t"), "tabs as padding")
        craft("legacy_comment.npy", header_bytes(text + " # a comment"), "a Python comment after the dict")
        craft("legacy_double_quotes.npy",
              header_bytes('{"descr": "<i4", "fortran_order": False, "shape": (2, 3), }'), "double-quoted keys and descr")
        craft("legacy_py2_long.npy", header_bytes(dict_text().replace("(2, 3)", "(2L, 3L)"), align=16),
              "Python 2 long suffix (2L, 3L), 16-byte aligned (numpy warns)")
        craft("legacy_hex_shape.npy", header_bytes(dict_text().replace("(2, 3)", "(0x2, 0x3)")), "hex shape literals")
        craft("legacy_plus_shape.npy", header_bytes(dict_text().replace("(2, 3)", "(+2, +3)")), "unary plus in the shape")
        craft("legacy_key_order.npy",
              header_bytes("{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}"), "keys in another order")
        craft("legacy_no_trailing_comma.npy",
              header_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}"), "no trailing comma, no growth padding")
        craft("legacy_leading_space.npy", header_bytes("  " + text), "whitespace before the dict")
        craft("legacy_u_prefix.npy", header_bytes("{u'descr': u'<i4', u'fortran_order': False, u'shape': (2, 3)}"),
              "Python 2 u'' string prefixes")
        exact = header_bytes(text, align=0)
        pad = 10000 - (len(exact) - 10)
        craft("header_exactly_10000.npy", header_bytes(text + " " * pad, align=0),
              "header of exactly 10000 characters: the largest numpy accepts by default")

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            buf = io.BytesIO()
            np.save(buf, arr)
        self.craft("trailing_bytes.npy", buf.getvalue() + b"trailing garbage",
                   "np.save output followed by bytes numpy ignores", how="np.save + appended bytes")

    # -- bad files ----------------------------------------------------------

    def bad_file(self, name, data, description, expect):
        path = self.out / "bad" / name
        path.write_bytes(data)

        def header_only():
            f = io.BytesIO(data)
            version = npf.read_magic(f)
            npf_impl._read_array_header(f, version)

        def read_array_file():
            with open(path, "rb") as f:
                npf.read_array(f)

        def load_mmap():
            m = np.load(path, mmap_mode="r")
            del m

        errors = {
            "np.load": err_of(lambda: np.load(path)),
            "read_array": err_of(read_array_file),
            "np.load(mmap_mode='r')": err_of(load_mmap),
        }
        missing = [k for k, v in errors.items() if v is None]
        assert not missing, f"bad/{name}: numpy accepts it via {missing}"
        self.bad.append({
            "file": f"bad/{name}",
            "description": description,
            "expect": expect,
            "numpy_header_ok": err_of(header_only) is None,
            "errors": errors,
        })

    def bad_files(self):
        arr = np.array([1, -2, 3, -4, 5, -6], dtype="<i4").reshape(2, 3)
        data = arr.tobytes()
        good = header_bytes(dict_text()) + data

        def hdr(text, **kw):
            return header_bytes(text, **kw) + data

        self.bad_file("bad_magic.npy", b"\x93numpy" + good[6:], "magic \\x93numpy", ["the magic string is not correct"])
        self.bad_file("version_4_0.npy", good[:6] + b"\x04\x00" + good[8:], "version 4.0",
                      ["we only support format version (1,0), (2,0), and (3,0)"])
        self.bad_file("version_1_1.npy", good[:6] + b"\x01\x01" + good[8:], "version 1.1",
                      ["we only support format version (1,0), (2,0), and (3,0)"])
        self.bad_file("empty.npy", b"", "zero bytes", ["EOF: reading magic string", "No data left in file"])
        self.bad_file("truncated_magic.npy", good[:5], "5 bytes of magic", ["EOF: reading magic string"])
        self.bad_file("truncated_preamble.npy", good[:9], "magic and version, half the length field",
                      ["EOF: reading array header length"])
        self.bad_file("truncated_header.npy", good[:60], "header cut after 50 of 118 bytes",
                      ["EOF: reading array header"])
        self.bad_file("truncated_data.npy", good[:-1], "data one byte short",
                      ["Failed to read all data", "EOF: reading array data"])
        exact = header_bytes(dict_text(), align=0)
        self.bad_file("header_over_10000.npy", hdr(dict_text() + " " * (10001 - (len(exact) - 10)), align=0),
                      "header of 10001 characters", ["Header info length (10001) is large"])
        self.bad_file("not_a_dict.npy", hdr("['<i4', False, (2, 3)]"), "header is a list",
                      ["Header is not a dictionary"])
        self.bad_file("missing_key.npy", hdr("{'descr': '<i4', 'shape': (2, 3), }"), "no fortran_order key",
                      ["Header does not contain the correct keys"])
        self.bad_file("extra_key.npy", hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }"),
                      "an extra key", ["Header does not contain the correct keys"])
        self.bad_file("shape_negative.npy", hdr(dict_text(shape=(-1, 3))),
                      "negative dimension: numpy's header check passes it, reading fails",
                      ["shape is not valid", "negative dimensions are not allowed"])
        self.bad_file("shape_list.npy", hdr(dict_text(shape=[2, 3])), "shape is a list", ["shape is not valid"])
        self.bad_file("shape_float.npy", hdr(dict_text(shape=(2.0, 3))), "shape has a float", ["shape is not valid"])
        self.bad_file("shape_overflow.npy", header_bytes(dict_text(shape=(2**62, 2**62))),
                      "element count overflows 64 bits (no data)", ["array is too big"])
        self.bad_file("fortran_order_not_bool.npy", hdr(dict_text(fortran_order=0)), "fortran_order is 0",
                      ["fortran_order is not a valid bool"])
        self.bad_file("descr_unknown.npy", hdr(dict_text(descr="<x4")), "unknown type code",
                      ["descr is not a valid dtype descriptor"])
        self.bad_file("syntax_error.npy", hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3),, }"),
                      "two commas: not a Python literal", ["Cannot parse header"])
        self.bad_file("syntax_unclosed.npy", hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), "),
                      "unclosed dict: numpy's Python-2 retry raises tokenize.TokenError", ["Cannot parse header"])
        v3 = header_bytes("{'descr': [('ZZZ', '<i4')], 'fortran_order': False, 'shape': (2, 3), }", (3, 0))
        self.bad_file("v3_invalid_utf8.npy", v3.replace(b"ZZZ", b"\xff\xfe\xfd") + data,
                      "v3 header with invalid UTF-8", ["UTF-8", "utf-8"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            buf = io.BytesIO()
            np.save(buf, np.array([1, "a", None], dtype=object))
            self.bad_file("object_dtype.npy", buf.getvalue(), "object array: header '|O', pickle data",
                          ["Object arrays cannot be loaded", "object"])
            buf = io.BytesIO()
            rec = np.zeros(2, dtype=[("a", "<i4"), ("b", "O")])
            rec["b"] = ["x", 3]
            np.save(buf, rec)
            self.bad_file("record_object_field.npy", buf.getvalue(), "structured with an object field",
                          ["Object arrays cannot be loaded", "object"])

    # -- npz ----------------------------------------------------------------

    def npz_entry(self, name, how, description):
        path = self.out / "npz" / name
        raw = path.read_bytes()
        entry = {"file": f"npz/{name}", "how": how, "description": description}

        def open_archive():
            with np.load(path) as z:
                entry["files"] = list(z.files)

        entry["open_error"] = err_of(open_archive)
        if entry["open_error"] is not None:
            self.npz.append(entry)
            return entry

        flags = set()
        members = []
        with zipfile.ZipFile(path) as zf, np.load(path) as z:
            for info in zf.infolist():
                local = raw[info.header_offset:info.header_offset + 30]
                sig, _, flag, _, _, _, _, csize, usize, nlen, elen = struct.unpack("<IHHHHHIIIHH", local)
                assert sig == 0x04034B50
                extra = raw[info.header_offset + 30 + nlen:info.header_offset + 30 + nlen + elen]
                flags.add(("data_descriptors", bool(flag & 0x8)))
                flags.add(("zip64_local_extra", zip64_extra(extra)))
                key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                m = {
                    "member": info.filename,
                    "key": key,
                    "compression": {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}[info.compress_type],
                    "crc32": info.CRC,
                    "compressed_size": info.compress_size,
                    "file_size": info.file_size,
                    "header_offset": info.header_offset,
                }
                if info.compress_type == zipfile.ZIP_STORED:
                    m["archive_data_offset"] = info.header_offset + 30 + nlen + elen
                access_error = err_of(lambda: z[key])
                if access_error is not None:
                    m["error"] = access_error
                else:
                    content = zf.read(info)
                    if content.startswith(MAGIC):
                        m["kind"] = "npy"
                        m["npy"] = describe_npy(content)
                    else:
                        m["kind"] = "raw"
                        m["raw_hex"] = content.hex()
                members.append(m)
        entry["data_descriptors"] = ("data_descriptors", True) in flags
        entry["zip64_local_extra"] = ("zip64_local_extra", True) in flags
        entry["members"] = members
        self.npz.append(entry)
        return entry

    def npz_files(self):
        d = self.out / "npz"
        rec = np.zeros(2, dtype=[("x", "<i4"), ("y", ">f8", (2,))])
        rec["x"], rec["y"] = [1, 2], [[0.5, 1.5], [-1, np.nan]]
        a0 = np.arange(5, dtype="<i8")
        a1 = np.array([[1.5, 2.5]], dtype=">f4")
        kw = {"x": np.array(["ab", "\u00e9"], dtype="<U2"), "y": rec}

        np.savez(d / "savez_mixed.npz", a0, a1, **kw)
        self.npz_entry("savez_mixed.npz", "np.savez", "positional (arr_0, arr_1) and keyword arrays; zip64 local extras")
        np.savez_compressed(d / "savez_compressed.npz", a0, big=np.arange(1000, dtype="<i4") % 7, **kw)
        self.npz_entry("savez_compressed.npz", "np.savez_compressed", "deflated members")
        np.savez(d / "nested_names.npz", **{"group/x": a0, "group/sub/y": a1, "x.npy": np.array(1.5)})
        self.npz_entry("nested_names.npz", "np.savez", "names with '/', and key 'x.npy' stored as x.npy.npy")
        np.savez(d / "utf8_names.npz", **{"donn\u00e9es": a0, "\u6570\u636e": a1, "\U0001F600": np.array([True])})
        self.npz_entry("utf8_names.npz", "np.savez", "UTF-8 member names (flag 0x800)")
        np.savez(d / "empty.npz")
        self.npz_entry("empty.npz", "np.savez", "no arrays: a 22-byte empty zip")
        with open(d / "streamed.npz", "wb") as sink:
            np.savez(NonSeekable(sink), a=a0, b=kw["x"])
        self.npz_entry("streamed.npz", "np.savez(non-seekable stream)", "members followed by data descriptors (flag bit 3)")
        self.npz_entry_f_order(d, a0)

        npy_bytes = to_npy_bytes(a0)
        zip_write(d / "non_npy_members.npz", [
            ("test1.npy", npy_bytes, zipfile.ZIP_STORED),
            ("test2", to_npy_bytes(a1), zipfile.ZIP_STORED),
            ("metadata", b"some text\n\x00\xff", zipfile.ZIP_STORED),
            ("notes.txt", b"\x93NUMP but not quite", zipfile.ZIP_DEFLATED),
        ])
        self.npz_entry("non_npy_members.npz", "zipfile", "a member without .npy holding npy data, raw non-npy members")

        # Bad archives.
        whole = (d / "savez_mixed.npz").read_bytes()
        (d / "bad_truncated.npz").write_bytes(whole[:len(whole) // 2])
        truncated = self.npz_entry("bad_truncated.npz", "np.savez, cut in half", "truncated archive: no central directory")

        zip_write(d / "bad_crc.npz", [("a.npy", npy_bytes, zipfile.ZIP_STORED),
                                       ("ok.npy", to_npy_bytes(a1), zipfile.ZIP_STORED)])
        raw = bytearray((d / "bad_crc.npz").read_bytes())
        with zipfile.ZipFile(d / "bad_crc.npz") as zf:
            info = zf.getinfo("a.npy")
            start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        raw[start + len(npy_bytes) - 1] ^= 0xFF  # last data byte of a.npy
        (d / "bad_crc.npz").write_bytes(bytes(raw))
        bad_crc = self.npz_entry("bad_crc.npz", "zipfile, a data byte flipped", "member a.npy fails its CRC check on access")

        good = header_bytes(dict_text()) + np.arange(6, dtype="<i4").tobytes()
        zip_write(d / "bad_members.npz", [
            ("good.npy", good, zipfile.ZIP_STORED),
            ("bad_version.npy", good[:6] + b"\x04\x00" + good[8:], zipfile.ZIP_STORED),
            ("not_a_dict.npy", header_bytes("[1, 2]") + bytes(24), zipfile.ZIP_STORED),
            ("truncated.npy", good[:-1], zipfile.ZIP_DEFLATED),
            ("object.npy", to_npy_bytes(np.array([None, 1], dtype=object)), zipfile.ZIP_STORED),
        ])
        entry = self.npz_entry("bad_members.npz", "zipfile", "members with bad headers or data; errors only on access")
        expect = {
            "bad_version.npy": ["we only support format version (1,0), (2,0), and (3,0)"],
            "not_a_dict.npy": ["Header is not a dictionary"],
            "truncated.npy": ["EOF: reading array data", "Failed to read all data"],
            "object.npy": ["Object arrays cannot be loaded", "object"],
        }
        for m in entry["members"]:
            if m["member"] in expect:
                assert "error" in m, m["member"]
                m["error"]["expect"] = expect[m["member"]]
        for m in bad_crc["members"]:
            if "error" in m:
                m["error"]["expect"] = ["CRC"]
        truncated["open_error"]["expect"] = ["zip"]  # any zip-level wording

    def npz_entry_f_order(self, d, a0):
        np.savez(d / "f_order.npz", f=np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)), c=a0)
        self.npz_entry("f_order.npz", "np.savez", "a Fortran-order member")

    # -- output -------------------------------------------------------------

    def manifest(self):
        return {
            "schema": 1,
            "generator": "scripts/gen_fixtures.py",
            "numpy_version": np.__version__,
            "python_version": platform.python_version(),
            "npy": self.npy,
            "bad": self.bad,
            "npz": self.npz,
            "object": self.objects,
            "object_npz": self.object_npz,
            "not_fixtures": [
                {"case": "npz member larger than 4 GiB (real zip64 sizes)",
                 "why": "too big to store; generate it in a test (sparse file) when needed"},
                {"case": "v2 header from 10001 'i' fields (numpy's test_huge_header)",
                 "why": "v2_long_names.npy covers v2 + header over 10000 chars at a smaller size"},
            ],
        }


def zip64_extra(extra):
    """Whether a local header's extra field holds a zip64 record (id 0x0001)."""
    i = 0
    while i + 4 <= len(extra):
        hid, size = struct.unpack("<HH", extra[i:i + 4])
        if hid == 0x0001:
            return True
        i += 4 + size
    return False


def to_npy_bytes(arr):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(buf, arr)
    return buf.getvalue()


def zip_write(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, method in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = method
            info.external_attr = 0o600 << 16
            zf.writestr(info, data)


def generate(out):
    assert np.dtype(np.longdouble).str == "<f16", "run on x86-64 Linux: long double must be '<f16'"
    gen = Generator(out)
    gen.scalars()
    gen.orders_and_shapes()
    gen.records()
    gen.names_and_versions()
    gen.legacy()
    gen.bad_files()
    gen.npz_files()
    object_fixtures(gen)
    text = json.dumps(gen.manifest(), indent=1, ensure_ascii=False) + "\n"
    (out / "manifest.json").write_text(text, encoding="utf-8")


def generated_files(root):
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if p.is_file() and (p.suffix in (".npy", ".npz") or p.name == "manifest.json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if tests/fixtures/ differs from a fresh run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        generate(tmp)
        if args.check:
            new, old = generated_files(tmp), generated_files(FIXTURES)
            differ = sorted(set(new) ^ set(old))
            differ += [p for p in set(new) & set(old) if not filecmp.cmp(tmp / p, FIXTURES / p, shallow=False)]
            if differ:
                print("fixtures differ from a fresh run:", *map(str, sorted(differ)), sep="\n  ", file=sys.stderr)
                sys.exit(1)
            print(f"{len(new)} fixture files match a fresh run")
            return
        for p in generated_files(FIXTURES):
            (FIXTURES / p).unlink()
        for p in generated_files(tmp):
            (FIXTURES / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tmp / p, FIXTURES / p)
        total = sum((FIXTURES / p).stat().st_size for p in generated_files(FIXTURES))
        print(f"wrote {len(generated_files(FIXTURES))} files ({total} bytes) to {FIXTURES}")


if __name__ == "__main__":
    main()
