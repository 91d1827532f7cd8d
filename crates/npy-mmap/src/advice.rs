//! [`Advice`]: access-pattern hints for mapped bytes (`madvise`), shared by
//! every kind of mapping (its own module, so the mappings and the system
//! layer that applies the hints depend on it and not on each other).

/// A hint to the kernel about how the mapped bytes will be accessed
/// (`madvise`). Hints never change what the bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Advice {
    /// No special treatment (the default).
    Normal,
    /// Expect random access: read ahead less.
    Random,
    /// Expect sequential access: read ahead aggressively, drop pages behind.
    Sequential,
    /// The whole mapping will be needed soon: start reading it in now.
    WillNeed,
    /// Not needed for now: the kernel may drop the pages (they are re-read
    /// from the file on the next access; nothing written is lost). Refused
    /// on copy-on-write mappings, where it would discard the private copies.
    DontNeed,
    /// Fault every page in now, readable (`MADV_POPULATE_READ`, Linux 5.14+):
    /// later reads of the range take no page faults. Costs reading the range
    /// if it is not in the page cache. Given at open
    /// ([`OpenOptions::advice`](crate::OpenOptions::advice)) to a read-only
    /// mapping of 16 MiB or more, it runs in a thread ahead of the reads.
    PopulateRead,
    /// Fault every page in now, writable (`MADV_POPULATE_WRITE`, Linux
    /// 5.14+; writable modes only): a worker about to overwrite its rows
    /// pays one system call instead of a fault per page, and on a sparse
    /// file a full disk is an error here instead of a SIGBUS later.
    PopulateWrite,
}
