#!/usr/bin/env python3
"""One way to write a file (issue 39): fail on any file-creating call in the
library, CLI and Python package source outside the atomic commit.

Every file the project writes goes through ``npy_mmap::AtomicFile``
(crates/npy-mmap/src/atomic.rs: a temporary beside the destination, synced,
renamed over it, never through a link; the CLI's ``output::create`` adds the
``--force`` rule). This check finds the other ways of making or replacing a
file, and fails on each one not in the allowlist
(scripts/file-writes-allowlist.txt, each entry with its reason):

* Rust: ``fs::write``, ``File::create``/``create_new``/``options``, an
  ``OpenOptions`` chain that writes (``.write(true)``, ``.create(true)``,
  ``.create_new(true)``, ``.append(true)``, ``.truncate(true)``, or
  ``.read(..).write(flag)``), ``fs::copy``/``rename``/``hard_link``,
  symbolic links, ``tempfile``, raw ``renameat``/``linkat``/``O_CREAT``.
* Python (parsed with ``ast``, so docstrings and comments never count):
  ``open()``/``io.open`` with a mode that writes (``w``, ``a``, ``x``,
  ``+``, or a mode that is not a literal), ``os.open``, ``os.replace``/
  ``rename``/``link``/``symlink``, ``shutil.copy*``/``move``,
  ``Path.write_text``/``write_bytes``/``touch``/``rename``, ``np.save*``,
  ``savetxt``, ``.tofile``, ``np.memmap``/``open_memmap`` with a writing
  mode, ``zipfile.ZipFile`` for writing, ``tempfile``.

Scanned: ``crates/*/src`` and ``src`` (Rust), ``crates/npy-python/python``
(Python). Not scanned: tests, benches (crates/npy-bench writes only its own
scratch data), scripts, fuzz, examples (the smoke runs' own files), and Rust
``#[cfg(test)]`` modules. The atomic module itself is the door.

It fails when it scanned no file (a moved tree must not pass by finding
nothing), and when an allowlist entry matches nothing (stale entries would
hide new calls). ``--self-test`` feeds it samples with each kind of bad
call and checks that each one fails (run in CI before the real check).

Usage: scripts/check-writes.py [--root DIR] [--allowlist FILE] [--self-test]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The one door: every file is written through it.
ATOMIC = "crates/npy-mmap/src/atomic.rs"
#: Trees scanned, relative to the root, with their language.
RUST_TREES = ["src"]
RUST_CRATE_SOURCES = "crates/*/src"
PYTHON_TREES = ["crates/npy-python/python"]
#: Crates that are not library or CLI source.
SKIPPED_CRATES = {"npy-bench": "benchmarks: write only their own scratch data"}
DEFAULT_ALLOWLIST = "scripts/file-writes-allowlist.txt"

RUST_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("fs::write", re.compile(r"\bfs::write\s*\(")),
    ("File::create", re.compile(r"\bFile::(?:create|create_new|options)\s*\(")),
    ("OpenOptions writing", re.compile(r"\.(?:write|create|create_new|append|truncate)\(\s*true\s*\)")),
    ("OpenOptions writing", re.compile(r"\.read\([^)]*\)\s*\.write\(\s*(?!false\b)[A-Za-z_]\w*\s*\)")),
    ("fs::copy/rename/link", re.compile(r"\bfs::(?:copy|rename|hard_link|soft_link)\s*\(")),
    ("symbolic link", re.compile(r"\b(?:unix::fs::symlink|symlink_file|symlink_dir)\s*\(")),
    ("tempfile", re.compile(r"\btempfile::|\bNamedTempFile\b|\.persist\s*\(")),
    ("raw create/rename", re.compile(r"\b(?:renameat\w*|linkat|O_CREAT|OFlags::CREATE)\b")),
]

PY_ALWAYS = {
    "os.open", "os.replace", "os.rename", "os.renames", "os.link", "os.symlink", "os.mkfifo",
    "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move",
    "np.save", "np.savez", "np.savez_compressed", "np.savetxt",
    "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt",
    "tempfile.mkstemp", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile",
    "tempfile.SpooledTemporaryFile", "tempfile.mkdtemp",
}
PY_METHODS = {"write_text", "write_bytes", "touch", "rename", "tofile", "symlink_to", "hardlink_to"}
#: Calls with a mode argument: (position of the mode, modes that only read).
PY_MODED = {
    "open": (1, "r"), "io.open": (1, "r"), "builtins.open": (1, "r"),
    "np.memmap": (2, "r c readonly copyonwrite"), "numpy.memmap": (2, "r c readonly copyonwrite"),
    "open_memmap": (1, "r c"), "np.lib.format.open_memmap": (1, "r c"),
    "zipfile.ZipFile": (1, "r"), "ZipFile": (1, "r"),
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    text: str

    def key(self) -> tuple[str, str]:
        return (self.path, self.text)


# ---- Rust ------------------------------------------------------------------


def _strip_comment(line: str) -> str:
    """The line without a `//` comment (a `//` inside a string stays)."""
    in_string = False
    escaped = False
    for i, ch in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif line.startswith("//", i):
            return line[:i]
    return line


def _rust_code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, code) without comments and without `#[cfg(test)]` items."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    skip_depth: int | None = None
    pending_test = False
    in_block_comment = False
    for number, raw in enumerate(lines, 1):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        while "/*" in _strip_comment(line):
            head, rest = line.split("/*", 1)
            if "*/" in rest:
                line = head + rest.split("*/", 1)[1]
            else:
                line = head
                in_block_comment = True
        code = _strip_comment(line)
        if skip_depth is not None:
            skip_depth += code.count("{") - code.count("}")
            if skip_depth <= 0:
                skip_depth = None
            continue
        if re.match(r"\s*#\[cfg\(test\)\]", code):
            pending_test = True
            continue
        if pending_test:
            if code.strip().startswith("#["):
                continue
            pending_test = False
            depth = code.count("{") - code.count("}")
            if depth > 0:
                skip_depth = depth
            # A one-line item (`use ...;`, `fn f() {}`) is skipped whole.
            continue
        out.append((number, code))
    return out


def scan_rust(rel: str, text: str) -> list[Finding]:
    findings = []
    for number, code in _rust_code_lines(text):
        for rule, pattern in RUST_RULES:
            for match in pattern.finditer(code):
                findings.append(Finding(rel, number, rule, " ".join(match.group(0).split())))
    return findings


# ---- Python ----------------------------------------------------------------


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _mode_writes(call: ast.Call, position: int, reading: str) -> bool:
    mode = None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return False  # the default mode reads
    if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
        return True  # not a literal: cannot tell, so it counts
    value = mode.value
    if " " in reading:  # a set of whole modes (memmap's)
        return value not in reading.split()
    return any(ch in value for ch in "wax+")


def scan_python(rel: str, text: str) -> list[Finding]:
    try:
        tree = ast.parse(text, filename=rel)
    except SyntaxError as error:
        return [Finding(rel, error.lineno or 0, "unparsable Python", str(error.msg))]
    findings = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        snippet = ast.get_source_segment(text, node.func) or (name or method or "?")
        if name in PY_ALWAYS:
            findings.append(Finding(rel, node.lineno, "file-creating call", f"{snippet}("))
        elif name in PY_MODED or (name and name.endswith(".open_memmap")):
            position, reading = PY_MODED.get(name, PY_MODED["open_memmap"])
            if _mode_writes(node, position, reading):
                findings.append(Finding(rel, node.lineno, "opened for writing", f"{snippet}("))
        elif method in PY_METHODS:
            findings.append(Finding(rel, node.lineno, "file-creating method", f".{method}("))
    return findings


# ---- the check ---------------------------------------------------------------


def sources(root: Path) -> list[tuple[str, str]]:
    """(relative path, language) of every file scanned, sorted."""
    found: list[tuple[str, str]] = []
    rust_dirs = [root / tree for tree in RUST_TREES]
    for crate_src in sorted(root.glob(RUST_CRATE_SOURCES)):
        if crate_src.parent.name not in SKIPPED_CRATES:
            rust_dirs.append(crate_src)
    for tree in rust_dirs:
        for path in sorted(tree.rglob("*.rs")):
            rel = path.relative_to(root).as_posix()
            if rel != ATOMIC:
                found.append((rel, "rust"))
    for tree in PYTHON_TREES:
        for path in sorted((root / tree).rglob("*.py")):
            found.append((path.relative_to(root).as_posix(), "python"))
    return found


def read_allowlist(path: Path) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Entries `path | call | reason` (one a line, `#` comments) and problems."""
    entries: dict[tuple[str, str], str] = {}
    problems = []
    if not path.exists():
        return entries, problems
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [part.strip() for part in line.split("|", 2)]
        if len(parts) != 3 or not all(parts):
            problems.append(f"{path}:{number}: an entry is `path | call | reason`, all three given: {line!r}")
            continue
        entries[(parts[0], " ".join(parts[1].split()))] = parts[2]
    return entries, problems


def check(root: Path, allowlist: Path, out=sys.stdout) -> int:
    files = sources(root)
    if not files:
        print(f"FAILED: no source file found under {root} (scanned none: a moved tree?)", file=out)
        return 1
    findings: list[Finding] = []
    for rel, language in files:
        text = (root / rel).read_text(encoding="utf-8")
        findings.extend(scan_rust(rel, text) if language == "rust" else scan_python(rel, text))
    entries, problems = read_allowlist(allowlist)
    used = set()
    unlisted = []
    for finding in findings:
        if finding.key() in entries:
            used.add(finding.key())
        else:
            unlisted.append(finding)
    stale = [key for key in entries if key not in used]
    for finding in unlisted:
        problems.append(
            f"{finding.path}:{finding.line}: {finding.rule}: `{finding.text}` writes a file outside "
            f"the atomic commit ({ATOMIC}); write through npy_mmap::AtomicFile (the CLI: "
            f"output::create), or list it in {allowlist.name} with its reason"
        )
    for path, text in stale:
        problems.append(f"{allowlist.name}: `{path} | {text}` matches no call (remove the stale entry)")
    rust = sum(1 for _, language in files if language == "rust")
    print(
        f"check-writes: {len(files)} files ({rust} Rust, {len(files) - rust} Python), "
        f"{len(findings)} file-writing calls, {len(used)} allowlisted",
        file=out,
    )
    for problem in problems:
        print(f"FAILED: {problem}", file=out)
    return 1 if problems else 0


# ---- self-test -----------------------------------------------------------------

BAD_RUST = [
    'std::fs::write(path, text)?;',
    'let f = File::create(&path)?;',
    'let f = std::fs::File::create_new(&path)?;',
    'let o = std::fs::OpenOptions::new().write(true).open(p)?;',
    'options.create(true);',
    'options.append(true);',
    'options.read(true).write(write);',
    'std::fs::copy(a, b)?;',
    'std::fs::rename(a, b)?;',
    'std::os::unix::fs::symlink(a, b)?;',
    'let spool = tempfile::tempfile()?;',
    'let flags = libc::O_CREAT | libc::O_WRONLY;',
    'let s = "file://x"; std::fs::write(s, b"")?; // a comment after the call',
]
BAD_PYTHON = [
    'open(path, "w")',
    'open(path, mode="ab")',
    'open(path, "r+b")',
    'open(path, mode)',
    'import io\nio.open(path, "xb")',
    'import os\nos.replace(a, b)',
    'import shutil\nshutil.copyfile(a, b)',
    'path.write_text("x")',
    'array.tofile(path)',
    'import numpy as np\nnp.save(path, array)',
    'import numpy as np\nnp.memmap(path, dtype="u1", mode="w+", shape=(3,))',
    'import zipfile\nzipfile.ZipFile(path, "w")',
    'import tempfile\ntempfile.NamedTemporaryFile(dir=folder)',
]
CLEAN_RUST = '''//! Mentions std::fs::write(path) and File::create(p) in docs only.
/// ```
/// std::fs::write(&path, b"doc example")?;
/// ```
pub fn f(p: &std::path::Path) -> std::io::Result<std::fs::File> {
    let url = "file:///x"; // fs::write( in a trailing comment
    let _ = url;
    /* File::create(p) in a block comment */
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(false);
    options.open(p)
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {
        std::fs::write("x", b"tests may write").unwrap();
        if true {
            std::fs::File::create("y").unwrap();
        }
    }
}
'''
CLEAN_PYTHON = '''"""Docs may say np.save(path) and open(path, "w")."""
import numpy as np

def f(path):
    # open(path, "w") in a comment
    with open(path, "rb") as fid:
        return np.memmap(fid, dtype="u1", mode="r"), open(path).read()
'''


def _tree(files: dict[str, str]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="check-writes-"))
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def self_test() -> int:
    import io
    import shutil

    failures = []

    def run(files: dict[str, str], allowlist: str = "") -> tuple[int, str]:
        root = _tree(files)
        try:
            (root / "allow.txt").write_text(allowlist)
            out = io.StringIO()
            code = check(root, root / "allow.txt", out)
            return code, out.getvalue()
        finally:
            shutil.rmtree(root)

    rust_file = "crates/demo/src/lib.rs"
    python_file = "crates/npy-python/python/demo/mod.py"
    for sample in BAD_RUST:
        code, out = run({rust_file: f"fn f() -> std::io::Result<()> {{\n    {sample}\n    Ok(())\n}}\n"})
        if code != 1 or out.count("FAILED") != 1:
            failures.append(f"Rust sample not caught exactly once: {sample!r}\n{out}")
    for sample in BAD_PYTHON:
        code, out = run({python_file: sample + "\n"})
        if code != 1 or out.count("FAILED") != 1:
            failures.append(f"Python sample not caught exactly once: {sample!r}\n{out}")
    code, out = run({rust_file: CLEAN_RUST, python_file: CLEAN_PYTHON})
    if code != 0:
        failures.append(f"clean samples flagged:\n{out}")
    # The door itself and skipped crates are not scanned.
    code, out = run({
        ATOMIC: "fn f() { std::fs::rename(a, b); }\n",
        "crates/npy-bench/src/lib.rs": "fn f() { std::fs::write(a, b); }\n",
        rust_file: "fn f() {}\n",
    })
    if code != 0:
        failures.append(f"the atomic module or a skipped crate was scanned:\n{out}")
    # An allowlisted call passes; a stale entry, or one without a reason, fails.
    bad = {rust_file: "fn f() { std::fs::write(a, b); }\n"}
    code, out = run(bad, f"{rust_file} | fs::write( | the reason\n")
    if code != 0:
        failures.append(f"an allowlisted call failed:\n{out}")
    code, out = run(bad, f"{rust_file} | fs::write( | the reason\n{rust_file} | fs::copy( | gone\n")
    if code != 1 or "stale" not in out:
        failures.append(f"a stale allowlist entry passed:\n{out}")
    code, out = run(bad, f"{rust_file} | fs::write( |\n")
    if code != 1:
        failures.append(f"an allowlist entry without a reason passed:\n{out}")
    # Nothing scanned: a failure, not a pass.
    code, out = run({"README.md": "no sources\n"})
    if code != 1 or "no source file" not in out:
        failures.append(f"a tree with no sources passed:\n{out}")
    for failure in failures:
        print(f"SELF-TEST FAILED: {failure}")
    total = len(BAD_RUST) + len(BAD_PYTHON) + 6
    print(f"check-writes self-test: {total - len(failures)} of {total} cases as expected")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--allowlist", type=Path)
    parser.add_argument("--self-test", action="store_true", help="check the checker on samples")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    allowlist = args.allowlist or args.root / DEFAULT_ALLOWLIST
    return check(args.root, allowlist)


if __name__ == "__main__":
    sys.exit(main())
