#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
//! Runs the `log-server` binary on loopback ports, for the tests of this crate.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running server, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    /// Where publishers connect.
    pub publish: String,
    /// Where subscribers connect.
    pub subscribe: String,
}

/// Two loopback addresses free right now.
pub fn free_addrs() -> (String, String) {
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().to_string(),
        b.local_addr().unwrap().to_string(),
    )
}

impl Server {
    /// Starts the server on `addrs` with its database in `data`, and waits until it listens.
    pub fn start(data: &Path, addrs: &(String, String)) -> Server {
        Server::start_with(data, addrs, &[])
    }

    /// As [`Server::start`], with more arguments (such as `--sync`).
    pub fn start_with(data: &Path, addrs: &(String, String), more: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_log-server"))
            .args(["--publish", &addrs.0, "--subscribe", &addrs.1, "--data"])
            .arg(data)
            .args(more)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[server] {line}");
                let _ = tx.send(line);
            }
        });
        let first = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            first.contains("publish on"),
            "server did not start: {first}"
        );
        Server {
            child,
            publish: addrs.0.clone(),
            subscribe: addrs.1.clone(),
        }
    }

    /// Kills the server at once (SIGKILL): no shutdown of any kind.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh temporary directory for a database.
pub fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    (dir, data)
}
