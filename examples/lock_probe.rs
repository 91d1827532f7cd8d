//! A Rust process in the lock protocol, for the Python package's tests
//! (crates/npy-python/tests): Python and Rust processes mapping the same
//! bytes exclude each other exactly as two Rust processes do.
//!
//! ```sh
//! cargo run --example lock_probe -- try-rw a.npy        # prints "opened" or "locked: ..."
//! cargo run --example lock_probe -- hold-rw a.npy 2.0   # maps r+, prints "holding", waits 2 s, "releasing"
//! cargo run --example lock_probe -- hold-r a.npy 2.0    # maps r, prints "holding", waits 2 s
//! ```

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use npy_mmap::{ErrorKind, Locking, OpenOptions};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, path, rest @ ..] = args.as_slice() else {
        bail!("usage: lock_probe try-rw|try-r|hold-rw|hold-r PATH [SECONDS]");
    };
    let seconds: f64 = rest
        .first()
        .map_or(Ok(1.0), |s| s.parse())
        .context("SECONDS")?;
    let mut options = OpenOptions::new();
    match command.as_str() {
        "try-rw" | "try-r" => {
            options.locking(Locking::NonBlocking);
            let opened = if command == "try-rw" {
                options.open_rw(path).map(drop)
            } else {
                options.open(path).map(drop)
            };
            match opened {
                Ok(()) => println!("opened"),
                Err(e) if matches!(e.kind(), ErrorKind::Locked { .. }) => println!("locked: {e}"),
                Err(e) => return Err(e.into()),
            }
        }
        "hold-rw" | "hold-r" => {
            options.locking(Locking::Blocking);
            let held: Box<dyn std::any::Any> = if command == "hold-rw" {
                Box::new(options.open_rw(path)?)
            } else {
                Box::new(options.open(path)?)
            };
            println!("holding");
            std::io::stdout().flush()?;
            std::thread::sleep(Duration::from_secs_f64(seconds));
            // Said before the locks go: a waiter that got the bytes can
            // check it was let in by this release, not before it.
            println!("releasing");
            std::io::stdout().flush()?;
            drop(held);
            println!("released");
        }
        other => bail!("unknown command {other:?}"),
    }
    Ok(())
}
