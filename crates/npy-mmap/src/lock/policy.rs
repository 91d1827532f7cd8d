//! How long to wait for a lock that another process holds: [`Locking`], and
//! the one retry loop every lock of the crate goes through.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// How to take a lock that another process holds in a conflicting way
/// (a read-write or live mapping of the same bytes, an append, a stream
/// being written).
///
/// The default waits up to [`Locking::DEFAULT_TIMEOUT`], then fails with
/// [`ErrorKind::Locked`](crate::ErrorKind::Locked), which says what it
/// waited for: a reader never hangs silently behind a writer that forgot to
/// finish. Conflicts with this process's own mappings are never waited for
/// (they could not end while we wait): they fail at once with
/// [`ErrorKind::Conflict`](crate::ErrorKind::Conflict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Locking {
    /// Wait as long as it takes.
    Blocking,
    /// Fail at once when another process holds a conflicting lock.
    NonBlocking,
    /// Wait at most this long.
    Timeout(Duration),
}

impl Locking {
    /// How long [`Locking::default`] waits: 10 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
}

impl Default for Locking {
    fn default() -> Self {
        Locking::Timeout(Locking::DEFAULT_TIMEOUT)
    }
}

/// Whether locks are taken at all: only `unsafe` code may skip them
/// ([`OpenOptions::ignore_locks`](crate::OpenOptions::ignore_locks)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Locks {
    Take(Locking),
    /// The caller promised, in an `unsafe` block, that nothing changes the
    /// mapped bytes or the file's length while the mapping lives.
    Ignore,
}

impl Default for Locks {
    fn default() -> Self {
        Locks::Take(Locking::default())
    }
}

/// What one attempt at a lock found: the lock, or what holds it.
pub(super) enum Attempt {
    Got,
    /// Held by this (for the message: "a read-write mapping of ...").
    Blocked(&'static str),
}

/// The first pause between attempts, and the longest.
const FIRST_PAUSE: Duration = Duration::from_micros(100);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// Tries `attempt`; if it is blocked, calls `blocked` once (a writer takes
/// its turn there: only a writer that has to wait takes it), then retries
/// as `locking` says, counting from `started`: not at all, until a
/// deadline, or for ever. The pauses between attempts grow from 0.1 ms to
/// 50 ms, each drawn at random between half and all of its step, so that two
/// excluding openers that collided once do not retry in lock step until
/// both time out. Giving up names what held the lock last.
pub(super) fn retry(
    path: &Path,
    locking: Locking,
    started: Instant,
    mut blocked: impl FnMut() -> Result<()>,
    mut attempt: impl FnMut() -> Result<Attempt>,
) -> Result<()> {
    let mut step = FIRST_PAUSE;
    let mut first = true;
    loop {
        let held = match attempt()? {
            Attempt::Got => return Ok(()),
            Attempt::Blocked(held) => held,
        };
        let waited = started.elapsed();
        let left = match locking {
            Locking::NonBlocking => Duration::ZERO,
            Locking::Timeout(limit) => limit.saturating_sub(waited),
            Locking::Blocking => Duration::MAX,
        };
        if left.is_zero() {
            return Err(Error::at(path, ErrorKind::Locked { waited, held }));
        }
        if std::mem::take(&mut first) {
            blocked()?;
        }
        std::thread::sleep(jittered(step).min(left));
        step = (step * 2).min(LONGEST_PAUSE);
    }
}

/// A pause drawn uniformly from `step / 2 ..= step`.
fn jittered(step: Duration) -> Duration {
    use std::hash::{BuildHasher, RandomState};
    // A fresh `RandomState` is keyed differently every time (per thread,
    // and per process from the OS's randomness): enough to break lock step.
    let random = RandomState::new().hash_one(Instant::now());
    let half = step / 2;
    let spread = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_nanos(random % (spread + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_are_spread_between_half_and_all_of_their_step() {
        let step = Duration::from_millis(10);
        let pauses: Vec<Duration> = (0..200).map(|_| jittered(step)).collect();
        assert!(pauses.iter().all(|p| *p >= step / 2 && *p <= step));
        // Two openers drawing at once must not draw the same pause: at 200
        // draws from 5,000,001 values, a repeat means no randomness.
        let mut distinct = pauses.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 190, "{} distinct of 200", distinct.len());
    }

    #[test]
    fn only_a_blocked_attempt_calls_blocked_and_only_once() {
        let path = Path::new("x");
        let mut calls = 0;
        retry(
            path,
            Locking::Blocking,
            Instant::now(),
            || {
                calls += 1;
                Ok(())
            },
            || Ok(Attempt::Got),
        )
        .unwrap();
        assert_eq!(
            calls, 0,
            "an attempt that got the lock at once took the writers' turn"
        );
        let mut tries = 0;
        retry(
            path,
            Locking::Blocking,
            Instant::now(),
            || {
                calls += 1;
                Ok(())
            },
            || {
                tries += 1;
                Ok(if tries < 4 {
                    Attempt::Blocked("x")
                } else {
                    Attempt::Got
                })
            },
        )
        .unwrap();
        assert_eq!((calls, tries), (1, 4));
    }
}
