#!/usr/bin/env python3
"""File-level import graph of each crate, and its circles.

    scripts/rooms.py            # every library crate: files, imports, upward imports, circles
    scripts/rooms.py --check    # exit 1 on a circle not in KNOWN, or a KNOWN one gone (CI)

A file's room is its module path (`src/npz/read.rs` is `npz::read`,
`src/literal/mod.rs` is `literal`). An import is any
`crate::a::b` path in the file (use lines, and paths in code), resolved to
the deepest module that exists; `super::` is resolved against the file's
own module. A module's `mod.rs`/`lib.rs` declaring its children is not an
import (declaring is not depending). Tests (`#[cfg(test)]` modules at the
end of a file) are left out: a test may look at any room.
"""
import os
import re
import sys

CRATES = ["npy-core", "npy-mmap", "npy-remote", "npy-cli"]

# Circles allowed for a stated reason, as {(crate, frozenset of modules)}:
# none now (npy-core's `io` <-> `pickle` <-> `source` ended when `NpyArray`
# and `PyValue`, two types that contain each other, moved into one room,
# `array.rs`). Any circle not listed fails the check; so does a listed one's
# disappearance, so that an entry cannot outlive its reason.
KNOWN = set()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def modules(src):
    """{module path: file} for every .rs file under src."""
    found = {}
    for dirpath, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            found["::".join(rel)] = path
    return found


def code_of(path):
    """The file's text without comments, strings and its trailing test module."""
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod \w+", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def reexports(mods):
    """{name: module} for the crate root's `pub use module::{Name, ...}`:
    `crate::MappedArray` is an import of the module that defines it."""
    root = mods.get("")
    found = {}
    if root is None:
        return found
    code = code_of(root)
    for match in re.finditer(r"\bpub use ((?:\w+::)*)(?:\{([^}]*)\}|(\w+))\s*;", code):
        prefix = [p for p in match.group(1).split("::") if p]
        names = match.group(2) or match.group(3)
        module = resolve(prefix, mods, {})
        if module is None:
            continue
        for item in names.split(","):
            words = re.findall(r"\w+", item)
            if words:
                # `Name as Other` is reached as `crate::Other`.
                found[words[-1]] = resolve(prefix + words[:1], mods, {}) or module
    return found


def resolve(path, mods, roots):
    """The deepest existing module that `path` (a list of names) starts
    with, or the module a root re-export names."""
    for end in range(len(path), 0, -1):
        candidate = "::".join(path[:end])
        if candidate in mods:
            return candidate
    if path and path[0] in roots:
        return roots[path[0]]
    return None


def imports(module, path, mods, roots):
    code = code_of(path)
    found = set()
    here = module.split("::") if module else []
    # Expand `use crate::{a, b::c}` groups one level (enough for this code base).
    for match in re.finditer(r"\bcrate::\{([^}]*)\}", code):
        for item in match.group(1).split(","):
            names = [n for n in re.findall(r"\w+", item.split(" as ")[0])]
            if names:
                target = resolve(names, mods, roots)
                if target is not None:
                    found.add(target)
    for match in re.finditer(r"\b(crate|super(?:::super)*)::((?:\w+::)*\w+)", code):
        head, rest = match.group(1), match.group(2).split("::")
        if head == "crate":
            base = []
        else:
            ups = head.count("super")
            # A file's own module is `here`; `super` is its parent.
            base = here[: max(0, len(here) - ups)]
        target = resolve(base + rest, mods, roots if head == "crate" else {})
        if target is not None:
            found.add(target)
    # A file does not depend on itself, nor on its own children's declarations.
    return {t for t in found if t != module and not t.startswith(module + "::" if module else "\0")}


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    check = "--check" in sys.argv
    failed = False
    for crate in CRATES:
        src = os.path.join(ROOT, "crates", crate, "src")
        mods = modules(src)
        roots = reexports(mods)
        graph = {m: imports(m, p, mods, roots) for m, p in mods.items()}
        # A parent module's file may use its children (it declares them);
        # an edge from a child to an ancestor's file counts.
        edges = sum(len(v) for v in graph.values())
        lines = sum(len(code_of(p).splitlines()) for p in mods.values())
        circles = cycles(graph)
        print(f"{crate}: {len(mods)} files, {lines} lines of code before tests, {edges} file-to-file imports, {len(circles)} circle(s)")
        found = set()
        for circle in circles:
            known = (crate, frozenset(circle)) in KNOWN
            found.add((crate, frozenset(circle)))
            print("  circle: " + " <-> ".join(m or "lib" for m in circle) + (" (known)" if known else ""))
            if not known:
                print(f"FAILED: {crate}: files import each other in a circle (docs/ARCHITECTURE.md: the stacks)", file=sys.stderr)
                failed = True
        for known_crate, known in KNOWN:
            if known_crate == crate and (crate, known) not in found:
                print(f"FAILED: {crate}: the known circle {sorted(known)} is gone: remove it from KNOWN", file=sys.stderr)
                failed = True
    if check and failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
