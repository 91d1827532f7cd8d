//! Progress bars for long work: only on a terminal, never in `--json` or piped output.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Counts bytes of work; draws a bar on stderr once the work has run for a
/// second, and only when stderr is a terminal and the output is not JSON.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// A tracker for `total` bytes described by `message`; `json` silences it.
    pub fn bytes(total: u64, message: &str, json: bool) -> Progress {
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            // Drawn nowhere until a second has passed, so quick work stays quiet.
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            );
            bar.set_message(message.to_string());
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
        }
    }

    /// Records `done` more bytes.
    pub fn advance(&mut self, done: u64) {
        let Some(bar) = &self.bar else { return };
        bar.inc(done);
        if !self.shown && self.started.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }
}

impl Progress {
    /// Ends the counted work and shows `message` with a spinner and the time
    /// spent in it, for a final step that cannot be counted (an fsync).
    /// Shown at once when the bar already was, else once the whole work has
    /// run for a second.
    pub fn phase(&mut self, message: &str) {
        let Some(bar) = &self.bar else { return };
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .expect("the template is valid"),
        );
        bar.set_message(message.to_string());
        bar.reset_elapsed();
        bar.enable_steady_tick(Duration::from_millis(120));
        if !self.shown {
            // The step blocks this thread: a timer shows it if it lasts.
            let bar = bar.clone();
            let wait = Duration::from_secs(1).saturating_sub(self.started.elapsed());
            std::thread::spawn(move || {
                std::thread::sleep(wait);
                if !bar.is_finished() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                }
            });
            self.shown = true;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
