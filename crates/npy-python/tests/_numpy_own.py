"""numpy's own save/load tests, run against npy_mmap.

A pytest plugin, and a script. numpy ships its tests (``numpy.lib.tests``):
``test_format.py`` and ``test_io.py`` hold the ones that save and load. This
plugin keeps those that call ``np.load``, ``np.save``, ``np.savez`` or
``np.savez_compressed`` (in their own body, or through ``RoundtripTest``'s
``roundtrip``) and, with ``NPY_MMAP_AS_NUMPY=1``, replaces those four
functions of numpy's module by npy_mmap's before any test runs: numpy's
tests call them as ``np.load(...)``, so they then exercise npy_mmap.

Left out: the tests marked slow that need 2 GiB and more
(``test_big_arrays``, ``test_large_archive``, ``test_large_zip``); the slow
``test_format_2_0`` is kept. numpy's ``conftest.py`` needs hypothesis, so
the tests run with ``--noconftest`` (their fixtures are pytest's own).

As a script it runs both ways and prints the counts::

    python crates/npy-python/tests/_numpy_own.py
    numpy: 58 passed / npy_mmap: 58 passed, of 58 tests

``test_numpy_behaviour.py::test_numpys_own_save_load_tests`` runs it in a
child process and asserts that every test numpy passes, npy_mmap passes.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

#: The four functions npy_mmap replaces.
PATCHED = ("load", "save", "savez", "savez_compressed")
#: numpy's test modules that save and load.
MODULES = ("numpy.lib.tests.test_format", "numpy.lib.tests.test_io")
#: Slow tests that need gigabytes of memory or disk: left out.
TOO_BIG = {"test_big_arrays", "test_large_archive", "test_large_zip"}

_CALL = re.compile(r"\bnp\.(?:" + "|".join(PATCHED) + r")\(")


def _source(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _saves_or_loads(item: pytest.Item) -> bool:
    """Whether a test calls one of the four, directly or through its class's ``roundtrip``."""
    function = getattr(item, "function", None)
    if function is None or function.__name__ in TOO_BIG:
        return False
    source = _source(function)
    if _CALL.search(source):
        return True
    cls = getattr(item, "cls", None)
    if cls is None or not re.search(r"self\.(roundtrip|check_roundtrips)\(", source):
        return False
    return any(_CALL.search(_source(k.__dict__["roundtrip"])) for k in cls.__mro__ if "roundtrip" in k.__dict__)


def pytest_configure(config: pytest.Config) -> None:
    for mark in ("slow", "slow_pypy", "thread_unsafe"):
        config.addinivalue_line("markers", f"{mark}: numpy's mark")
    if os.environ.get("NPY_MMAP_AS_NUMPY") == "1":
        import npy_mmap

        for name in PATCHED:
            setattr(np, name, getattr(npy_mmap, name))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = [item for item in items if _saves_or_loads(item)]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept


_OUTCOMES: dict[str, str] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call" or report.outcome != "passed":
        # numpy's files lie outside the rootdir: name the test by module.
        name = item.module.__name__.rsplit(".", 1)[-1] + "::" + item.nodeid.split("::", 1)[-1]
        if _OUTCOMES.get(name) in (None, "passed"):
            _OUTCOMES[name] = report.outcome
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("NPY_MMAP_OUTCOMES")
    if out:
        pathlib.Path(out).write_text(json.dumps(_OUTCOMES, indent=1, sort_keys=True))


def run(as_numpy: bool, outcomes: pathlib.Path) -> dict[str, str]:
    """Runs the selection in a child pytest; returns each test's outcome."""
    env = {**os.environ, "NPY_MMAP_OUTCOMES": str(outcomes), "PYTHONPATH": str(pathlib.Path(__file__).parent)}
    env["NPY_MMAP_AS_NUMPY"] = "1" if as_numpy else "0"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--noconftest", "-p", "_numpy_own", "-p", "no:cacheprovider",
         "--pyargs", *MODULES],
        env=env, cwd=outcomes.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    return json.loads(outcomes.read_text())


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        numpy_run = run(False, pathlib.Path(tmp, "numpy.json"))
        ours = run(True, pathlib.Path(tmp, "npy_mmap.json"))
    passed = {name for name, outcome in numpy_run.items() if outcome == "passed"}
    print(f"numpy: {len(passed)} passed / npy_mmap: {sum(ours.get(n) == 'passed' for n in passed)} passed, "
          f"of {len(numpy_run)} tests")  # fmt: skip
    for name in sorted(passed):
        if ours.get(name) != "passed":
            print(f"  npy_mmap {ours.get(name)}: {name}")
