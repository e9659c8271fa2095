//! The log server driven by minikafka's own Go client package (tests/minikafka-client, built
//! offline against the peer's source in `bench/peers/minikafka`): every publish acknowledged, the subscriber
//! receives every message once and each publisher's in order, and a SIGKILLed and restarted
//! server still has the whole log. Skipped, saying so, where Go or the peer's source is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::{free_addrs, scratch, Server};

/// minikafka's source: `$MINIKAFKA_SRC`, or the repository's `bench/peers/minikafka/src`.
fn minikafka_src() -> Option<PathBuf> {
    let dir = std::env::var_os("MINIKAFKA_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/minikafka/src")
        });
    dir.join("client/publisher.go").is_file().then_some(dir)
}

/// Builds the Go check program into `out`, offline (GOPROXY=off), in a workspace of its own
/// module and minikafka's.
fn build_client(src: &Path, out: &Path) -> Option<PathBuf> {
    if Command::new("go").arg("version").output().is_err() {
        return None;
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/minikafka-client");
    let work = out.join("go.work");
    let src = src.canonicalize().unwrap();
    std::fs::write(
        &work,
        format!(
            "go 1.18\nuse (\n\t{}\n\t{}\n\t{}\n)\n",
            here.display(),
            src.display(),
            src.join("client").display()
        ),
    )
    .unwrap();
    let bin = out.join("minikafka-client");
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&here)
        .env("GOWORK", &work)
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-buildvcs=false")
        .status()
        .unwrap();
    assert!(status.success(), "building the Go client failed");
    Some(bin)
}

/// Runs one round of the check program; it exits non-zero on any failure and after 60 s.
fn run_round(bin: &Path, server: &Server, round: u32, expect: usize) {
    let started = Instant::now();
    let out = Command::new(bin)
        .args(["-pub", &server.publish, "-sub", &server.subscribe])
        .args([
            "-round",
            &round.to_string(),
            "-publishers",
            "4",
            "-each",
            "500",
        ])
        .args(["-expect", &expect.to_string(), "-timeout", "60s"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("round {round} ({:?}):\n{text}", started.elapsed());
    assert!(out.status.success(), "round {round} failed:\n{text}");
    assert!(text.contains("acked 2000"), "{text}");
    assert!(text.contains(&format!("received {expect}")), "{text}");
}

#[test]
fn minikafkas_client_gets_every_ack_and_every_message_in_order_across_a_sigkill() {
    let Some(src) = minikafka_src() else {
        eprintln!("SKIPPED: minikafka's source not found (set MINIKAFKA_SRC)");
        return;
    };
    let (dir, data) = scratch();
    let Some(bin) = build_client(&src, dir.path()) else {
        eprintln!("SKIPPED: go not found");
        return;
    };
    let addrs = free_addrs();
    let server = Server::start(&data, &addrs);
    run_round(&bin, &server, 1, 2000);
    server.kill();
    std::thread::sleep(Duration::from_millis(100));
    let server = Server::start(&data, &addrs);
    // The subscriber reads from the start of the log: round 1's 2000, then round 2's.
    run_round(&bin, &server, 2, 4000);
}
