//! Python's arguments as the Rust crates' values: numpy's option names
//! (`encoding`, `locking`, `advice`), headers from descr literals, row
//! ranges.

use std::ops::Range;
use std::time::Duration;

use npy_core::pickle::Encoding;
use npy_core::{DType, Header, Order};
use npy_mmap::{Advice, Locking, OpenOptions};
use pyo3::prelude::*;

use crate::errors::{core_error, value_error};

/// numpy's `encoding` argument.
pub(crate) fn encoding(name: &str) -> PyResult<Encoding> {
    match name {
        "ASCII" => Ok(Encoding::Ascii),
        "latin1" => Ok(Encoding::Latin1),
        "bytes" => Ok(Encoding::Bytes),
        _ => Err(value_error(
            "encoding must be 'ASCII', 'latin1', or 'bytes'",
        )),
    }
}

/// `locking`: `None` (wait up to 10 s), `"blocking"`, `"nonblocking"` or
/// seconds to wait.
pub(crate) fn locking(value: Option<&Bound<'_, PyAny>>) -> PyResult<Locking> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Locking::default());
    };
    if let Ok(name) = value.extract::<String>() {
        return match name.as_str() {
            "blocking" => Ok(Locking::Blocking),
            "nonblocking" => Ok(Locking::NonBlocking),
            _ => Err(value_error(format!(
                "locking must be 'blocking', 'nonblocking', seconds or None, not {name:?}"
            ))),
        };
    }
    let seconds: f64 = value.extract()?;
    Duration::try_from_secs_f64(seconds)
        .map(Locking::Timeout)
        .map_err(|_| {
            value_error(format!(
                "locking timeout must be >= 0 seconds, not {seconds}"
            ))
        })
}

/// `advice`: one of numpy-free names for `madvise`.
pub(crate) fn advice(name: &str) -> PyResult<Advice> {
    Ok(match name {
        "normal" => Advice::Normal,
        "random" => Advice::Random,
        "sequential" => Advice::Sequential,
        "willneed" => Advice::WillNeed,
        "dontneed" => Advice::DontNeed,
        "populate_read" => Advice::PopulateRead,
        "populate_write" => Advice::PopulateWrite,
        _ => {
            return Err(value_error(format!(
                "advice must be one of 'normal', 'random', 'sequential', 'willneed', \
                 'dontneed', 'populate_read', 'populate_write', not {name:?}"
            )));
        }
    })
}

/// The header of `descr` (a descr literal, as numpy writes it), `shape`
/// and order.
pub(crate) fn header(descr: &str, shape: Vec<usize>, fortran: bool) -> PyResult<Header> {
    let dtype = DType::parse(descr).map_err(core_error)?;
    let order = if fortran { Order::Fortran } else { Order::C };
    Ok(Header::new(dtype, order, shape))
}

/// Options of every reading call.
pub(crate) fn open_options(
    max_header_size: usize,
    allow_pickle: bool,
    encoding_name: &str,
    lock: Locking,
) -> PyResult<OpenOptions> {
    let mut options = OpenOptions::new();
    options
        .max_header_size(max_header_size)
        .allow_pickle(allow_pickle)
        .encoding(encoding(encoding_name)?)
        .locking(lock);
    Ok(options)
}

/// The read options of an archive opened from Python (numpy's three
/// reading arguments; the default locking).
pub(crate) fn archive_options(
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
) -> PyResult<OpenOptions> {
    open_options(max_header_size, allow_pickle, encoding, Locking::default())
}

/// A row range as Python passes it.
pub(crate) fn rows(range: (usize, usize)) -> Range<usize> {
    range.0..range.1
}

/// numpy's mapping mode by its short name (the Python side turns numpy's
/// long names into these, in one place: `_common._MODE_NAMES`).
pub(crate) fn mode(name: &str) -> PyResult<npy_mmap::ForeignMode> {
    use npy_mmap::ForeignMode;
    match name {
        "r" => Ok(ForeignMode::ReadOnly),
        "r+" => Ok(ForeignMode::ReadWrite),
        "c" => Ok(ForeignMode::CopyOnWrite),
        _ => Err(crate::errors::value_error(format!(
            "mode must be one of ['r', 'c', 'r+', 'w+'], not {name:?}"
        ))),
    }
}

/// A headerless file as `np.memmap` describes it: descr, offset, shape
/// (`None`: every whole item after the offset), Fortran or not.
pub(crate) type HeaderlessArgs = (String, usize, Option<Vec<usize>>, bool);

/// npy-core's description of such a file.
pub(crate) fn headerless(
    (descr, offset, shape, fortran): HeaderlessArgs,
) -> PyResult<npy_core::headerless::Headerless> {
    let dtype = DType::parse(&descr).map_err(core_error)?;
    let order = if fortran { Order::Fortran } else { Order::C };
    Ok(npy_core::headerless::Headerless::new(
        dtype, offset, shape, order,
    ))
}
