"""Virtual Zarr: references made by npy_mmap.virtualize, opened by the real
readers (zarr-python 3, xarray through fsspec's reference file system,
VirtualiZarr), locally and on the local S3 server; values equal np.load's."""

from __future__ import annotations

import errno
import functools
import http.server
import io
import json
import os
import re
import threading
import uuid
import zipfile

import fsspec
import icechunk
import numcodecs.errors
import numpy as np
import pytest
import s3fs
import xarray as xr
import zarr
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore, S3Store
from virtualizarr import open_virtual_dataset

import npy_mmap
from npy_mmap.virtual import NpyParser, StaleReferences, check_sources, manifest_store, to_kerchunk

# Every fixed-size dtype Zarr v2 expresses, both byte orders where they have one.
V2_DTYPES = [
    "|b1", "|i1", ">i2", "<i4", ">u8", "<u2", "<f2", ">f4", "<f8", ">f8", "<c8", ">c16",
    "|S5", "<U3", ">U2", "<M8[ns]", ">m8[s]", "<M8[D]",
    # Records of scalar fields: zarr-python 3.1 reads no subarray or nested
    # fields (the v2 form we write for them is checked in npy-remote's tests).
    [("a", "<i4"), ("b", ">f8"), ("c", "|S3"), ("d", "<M8[us]")],
]
V3_DTYPES = ["|b1", "|i1", ">i2", "<i4", ">u8", "|u1", "<f2", ">f4", "<f8", "<c8", ">c16"]


def _values(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct, non-zero values of any dtype (zero is what a missing chunk reads as)."""
    count = int(np.prod(shape))
    if dtype.names:
        out = np.zeros(count, dtype)
        for name in dtype.names:
            field = dtype[name]
            sub = _values(field.base if field.subdtype else field, (count,) + field.shape)
            out[name] = sub
        return out.reshape(shape)
    seq = np.arange(1, count + 1)
    if dtype.kind == "b":
        return (seq % 3 == 0).reshape(shape).astype(dtype)
    if dtype.kind in "SU":
        return np.array([f"v{i}" for i in seq], dtype=dtype).reshape(shape)
    if dtype.kind in "Mm":
        return seq.astype(dtype).reshape(shape)
    if dtype.kind == "c":
        return (seq + 1j * seq[::-1]).astype(dtype).reshape(shape)
    return (seq % 100).astype(dtype).reshape(shape)


def _save(path, dtype, order: str, shape=(12, 5)) -> np.ndarray:
    array = _values(np.dtype(dtype), shape)
    if order == "F":
        array = np.asfortranarray(array)
    np.save(path, array)
    return np.load(path)


def _xr(refs: dict, **storage) -> xr.Dataset:
    return xr.open_dataset(
        "reference://",
        engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": refs, **storage}},
    )


def _zarr_group(refs: dict, **storage) -> zarr.Group:
    fs = fsspec.filesystem("reference", fo=refs, asynchronous=True, **storage)
    store = zarr.storage.FsspecStore(fs, read_only=True, path="")
    return zarr.open_group(store, mode="r", zarr_format=2)


@pytest.mark.parametrize("dtype", V2_DTYPES, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rows_per_chunk", [None, 1, 3, 12])
def test_kerchunk_refs_read_back_as_np_load(tmp_path, dtype, order, rows_per_chunk) -> None:
    shape = (12, 5) if order == "C" else (5, 12)  # 12 rows either way
    expected = _save(tmp_path / "x.npy", dtype, order, shape)
    refs = npy_mmap.virtualize(tmp_path / "x.npy", rows_per_chunk=rows_per_chunk)
    chunks = len([k for k in refs["refs"] if k.startswith("x/") and "/." not in k])
    assert chunks == (12 // rows_per_chunk if rows_per_chunk else 1)
    stored = _zarr_group(refs)["x"]
    assert stored.dtype == expected.dtype and stored.shape == expected.shape
    np.testing.assert_array_equal(stored[:], expected)
    if np.dtype(dtype).names is None:  # xarray has no structured variables
        ds = _xr(refs)
        np.testing.assert_array_equal(ds["x"].values, expected)
        assert ds["x"].attrs["_npy_source"]["descr"] == expected.dtype.str


@pytest.mark.parametrize("dtype", V3_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rows_per_chunk", [None, 2, 6])
def test_zarr3_manifests_read_back_through_virtualizarr(tmp_path, dtype, order, rows_per_chunk) -> None:
    shape = (12, 5) if order == "C" else (5, 12)
    expected = _save(tmp_path / "x.npy", dtype, order, shape)
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    url = (tmp_path / "x.npy").as_uri()
    parser = NpyParser(rows_per_chunk=rows_per_chunk)
    store = parser(url, registry)
    np.testing.assert_array_equal(zarr.open_group(store, mode="r", zarr_format=3)["x"][:], expected)
    np.testing.assert_array_equal(
        xr.open_zarr(store, consolidated=False, zarr_format=3)["x"].values, expected
    )
    ds = open_virtual_dataset(url, registry=registry, parser=parser, loadable_variables=["x"])
    np.testing.assert_array_equal(ds["x"].values, expected)


def test_npz_members_zero_d_and_empty_arrays(tmp_path) -> None:
    arrays = {
        "big": np.arange(6000, dtype=">f8").reshape(1000, 6),
        "scalar": np.array(2.5),
        "empty": np.zeros((0, 3), "<i4"),
        "words": np.array(["a", "bc"]),
    }
    np.savez(tmp_path / "run.npz", **arrays)
    refs = npy_mmap.virtualize(tmp_path / "run.npz", rows_per_chunk=None, chunk_bytes=4800)
    assert len([k for k in refs["refs"] if k.startswith("big/") and "/." not in k]) == 10
    ds = _xr(refs)
    for name, expected in arrays.items():
        np.testing.assert_array_equal(ds[name].values, expected)
        assert ds[name].attrs["_npy_source"]["member"] == f"{name}.npy"


@pytest.mark.parametrize("format", ["kerchunk", "zarr3"])
def test_a_folder_is_one_dataset_pinned_to_what_was_read(tmp_path, format) -> None:
    for i in range(3):
        np.save(tmp_path / f"t{i}.npy", np.full((4, 2), i, "<f4"))
    refs = npy_mmap.virtualize(tmp_path, format=format)
    if format == "kerchunk":
        ds = _xr(refs)
        assert sorted(ds.data_vars) == ["t0", "t1", "t2"]
        assert ds["t2"].dims == ("dim_0", "dim_1")  # the same shapes: shared dimensions
        source = ds["t1"].attrs["_npy_source"]
    else:
        source = refs["arrays"]["t1"]["metadata"]["attributes"]["_npy_source"]
    stat = os.stat(tmp_path / "t1.npy")
    assert (source["size"], source["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns)
    assert source["etag"]
    check_sources(refs)  # as they were: accepted
    # t1 rewritten with another dtype (the same size): the pin refuses it.
    np.save(tmp_path / "t1.npy", np.full((4, 2), 7, "<u4"))
    with pytest.raises(StaleReferences, match=r"variable 't1': .*t1\.npy changed since the references were made \(.*descr '<f4' then, '<u4' now") as caught:
        check_sources(refs)
    assert caught.value.errno == errno.ESTALE
    # Gone: refused too.
    os.remove(tmp_path / "t1.npy")
    with pytest.raises(StaleReferences, match="t1.npy cannot be read as it was"):
        check_sources(refs)


def _npz_with_member(path, name: str) -> None:
    """An npz whose one member is named ``name`` exactly (numpy's own
    savez would never write some of these: crafted, as an attacker would)."""
    buffer = io.BytesIO()
    np.save(buffer, np.arange(12.0).reshape(3, 4))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, buffer.getvalue())


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ("../evil.npy", "'/'"),
        ("a/b.npy", "'/'"),
        (".npy", "empty"),
        ("..npy", "'.'"),
        (".zgroup.npy", "'.'"),
        ("__x.npy", "'__'"),
        ("zarr.json.npy", "zarr.json"),
    ],
)
@pytest.mark.parametrize("format", ["kerchunk", "zarr3"])
def test_member_names_zarr_cannot_keep_are_refused(tmp_path, member, reason, format) -> None:
    _npz_with_member(tmp_path / "bad.npz", member)
    with pytest.raises(ValueError, match=f"from member {re.escape(json.dumps(member))}.*{re.escape(reason)}.*rename"):
        npy_mmap.virtualize(tmp_path / "bad.npz", format=format)


@pytest.fixture
def http_folder(tmp_path):
    """A plain HTTP server (no Range support, as Python's own) serving ``tmp_path``."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join()


@pytest.mark.parametrize("format", ["kerchunk", "zarr3"])
def test_references_never_carry_credentials(tmp_path, http_folder, format) -> None:
    np.save(tmp_path / "t.npy", np.arange(12.0).reshape(3, 4))
    clean = f"http://127.0.0.1:{http_folder}/t.npy"
    for url in [
        f"http://reader:s3cr3t@127.0.0.1:{http_folder}/t.npy",
        f"http://reader:s3cr3t@127.0.0.1:{http_folder}/t.npy?X-Amz-Signature=s3cr3t#s3cr3t",
    ]:
        refs = npy_mmap.virtualize(url, format=format)
        text = json.dumps(refs)
        assert "s3cr3t" not in text and "reader" not in text
        if format == "kerchunk":
            assert refs["refs"]["t/0.0"][0] == clean
        else:
            assert refs["arrays"]["t"]["manifest"]["0.0"]["path"] == clean
        assert clean in text


def test_refusals_name_the_reason(tmp_path) -> None:
    np.save(tmp_path / "o.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        npy_mmap.virtualize(tmp_path / "o.npy")
    np.savez_compressed(tmp_path / "d.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="deflated"):
        npy_mmap.virtualize(tmp_path / "d.npz")
    np.save(tmp_path / "s.npy", np.array([b"ab"]))
    with pytest.raises(ValueError, match="kerchunk"):
        npy_mmap.virtualize(tmp_path / "s.npy", format="zarr3")
    np.save(tmp_path / "r.npy", np.zeros(10))
    with pytest.raises(ValueError, match="divisor of 10 such as 2 or 5"):
        npy_mmap.virtualize(tmp_path / "r.npy", rows_per_chunk=3)
    np.save(tmp_path / "p.npy", np.zeros(2, np.dtype({"names": ["a"], "formats": ["<i4"], "itemsize": 8})))
    with pytest.raises(ValueError, match="padding"):
        npy_mmap.virtualize(tmp_path / "p.npy")
    with pytest.raises(ValueError, match="format must be"):
        npy_mmap.virtualize(tmp_path / "r.npy", format="parquet")


def _s3_options() -> dict:
    return {
        "key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
        "client_kwargs": {"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    }


def _s3_registry(bucket: str) -> ObjectStoreRegistry:
    """VirtualiZarr's registry of the local S3 server's bucket."""
    store = S3Store(
        bucket,
        endpoint=os.environ["AWS_ENDPOINT_URL"],
        access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        region="us-east-1",
        client_options={"allow_http": True},
    )
    return ObjectStoreRegistry({f"s3://{bucket}": store})


def test_s3_prefix_through_kerchunk_and_virtualizarr(s3_bucket: str, tmp_path) -> None:
    prefix = f"virtual-{uuid.uuid4().hex}"
    fs = s3fs.S3FileSystem(**_s3_options())
    expected = {}
    for name, dtype, order in [("a", ">f8", "C"), ("b", "<i2", "F"), ("c", "<U4", "C")]:
        expected[name] = _save(tmp_path / f"{name}.npy", dtype, order)
        fs.put(str(tmp_path / f"{name}.npy"), f"{s3_bucket}/{prefix}/{name}.npy")
    np.savez(tmp_path / "z.npz", m=np.arange(8.0).reshape(4, 2))
    fs.put(str(tmp_path / "z.npz"), f"{s3_bucket}/{prefix}/z.npz")
    expected["z.m"] = np.arange(8.0).reshape(4, 2)

    refs = npy_mmap.virtualize(f"s3://{s3_bucket}/{prefix}/", rows_per_chunk=None)
    assert refs["refs"]["a/0.0"][0] == f"s3://{s3_bucket}/{prefix}/a.npy"
    # zarr opens the reference file system asynchronously: s3fs must be too.
    remote = {**_s3_options(), "asynchronous": True}
    ds = _xr(refs, remote_protocol="s3", remote_options=remote)
    for name, values in expected.items():
        np.testing.assert_array_equal(ds[name].values, values)
    assert ds["a"].attrs["_npy_source"]["etag"] == fs.info(f"{s3_bucket}/{prefix}/a.npy")["ETag"]
    np.testing.assert_array_equal(ds["b"].values, expected["b"])  # Fortran order

    registry = _s3_registry(s3_bucket)
    vds = open_virtual_dataset(
        f"s3://{s3_bucket}/{prefix}/a.npy", registry=registry, parser=NpyParser(), loadable_variables=["a"]
    )
    np.testing.assert_array_equal(vds["a"].values, expected["a"])


def _with_zeros(path, dtype, order: str, shape=(12, 5)) -> np.ndarray:
    """``_save``'s array with every third element zero (what a fill value
    of 0 would mask), read back by np.load."""
    array = _values(np.dtype(dtype), shape)
    array.reshape(-1)[::3] = 0
    if order == "F":
        array = np.asfortranarray(array)
    np.save(path, array)
    return np.load(path)


def _icechunk_round_trip(vds, prefix: str, store_config, credentials=None) -> xr.Dataset:
    """``vds`` written to an in-memory Icechunk repository by VirtualiZarr's
    ``to_icechunk`` (chunks under ``prefix`` allowed), opened by xarray."""
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, store_config))
    repo = icechunk.Repository.create(
        icechunk.in_memory_storage(), config, authorize_virtual_chunk_access=icechunk.containers_credentials({prefix: credentials})
    )
    session = repo.writable_session("main")
    vds.vz.to_icechunk(session.store)
    session.commit("npy references")
    return xr.open_zarr(repo.readonly_session("main").store, consolidated=False, zarr_format=3)


@pytest.mark.parametrize("dtype", V3_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rows_per_chunk", [None, 3])
def test_the_parsers_datasets_round_trip_through_kerchunk_and_icechunk(tmp_path, dtype, order, rows_per_chunk) -> None:
    shape = (12, 5) if order == "C" else (5, 12)
    expected = _with_zeros(tmp_path / "x.npy", dtype, order, shape)
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    vds = open_virtual_dataset((tmp_path / "x.npy").as_uri(), registry=registry, parser=NpyParser(rows_per_chunk))

    refs = to_kerchunk(vds)
    loaded = _xr(refs)["x"].values
    # Not float: no fill value masked the zeros (xarray gives native byte order).
    assert (loaded.dtype.kind, loaded.dtype.itemsize) == (expected.dtype.kind, expected.dtype.itemsize)
    np.testing.assert_array_equal(loaded, expected)
    (tmp_path / "x.json").write_text(json.dumps(refs))  # as VIRTUAL.md keeps them
    np.testing.assert_array_equal(_xr(str(tmp_path / "x.json"))["x"].values, expected)
    assert refs["refs"]["x/0.0"][0] == str(tmp_path / "x.npy")  # as VirtualiZarr's: a plain path

    ds = _icechunk_round_trip(vds, tmp_path.as_uri() + "/", icechunk.local_filesystem_store(str(tmp_path)))
    assert ds["x"].dtype.kind == expected.dtype.kind
    np.testing.assert_array_equal(ds["x"].values, expected)


def test_virtualizarrs_own_to_kerchunk_is_what_to_kerchunk_mends(tmp_path) -> None:
    """Why npy_mmap.virtual.to_kerchunk exists (VirtualiZarr 2.5.1): its own
    writer fails on Fortran order and masks an integer's zeros. When this
    test fails, VirtualiZarr fixed them: VIRTUAL.md can drop the detour."""
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    expected = _with_zeros(tmp_path / "i.npy", "<i4", "C")
    vds = open_virtual_dataset((tmp_path / "i.npy").as_uri(), registry=registry, parser=NpyParser())
    masked = _xr(vds.vz.to_kerchunk(format="dict"))["i"].values
    assert masked.dtype.kind == "f" and np.isnan(masked[expected == 0]).all()
    _with_zeros(tmp_path / "f.npy", "<f8", "F", (5, 12))
    vds = open_virtual_dataset((tmp_path / "f.npy").as_uri(), registry=registry, parser=NpyParser())
    with pytest.raises(numcodecs.errors.UnknownCodecError, match="transpose"):
        vds.vz.to_kerchunk(format="dict")


def test_to_kerchunk_keeps_other_variables_virtualizarrs(tmp_path) -> None:
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    expected = _with_zeros(tmp_path / "x.npy", "<u2", "C")
    vds = open_virtual_dataset((tmp_path / "x.npy").as_uri(), registry=registry, parser=NpyParser())
    vds = vds.assign(loaded=("dim_0", np.arange(12.0)))  # an in-memory variable: VirtualiZarr inlines it
    ds = _xr(to_kerchunk(vds))
    np.testing.assert_array_equal(ds["x"].values, expected)
    np.testing.assert_array_equal(ds["loaded"].values, np.arange(12.0))


@pytest.mark.parametrize("order", ["C", "F"])
def test_zarr3_json_opens_as_virtual_md_shows(tmp_path, order) -> None:
    """VIRTUAL.md's "Opening --format zarr3": the JSON ``npy virtualize
    --format zarr3 -o refs.json`` writes (virtualize's own document),
    opened by zarr-python 3, xarray, and VirtualiZarr."""
    shape = (12, 5) if order == "C" else (5, 12)
    a = _with_zeros(tmp_path / "a.npy", "<i8", order, shape)
    b = _with_zeros(tmp_path / "b.npy", ">f4", order, shape)
    (tmp_path / "refs.json").write_text(json.dumps(npy_mmap.virtualize(tmp_path, format="zarr3", rows_per_chunk=4 if order == "C" else None)))

    registry = ObjectStoreRegistry({"file://": LocalStore()})
    store = manifest_store(tmp_path / "refs.json", registry)
    group = zarr.open_group(store, mode="r", zarr_format=3)
    np.testing.assert_array_equal(group["a"][:], a)
    np.testing.assert_array_equal(group["b"][:], b)
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3)
    np.testing.assert_array_equal(ds["a"].values, a)
    assert ds["a"].dtype.kind == a.dtype.kind
    vds = store.to_virtual_dataset()
    np.testing.assert_array_equal(_xr(to_kerchunk(vds))["b"].values, b)
    with pytest.raises(ValueError, match="not Zarr v3 references"):
        manifest_store(npy_mmap.virtualize(tmp_path), registry)


def test_s3_parser_datasets_round_trip_through_kerchunk_and_icechunk(s3_bucket: str, tmp_path) -> None:
    prefix = f"virtual-rt-{uuid.uuid4().hex}"
    fs = s3fs.S3FileSystem(**_s3_options())
    expected = {}
    for name, dtype, order, shape in [("c", "<i4", "C", (12, 5)), ("f", ">u2", "F", (5, 12))]:
        expected[name] = _with_zeros(tmp_path / f"{name}.npy", dtype, order, shape)
        fs.put(str(tmp_path / f"{name}.npy"), f"{s3_bucket}/{prefix}/{name}.npy")
    registry = _s3_registry(s3_bucket)
    vds = open_virtual_dataset(f"s3://{s3_bucket}/{prefix}/", registry=registry, parser=NpyParser())

    ds = _xr(to_kerchunk(vds), remote_protocol="s3", remote_options={**_s3_options(), "asynchronous": True})
    for name, values in expected.items():
        assert ds[name].dtype.kind == values.dtype.kind
        np.testing.assert_array_equal(ds[name].values, values)

    ice = _icechunk_round_trip(
        vds,
        f"s3://{s3_bucket}/{prefix}/",
        icechunk.s3_store(region="us-east-1", endpoint_url=os.environ["AWS_ENDPOINT_URL"], allow_http=True, s3_compatible=True, force_path_style=True),
        icechunk.s3_credentials(
            access_key_id=os.environ["AWS_ACCESS_KEY_ID"], secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"]
        ),
    )
    for name, values in expected.items():
        np.testing.assert_array_equal(ice[name].values, values)
