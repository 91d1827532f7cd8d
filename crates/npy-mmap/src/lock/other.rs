//! Where there are no open-file-description locks (macOS, Windows): no
//! lanes across processes and no writers' turn. The registry still
//! protects each process from itself (see docs/SAFETY.md).

pub(super) mod lanes {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;

    use crate::error::Result;
    use crate::lock::policy::Locking;
    use crate::lock::table::Access;

    /// Nothing to take across processes here.
    pub(crate) fn acquire(
        _file: &File,
        _path: &Path,
        _range: &Range<u64>,
        _access: Access,
        _locking: Locking,
    ) -> Result<()> {
        Ok(())
    }
}

pub(super) mod turn {
    use std::fs::File;
    use std::path::Path;

    use crate::error::Result;
    use crate::lock::policy::Locking;

    /// No turn to take.
    pub(crate) struct Turn;

    impl Turn {
        pub(crate) fn try_take(_file: &File, _path: &Path) -> Result<Option<Turn>> {
            Ok(Some(Turn))
        }
    }

    /// No writer to wait for.
    pub(crate) fn wait_for_writers(_file: &File, _path: &Path, _locking: Locking) -> Result<()> {
        Ok(())
    }
}
