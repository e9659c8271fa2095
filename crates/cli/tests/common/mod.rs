//! Running the built `shaledb` binary as a user would, and checking what it prints.

#![allow(dead_code, reason = "each test file uses its own part of the helpers")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a failed test"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What one run printed and how it exited.
pub struct Run {
    /// The exit code (None if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output's lines parsed as JSON.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `shaledb args...` with `stdin` as its standard input.
pub fn shaledb_with_input(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shaledb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run shaledb");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait for shaledb").into()
}

/// Runs `shaledb args...`.
pub fn shaledb(args: &[&str]) -> Run {
    shaledb_with_input(args, b"")
}

/// Runs `shaledb args...` and checks that it exits 0; returns what it printed.
pub fn ok(args: &[&str]) -> Run {
    let run = shaledb(args);
    assert_eq!(
        run.code,
        Some(0),
        "shaledb {args:?} failed:\nstdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    run
}

/// A path as `&str` (temporary directories are UTF-8 here).
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The go-sstables RecordIO vectors in the core's fixtures.
pub fn go_vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/go-sstables-recordio")
}

/// JSON lines of a small data set over two keyspaces, one binary key.
pub const SAMPLE: &str = concat!(
    r#"{"key":"user:1","value":"ada"}"#,
    "\n",
    r#"{"key":"user:2","value":"grace"}"#,
    "\n",
    r#"{"key":"user:3","value":"barbara"}"#,
    "\n",
    r#"{"keyspace":"events","key":"0001","value":"signup"}"#,
    "\n",
    r#"{"key":{"base64":"/wA="},"value":{"hex":"00ff"}}"#,
    "\n",
);

/// A new database in `dir` loaded with [`SAMPLE`].
pub fn sample_db(dir: &Path) {
    let run = shaledb_with_input(&["load", s(dir)], SAMPLE.as_bytes());
    assert_eq!(run.code, Some(0), "load failed: {}", run.stderr);
}
