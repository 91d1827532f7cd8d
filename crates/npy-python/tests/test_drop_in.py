"""npy_mmap in place of numpy's functions in numpy code (issues 29 and 31):
each test states numpy's behaviour, checked against real numpy where it
can be, and ours."""

from __future__ import annotations

import gc
import io
import os
import pathlib
import threading
import warnings
import weakref
import zipfile

import numpy as np
import pytest

import npy_mmap

NUMPY_DATA = pathlib.Path(np.__file__).parent / "lib" / "tests" / "data"


def saved(tmp_path: pathlib.Path, array: np.ndarray, name: str = "a.npy") -> pathlib.Path:
    path = tmp_path / name
    np.save(path, array)
    return path


# ---------------------------------------------------------------- __array__


def test_array_copy_true_is_a_copy_not_the_mapping(tmp_path):
    path = saved(tmp_path, np.arange(4.0))
    with npy_mmap.mapped(path, "r+") as m:
        copied = np.array(m, copy=True)
        copied[0] = 42
        assert type(copied) is np.ndarray
        assert not np.shares_memory(copied, m.array)
        del copied
    assert np.load(path)[0] == 0


def test_array_copy_false_with_a_dtype_change_raises_numpys_error(tmp_path):
    path = saved(tmp_path, np.arange(4.0))
    with npy_mmap.mapped(path, "r") as m:
        with pytest.raises(ValueError) as ours:
            np.array(m, dtype=np.float32, copy=False)
        with pytest.raises(ValueError) as numpys:
            np.array(np.arange(4.0), dtype=np.float32, copy=False)
        assert str(ours.value) == str(numpys.value)
        del ours, numpys  # their tracebacks hold frames that view the mapping
        # copy=False without a change shares the mapping; copy=None too.
        same = np.array(m, copy=False)
        assert np.shares_memory(same, m.array)
        assert np.shares_memory(np.asarray(m), m.array)
        # A needed dtype change with copy=None converts.
        assert np.asarray(m, dtype=np.float32).dtype == np.float32
        del same


def test_remote_array_protocol():
    # The protocol alone, without a server: read() downloads a fresh array.
    array = npy_mmap.RemoteArray.__new__(npy_mmap.RemoteArray)
    array.read = lambda: np.arange(3.0)
    assert np.array(array, copy=True).tolist() == [0.0, 1.0, 2.0]
    assert np.asarray(array, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.array(array, copy=False)


# ---------------------------------------------------------- empty mappings


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)])
def test_empty_mapped_arrays_are_read_only_memmaps(tmp_path, shape):
    path = saved(tmp_path, np.zeros(shape))
    theirs = np.load(path, mmap_mode="r")
    ours = npy_mmap.load(path, mmap_mode="r")
    assert theirs.flags.writeable is False
    assert ours.flags.writeable is False
    assert ours[:].flags.writeable is False
    assert isinstance(ours, np.memmap) and ours.shape == shape
    assert ours.filename == str(path) and ours.mode == "r"
    # Views keep the mapping (and its locks): its owner lives while they do.
    owner = weakref.ref(ours._mmap)
    view = ours[:]
    del ours
    gc.collect()
    assert owner() is not None
    del view
    gc.collect()
    assert owner() is None


# ------------------------------------------------------------ memmap demotion


def test_memmap_results_are_ndarrays_or_scalars_like_numpys(tmp_path):
    path = saved(tmp_path, np.arange(4.0))
    theirs = np.load(path, mmap_mode="r")
    ours = npy_mmap.load(path, mmap_mode="r")
    for op in (
        lambda m: m.sum(),
        lambda m: m + 1,
        lambda m: m[[1, 2]],
        lambda m: m[m > 1],
        lambda m: m.sum(axis=0),
        lambda m: np.sqrt(m),
        lambda m: m.max(),
    ):
        assert type(op(ours)) is type(op(theirs)), op
    assert type(ours.sum()) is np.float64
    # Views stay memmaps, as numpy's.
    assert isinstance(ours[1:], npy_mmap.memmap)
    assert isinstance(ours.T, npy_mmap.memmap)


def test_memmap_results_do_not_keep_the_mapping(tmp_path):
    path = saved(tmp_path, np.arange(4.0))
    m = npy_mmap.load(path, mmap_mode="r")
    owner = weakref.ref(m._mmap)
    results = [m + 1, m[[1, 2]], m.sum(axis=0), m * m]
    del m
    gc.collect()
    assert owner() is None  # unmapped: no result holds it
    for result in results:
        assert getattr(result, "_mmap", None) is None


# ---------------------------------------------------------------- NpzFile


def test_npzfile_attributes_as_numpys(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.arange(3), b=np.ones(2))
    theirs = np.load(path)
    ours = npy_mmap.load(path)
    for name in ("files", "allow_pickle", "max_header_size", "pickle_kwargs"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.zip.namelist() == theirs.zip.namelist()
    assert ours.fid.name == theirs.fid.name
    assert "a" in ours and "a.npy" in ours and "c" not in ours
    assert list(iter(ours)) == ["a", "b"]
    assert ours.get("c") is None and ours.get("c", 5) == 5
    assert ours.get("a").tolist() == [0, 1, 2]
    assert [k for k, _ in ours.items()] == ["a", "b"]
    assert len(list(ours.values())) == 2
    assert ours.f.a.tolist() == [0, 1, 2]
    assert repr(ours) == repr(theirs)
    fid = ours.fid
    ours.close()
    theirs.close()
    assert fid.closed and ours.fid is None and ours.zip is None and ours.f is None
    with npy_mmap.load(path) as npz:
        fid = npz.fid
        assert not fid.closed
    assert fid.closed
    # allow_pickle and encoding as given.
    with npy_mmap.load(path, allow_pickle=True, encoding="latin1") as npz:
        assert npz.allow_pickle is True
        assert npz.pickle_kwargs == {"encoding": "latin1", "fix_imports": True}
    # A file object the caller owns: no fid, as numpy.
    with open(path, "rb") as f, npy_mmap.load(f) as npz, open(path, "rb") as g, np.load(g) as theirs:
        assert npz.fid is None and theirs.fid is None
        assert npz.zip.namelist() == ["a.npy", "b.npy"]


def test_npzfile_del_closes_its_file(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.arange(3))
    npz = npy_mmap.load(path)
    fid = npz.fid
    del npz
    gc.collect()
    assert fid.closed


# ---------------------------------------------------------------- warnings


def _numpy_warnings(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize(
    "dtype",
    [
        np.dtype([("\u4e2d", "<i4")]),  # outside latin-1: format 3.0
        np.dtype([(f"f{i:05d}" + "x" * 100, "<i1") for i in range(700)]),  # too long: 2.0
    ],
)
def test_save_and_open_memmap_warn_for_format_2_and_3(tmp_path, dtype):
    array = np.zeros(2, dtype)
    expected = _numpy_warnings(lambda: np.save(tmp_path / "n.npy", array))
    assert len(expected) == 1
    assert _numpy_warnings(lambda: npy_mmap.save(tmp_path / "o.npy", array)) == expected
    assert _numpy_warnings(lambda: npy_mmap.save(io.BytesIO(), array)) == expected
    assert _numpy_warnings(lambda: npy_mmap.savez(tmp_path / "o.npz", x=array)) == expected
    created = []
    assert (
        _numpy_warnings(
            lambda: created.append(npy_mmap.open_memmap(tmp_path / "m.npy", "w+", dtype=dtype, shape=(2,)))
        )
        == expected
    )
    # An explicit version warns in neither.
    assert _numpy_warnings(lambda: npy_mmap.open_memmap(tmp_path / "v.npy", "w+", dtype=dtype, shape=(2,), version=(3, 0))) == []
    # A plain array warns in neither.
    assert _numpy_warnings(lambda: npy_mmap.save(tmp_path / "p.npy", np.zeros(2))) == []


def test_python2_header_warns_like_numpy():
    path = NUMPY_DATA / "win64python2.npy"
    with pytest.warns(UserWarning, match=r"Reading.*created on Python 2.*this warning\."):
        assert npy_mmap.load(path).tolist() == [1.0, 1.0]
    with pytest.warns(UserWarning, match="created on Python 2"):
        assert npy_mmap.load(path, mmap_mode="r").tolist() == [1.0, 1.0]
    with open(path, "rb") as f, pytest.warns(UserWarning, match="created on Python 2"):
        npy_mmap.load(f)
    # numpy itself says the same (its test skips on Python >= 3.12, gh-23988).
    assert "created on Python 2" in npy_mmap._common._PYTHON2_HEADER


# ------------------------------------------------------- max_header_size


def test_allow_pickle_lifts_max_header_size(tmp_path):
    dtype = np.dtype([(f"field_{i:05d}_" + "n" * 60, "<i1") for i in range(2000)])
    path = tmp_path / "huge.npy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        np.save(path, np.zeros(3, dtype))
    assert np.load(path, allow_pickle=True).dtype == dtype
    for kwargs in ({}, {"mmap_mode": "r"}):
        with pytest.raises(ValueError, match="Header info length"):
            npy_mmap.load(path, **kwargs)
        assert npy_mmap.load(path, allow_pickle=True, **kwargs).dtype == dtype
    with open(path, "rb") as f:
        assert npy_mmap.load(f, allow_pickle=True).dtype == dtype
    npz = tmp_path / "huge.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        np.savez(npz, x=np.zeros(3, dtype))
    with npy_mmap.load(npz) as archive, pytest.raises(ValueError, match="Header info length"):
        archive["x"]
    with npy_mmap.load(npz, allow_pickle=True) as archive:
        assert archive["x"].dtype == dtype


# --------------------------------------------------------- load's oddities


def test_load_npz_file_object_with_mmap_mode_is_an_npzfile(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.arange(3))
    with open(path, "rb") as f:
        assert isinstance(np.load(f, mmap_mode="r"), np.lib.npyio.NpzFile)
    with open(path, "rb") as f:
        npz = npy_mmap.load(f, mmap_mode="r")
        assert isinstance(npz, npy_mmap.NpzFile)
        assert npz["a"].tolist() == [0, 1, 2]
    # An .npy file object with mmap_mode is still numpy's error.
    npy = saved(tmp_path, np.arange(3))
    with open(npy, "rb") as f, pytest.raises(ValueError, match="Memmap cannot use existing file handles"):
        npy_mmap.load(f, mmap_mode="r")


def test_open_memmap_long_mode_names_map_the_file(tmp_path):
    path = saved(tmp_path, np.arange(3.0))
    m = npy_mmap.open_memmap(path, mode="readwrite")
    m[0] = 7
    m.flush()
    del m
    assert np.load(path)[0] == 7
    assert npy_mmap.open_memmap(path, mode="readonly").flags.writeable is False
    c = npy_mmap.open_memmap(path, mode="copyonwrite")
    c[0] = 9
    assert np.load(path)[0] == 7


def test_directory_is_isadirectoryerror(tmp_path):
    for call in (
        lambda: npy_mmap.load(tmp_path),
        lambda: npy_mmap.load(tmp_path, mmap_mode="r"),
        lambda: npy_mmap.load(tmp_path, mmap_mode="r+"),
        lambda: npy_mmap.open_memmap(tmp_path, mode="r"),
        lambda: npy_mmap.mapped(tmp_path),
    ):
        with pytest.raises(IsADirectoryError):
            call()


def test_load_modes(tmp_path):
    path = saved(tmp_path, np.arange(3))
    with pytest.raises(ValueError) as numpys:
        np.load(path, mmap_mode="bogus")
    with pytest.raises(ValueError) as ours:
        npy_mmap.load(path, mmap_mode="bogus")
    assert str(ours.value) == str(numpys.value)
    # numpy truncates the file and then fails; ours refuses and keeps it.
    with pytest.raises(ValueError, match="open_memmap") as error:
        npy_mmap.load(path, mmap_mode="w+")
    assert "one of ['r', 'c', 'r+', 'w+'" not in str(error.value)
    assert np.load(path).tolist() == [0, 1, 2]


def test_load_is_typed_by_overloads():
    import typing

    hints = typing.get_overloads(npy_mmap.load)
    assert len(hints) == 2


# ------------------------------------------------------- Python 2 pickles


@pytest.mark.parametrize("name", ["py2-objarr.npy", "py2-np0-objarr.npy", "py2-objarr.npz"])
@pytest.mark.parametrize("encoding", ["latin1", "bytes"])
def test_python2_object_arrays_load_as_numpys(name, encoding):
    path = NUMPY_DATA / name
    theirs = np.load(path, allow_pickle=True, encoding=encoding)
    ours = npy_mmap.load(path, allow_pickle=True, encoding=encoding)
    if name.endswith(".npz"):
        theirs, ours = theirs["x"], ours["x"]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.tolist() == theirs.tolist()
    assert ours[1] is range  # __builtin__.xrange names a type, nothing is called
    with pytest.raises(ValueError):
        npy_mmap.load(path, allow_pickle=False, encoding=encoding)["x" if name.endswith("z") else 0]


# --------------------------------------------------- issue 29: object saves


def test_save_object_array_holding_object_array(tmp_path):
    inner = np.array([1, None, "x"], dtype=object)
    outer = np.empty(2, dtype=object)
    outer[0], outer[1] = inner, 5
    npy_mmap.save(tmp_path / "o.npy", outer)
    stream = io.BytesIO()
    npy_mmap.save(stream, outer)
    npy_mmap.savez(tmp_path / "o.npz", x=outer)
    for loaded in (
        np.load(tmp_path / "o.npy", allow_pickle=True),
        np.load(io.BytesIO(stream.getvalue()), allow_pickle=True),
        np.load(tmp_path / "o.npz", allow_pickle=True)["x"],
    ):
        assert loaded[0].tolist() == [1, None, "x"] and loaded[1] == 5


# ------------------------------------------------------ issue 29: live add


def live_file(tmp_path, shape=(5,)) -> pathlib.Path:
    path = tmp_path / "live.npy"
    np.save(path, np.zeros(shape, dtype=np.int64))
    return path


def test_live_add_checks_every_index_first(tmp_path):
    path = live_file(tmp_path)
    with npy_mmap.open_live(path) as live:
        with pytest.raises(IndexError) as ours:
            live.add(np.array([1, 2, 9]), 1)
        assert live.snapshot().tolist() == [0, 0, 0, 0, 0]
        numpys = np.zeros(5, dtype=np.int64)
        with pytest.raises(IndexError) as theirs:
            np.add.at(numpys, np.array([1, 2, 9]), 1)
        assert str(ours.value) == str(theirs.value)


def test_live_add_float_index_is_indexerror_and_masks_are_masks(tmp_path):
    path = live_file(tmp_path)
    with npy_mmap.open_live(path) as live:
        with pytest.raises(IndexError) as ours:
            live.add(np.array([1.0]), 1)
        with pytest.raises(IndexError) as theirs:
            np.add.at(np.zeros(5), np.array([1.0]), 1)
        assert str(ours.value) == str(theirs.value)
        assert live.snapshot().tolist() == [0] * 5
        mask = np.array([True, False, True, False, True])
        live.add(mask, 1)
        expected = np.zeros(5, dtype=np.int64)
        np.add.at(expected, mask, 1)
        assert live.snapshot().tolist() == expected.tolist() == [1, 0, 1, 0, 1]
        with pytest.raises(IndexError, match="boolean index did not match"):
            live.add(np.array([True, False]), 1)


def test_live_add_tuple_of_indices_checked_first(tmp_path):
    path = live_file(tmp_path, (2, 3))
    with npy_mmap.open_live(path) as live:
        with pytest.raises(IndexError):
            live.add((np.array([0, 1]), np.array([1, 3])), 1)
        assert live.snapshot().sum() == 0
        live.add((np.array([0, 1, 1]), np.array([1, 2, 2])), np.array([1, 2, 3]))
        assert live.snapshot().tolist() == [[0, 1, 0], [0, 0, 5]]


# --------------------------------------------------- issue 29: pipes


@pytest.mark.parametrize(
    "arrays",
    [
        [np.arange(5), np.ones((2, 3))],
        [np.array([1, "a", None], dtype=object), np.arange(3)],
        [np.zeros(0), np.arange(2), np.array(["x"], dtype=object)],
    ],
)
def test_several_arrays_through_a_pipe(arrays):
    read_fd, write_fd = os.pipe()

    def writer():
        # np.save's tofile needs a file position: each array goes through
        # memory into the pipe, as a producer process would send it.
        with os.fdopen(write_fd, "wb") as w:
            for a in arrays:
                chunk = io.BytesIO()
                np.save(chunk, a)
                w.write(chunk.getvalue())
                w.flush()

    thread = threading.Thread(target=writer)
    thread.start()
    with os.fdopen(read_fd, "rb") as r:
        assert not r.seekable()
        loaded = [npy_mmap.load(r, allow_pickle=True) for _ in arrays]
        with pytest.raises(EOFError):
            npy_mmap.load(r)
    thread.join()
    # numpy reads them one by one from a seekable stream (np.load seeks, so
    # it cannot read a pipe at all: "File or stream is not seekable").
    stream = io.BytesIO()
    for a in arrays:
        np.save(stream, a)
    stream.seek(0)
    theirs = [np.load(stream, allow_pickle=True) for _ in arrays]
    thread.join()
    for a, b, c in zip(arrays, loaded, theirs, strict=True):
        assert a.dtype == b.dtype == c.dtype and a.tolist() == b.tolist() == c.tolist()


def test_several_arrays_in_a_seekable_stream_leave_it_after_each():
    stream = io.BytesIO()
    arrays = [np.arange(3), np.array([None, 2], dtype=object), np.ones(2)]
    for a in arrays:
        np.save(stream, a)
    stream.seek(0)
    for a in arrays:
        assert npy_mmap.load(stream, allow_pickle=True).tolist() == a.tolist()
    assert stream.tell() == len(stream.getvalue())


# ------------------------------------------ issue 29: bad input as numpy


def test_open_memmap_float_shape_is_typeerror(tmp_path):
    with pytest.raises(TypeError) as numpys:
        np.lib.format.open_memmap(tmp_path / "n.npy", mode="w+", shape=(1.5,))
    with pytest.raises(TypeError) as ours:
        npy_mmap.open_memmap(tmp_path / "o.npy", mode="w+", shape=(1.5,))
    assert str(ours.value) == str(numpys.value)
    assert npy_mmap.open_memmap(tmp_path / "i.npy", mode="w+", shape=np.int64(3)).shape == (3,)


def test_savez_member_name_with_nul_as_numpy(tmp_path):
    np.savez(tmp_path / "n.npz", **{"a\x00b": np.arange(2)})
    npy_mmap.savez(tmp_path / "o.npz", **{"a\x00b": np.arange(2)})
    names = zipfile.ZipFile(tmp_path / "n.npz").namelist()
    assert zipfile.ZipFile(tmp_path / "o.npz").namelist() == names == ["a"]
    with zipfile.ZipFile(tmp_path / "n.npz") as n, zipfile.ZipFile(tmp_path / "o.npz") as o:
        assert n.read("a") == o.read("a")
    assert npy_mmap.load(tmp_path / "o.npz")["a"].tolist() == [0, 1]


def test_savez_member_name_too_long_is_a_clear_valueerror(tmp_path):
    with pytest.raises(ValueError, match="65535"):
        npy_mmap.savez(tmp_path / "o.npz", **{"x" * 70000: np.arange(2)})
    assert not (tmp_path / "o.npz").exists()


def test_python2_header_in_npz_member_loads_without_warning(tmp_path):
    # Documented difference (docs/PYTHON.md): numpy warns for the member.
    path = tmp_path / "py2.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", (NUMPY_DATA / "win64python2.npy").read_bytes())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.load(path) as npz:
            npz["x"]
    assert any("created on Python 2" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with npy_mmap.load(path) as npz:
            assert npz["x"].tolist() == [1.0, 1.0]


def test_builtin_types_in_object_arrays_round_trip_with_numpy(tmp_path):
    values = np.array([range, int, None, "x"], dtype=object)
    npy_mmap.save(tmp_path / "t.npy", values)
    assert np.load(tmp_path / "t.npy", allow_pickle=True).tolist() == values.tolist()
    np.save(tmp_path / "n.npy", values)
    assert npy_mmap.load(tmp_path / "n.npy", allow_pickle=True).tolist() == values.tolist()
    with pytest.raises(TypeError):
        npy_mmap.save(tmp_path / "bad.npy", np.array([ValueError], dtype=object))


# ------------------------------------------- issue 39: memmap as np.memmap


@pytest.mark.parametrize(
    "shape, order", [((10,), "C"), (None, "C"), ((5, 2), "C"), ((5, 2), "F")], ids=["10", "all", "5x2", "5x2F"]
)
def test_memmap_subarray_dtype_appends_its_shape_as_numpys(tmp_path, shape, order):
    # Before: shape (10,) of dtype V6 (the subarray's descr, mapped as is).
    path = tmp_path / "sub.bin"
    path.write_bytes(bytes(range(60)))
    dt = np.dtype(("<u2", (3,)))
    theirs = np.memmap(path, dtype=dt, mode="r", shape=shape, order=order)
    ours = npy_mmap.memmap(path, dtype=dt, mode="r", shape=shape, order=order)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint16
    assert ours.strides == theirs.strides and (ours == theirs).all()
    del ours


def test_memmap_checks_order_as_numpy(tmp_path):
    # Before: order='X' (and '') mapped the file in C order, and 'f' was C.
    path = tmp_path / "o.bin"
    path.write_bytes(bytes(range(8)))
    for order, error in (("X", ValueError), ("", ValueError), (5, TypeError)):
        with pytest.raises(error) as theirs:
            np.memmap(path, dtype="u1", mode="r", shape=(2, 4), order=order)
        with pytest.raises(error) as ours:
            npy_mmap.memmap(path, dtype="u1", mode="r", shape=(2, 4), order=order)
        assert str(ours.value) == str(theirs.value)
    for order in ("f", b"F", "A", "k", None):
        theirs = np.memmap(path, dtype="u1", mode="r", shape=(2, 4), order=order)
        ours = npy_mmap.memmap(path, dtype="u1", mode="r", shape=(2, 4), order=order)
        assert ours.strides == theirs.strides and (ours == theirs).all(), order
        del ours


@pytest.mark.parametrize("mode", ["r", "c", "r+"])
def test_memmap_refuses_an_empty_file_as_numpy(tmp_path, mode):
    # Before: a (0,) array in every mode. numpy refuses r and c; its r+
    # writes a byte into the file first (gh-27723), which we never do.
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    if mode != "r+":
        with pytest.raises(ValueError, match="^cannot mmap an empty file$"):
            np.memmap(path, dtype="u1", mode=mode)
    with pytest.raises(ValueError, match="^cannot mmap an empty file"):
        npy_mmap.memmap(path, dtype="u1", mode=mode)
    assert path.stat().st_size == 0


@pytest.mark.parametrize("mode", ["r+", "c", "readwrite"])
def test_memmap_of_a_url_refuses_to_write(mode):
    # Before: a read-only RemoteArray, silently (r+ is memmap's default).
    # Refused before any request: no server is needed.
    with pytest.raises(ValueError, match="read-only through memmap"):
        npy_mmap.memmap("s3://no-bucket/tokens.bin", dtype="<u2", mode=mode)
    with pytest.raises(ValueError, match="read-only through memmap"):
        npy_mmap.memmap("s3://no-bucket/tokens.bin", dtype="<u2")


@pytest.mark.parametrize("sharing", ["numpy", "strict"])
def test_dontneed_on_a_copy_on_write_mapping_says_why(tmp_path, sharing):
    # Before: "OSError: [Errno 0] ...": no errno, dressed as one.
    path = saved(tmp_path, np.arange(10.0))
    with npy_mmap.mapped(path, "c", sharing=sharing) as m:
        m.array[0] = -1.0
        with pytest.raises(ValueError, match="would discard the copy-on-write changes") as refused:
            m.advise("dontneed")
        assert "Errno" not in str(refused.value)
        assert m.array[0] == -1.0  # the change is kept
        m.advise("willneed")
