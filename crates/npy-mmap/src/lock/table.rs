//! The lock lanes, as data: one table says which lanes each kind of access
//! locks and which it tests, and everything else is derived from it: which
//! accesses admit each other ([`Access::admits`], used in this process and
//! across processes alike), what a lock found in a lane is called, and the
//! drawings in docs/SAFETY.md and docs/ARCHITECTURE.md (checked by a test
//! of this module).
//!
//! Each family of mappings locks its bytes in a *lane* of its own: the
//! mapped byte range shifted by the lane's offset, far past any data. An
//! opener takes its own locks, then tests the lanes of the families it
//! excludes and backs off if it finds a lock there. Two accesses are
//! refused together when their own locks conflict in the kernel, or when a
//! test of one finds a lock of the other. The take-then-check race needs
//! more: of two openers racing, the one that tests first may test before
//! the other took its locks, so a refused pair must conflict in the kernel
//! or *each* must find the other ([`check`], run by the tests over every
//! pair).

use crate::sys::LockKind::{self, Read as R, Write as W};

/// What a mapping does with its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Plain shared views: `r`, and `c` (whose unwritten pages show the file).
    Read,
    /// Plain writable views that reach the file: `r+`, a created file.
    Write,
    /// Atomic element views only: shared with other live mappings.
    Live,
    /// Lent to foreign code (numpy) that only reads: `r` and `c` of a
    /// [`ForeignArray`](crate::ForeignArray).
    ForeignRead,
    /// Lent to foreign code (numpy) that writes: `r+` and `w+` of a
    /// [`ForeignArray`](crate::ForeignArray).
    ForeignWrite,
}

/// A lane: where a family of mappings locks a copy of its byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Lane {
    /// The data bytes themselves: strict (Rust-reference) mappings.
    Data,
    /// Live (atomic) mappings.
    Live,
    /// Every foreign (numpy-style) mapping.
    Foreign,
    /// Foreign writers only (what strict readers test).
    ForeignWrite,
}

/// The distance between lanes, and so the most data bytes lockable (1 EiB).
pub(crate) const LANE_WIDTH: u64 = 1 << 60;

impl Lane {
    const ALL: [Lane; 4] = [Lane::Data, Lane::Live, Lane::Foreign, Lane::ForeignWrite];

    /// How far the lane lies past the data.
    pub(crate) const fn offset(self) -> u64 {
        match self {
            Lane::Data => 0,
            Lane::Live => 1 << 62,
            Lane::Foreign => (1 << 62) + LANE_WIDTH,
            Lane::ForeignWrite => (1 << 62) + 2 * LANE_WIDTH,
        }
    }

    #[cfg(test)]
    fn name(self) -> &'static str {
        match self {
            Lane::Data => "data",
            Lane::Live => "live",
            Lane::Foreign => "foreign",
            Lane::ForeignWrite => "foreign-write",
        }
    }

    /// What a lock in the lane is when several accesses take that lock.
    fn family(self) -> &'static str {
        match self {
            Lane::Data => "a strict (Rust-reference) mapping of the same bytes",
            Lane::Live => "a live (atomic) mapping of the same bytes",
            Lane::Foreign => "a numpy-style mapping of the same bytes",
            Lane::ForeignWrite => "a numpy-style read-write mapping of the same bytes",
        }
    }

    /// The lane that a lock found at `start` lies in.
    pub(crate) fn at(start: u64) -> Lane {
        Lane::ALL
            .into_iter()
            .rev()
            .find(|lane| start >= lane.offset())
            .unwrap_or(Lane::Data)
    }
}

/// One row of the table: an access, the locks it takes and the lanes it
/// tests (a write test finds every lock, a read test only write locks),
/// in the order it tests them (the first found is the one the message
/// names), and how it is named.
pub(crate) struct Row {
    pub(crate) access: Access,
    pub(crate) takes: &'static [(Lane, LockKind)],
    pub(crate) tests: &'static [(Lane, LockKind)],
    /// Wanted: "a read-write mapping".
    wanted: &'static str,
    /// Held, as an error names it: "a strict ... mapping of the same bytes".
    held: &'static str,
    /// Its name in the drawings and in the check's message.
    #[cfg_attr(not(test), allow(dead_code))]
    label: &'static str,
}

/// The table.
pub(crate) const TABLE: [Row; 5] = [
    Row {
        access: Access::Read,
        takes: &[(Lane::Data, R)],
        tests: &[(Lane::Live, W), (Lane::ForeignWrite, W)],
        wanted: "a read-only mapping",
        held: "a strict (Rust-reference) read-only mapping of the same bytes",
        label: "strict reader",
    },
    Row {
        access: Access::Write,
        takes: &[(Lane::Data, W)],
        // Foreign writers' own lane first, so that the message names them
        // as writers; the foreign lane then finds the readers.
        tests: &[(Lane::Live, W), (Lane::ForeignWrite, W), (Lane::Foreign, W)],
        wanted: "a read-write mapping",
        held: "a strict (Rust-reference) read-write mapping of the same bytes",
        label: "strict writer",
    },
    Row {
        access: Access::Live,
        takes: &[(Lane::Live, R)],
        tests: &[(Lane::Data, W), (Lane::ForeignWrite, W), (Lane::Foreign, W)],
        wanted: "a live (atomic) mapping",
        held: "a live (atomic) mapping of the same bytes",
        label: "live",
    },
    Row {
        access: Access::ForeignRead,
        takes: &[(Lane::Foreign, R)],
        tests: &[(Lane::Data, R), (Lane::Live, W)],
        wanted: "a numpy-style read-only mapping",
        held: "a numpy-style read-only mapping of the same bytes",
        label: "foreign reader",
    },
    Row {
        access: Access::ForeignWrite,
        takes: &[(Lane::Foreign, R), (Lane::ForeignWrite, R)],
        tests: &[(Lane::Data, W), (Lane::Live, W)],
        wanted: "a numpy-style read-write mapping",
        held: "a numpy-style read-write mapping of the same bytes",
        label: "foreign writer",
    },
];

/// Whether a test of kind `test` in a lane finds a lock of kind `lock` there.
fn finds(test: LockKind, lock: LockKind) -> bool {
    test == W || lock == W
}

/// Whether `a`'s own locks conflict in the kernel with `b`'s.
fn collide(a: &Row, b: &Row) -> bool {
    a.takes.iter().any(|(lane, kind)| {
        b.takes
            .iter()
            .any(|(other, theirs)| lane == other && (*kind == W || *theirs == W))
    })
}

/// Whether a test of `a` finds a lock that `b` takes.
fn sees(a: &Row, b: &Row) -> bool {
    a.tests.iter().any(|(lane, test)| {
        b.takes
            .iter()
            .any(|(other, lock)| lane == other && finds(*test, *lock))
    })
}

fn refuses(a: &Row, b: &Row) -> bool {
    collide(a, b) || sees(a, b) || sees(b, a)
}

/// The soundness of a table: every pair it refuses conflicts in the kernel
/// or has each side find the other (else two openers racing could both
/// get in), every access appears once, and refusal is the same both ways
/// round (it is, by construction; checked all the same).
#[cfg(test)]
pub(crate) fn check(table: &[Row]) -> Result<(), String> {
    for a in table {
        if table.iter().filter(|row| row.access == a.access).count() != 1 {
            return Err(format!("{:?} has more than one row", a.access));
        }
        for b in table {
            if refuses(a, b) && !collide(a, b) && !(sees(a, b) && sees(b, a)) {
                let (seer, blind) = if sees(a, b) { (a, b) } else { (b, a) };
                return Err(format!(
                    "{} and {} are refused, but only the {} finds the other: racing, the {} \
                     can test before the {} takes its locks, and both get in",
                    seer.label, blind.label, seer.label, blind.label, seer.label
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn row(access: Access) -> &'static Row {
    // Every access has its row (checked by the tests).
    TABLE
        .iter()
        .find(|row| row.access == access)
        .unwrap_or(&TABLE[0])
}

impl Access {
    /// Whether a mapping with this access and one with `other` may share
    /// bytes (derived from the table; symmetric).
    pub(crate) fn admits(self, other: Access) -> bool {
        !refuses(row(self), row(other))
    }

    /// What it is, wanted: "a read-write mapping".
    pub(crate) fn describe(self) -> &'static str {
        row(self).wanted
    }

    /// What it is, held, as an error names it.
    pub(crate) fn describe_held(self) -> &'static str {
        row(self).held
    }
}

/// What holds a lock of `kind` found in `lane`: the one access that takes
/// such a lock, or the lane's family when several do.
pub(crate) fn holder(lane: Lane, kind: LockKind) -> &'static str {
    let mut takers = TABLE.iter().filter(|row| row.takes.contains(&(lane, kind)));
    match (takers.next(), takers.next()) {
        (Some(only), None) => only.held,
        _ => lane.family(),
    }
}

/// Who admits whom as docs/SAFETY.md's table says it: the first word of
/// each cell ("yes: nobody writes", "no: two `&mut`"), rows and columns in
/// the table's order.
#[cfg(test)]
fn admissions_in(markdown: &str) -> Vec<Vec<bool>> {
    markdown
        .lines()
        .filter(|line| line.starts_with("| **"))
        .map(|line| {
            line.split('|')
                .skip(2)
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(|cell| cell.starts_with("yes"))
                .collect()
        })
        .collect()
}

/// The lanes and each access's locks and tests, as docs/ARCHITECTURE.md
/// shows them.
#[cfg(test)]
pub(crate) fn lanes_drawing() -> String {
    let kind = |k: LockKind| if k == R { "R" } else { "W" };
    let list = |items: &[(Lane, LockKind)]| {
        items
            .iter()
            .map(|(lane, k)| format!("{} {}", lane.name(), kind(*k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::from("lane           offset of the lock\n");
    for lane in Lane::ALL {
        let offset = match lane.offset() {
            0 => "0".to_string(),
            o => {
                let (lanes, rest) = (o / LANE_WIDTH, o % LANE_WIDTH);
                debug_assert_eq!(rest, 0);
                format!("{lanes} x 2^60")
            }
        };
        out.push_str(&format!("{:<15}{offset}\n", lane.name()));
    }
    out.push_str(
        "turn           2^63 - 2 (a waiting writer W; newcomers holding nothing wait)\n\n",
    );
    out.push_str(&format!(
        "{:<16}{:<34}{}\n",
        "opener", "takes", "backs off if it finds (R: a write lock, W: any lock)"
    ));
    for row in &TABLE {
        out.push_str(&format!(
            "{:<16}{:<34}{}\n",
            row.label,
            list(row.takes),
            list(row.tests)
        ));
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sound_for_every_pair() {
        check(&TABLE).unwrap();
        for a in &TABLE {
            for b in &TABLE {
                assert_eq!(a.access.admits(b.access), b.access.admits(a.access));
            }
        }
    }

    /// The check catches a bad cell: a strict reader that no longer tests
    /// the foreign writers' lane is still refused beside them (they find
    /// its lock), but only one way, which a race gets through.
    #[test]
    fn a_table_with_a_one_sided_refusal_fails_the_check() {
        const BAD: [Row; 2] = [
            Row {
                access: Access::Read,
                takes: &[(Lane::Data, R)],
                tests: &[(Lane::Live, W)],
                wanted: "",
                held: "",
                label: "strict reader",
            },
            Row {
                access: Access::ForeignWrite,
                takes: &[(Lane::Foreign, R), (Lane::ForeignWrite, R)],
                tests: &[(Lane::Data, W), (Lane::Live, W)],
                wanted: "",
                held: "",
                label: "foreign writer",
            },
        ];
        let error = check(&BAD).unwrap_err();
        assert!(
            error.contains("only the foreign writer finds the other"),
            "{error}"
        );
    }

    #[test]
    fn every_lock_found_names_its_holder() {
        for row in &TABLE {
            for (lane, kind) in row.takes {
                assert_eq!(Lane::at(lane.offset() + 5), *lane);
                let named = holder(*lane, *kind);
                assert!(named == row.held || named == lane.family(), "{named}");
            }
        }
        assert!(holder(Lane::Data, W).contains("read-write"));
        assert!(holder(Lane::Data, R).contains("read-only"));
        assert!(holder(Lane::Foreign, R).contains("numpy-style mapping"));
    }

    /// The docs show this table (the mechanism of scripts/rooms.py's stack
    /// drawings): after a marker `<!-- lock table: NAME -->`, SAFETY.md's
    /// table of who admits whom (with the reason in each cell) and
    /// ARCHITECTURE.md's drawing of the lanes in a ```text fence, which
    /// `NPY_WRITE_DOCS=1 cargo test -p npy-mmap drawings` redraws.
    #[test]
    fn the_docs_show_the_drawings_of_this_table() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        // The block after the marker (and `fence`), up to `end`.
        let block = |file: &str, name: &str, fence: &str, end: &str| {
            let path = docs.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let marker = format!("<!-- lock table: {name} -->\n{fence}");
            let start = text
                .find(&marker)
                .unwrap_or_else(|| panic!("{file} has no {marker:?}"))
                + marker.len();
            let end = start + text[start..].find(end).expect("the block's end") + end.len();
            (path, text, start..end)
        };

        let (_, text, range) = block("SAFETY.md", "admissions", "", "\n\n");
        let derived: Vec<Vec<bool>> = TABLE
            .iter()
            .map(|a| TABLE.iter().map(|b| a.access.admits(b.access)).collect())
            .collect();
        assert_eq!(
            admissions_in(&text[range]),
            derived,
            "docs/SAFETY.md's table of who admits whom is not the code's (rows and columns: {:?})",
            TABLE.iter().map(|row| row.label).collect::<Vec<_>>()
        );

        let (path, text, range) = block("ARCHITECTURE.md", "lanes", "```text\n", "```");
        let want = lanes_drawing() + "\n```";
        if text[range.clone()] != want {
            if std::env::var_os("NPY_WRITE_DOCS").is_some() {
                let mut new = text.clone();
                new.replace_range(range, &want);
                std::fs::write(&path, new).unwrap();
            } else {
                panic!(
                    "docs/ARCHITECTURE.md's drawing of the lanes is not the code's: run \
                     NPY_WRITE_DOCS=1 cargo test -p npy-mmap drawings\n{want}"
                );
            }
        }
    }
}
