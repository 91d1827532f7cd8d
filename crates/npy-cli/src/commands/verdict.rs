//! What `npy validate` finds in one file, shared by the checks of plain
//! arrays (`validate`) and of object arrays (`objects`).

/// The outcome of checking one file.
#[derive(Debug, Default)]
pub struct Verdict {
    /// What is wrong, one line each (the file is invalid when any).
    pub problems: Vec<String>,
    /// Bytes after the data: numpy and this library ignore them (an
    /// interrupted append leaves them), so they are a note, or a problem
    /// with `--strict`.
    pub trailing: Vec<String>,
    /// What was not checked (an object array's pickle without
    /// `--allow-pickle`): said on stderr, never a problem.
    pub notes: Vec<String>,
}

impl Verdict {
    pub fn invalid(problem: String) -> Verdict {
        Verdict {
            problems: vec![problem],
            ..Verdict::default()
        }
    }
}
