#!/usr/bin/env python3
"""The public API of each library crate, read off rustdoc's HTML output.

Usage: scripts/api-list.py [DOC_DIR] > docs/api.txt
Run `cargo doc --workspace --no-deps --all-features` first. One line per
item (`kind path`) and per associated item (`method path::Type::name`), so
a diff of docs/api.txt shows every change to the public surface. `--counts`
prints a table of item counts per crate instead.
"""
import os
import re
import sys
from collections import Counter

CRATES = ["npy_core", "npy_mmap", "npy_remote", "npy_core_derive"]
KINDS = ("struct", "enum", "trait", "fn", "type", "constant", "macro", "derive", "static", "union", "attr")
ASSOC = re.compile(r'id="((?:method|tymethod|variant|associatedconstant|associatedtype|structfield)\.[A-Za-z0-9_]+)"')


def items(doc, crate):
    root = os.path.join(doc, crate)
    for dirpath, _dirs, files in os.walk(root):
        module = os.path.relpath(dirpath, doc).replace(os.sep, "::")
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            if name == "index.html":
                yield ("mod", module)
                continue
            kind, _, rest = name[:-5].partition(".")
            if kind not in KINDS:
                continue
            path = f"{module}::{rest}"
            html = open(os.path.join(dirpath, name), encoding="utf-8").read()
            if 'http-equiv="refresh"' in html:
                continue  # a redirect left by a private module's re-export
            yield (kind, path)
            if kind in ("struct", "enum", "trait", "union"):
                # Inherent items and a trait's own items only: trait impls
                # (Debug, From, ...) show in the trait's implementors.
                html = re.split(r'id="deref-methods', html)[0]
                for section in ("trait-implementations", "synthetic-implementations", "blanket-implementations", "implementors"):
                    html = html.split(f'id="{section}"')[0]
                seen = set()
                for anchor in ASSOC.findall(html):
                    akind, _, aname = anchor.partition(".")
                    if (akind, aname) in seen:
                        continue
                    seen.add((akind, aname))
                    yield (akind, f"{path}::{aname}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    doc = args[0] if args else "target/doc"
    crates = [c for c in CRATES if os.path.isdir(os.path.join(doc, c))]
    if "--counts" in sys.argv:
        print("| crate | modules | types (struct/enum/trait/alias) | functions | constants | associated items |")
        print("|---|---|---|---|---|---|")
        for crate in crates:
            c = Counter(kind for kind, _ in items(doc, crate))
            types = sum(c[k] for k in ("struct", "enum", "trait", "type", "union"))
            assoc = sum(c[k] for k in ("method", "tymethod", "variant", "associatedconstant", "associatedtype", "structfield"))
            print(f"| {crate} | {c['mod']} | {types} | {c['fn']} | {c['constant']} | {assoc} |")
        return
    for crate in crates:
        for kind, path in sorted(set(items(doc, crate)), key=lambda t: (t[1], t[0])):
            print(f"{kind} {path}")


main()
