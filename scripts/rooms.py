#!/usr/bin/env python3
"""File-level import graph of each crate, and its circles.

    scripts/rooms.py            # every library crate: files, imports, upward imports, circles
    scripts/rooms.py --check    # exit 1 on a circle not in KNOWN, or a KNOWN one gone, or a
                                # file over LIMIT lines not in LONG (or in LONG and no longer over),
                                # or a stale drawing of a stack in docs/ARCHITECTURE.md
    scripts/rooms.py --write-docs   # redraw the stacks in docs/ARCHITECTURE.md

A file's room is its module path (`src/npz/read.rs` is `npz::read`,
`src/literal/mod.rs` is `literal`). An import is any
`crate::a::b` path in the file (use lines, and paths in code), resolved to
the deepest module that exists; `super::` and `self::` paths, and paths
through a child module (`reduce::Grid` in `render/mod.rs`), are resolved
against the file's own module. A module's `mod.rs` declaring its children
(`mod reduce;`) is not an import, using them is: a parent that uses a child
which uses the parent is a circle like any other. Tests (`#[cfg(test)]` modules at the
end of a file) are left out: a test may look at any room.
"""
import contextlib
import io
import os
import re
import sys
import tempfile

CRATES = ["npy-core", "npy-core-derive", "npy-mmap", "npy-remote", "npy-cli", "npy-python"]

# Circles allowed for a stated reason, as {(crate, frozenset of modules)}:
# none now (npy-core's `io` <-> `pickle` <-> `source` ended when `NpyArray`
# and `PyValue`, two types that contain each other, moved into one room,
# `array.rs`). Any circle not listed fails the check; so does a listed one's
# disappearance, so that an entry cannot outlive its reason.
KNOWN = set()
# One concern per file: a library file longer than this (before its tests)
# fails the check, unless it is data (generated tables) listed in DATA.
# LONG lists files still over it, like KNOWN: a listed file that shrinks
# under the limit fails too, so that the list only ever gets shorter.
LIMIT = 800
DATA = {("npy-cli", "render::colormap_tables")}  # matplotlib's colormaps, as numbers
LONG = set()
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


def physical_lines(path):
    """The file's lines before its trailing test module, blank and comment
    lines included: what the LIMIT counts (what a reader scrolls through)."""
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod \w+", text, re.M)
    return len((text[: cut.start()] if cut else text).splitlines())


def through_root(module, path, roots):
    """Names a file below the crate root reaches through the root's
    re-exports (`crate::MappedArray`) instead of the module that defines
    them (`crate::array::MappedArray`): a re-export is the crate's face to
    its users, not a way in for its own rooms."""
    if not module:
        return []
    names = []
    for parts in paths_in(code_of(path)):
        if parts[0] == "crate" and len(parts) >= 2 and parts[1] in roots:
            names.append(parts[1])
    return sorted(set(names))


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


def root_items(mods):
    """Names the crate root file defines itself (`fn one_line`, `struct X`):
    `crate::one_line` elsewhere is an import of the root."""
    root = mods.get("")
    if root is None:
        return set()
    code = code_of(root)
    return set(re.findall(r"^(?:pub(?:\([^)]*\))? )?(?:fn|struct|enum|const|static|type|trait|macro_rules!) (\w+)", code, re.M))


def paths_in(code):
    """Every `a::b::c` path of the code, as lists of names, with `use`
    groups expanded (`super::{a, b::c}` is `super::a` and `super::b::c`)."""
    found = []
    group = re.compile(r"(?<![\w:])((?:\w+::)+)\{([^{}]*)\}")
    while True:
        match = group.search(code)
        if match is None:
            break
        prefix = match.group(1)
        expanded = []
        for item in match.group(2).split(","):
            item = item.split(" as ")[0].strip()
            if item == "self":
                expanded.append(prefix[:-2])
            elif item:
                expanded.append(prefix + item)
        # Replaced by its paths, so that nested groups expand outward.
        code = code[: match.start()] + " " + ", ".join(expanded) + " " + code[match.end() :]
    for match in re.finditer(r"(?<![\w:])(\w+(?:::\w+)+)", code):
        found.append(match.group(1).split("::"))
    return found


def imports(module, path, mods, roots):
    """The rooms `module`'s file imports: `crate::` paths (resolved through
    the root's re-exports and its own items), `super::` and `self::` paths,
    and paths through the module's children."""
    here = module.split("::") if module else []
    items = root_items(mods)
    found = set()
    # A re-export (`pub use reduce::Grid;`) says what the module shows, as
    # `mod reduce;` does: declaring, not depending; unless the file itself
    # uses a name it re-exports (`lib.rs`'s `open()` calling `OpenOptions`).
    full = code_of(path)
    reexport = re.compile(r"\bpub(?:\([^)]*\))? use [^;]*;")
    code = reexport.sub("", full)
    used = []
    for statement in reexport.findall(full):
        for parts in paths_in(statement[statement.index("use ") + 4 :]):
            alias = re.search(r"\b" + re.escape(parts[-1]) + r"\s+as\s+(\w+)", statement)
            name = alias.group(1) if alias else parts[-1]
            if re.search(r"\b" + re.escape(name) + r"\b", code):
                used.append(parts)
    for parts in paths_in(code) + used:
        head, rest = parts[0], parts[1:]
        if head == "crate":
            target = resolve(rest, mods, roots)
            if target is None and rest and rest[0] in items:
                target = ""
        elif head == "super":
            ups = 1
            while rest and rest[0] == "super":
                ups, rest = ups + 1, rest[1:]
            # A file's own module is `here`; `super` is its parent.
            target = resolve(here[: max(0, len(here) - ups)] + rest, mods, {})
        elif head == "self":
            target = resolve(here + rest, mods, {})
        else:
            # Through a child module (`reduce::Grid` in `render/mod.rs`);
            # other paths (`std::io`, a dependency) resolve to nothing.
            target = resolve(here + parts, mods, {}) if "::".join(here + [head]) in mods else None
        if target is not None:
            found.add(target)
    # A file does not depend on itself.
    return {t for t in found if t != module}


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


def graph_of(src):
    """The crate's files ({module: path}) and who imports whom."""
    mods = modules(src)
    roots = reexports(mods)
    return mods, {m: imports(m, p, mods, roots) for m, p in mods.items()}


def layers(graph):
    """The stack, bottom first: a room's floor is one above the highest
    room it imports (a known circle shares one floor)."""
    component = {m: frozenset([m]) for m in graph}
    for circle in cycles(graph):
        for m in circle:
            component[m] = frozenset(circle)
    floor = {}

    def height(group):
        if group not in floor:
            floor[group] = 0  # a circle's own edges do not lift it
            below = {component[t] for m in group for t in graph[m]} - {group}
            floor[group] = 1 + max((height(g) for g in below), default=-1)
        return floor[group]

    stack = {}
    for group in set(component.values()):
        stack.setdefault(height(group), []).extend(group)
    return [sorted(stack[level], key=lambda m: m or "lib") for level in sorted(stack)]


def drawing(crate, src):
    """The stack as docs/ARCHITECTURE.md shows it: one line per floor."""
    _, graph = graph_of(src)
    lines = [f"{crate}, bottom first: a room imports only rooms on lower floors"]
    for level, rooms in enumerate(layers(graph)):
        lines.append(f"{level:>2}  " + ", ".join(m or "lib" for m in rooms))
    return "\n".join(lines)


def doc_blocks(text):
    """{crate: (start, end)} of the generated drawings in a Markdown text:
    a ``` fence right after `<!-- rooms.py: CRATE -->`."""
    found = {}
    for match in re.finditer(r"<!-- rooms\.py: ([\w-]+) -->\n```text\n(.*?)```\n", text, re.S):
        found[match.group(1)] = (match.start(2), match.end(2))
    return found


def redraw(text, crates):
    """`text` with the drawings of `crates` ({name: src}) redrawn, and what
    was wrong with them (one line each; none when the text was current)."""
    problems = []
    for crate, src in crates.items():
        blocks = doc_blocks(text)
        if crate not in blocks:
            problems.append(f"no drawing of {crate} (<!-- rooms.py: {crate} --> and a ```text fence)")
            continue
        start, end = blocks[crate]
        want = drawing(crate, src) + "\n"
        if text[start:end] != want:
            problems.append(f"the drawing of {crate} is out of date: run scripts/rooms.py --write-docs")
            text = text[:start] + want + text[end:]
    return text, problems


def check_doc(write):
    """docs/ARCHITECTURE.md draws every crate's stack as this script sees
    it; with `write`, redraws them. Returns whether the doc is current."""
    path = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
    text = open(path, encoding="utf-8").read()
    crates = {}
    for crate in CRATES:
        src = os.path.join(ROOT, "crates", crate, "src")
        if len(modules(src)) > 1:  # one file: nothing to draw
            crates[crate] = src
    text, problems = redraw(text, crates)
    if write:
        open(path, "w", encoding="utf-8").write(text)
    else:
        for problem in problems:
            print(f"FAILED: docs/ARCHITECTURE.md: {problem}", file=sys.stderr)
    return write or not problems


def check_crate(crate, src):
    """Prints the crate's graph; returns whether it breaks a rule."""
    failed = False
    mods, graph = graph_of(src)
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
    roots = reexports(mods)
    for module, path in sorted(mods.items()):
        # Every crate's rooms import each other by the defining module,
        # never through the root's re-exports.
        via_root = through_root(module, path, roots)
        if via_root:
            print(f"FAILED: {crate}: {os.path.relpath(path, ROOT)} imports the crate root's re-exports {via_root}: import them from the modules that define them", file=sys.stderr)
            failed = True
        length = physical_lines(path)
        listed = (crate, module) in LONG
        if length > LIMIT and (crate, module) not in DATA:
            print(f"  long: {module or 'lib'}: {length} lines" + (" (known)" if listed else ""))
            if not listed:
                print(f"FAILED: {crate}: {os.path.relpath(path, ROOT)} has {length} lines before its tests (at most {LIMIT} physical lines: one concern per file)", file=sys.stderr)
                failed = True
        elif listed:
            print(f"FAILED: {crate}: {module} is no longer over {LIMIT} lines: remove it from LONG", file=sys.stderr)
            failed = True
    for known_crate, known in KNOWN:
        if known_crate == crate and (crate, known) not in found:
            print(f"FAILED: {crate}: the known circle {sorted(known)} is gone: remove it from KNOWN", file=sys.stderr)
            failed = True
    return failed


def self_test():
    """The check fails on each thing it looks for (so that it cannot pass
    by seeing nothing): a circle through `crate::`, one through a parent's
    use of its child, one through the crate root's own items, a long file
    (in code or in comments: physical lines count), a room importing the
    root's re-exports; and passes on a clean stack."""

    cases = {
        "clean": {"lib.rs": "mod a;\nmod b;\npub use a::A;\n", "a.rs": "pub struct A;\n", "b.rs": "use crate::a::A;\n"},
        "crate paths": {"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n", "b.rs": "use crate::a::A;\npub struct B;\n"},
        "parent and child": {"lib.rs": "mod r;\n", "r/mod.rs": "mod c;\nuse c::C;\npub struct P;\n", "r/c.rs": "use super::P;\npub struct C;\n"},
        "use groups": {"lib.rs": "mod r;\n", "r/mod.rs": "mod c;\nfn f() { c::g(); }\npub struct P;\n", "r/c.rs": "use super::{P, f as h};\npub fn g() {}\n"},
        "root items": {"main.rs": "mod a;\nfn helper() {}\nfn main() { a::run(); }\n", "a.rs": "pub fn run() { crate::helper(); }\n"},
        "long file": {"lib.rs": "mod a;\n", "a.rs": "\n" * (LIMIT + 1)},
        "long in comments": {"lib.rs": "mod a;\n", "a.rs": "// why\n" * (LIMIT + 1)},
        "through the root": {"lib.rs": "mod a;\nmod b;\npub use a::A;\n", "a.rs": "pub struct A;\n", "b.rs": "use crate::A;\n"},
        "through the root in code": {"lib.rs": "mod a;\nmod b;\npub use a::{A, f};\n", "a.rs": "pub struct A;\npub fn f() {}\n", "b.rs": "macro_rules! m { () => { $crate::f() }; }\n"},
    }
    ok = True
    for name, files in cases.items():
        with tempfile.TemporaryDirectory() as src:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
                with open(os.path.join(src, rel), "w", encoding="utf-8") as out:
                    out.write(text)
            # Its own report is not this run's: kept out of the log.
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                failed = check_crate(f"self-test: {name}", src)
        if failed != (name != "clean"):
            print(f"FAILED: rooms.py self-test: {name}: the check {'failed' if failed else 'passed'}", file=sys.stderr)
            ok = False
    # The drawings: a current one passes, a stale or missing one fails.
    with tempfile.TemporaryDirectory() as src:
        for rel, text in cases["clean"].items():
            with open(os.path.join(src, rel), "w", encoding="utf-8") as out:
                out.write(text)
        current = "<!-- rooms.py: t -->\n```text\n" + drawing("t", src) + "\n```\n"
        stale = current.replace(" 1  ", " 1  x, ")
        for name, text, wanted in [("current drawing", current, 0), ("stale drawing", stale, 1), ("no drawing", "", 1)]:
            if len(redraw(text, {"t": src})[1]) != wanted:
                print(f"FAILED: rooms.py self-test: {name}", file=sys.stderr)
                ok = False
    if ok:
        print(f"self-test: the check catches each of {len(cases) + 1} breaches and passes a clean stack")
    return ok


def main():
    check = "--check" in sys.argv
    failed = False
    if check and not self_test():
        sys.exit(1)
    for crate in CRATES:
        failed |= check_crate(crate, os.path.join(ROOT, "crates", crate, "src"))
    if "--write-docs" in sys.argv:
        check_doc(write=True)
    elif not check_doc(write=False):
        failed = True
    if check and failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
