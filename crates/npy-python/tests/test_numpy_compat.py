"""npy_mmap against real numpy: same arrays, same bytes, same errors."""

from __future__ import annotations

import io
import os
import pathlib
import sys
import warnings
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npformat

import npy_mmap

DTYPES = [
    "|b1",
    "|i1",
    "<i2",
    "<i4",
    "<i8",
    "|u1",
    "<u2",
    "<u4",
    "<u8",
    "<f2",
    "<f4",
    "<f8",
    "<f16",
    "<c8",
    "<c16",
    ">i4",
    ">f8",
    ">c16",
    "|S5",
    "<U3",
    ">U2",
    "|V4",
    "<M8[ms]",
    "<m8[s]",
    "<M8[10s]",
    [("x", "<i4"), ("y", ">f8", (2, 3))],
    [("a", [("b", "<u2"), ("c", "|S3")]), ("d", "<f4")],
    np.dtype({"names": ["p", "q"], "formats": ["<u1", "<f8"]}, align=True),
]
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (1, 0, 2)]


def sample(dtype: np.dtype, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Deterministic non-trivial data of any dtype (random bytes, cleaned
    where a dtype has invalid or padding bit patterns)."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    raw = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8)
    array = raw.view(dtype).reshape(shape) if count else np.zeros(shape, dtype)
    if dtype.kind == "b":
        array = (raw[:count] & 1).astype(bool).reshape(shape)
    if dtype.kind == "f" and dtype.itemsize == 16:
        array = rng.standard_normal(count).astype(dtype).reshape(shape)
    if dtype.kind == "U":
        letters = np.array(list("abcdé∑"), dtype="<U1")
        array = np.array(
            ["".join(rng.choice(letters, size=dtype.itemsize // 4)) for _ in range(count)], dtype=dtype
        ).reshape(shape)
    if dtype.names and dtype.isalignedstruct:
        array = np.zeros(shape, dtype)
        if count:
            array["p"] = np.arange(count).reshape(shape) % 200
            array["q"] = np.linspace(0, 1, count).reshape(shape)
    return array


def cases():
    """Every dtype and shape in C order, and in Fortran order where that is
    another layout: a shape with at most one axis longer than 1 (or no
    elements) is both C- and Fortran-contiguous, and numpy saves it as C."""
    for descr in DTYPES:
        dtype = np.dtype(descr)
        for shape in SHAPES:
            orders = "CF" if sum(n > 1 for n in shape) > 1 and 0 not in shape else "C"
            for order in orders:
                yield pytest.param(dtype, shape, order, id=f"{dtype.str}-{shape}-{order}")


def test_the_round_trip_cases_are_distinct() -> None:
    ids = [case.id for case in cases()]
    assert len(ids) == len(set(ids)) == len(DTYPES) * (len(SHAPES) + 2)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes(order="A") == b.tobytes(order="A")


@pytest.mark.parametrize("dtype,shape,order", list(cases()))
def test_round_trips_both_ways_byte_identical(tmp_path: pathlib.Path, dtype, shape, order) -> None:
    array = np.asarray(sample(dtype, shape), order=order)
    # A Fortran case is a Fortran layout, saved with fortran_order True.
    assert (order == "F") == (array.flags.f_contiguous and not array.flags.c_contiguous)
    ours, theirs = tmp_path / "ours.npy", tmp_path / "theirs.npy"
    npy_mmap.save(ours, array)
    np.save(theirs, array)
    assert ours.read_bytes() == theirs.read_bytes()

    # numpy reads ours; we read numpy's: in memory and mapped.
    back = np.load(ours)
    loaded = npy_mmap.load(theirs)
    assert same(back, array) and same(loaded, array)
    assert loaded.flags.writeable and type(loaded) is np.ndarray
    assert loaded.flags.f_contiguous == back.flags.f_contiguous
    # Mapped too, empty arrays included (numpy's are read-only memmaps).
    mapped = npy_mmap.load(theirs, mmap_mode="r")
    theirs_mapped = np.load(theirs, mmap_mode="r")
    assert same(mapped, theirs_mapped)
    assert not mapped.flags.writeable
    assert isinstance(mapped, np.memmap)
    assert mapped.flags.f_contiguous == theirs_mapped.flags.f_contiguous


def test_non_contiguous_arrays_are_saved_as_numpy_does(tmp_path: pathlib.Path) -> None:
    base = np.arange(60, dtype="<i4").reshape(6, 10)
    for array in (base[::2, 1::3], base.T, base.T[::2], base[:, :1], np.float32(3.5), 7):
        npy_mmap.save(tmp_path / "a.npy", array)
        np.save(tmp_path / "b.npy", array)
        assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def test_save_appends_the_suffix_and_writes_file_objects(tmp_path: pathlib.Path) -> None:
    npy_mmap.save(str(tmp_path / "named"), np.arange(3))
    assert (tmp_path / "named.npy").exists()
    ours, theirs = io.BytesIO(), io.BytesIO()
    for stream, save in ((ours, npy_mmap.save), (theirs, np.save)):
        save(stream, np.arange(4.0))
        save(stream, np.ones((2, 2), ">i2"))
    assert ours.getvalue() == theirs.getvalue()
    ours.seek(0)
    first, second = npy_mmap.load(ours), npy_mmap.load(ours)
    assert same(first, np.arange(4.0)) and same(second, np.ones((2, 2), ">i2"))


@pytest.mark.parametrize("saver", ["savez", "savez_compressed"])
def test_npz_members_identical_and_read_both_ways(tmp_path: pathlib.Path, saver: str) -> None:
    arrays = {"a": np.arange(10.0), "nested/b": np.ones((3, 2), ">i4", order="F"), "é": np.array(b"xy")}
    ours, theirs = tmp_path / "ours.npz", tmp_path / "theirs.npz"
    getattr(npy_mmap, saver)(ours, np.arange(3), **arrays)
    getattr(np, saver)(theirs, np.arange(3), **arrays)
    # Every member's bytes are numpy's. The zip framing is npy-mmap's:
    # stored members are padded so their data starts 64-byte aligned
    # (zero-copy mapping of every dtype), and deflate is its own encoder.
    with zipfile.ZipFile(ours) as a, zipfile.ZipFile(theirs) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            assert a.read(name) == b.read(name)
            assert a.getinfo(name).compress_type == b.getinfo(name).compress_type
            assert a.getinfo(name).date_time == b.getinfo(name).date_time
    with npy_mmap.load(theirs) as npz, np.load(ours) as ref:
        assert npz.files == ref.files == ["a", "nested/b", "é", "arr_0"]
        for key in ref.files:
            assert same(npz[key], ref[key])
        assert same(npz["a.npy"], ref["a"]) and "a.npy" in npz and "a" in npz
        assert same(npz.f.a, ref.f.a)
        with pytest.raises(KeyError, match="zz is not a file in the archive"):
            npz["zz"]
    with pytest.raises(ValueError, match="Cannot use un-named variables and keyword arr_0"):
        getattr(npy_mmap, saver)(tmp_path / "x.npz", np.arange(2), arr_0=np.arange(2))


def test_npz_members_are_mapped_without_copying(tmp_path: pathlib.Path) -> None:
    big = np.arange(1 << 20, dtype="<f8")
    np.savez(tmp_path / "s.npz", big=big, small=np.arange(3, dtype="<i2"))
    npz = npy_mmap.load(tmp_path / "s.npz", mmap_mode="r")
    member = npz["big"]
    # A read-only view of the archive's mapping: its memory is inside our buffer.
    assert npy_mmap._convert.native_buffer(member) is not None
    assert not member.flags.writeable
    assert same(member, big)
    # numpy ignores mmap_mode for npz: its member is a fresh copy.
    theirs = np.load(tmp_path / "s.npz", mmap_mode="r")["big"]
    assert theirs.flags.writeable and not isinstance(theirs, np.memmap)
    np.savez_compressed(tmp_path / "c.npz", big=big)
    compressed = npy_mmap.load(tmp_path / "c.npz", mmap_mode="r")["big"]
    assert same(compressed, big) and compressed.flags.writeable


def test_open_memmap_modes_match_numpy(tmp_path: pathlib.Path) -> None:
    ours, theirs = tmp_path / "ours.npy", tmp_path / "theirs.npy"
    for fortran in (False, True):
        a = npy_mmap.open_memmap(ours, mode="w+", dtype="<i4", shape=(5, 3), fortran_order=fortran)
        b = npformat.open_memmap(theirs, mode="w+", dtype="<i4", shape=(5, 3), fortran_order=fortran)
        a[:] = b[:] = np.arange(15).reshape(5, 3)
        a.flush()
        b.flush()
        del a, b
        assert ours.read_bytes() == theirs.read_bytes()
    rw = npy_mmap.open_memmap(ours, mode="r+")
    rw[0, 0] = 99
    del rw
    assert np.load(ours)[0, 0] == 99
    cow = npy_mmap.open_memmap(ours, mode="c")
    cow[0, 0] = -1
    assert cow[0, 0] == -1
    del cow
    assert np.load(ours)[0, 0] == 99
    ro = npy_mmap.open_memmap(ours, mode="r")
    with pytest.raises(ValueError, match="read-only"):
        ro[0, 0] = 1
    del ro
    reserved = npy_mmap.open_memmap(tmp_path / "r.npy", mode="w+", dtype="<u1", shape=(1 << 20,), reserve=True)
    assert os.stat(tmp_path / "r.npy").st_blocks * 512 >= 1 << 20
    del reserved
    with pytest.raises(ValueError, match="Python objects in dtype"):
        npy_mmap.open_memmap(tmp_path / "o.npy", mode="w+", dtype=object, shape=(2,))


def test_errors_are_numpys(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.npy"
    with pytest.raises(FileNotFoundError) as info:
        npy_mmap.load(missing)
    assert info.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        npy_mmap.load(missing, mmap_mode="r")

    (tmp_path / "empty.npy").write_bytes(b"")
    with pytest.raises(EOFError, match="No data left in file"):
        npy_mmap.load(tmp_path / "empty.npy")

    (tmp_path / "junk.npy").write_bytes(b"\x93numpy\x01\x00garbage")
    with pytest.raises(ValueError, match="contains pickled"):
        npy_mmap.load(tmp_path / "junk.npy")

    np.save(tmp_path / "obj.npy", np.array([1, "a"], dtype=object))
    for mode in (None, "r"):
        with pytest.raises(ValueError) as ours:
            npy_mmap.load(tmp_path / "obj.npy", mmap_mode=mode)
        with pytest.raises(ValueError) as theirs:
            np.load(tmp_path / "obj.npy", mmap_mode=mode)
        assert str(theirs.value) in str(ours.value)

    good = tmp_path / "good.npy"
    np.save(good, np.arange(10))
    (tmp_path / "short.npy").write_bytes(good.read_bytes()[:-3])
    with pytest.raises(ValueError):
        npy_mmap.load(tmp_path / "short.npy")
    with pytest.raises(ValueError, match="mmap length is greater than file size"):
        npy_mmap.load(tmp_path / "short.npy", mmap_mode="r")

    with pytest.raises(ValueError, match="encoding must be"):
        npy_mmap.load(good, encoding="utf8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(tmp_path / "huge.npy", np.zeros(1, dtype=[(f"f{i}", "<i1") for i in range(1000)]))
    with pytest.raises(ValueError, match="max_header_size"):
        npy_mmap.load(tmp_path / "huge.npy")
    assert npy_mmap.load(tmp_path / "huge.npy", max_header_size=200000).shape == (1,)
    with pytest.raises(ValueError, match="Filename must be a string"):
        npy_mmap.load(io.BytesIO(good.read_bytes()), mmap_mode="r")


def test_object_arrays_round_trip_with_the_restricted_unpickler(tmp_path: pathlib.Path) -> None:
    values = np.empty(6, dtype=object)
    values[:] = [None, 1 << 70, "snow ☃", b"\x00\x01", [1, (2.5, 3j)], {"k": {1, 2}}]
    np.save(tmp_path / "theirs.npy", values)
    loaded = npy_mmap.load(tmp_path / "theirs.npy", allow_pickle=True)
    assert loaded.dtype == object and list(loaded) == list(values)
    npy_mmap.save(tmp_path / "ours.npy", values)
    assert list(np.load(tmp_path / "ours.npy", allow_pickle=True)) == list(values)
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npy_mmap.save(tmp_path / "no.npy", values, allow_pickle=False)


def _same_objects(ours: object, theirs: object) -> None:
    """Equal and of the same types all the way down (1 == 1.0 == True would
    pass a plain ==), strings and bytes bit for bit."""
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        if theirs.dtype == object:
            for a, b in zip(ours.ravel(order="K"), theirs.ravel(order="K")):
                _same_objects(a, b)
        else:
            assert ours.tobytes() == theirs.tobytes()
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same_objects(a, b)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _same_objects(ours[key], theirs[key])
    elif isinstance(theirs, str):
        assert ours.encode("utf-8", "surrogatepass") == theirs.encode("utf-8", "surrogatepass")
    else:
        assert ours == theirs or (ours != ours and theirs != theirs)


def test_object_arrays_load_as_numpys_value_for_value(tmp_path: pathlib.Path) -> None:
    text = "ascii, é, ☃, \U0001f600, \x00, \u2028"
    values = np.empty((2, 4), dtype=object, order="F")
    values[:] = [
        [text, "", b"\x00\xff raw", bytearray(b"ba")],
        [
            [1, [2, [3, {"deep": ("t", None, True, False)}]]],
            {"k": 1, 2: "two", (3, 4): [5.5, float("nan"), -0.0, 1e308]},
            [-(1 << 100), 1 << 63, -(1 << 63), 0, -1, 255, 1 << 200],
            (complex(1.5, -2), {1, "s"}, frozenset({b"f"})),
        ],
    ]
    np.save(tmp_path / "theirs.npy", values)
    ours = npy_mmap.load(tmp_path / "theirs.npy", allow_pickle=True)
    theirs = np.load(tmp_path / "theirs.npy", allow_pickle=True)
    assert ours.flags.f_contiguous == theirs.flags.f_contiguous
    _same_objects(ours, theirs)


def test_object_arrays_share_what_the_pickle_shares(tmp_path: pathlib.Path) -> None:
    shared_list = [1, 2]
    shared_text = "x" * 50
    values = np.empty(5, dtype=object)
    values[:] = [shared_list, shared_list, shared_text, shared_text, (shared_list, shared_text)]
    np.save(tmp_path / "shared.npy", values)
    for loaded in (
        np.load(tmp_path / "shared.npy", allow_pickle=True),
        npy_mmap.load(tmp_path / "shared.npy", allow_pickle=True),
    ):
        # One object where the pickle has one (its memo), as Python's unpickler makes it.
        assert loaded[0] is loaded[1] is loaded[4][0]
        assert loaded[2] is loaded[3] is loaded[4][1]
        assert loaded[0] == [1, 2] and loaded[2] == shared_text


def test_object_arrays_of_many_strings_load_in_order(tmp_path: pathlib.Path) -> None:
    strings = np.array([f"item-{i}-\u00e9" * (i % 5) for i in range(100_000)], dtype=object).reshape(100, 1000)
    np.save(tmp_path / "many.npy", strings)
    loaded = npy_mmap.load(tmp_path / "many.npy", allow_pickle=True)
    assert loaded.shape == strings.shape and loaded.dtype == object
    assert loaded.tolist() == strings.tolist()


def test_a_bad_pickle_after_many_strings_raises_and_keeps_nothing(tmp_path: pathlib.Path) -> None:
    """The strings are made as the pickle is read (one pass): a pickle cut
    or with invalid UTF-8 after 150,000 of them raises numpy's error (its
    wording for a cut, a ValueError as every refused pickle; its
    UnicodeError for invalid UTF-8), and the strings made before it are
    freed (nothing half-made is kept)."""
    import gc
    import pickle

    np.save(tmp_path / "many.npy", np.array([f"item-{i}" for i in range(200_000)], dtype=object))
    data = (tmp_path / "many.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[:-100])
    at = data.index(b"item-150000")
    (tmp_path / "bad.npy").write_bytes(data[:at] + b"\xff" + data[at + 1 :])
    cases = [
        ("cut.npy", pickle.UnpicklingError, ValueError, "pickle data was truncated"),
        ("bad.npy", UnicodeError, UnicodeError, "utf-8"),
    ]
    for name, numpys, error, words in cases:
        with pytest.raises(numpys, match=words):
            np.load(tmp_path / name, allow_pickle=True)
        with pytest.raises(error, match=words):
            npy_mmap.load(tmp_path / name, allow_pickle=True)
    gc.collect()
    blocks = sys.getallocatedblocks()
    for name, _, error, _ in cases * 3:
        with pytest.raises(error):
            npy_mmap.load(tmp_path / name, allow_pickle=True)
    gc.collect()
    # 150,000 strings leaked per load would be 900,000 blocks.
    assert sys.getallocatedblocks() - blocks < 1_000


def test_object_arrays_that_hold_themselves_or_nest_too_deep_are_refused(tmp_path: pathlib.Path) -> None:
    looped: list = []
    looped.append(looped)
    values = np.empty(1, dtype=object)
    values[0] = looped
    np.save(tmp_path / "loop.npy", values)
    with pytest.raises(ValueError, match="holds itself"):
        npy_mmap.load(tmp_path / "loop.npy", allow_pickle=True)
    deep: list = []
    for _ in range(2000):
        deep = [deep]
    values[0] = deep
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        np.save(tmp_path / "deep.npy", values)
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(ValueError, match="nested deeper than"):
        npy_mmap.load(tmp_path / "deep.npy", allow_pickle=True)


class _Hostile:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_hostile_object_arrays_are_refused_and_run_nothing(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "pwned"
    evil = np.empty(2, dtype=object)
    evil[0] = _Hostile(str(marker))
    evil[1] = "harmless"
    np.save(tmp_path / "evil.npy", evil)
    np.savez(tmp_path / "evil.npz", x=evil)
    with pytest.raises(ValueError) as info:
        npy_mmap.load(tmp_path / "evil.npy", allow_pickle=True)
    assert "system" in str(info.value)
    with pytest.raises(ValueError):
        npy_mmap.load(tmp_path / "evil.npz", allow_pickle=True)["x"]
    # A plain pickle file is refused too (numpy would unpickle it).
    import pickle

    (tmp_path / "plain.pkl").write_bytes(pickle.dumps(_Hostile(str(marker))))
    with pytest.raises(pickle.UnpicklingError):
        npy_mmap.load(tmp_path / "plain.pkl", allow_pickle=True)
    assert not marker.exists()
    # Our writer refuses what our reader would refuse.
    with pytest.raises(TypeError, match="cannot save an object of type _Hostile"):
        npy_mmap.save(tmp_path / "w.npy", evil)


def test_the_public_names_are_what_the_package_exports() -> None:
    """`npy_mmap.__all__` is the API: every name resolves to the object of
    the module that defines it (`__init__` is the one re-export layer), and
    nothing else is exported (the stub of the native module is checked
    against the built module by stubtest in CI)."""
    import importlib

    homes = {
        "_io": ["load", "save", "savez", "savez_compressed"],
        "_live": ["LiveArray", "open_live"],
        "_mapping": ["MappedFile", "mapped", "memmap", "open_memmap"],
        "_npz": ["LazyMember", "NpzFile"],
        "_remote": ["RemoteArray", "open_remote"],
        "_rows": ["append", "read_header", "take"],
        "_windows": ["windows", "prefetch_windows", "release_windows"],
        "virtual": ["virtualize"],
    }
    for name in npy_mmap.__all__:
        assert hasattr(npy_mmap, name), name
    for module, names in homes.items():
        home = importlib.import_module(f"npy_mmap.{module}")
        for name in names:
            assert getattr(npy_mmap, name) is getattr(home, name), name
            assert getattr(home, name).__module__ == home.__name__, name
    assert sorted(npy_mmap.__all__) == sorted(name for names in homes.values() for name in names)
