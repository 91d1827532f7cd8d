"""Virtual Zarr: ``.npy`` files and npz members read in place by zarr,
xarray and Dask (docs/VIRTUAL.md).

:func:`virtualize` returns kerchunk references (fsspec's
``ReferenceFileSystem``, Zarr v2 metadata) or Zarr v3 manifests;
:class:`NpyParser` is a VirtualiZarr parser, :func:`to_kerchunk` writes
its datasets as kerchunk references that read back as ``np.load`` does,
and :func:`manifest_store` opens Zarr v3 references for zarr-python 3,
xarray and VirtualiZarr::

    import xarray as xr, npy_mmap
    refs = npy_mmap.virtualize(["s3://bucket/run1/"])
    ds = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}})

The work (reading headers, one ranged GET per ``.npy``) is npy-remote's.
References never carry credentials: a URL's user name, password, query and
fragment are not written (readers bring their own, e.g. fsspec's
``storage_options``). :func:`check_sources` refuses references whose files
or objects changed since they were made.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterable
from typing import Any

from . import _native

__all__ = ["NpyParser", "StaleReferences", "check_sources", "manifest_store", "to_kerchunk", "virtualize"]

#: The chunk size aimed at when rows per chunk are chosen: 64 MiB.
DEFAULT_CHUNK_BYTES = 64 << 20


def virtualize(
    paths_or_urls: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    format: str = "kerchunk",
    rows_per_chunk: int | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    concurrency: int = 32,
) -> dict[str, Any]:
    """References to the arrays that ``paths_or_urls`` name.

    Each item is a ``.npy`` or ``.npz`` path, a directory of them, a URL,
    or a URL prefix ending in ``/``. One variable per array, named after
    the file's stem or the npz member's key. ``format="kerchunk"`` (the
    default) gives ``{"version": 1, "refs": {...}}``; ``"zarr3"`` gives Zarr
    v3 metadata with a chunk manifest per array. ``rows_per_chunk`` must
    divide every array's row count; by default a divisor near
    ``chunk_bytes`` is chosen per array.

    Raises ``ValueError`` for arrays Zarr cannot read in place (object
    arrays, deflated members, dtypes the format cannot express).
    """
    if isinstance(paths_or_urls, (str, os.PathLike)):
        paths_or_urls = [paths_or_urls]
    inputs = [os.fspath(p) for p in paths_or_urls]
    text = _native.virtualize(inputs, format, rows_per_chunk, chunk_bytes, concurrency)
    return json.loads(text)


class StaleReferences(OSError):
    """References whose file or object is no longer the one they were made
    from (rewritten, replaced or gone): their byte ranges may point at other
    data. Make the references again."""


#: The parts of ``_npy_source`` that tell one version of an object from another.
_PIN = ("size", "etag", "mtime_ns", "descr")


def _sources(refs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each variable's ``_npy_source``, from kerchunk references or a Zarr v3 document."""
    if "refs" in refs:
        found = {}
        for key, value in refs["refs"].items():
            if key.endswith("/.zattrs"):
                attrs = json.loads(value) if isinstance(value, str) else value
                if "_npy_source" in attrs:
                    found[key[: -len("/.zattrs")]] = attrs["_npy_source"]
        return found
    if "arrays" in refs:
        return {
            name: entry["metadata"]["attributes"]["_npy_source"]
            for name, entry in refs["arrays"].items()
            if "_npy_source" in entry["metadata"].get("attributes", {})
        }
    raise ValueError("not references made by npy_mmap.virtualize (no 'refs' or 'arrays')")


def check_sources(refs: dict[str, Any], *, concurrency: int = 32) -> None:
    """Refuse references whose sources changed since :func:`virtualize`
    made them.

    Each variable's ``_npy_source`` (size, ETag, local modification time,
    dtype) is compared with its file or object as it is now, read again
    the way :func:`virtualize` read it (one ranged GET per ``.npy``).
    Raises :class:`StaleReferences` (an ``OSError``, ``ESTALE``) naming the
    first variable whose source differs or is gone; returns ``None`` when
    every one is as it was.
    """
    sources = _sources(refs)
    now: dict[tuple[str, str | None], dict[str, Any]] = {}
    for url in sorted({source["url"] for source in sources.values()}):
        try:
            current = virtualize([url], concurrency=concurrency)
        except (OSError, ValueError) as error:
            raise StaleReferences(
                errno.ESTALE, f"{url} cannot be read as it was when the references were made: {error}", url
            ) from error
        for pin in _sources(current).values():
            now[(pin["url"], pin.get("member"))] = pin
    for name, pin in sources.items():
        found = now.get((pin["url"], pin.get("member")))
        where = pin["url"] if "member" not in pin else f"{pin['url']} (member {pin['member']!r})"
        if found is None:
            raise StaleReferences(errno.ESTALE, f"variable {name!r}: {where} is gone; make the references again", pin["url"])
        changed = [f"{key} {pin.get(key)!r} then, {found.get(key)!r} now" for key in _PIN if pin.get(key) != found.get(key)]
        if changed:
            raise StaleReferences(
                errno.ESTALE,
                f"variable {name!r}: {where} changed since the references were made ({'; '.join(changed)}); "
                "make the references again",
                pin["url"],
            )


class NpyParser:
    """A VirtualiZarr parser for ``.npy``/``.npz`` objects and prefixes::

        from virtualizarr import open_virtual_dataset
        ds = open_virtual_dataset(url, registry=registry, parser=NpyParser())

    The manifests are :func:`virtualize`'s ``format="zarr3"`` output;
    VirtualiZarr's registry then reads the chunks.
    """

    def __init__(self, rows_per_chunk: int | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES):
        self.rows_per_chunk = rows_per_chunk
        self.chunk_bytes = chunk_bytes

    def __call__(self, url: str, registry: Any) -> Any:
        doc = virtualize(
            [url], format="zarr3", rows_per_chunk=self.rows_per_chunk, chunk_bytes=self.chunk_bytes
        )
        return manifest_store(doc, registry)


def manifest_store(doc: dict[str, Any] | str | os.PathLike[str], registry: Any) -> Any:
    """A VirtualiZarr ``ManifestStore`` over Zarr v3 references: what
    ``npy virtualize --format zarr3`` writes (a path to that JSON, or the
    document itself, as ``virtualize(..., format="zarr3")`` returns it).

    ``registry`` (obspec-utils' ``ObjectStoreRegistry``) reads the chunks.
    zarr-python 3 and xarray open the store as any Zarr v3 store::

        store = manifest_store("run1.json", registry)
        zarr.open_group(store, mode="r", zarr_format=3)["t"][:]
        xr.open_zarr(store, consolidated=False, zarr_format=3)
        store.to_virtual_dataset()  # VirtualiZarr's, e.g. for .vz.to_icechunk(...)
    """
    from virtualizarr.manifests import ChunkManifest, ManifestArray, ManifestGroup, ManifestStore
    from zarr.core.metadata import ArrayV3Metadata

    if not isinstance(doc, dict):
        with open(doc, encoding="utf-8") as file:
            doc = json.load(file)
    if doc.get("zarr_format") != 3 or "arrays" not in doc:
        raise ValueError("not Zarr v3 references made by npy virtualize --format zarr3 (no 'arrays')")
    arrays = {}
    for name, entry in doc["arrays"].items():
        metadata = ArrayV3Metadata.from_dict(entry["metadata"])
        grid = tuple(-(-size // chunk) for size, chunk in zip(metadata.shape, metadata.chunks))
        # ChunkManifest unpacks each entry's values in order: rebuild them
        # as path, offset, length (JSON objects have no order).
        entries = {
            key: {"path": ref["path"], "offset": ref["offset"], "length": ref["length"]}
            for key, ref in entry["manifest"].items()
        }
        manifest = ChunkManifest(entries=entries, shape=grid)
        arrays[name] = ManifestArray(metadata=metadata, chunkmanifest=manifest)
    return ManifestStore(group=ManifestGroup(arrays=arrays), registry=registry)


def to_kerchunk(vds: Any) -> dict[str, Any]:
    """kerchunk references of a virtual dataset, as VirtualiZarr's
    ``vds.vz.to_kerchunk(format="dict")`` returns them, but with the arrays
    :class:`NpyParser` made (those whose attributes carry ``_npy_source``)
    written as ``npy virtualize`` writes them:

    - ``fill_value`` null: VirtualiZarr writes the Zarr v3 fill value (0
      for integers, zarr-python's default), which xarray reads from Zarr
      v2 as ``_FillValue`` and masks, so real zeros would come back NaN
      (and integers as floats);
    - Fortran order as Zarr v2's ``order: "F"``: VirtualiZarr passes v3's
      ``transpose`` codec on as a v2 filter, and numcodecs has none
      (``UnknownCodecError: codec not available: 'transpose'``).

    Every other variable is VirtualiZarr's own. To keep the references in
    a file: ``json.dump(to_kerchunk(vds), out)``.
    """
    from virtualizarr.manifests import ManifestArray
    from virtualizarr.writers.kerchunk import NumpyEncoder, variable_to_kerchunk_arr_refs
    from xarray.conventions import encode_dataset_coordinates

    variables, attrs = encode_dataset_coordinates(vds)
    refs: dict[str, Any] = {".zgroup": json.dumps({"zarr_format": 2}), ".zattrs": json.dumps(attrs, cls=NumpyEncoder)}
    for name, var in variables.items():
        ours = isinstance(var.data, ManifestArray) and "_npy_source" in var.attrs
        array = _npy_arr_refs(var) if ours else None
        if array is None:
            array = variable_to_kerchunk_arr_refs(var, str(name))
        refs.update({f"{name}/{key}": value for key, value in array.items()})
    return {"version": 1, "refs": refs}


def _npy_arr_refs(var: Any) -> dict[str, Any] | None:
    """One variable's kerchunk references, as ``npy virtualize`` writes
    them; None when its codecs are not the ones :class:`NpyParser` writes
    (``bytes``, after ``transpose`` for Fortran order)."""
    from virtualizarr.writers.kerchunk import NumpyEncoder

    marr = var.data
    codecs = [codec.to_dict() for codec in marr.metadata.codecs]
    names = [codec["name"] for codec in codecs]
    reversed_axes = list(range(marr.ndim))[::-1]
    if names == ["bytes"]:
        fortran = False
    elif names == ["transpose", "bytes"] and list(codecs[0]["configuration"]["order"]) == reversed_axes:
        fortran = True
    else:
        return None
    dtype = marr.metadata.data_type.to_native_dtype()
    if (codecs[-1].get("configuration") or {}).get("endian") == "big":
        dtype = dtype.newbyteorder(">")
    zarray = {
        "zarr_format": 2,
        "shape": list(marr.shape),
        "chunks": list(marr.chunks),
        "dtype": dtype.str,
        "compressor": None,
        "filters": None,
        "fill_value": None,  # every chunk exists; a fill value would mask real values
        "order": "F" if fortran else "C",
        "dimension_separator": ".",
    }
    zattrs = {**var.attrs, **var.encoding, "_ARRAY_DIMENSIONS": list(var.dims)}
    refs: dict[str, Any] = {
        ".zarray": json.dumps(zarray),
        ".zattrs": json.dumps(zattrs, cls=NumpyEncoder),
    }
    for key, entry in marr.manifest.dict().items():
        path = entry["path"]
        refs[key] = [path.removeprefix("file://") if path.startswith("file:///") else path, entry["offset"], entry["length"]]
    return refs
