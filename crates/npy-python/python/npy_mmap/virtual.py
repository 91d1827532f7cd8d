"""Virtual Zarr: ``.npy`` files and npz members read in place by zarr,
xarray and Dask (docs/VIRTUAL.md).

:func:`virtualize` returns kerchunk references (fsspec's
``ReferenceFileSystem``, Zarr v2 metadata) or Zarr v3 manifests;
:class:`NpyParser` is a VirtualiZarr parser::

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

__all__ = ["NpyParser", "StaleReferences", "check_sources", "virtualize"]

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
        from virtualizarr.manifests import ChunkManifest, ManifestArray, ManifestGroup, ManifestStore
        from zarr.core.metadata import ArrayV3Metadata

        doc = virtualize(
            [url], format="zarr3", rows_per_chunk=self.rows_per_chunk, chunk_bytes=self.chunk_bytes
        )
        arrays = {}
        for name, entry in doc["arrays"].items():
            metadata = ArrayV3Metadata.from_dict(entry["metadata"])
            grid = tuple(
                -(-size // chunk) for size, chunk in zip(metadata.shape, metadata.chunks)
            )
            # ChunkManifest unpacks each entry's values in order: rebuild them
            # as path, offset, length (JSON objects have no order).
            entries = {
                key: {"path": ref["path"], "offset": ref["offset"], "length": ref["length"]}
                for key, ref in entry["manifest"].items()
            }
            manifest = ChunkManifest(entries=entries, shape=grid)
            arrays[name] = ManifestArray(metadata=metadata, chunkmanifest=manifest)
        return ManifestStore(group=ManifestGroup(arrays=arrays), registry=registry)
