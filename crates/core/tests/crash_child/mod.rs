//! A real process to kill: the test binary re-executes itself as a child running one test
//! (which does its work only when its environment says so), prints acknowledged steps as marked
//! lines, and is killed with SIGKILL after a while. Shared by the queue and topic crash tests.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Marks the child's own output lines (the test harness prints lines of its own).
const MARK: &str = "@@ ";

/// Prints `line` as an acknowledged step of the child (flushed before it returns).
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{MARK}{line}").unwrap();
    out.flush().unwrap();
}

/// Runs the test `entry` of this binary as a child with `env`, kills it after `ms`
/// milliseconds, and returns the lines it said. A last line cut by the kill (no newline) was
/// not acknowledged and is dropped; the harness may have printed the start of a line before a
/// mark.
pub fn run_and_kill(entry: &str, env: &[(&str, String)], ms: u64) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", entry, "--nocapture", "--test-threads=1"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 0 {
            if let (Some(l), Some(at)) = (line.strip_suffix('\n'), line.find(MARK)) {
                lines.push(l[at + MARK.len()..].to_owned());
            }
            line.clear();
        }
        lines
    });
    std::thread::sleep(Duration::from_millis(ms));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}
