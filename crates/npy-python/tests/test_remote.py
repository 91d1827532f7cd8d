"""Object storage, against the local S3-protocol server (scripts/s3-server.sh)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import s3fs

import npy_mmap


def _fs() -> s3fs.S3FileSystem:
    import os

    return s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    )


def test_save_to_s3_is_np_save_identical_and_loads_back(s3_bucket: str, tmp_path) -> None:
    array = np.arange(10_000, dtype=">f4").reshape(100, 100)
    key = f"{s3_bucket}/py-{uuid.uuid4().hex}.npy"
    npy_mmap.save(f"s3://{key}", array)
    np.save(tmp_path / "ref.npy", array)
    fs = _fs()
    assert fs.cat(key) == (tmp_path / "ref.npy").read_bytes()
    loaded = npy_mmap.load(f"s3://{key}")
    assert loaded.dtype == array.dtype and (loaded == array).all()

    objects = np.empty(3, dtype=object)
    objects[:] = ["a", 1, None]
    npy_mmap.save(f"s3://{key}.obj.npy", objects)
    (tmp_path / "obj.npy").write_bytes(fs.cat(f"{key}.obj.npy"))
    # npy-core's pickle is its own (values, not bytes, match numpy's): numpy reads it.
    assert list(np.load(tmp_path / "obj.npy", allow_pickle=True)) == ["a", 1, None]
    assert list(npy_mmap.load(f"s3://{key}.obj.npy", allow_pickle=True)) == ["a", 1, None]


def test_a_lazy_remote_array_reads_only_what_is_indexed(s3_bucket: str) -> None:
    array = np.arange(1000 * 8, dtype="<i8").reshape(1000, 8)
    url = f"s3://{s3_bucket}/py-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, array)
    remote = npy_mmap.load(url, mmap_mode="r")
    assert isinstance(remote, npy_mmap.RemoteArray)
    assert remote.shape == (1000, 8) and remote.dtype == np.dtype("<i8") and len(remote) == 1000
    assert (remote[10:20] == array[10:20]).all()
    assert (remote[-1] == array[-1]).all()
    assert (remote[[5, 900, 6]] == array[[5, 900, 6]]).all()
    assert (remote[::100, 2] == array[::100, 2]).all()
    assert (remote[3, 4] == array[3, 4]).all()
    assert (np.asarray(remote) == array).all()
    with pytest.raises(IndexError):
        remote[1000]


def test_missing_objects_are_file_not_found(s3_bucket: str) -> None:
    with pytest.raises(FileNotFoundError):
        npy_mmap.load(f"s3://{s3_bucket}/no-such-{uuid.uuid4().hex}.npy")


def _read_after_fork(url: str, local: str, inherited, queue) -> None:
    try:
        fresh = npy_mmap.load(url)
        rows = inherited[2:4]  # an array the parent opened, read in the child
        mapped = npy_mmap.load(local, mmap_mode="r")
        queue.put(("ok", float(fresh.sum()), rows.tolist(), float(mapped.sum())))
    except BaseException as error:
        queue.put(("error", f"{type(error).__name__}: {error}"))


def test_remote_and_local_reads_work_in_a_forked_child(s3_bucket: str, tmp_path) -> None:
    """The parent's tokio runtime has no threads in a child of fork: each
    process makes its own, and arrays opened by the parent open again in the
    child (before, the child's first remote read waited for ever)."""
    import multiprocessing

    array = np.arange(40, dtype="<f8").reshape(10, 4)
    url = f"s3://{s3_bucket}/py-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, array)
    local = tmp_path / "local.npy"
    np.save(local, array)
    inherited = npy_mmap.open_remote(url)
    assert float(npy_mmap.load(url).sum()) == array.sum()  # the parent uses its runtime first
    held = npy_mmap.load(local, mmap_mode="r")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_after_fork, args=(url, str(local), inherited, queue))
    child.start()
    said = queue.get(timeout=60)
    child.join(timeout=20)
    assert said == ("ok", array.sum(), array[2:4].tolist(), array.sum()), said
    # The parent's runtime still works.
    assert (inherited[5:6] == array[5:6]).all()
    del held


def _load_in(env: dict, url: str) -> str:
    """``load(url)`` in a fresh process with ``env`` (the store is built
    from the environment once per process): the exception it prints."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, npy_mmap\n"
        "try:\n"
        "    npy_mmap.load(sys.argv[1])\n"
        "except Exception as e:\n"
        "    print(type(e).__name__ + ': ' + str(e))\n"
        "else:\n"
        "    print('loaded')\n"
    )
    full = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    full.update(env)
    done = subprocess.run(
        [sys.executable, "-c", code, url], env=full, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _server_env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k.startswith("AWS_")}


def test_a_plain_http_endpoint_says_to_set_aws_allow_http(s3_bucket: str) -> None:
    env = _server_env()
    env.pop("AWS_ALLOW_HTTP")
    said = _load_in(env, f"s3://{s3_bucket}/anything.npy")
    assert said.startswith("OSError: ") and "set AWS_ALLOW_HTTP=true" in said, said
    assert "plain http://" in said
    env["AWS_ALLOW_HTTP"] = "true"
    assert _load_in(env, f"s3://{s3_bucket}/missing-{uuid.uuid4().hex}.npy").startswith("FileNotFoundError")


def test_no_credentials_says_which_to_set(s3_bucket: str) -> None:
    env = _server_env()
    del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
    # Without credentials the client asks the instance-metadata service: at
    # its own address (169.254.169.254, refused or unanswered off a cloud VM),
    # and at a local port nothing listens on, which refuses at once.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    env["AWS_METADATA_ENDPOINT"] = f"http://127.0.0.1:{closed}"
    said = _load_in(env, f"s3://{s3_bucket}/anything.npy")
    assert said.startswith("OSError: "), said
    assert "no credentials" in said and "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in said, said


def test_a_missing_bucket_is_named(s3_bucket: str) -> None:
    bucket = f"npy-missing-{uuid.uuid4().hex[:8]}"
    said = _load_in(_server_env(), f"s3://{bucket}/a.npy")
    assert said.startswith("FileNotFoundError: ") and f"no such bucket '{bucket}'" in said, said
    assert "no such object" not in said
    with pytest.raises(FileNotFoundError, match=f"no such bucket '{bucket}'"):
        npy_mmap.save(f"s3://{bucket}/a.npy", np.arange(3))
