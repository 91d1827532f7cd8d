//! The Markdown cannot drift from the code: every file with Rust snippets is
//! compiled (included by `src/lib.rs`), and every API name written in
//! backticks in the prose (`NpzWriter::add`, `npy_mmap::load`,
//! `ErrorKind::Conflict`) is one that `docs/api.txt` lists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, docs/*.md and every crate's README.md. The CHANGELOG names
/// old APIs on purpose (what was renamed to what), so it is not checked.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in [root.join("docs"), root.join("crates")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            } else if path.join("README.md").is_file() {
                files.push(path.join("README.md"));
            }
        }
    }
    files.sort();
    files
}

/// Each library crate's root, whose `//!` docs are the crate's front page.
fn crate_docs() -> Vec<PathBuf> {
    ["npy-core", "npy-mmap", "npy-remote", "npy-cli"]
        .iter()
        .map(|krate| root().join("crates").join(krate).join("src/lib.rs"))
        .filter(|path| path.is_file())
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
        .replace("crates/npy-docs/../../", "")
}

#[test]
fn every_markdown_file_with_rust_snippets_is_compiled() {
    let lib = std::fs::read_to_string(root().join("crates/npy-docs/src/lib.rs")).unwrap();
    let mut missing = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        if text.contains("```rust") {
            let name = relative(&file);
            if !lib.contains(&format!("include_str!(\"../../../{name}\")")) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "Markdown with Rust snippets that crates/npy-docs/src/lib.rs does not include: {missing:?}"
    );
}

/// The public items, as `docs/api.txt` lists them (`kind path`).
fn api() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(root().join("docs/api.txt")).unwrap();
    let mut paths = BTreeSet::new();
    let mut roots = BTreeSet::new();
    for line in text.lines() {
        let Some((kind, path)) = line.split_once(' ') else {
            continue;
        };
        paths.insert(path.to_owned());
        let last = path.rsplit("::").next().unwrap_or(path);
        // Modules are left out: `io::Error` or `half::f16` in the prose
        // name std's and other crates' items, not ours.
        if matches!(kind, "struct" | "enum" | "trait" | "type") {
            roots.insert(last.to_owned());
        }
    }
    for krate in ["npy_core", "npy_mmap", "npy_remote"] {
        roots.insert(krate.to_owned());
    }
    (paths, roots)
}

/// Paths (`A::b::C`) in the inline code spans of `text`, outside fenced blocks.
fn inline_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (k, span) in line.split('`').enumerate() {
            if k % 2 == 0 {
                continue; // outside backticks
            }
            let mut current = String::new();
            let chars: Vec<char> = span.chars().collect();
            let mut i = 0;
            while i <= chars.len() {
                let c = chars.get(i).copied();
                let continues = match c {
                    Some(c) if c.is_alphanumeric() || c == '_' => true,
                    Some(':') if chars.get(i + 1) == Some(&':') && !current.is_empty() => {
                        current.push_str("::");
                        i += 2;
                        continue;
                    }
                    _ => false,
                };
                if continues {
                    current.push(c.unwrap());
                } else {
                    if current.contains("::") && !current.ends_with("::") {
                        found.push(current.clone());
                    }
                    current.clear();
                }
                i += 1;
            }
        }
    }
    found
}

/// Methods that types get from std's traits, which `docs/api.txt` does not list.
const STD_TRAIT_METHODS: [&str; 8] = [
    "default", "from", "clone", "into", "fmt", "eq", "deref", "try_from",
];

#[test]
fn every_api_name_in_the_docs_exists() {
    let (paths, roots) = api();
    let mut unknown = BTreeSet::new();
    for file in markdown_files().into_iter().chain(crate_docs()) {
        let text = std::fs::read_to_string(&file).unwrap();
        // A crate's own docs: its `//!` lines, Markdown too.
        let text = if file.extension().is_some_and(|e| e == "rs") {
            text.lines()
                .filter_map(|l| l.trim_start().strip_prefix("//!"))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            text
        };
        for path in inline_paths(&text) {
            let segments: Vec<&str> = path.split("::").collect();
            // Only names that start at one of our crates or types.
            if !roots.contains(segments[0]) {
                continue;
            }
            let last = segments[segments.len() - 1];
            // Methods of std's traits (`Locking::default`, `OpenOptions::from`)
            // are not listed item by item.
            if STD_TRAIT_METHODS.contains(&last) {
                continue;
            }
            // The last two segments must end some listed path; a path from a
            // crate's root may name a re-export (`npy_core::write_npy` is
            // `npy_core::io::write_npy`).
            let tail = segments[segments.len() - 2..].join("::");
            let known = paths.iter().any(|p| {
                p == &tail
                    || p.ends_with(&format!("::{tail}"))
                    || (p.starts_with(&format!("{}::", segments[0]))
                        && p.ends_with(&format!("::{last}")))
            });
            if !known {
                unknown.insert(format!("{}: {path}", relative(&file)));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "API names in the docs that docs/api.txt does not list (renamed or removed?):\n{}",
        unknown.into_iter().collect::<Vec<_>>().join("\n")
    );
}
