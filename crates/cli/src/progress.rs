//! Progress bars on standard error, shown only when it is a terminal (never in pipes, logs or
//! tests).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting to `len` in `unit` ("bytes" shows sizes), or a hidden one.
pub fn bar(len: u64, message: &str, unit: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let template = if unit == "bytes" {
        "{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})"
    } else {
        "{msg} [{bar:40}] {pos}/{len} ({eta})"
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    ProgressBar::new(len)
        .with_style(style)
        .with_message(message.to_owned())
}

/// A spinner for work of unknown length (a load from standard input), or a hidden one.
pub fn spinner(message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_message(message.to_owned());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}
