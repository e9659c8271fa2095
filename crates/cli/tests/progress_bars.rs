//! Progress bars: drawn on standard error when it is a terminal (here a pseudo-terminal made
//! by util-linux's `script`), for verify (bytes of files checked) and compact (entries of each
//! level's pass); never in a pipe.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a failed test"
)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{ok, s};
use shaledb::{Db, Options};

/// A database with several tables and a log, big enough that checking it takes a moment.
fn several_tables(dir: &Path) {
    let db = Db::open(dir, Options::default()).unwrap();
    for table in 0..4u32 {
        for i in 0..5_000u32 {
            let key = format!("key-{:02}-{i:06}", (i * 7 + table) % 50);
            db.put(key.as_bytes(), &[b'v'; 200]).unwrap();
        }
        db.flush().unwrap();
    }
    db.put(b"in-the-log", b"v").unwrap();
    db.close().unwrap();
}

/// What `shaledb args...` writes to a terminal (standard output and error, as a user sees them).
fn on_a_terminal(args: &[&str]) -> String {
    let command = std::iter::once(env!("CARGO_BIN_EXE_shaledb"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .expect("run script (util-linux)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn verify_shows_a_bar_of_the_bytes_checked_on_a_terminal_and_nothing_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    several_tables(dir.path());
    let shown = on_a_terminal(&["verify", s(dir.path())]);
    assert!(shown.contains("verifying ["), "no bar: {shown:?}");
    assert!(shown.contains("OK: "), "{shown:?}");
    let piped = ok(&["verify", s(dir.path())]);
    assert_eq!(piped.stderr, "");
}

#[test]
fn compact_shows_a_bar_per_level_pass_on_a_terminal_and_nothing_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    several_tables(dir.path());
    let shown = on_a_terminal(&["compact", s(dir.path())]);
    assert!(
        shown.contains("compacting L0 into L1 ["),
        "no bar: {shown:?}"
    );
    assert!(shown.contains("compacted: "), "{shown:?}");
    several_tables(dir.path());
    let piped = ok(&["compact", s(dir.path())]);
    assert_eq!(piped.stderr, "");
}
