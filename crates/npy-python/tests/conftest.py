"""Shared fixtures: the Rust lock probe and the local S3-protocol server."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def lock_probe() -> pathlib.Path:
    """The Rust program (examples/lock_probe.rs) that takes npy-mmap's locks.

    Built with cargo when NPY_LOCK_PROBE does not name it. A test that needs
    it fails (never skips) when it cannot be built.
    """
    given = os.environ.get("NPY_LOCK_PROBE")
    if given:
        return pathlib.Path(given)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    subprocess.run(
        ["cargo", "build", "--quiet", "--example", "lock_probe"],
        cwd=REPO,
        check=True,
    )
    return target / "debug" / "examples" / "lock_probe"


@pytest.fixture(scope="session")
def s3_bucket() -> str:
    """The bucket of the local S3-protocol server (scripts/s3-server.sh).

    The environment must point at it (`eval "$(scripts/s3-server.sh env)"`);
    without it the remote tests fail, saying so: CI never skips them.
    """
    bucket = os.environ.get("NPY_S3_BUCKET")
    if not bucket or not os.environ.get("AWS_ENDPOINT_URL"):
        pytest.fail(
            "the remote tests need the local S3 server: scripts/s3-server.sh start; "
            'eval "$(scripts/s3-server.sh env)"'
        )
    return bucket


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """CI never skips: a skipped test fails the run, and so does a run of no test."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    if stats.get("skipped"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if reporter is not None:
            reporter.write_line(f"FAILED: {len(stats['skipped'])} test(s) skipped; this suite never skips", red=True)
    if session.testscollected == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
