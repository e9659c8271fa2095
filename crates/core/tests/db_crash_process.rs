//! Real-process crash tests: this test binary re-executes itself as a child (the
//! `crash_child_entry` test, which does nothing unless `SHALEDB_CRASH_CHILD_DIR` is set). The
//! child opens a database, several threads write with `sync: true` (single puts in two
//! keyspaces, batches across keyspaces, overwrites and deletes) and print every acknowledged
//! write to stdout; the parent kills it with SIGKILL at a random (seeded) moment, reopens the
//! database and checks that every acknowledged write is there with its value, that the one
//! write per thread that may have been in flight is wholly there or wholly absent, and that
//! nothing else is. Rounds reuse one directory, so recovery of a recovered database (and of a
//! child killed while it was recovering) is tested too. Small memtables make the child flush
//! and compact on its background thread.
//!
//! Also: the LOCK file of a killed process is stale and the next open takes it over, while a
//! running child's lock makes an open in the parent fail with `Error::Locked`.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use shaledb::{Batch, Db, Error, IterOptions, Options, WriteOptions};

const CHILD_DIR: &str = "SHALEDB_CRASH_CHILD_DIR";
const CHILD_ROUND: &str = "SHALEDB_CRASH_CHILD_ROUND";
/// `1`: the child's writes are synced; `0`: they are not (acknowledged = reached the OS).
const CHILD_SYNC: &str = "SHALEDB_CRASH_CHILD_SYNC";
/// Marks the child's own output lines.
const MARK: &str = "@@ ";
/// Writer threads in the child.
const THREADS: u64 = 4;
/// A child that was never killed (its parent died) gives up after this long.
const CHILD_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ks {
    Default,
    Events,
}

#[derive(Debug, Clone)]
enum Op {
    Put(Ks, Vec<u8>, Vec<u8>),
    Delete(Ks, Vec<u8>),
}

type State = BTreeMap<(Ks, Vec<u8>), Vec<u8>>;

fn mix(mut x: u64) -> u64 {
    // splitmix64
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn key(round: u64, thread: u64, i: u64) -> Vec<u8> {
    format!("r{round:02}/t{thread}/{i:08}").into_bytes()
}

/// A deterministic value: mostly small, sometimes a few KiB (to fill memtables), never
/// compressible to nothing.
fn value(round: u64, thread: u64, i: u64, salt: u64) -> Vec<u8> {
    let h = mix((round << 48) ^ (thread << 40) ^ (i << 8) ^ salt);
    let len = if h % 16 == 0 {
        2000 + (h >> 8) % 3000
    } else {
        20 + (h >> 8) % 200
    };
    let mut v = format!("{round}/{thread}/{i}/{salt}:").into_bytes();
    let mut x = h;
    while v.len() < len as usize {
        x = mix(x);
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len as usize);
    v
}

/// The writes of operation `i` of `thread` in `round`. The first is always a put of a key
/// never written before, so whether the operation is in the database tells by that key.
fn ops(round: u64, thread: u64, i: u64) -> Vec<Op> {
    let h = mix((round << 48) ^ (thread << 40) ^ i ^ 0xABCD);
    let k = key(round, thread, i);
    match h % 4 {
        0 => {
            let ks = if (h >> 8) % 2 == 0 {
                Ks::Default
            } else {
                Ks::Events
            };
            vec![Op::Put(ks, k, value(round, thread, i, 0))]
        }
        1 => vec![
            Op::Put(Ks::Default, k.clone(), value(round, thread, i, 0)),
            Op::Put(Ks::Events, k, value(round, thread, i, 1)),
        ],
        2 => {
            let mut v = vec![Op::Put(Ks::Default, k, value(round, thread, i, 0))];
            if i >= 3 {
                for ks in [Ks::Default, Ks::Events] {
                    v.push(Op::Delete(ks, key(round, thread, i - 3)));
                }
            }
            if i >= 1 {
                v.push(Op::Put(
                    Ks::Default,
                    key(round, thread, i - 1),
                    value(round, thread, i, 2),
                ));
            }
            v
        }
        _ => {
            let mut v = vec![Op::Put(Ks::Events, k.clone(), value(round, thread, i, 0))];
            for j in 1..=3u64 {
                let mut kj = k.clone();
                kj.extend_from_slice(format!("/b{j}").as_bytes());
                let ks = if j % 2 == 0 { Ks::Events } else { Ks::Default };
                v.push(Op::Put(ks, kj, value(round, thread, i, 2 + j)));
            }
            v
        }
    }
}

fn apply(state: &mut State, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(ks, k, v) => {
                state.insert((*ks, k.clone()), v.clone());
            }
            Op::Delete(ks, k) => {
                state.remove(&(*ks, k.clone()));
            }
        }
    }
}

fn child_options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.target_file_size = 64 * 1024;
    o.base_level_size = 256 * 1024;
    o.l0_compaction_trigger = 2;
    o.block_cache_size = 1 << 20;
    o.background_thread = true;
    // Logs grow through several preallocated (on Linux: mapped) steps.
    o.wal_preallocation = 16 * 1024;
    o
}

fn verify_options() -> Options {
    let mut o = child_options();
    o.background_thread = false;
    o
}

/// The child: writes until killed (or the deadline), printing `ack <thread> <i>` after each
/// acknowledged operation; synced writes if `sync`.
fn run_child(dir: &Path, round: u64, sync: bool) {
    let db = Db::open(dir, child_options()).expect("child open");
    let events = db.keyspace("events").expect("child keyspace");
    println_flush("ready");
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            let events = events.clone();
            std::thread::spawn(move || {
                let default = db.default_keyspace();
                let ks = |k: Ks| if k == Ks::Default { &default } else { &events };
                for i in 0.. {
                    if start.elapsed() > CHILD_DEADLINE {
                        return;
                    }
                    let ops = ops(round, t, i);
                    let result = match ops.as_slice() {
                        [Op::Put(k, key, value)] => {
                            ks(*k).put_opt(key, value, WriteOptions { sync })
                        }
                        _ => {
                            let mut batch = Batch::new();
                            for op in &ops {
                                match op {
                                    Op::Put(k, key, value) => batch.put(ks(*k), key, value),
                                    Op::Delete(k, key) => batch.delete(ks(*k), key),
                                }
                                .expect("batch");
                            }
                            db.write(&batch, WriteOptions { sync })
                        }
                    };
                    match result {
                        Ok(()) => println_flush(&format!("ack {t} {i}")),
                        Err(e) => {
                            println_flush(&format!("error {t} {i} {e}"));
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("child writer");
    }
}

/// One line to stdout in one write, flushed: the parent may see it only if it is complete.
/// Each line starts with [`MARK`], as the test harness may have printed part of a line
/// (`test crash_child_entry ... `) before. A parent that stopped listening ends the child.
fn println_flush(line: &str) {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(format!("{MARK}{line}\n").as_bytes())
        .and_then(|()| out.flush());
    if written.is_err() {
        std::process::exit(0);
    }
}

#[test]
fn crash_child_entry() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let round = std::env::var(CHILD_ROUND)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    let sync = std::env::var(CHILD_SYNC).map_or(true, |s| s != "0");
    run_child(Path::new(&dir), round, sync);
    std::process::exit(0);
}

/// A running child and the lines it printed so far (read by a thread).
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    reader: std::thread::JoinHandle<()>,
    seen: Vec<String>,
}

fn spawn_child(dir: &Path, round: u64, sync: bool) -> Running {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_ROUND, round.to_string())
        .env(CHILD_SYNC, if sync { "1" } else { "0" })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        // A final line without its newline (cut by the kill) is not read as acknowledged.
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 0 {
            if let (true, Some(at)) = (line.ends_with('\n'), line.find(MARK)) {
                let ours = line[at + MARK.len()..].trim_end().to_owned();
                if tx.send(ours).is_err() {
                    return;
                }
            }
            line.clear();
        }
    });
    Running {
        child,
        lines: rx,
        reader,
        seen: Vec::new(),
    }
}

impl Running {
    /// Waits until the child printed a line satisfying `pred` (or `timeout` passes).
    fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.seen.iter().any(|l| pred(l)) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => return false,
            }
        }
    }

    /// SIGKILL, reap, and every line printed before the kill.
    fn kill(mut self) -> Vec<String> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.reader.join().unwrap();
        self.seen.extend(self.lines.try_iter());
        self.seen
    }
}

/// Acknowledged operation counts per thread (operations `0..n` were acknowledged).
fn acked_counts(lines: &[String]) -> Vec<u64> {
    let mut counts = vec![0u64; THREADS as usize];
    for line in lines {
        if line.starts_with("error ") {
            panic!("the child failed a write: {line}");
        }
        let Some(rest) = line.strip_prefix("ack ") else {
            continue;
        };
        let mut parts = rest.split(' ');
        let t: usize = parts.next().unwrap().parse().unwrap();
        let i: u64 = parts.next().unwrap().parse().unwrap();
        assert_eq!(i, counts[t], "thread {t} acknowledged out of order");
        counts[t] += 1;
    }
    counts
}

fn read_state(db: &Db) -> State {
    let mut state = State::new();
    for (ks, handle) in [
        (Ks::Default, db.default_keyspace()),
        (Ks::Events, db.keyspace("events").unwrap()),
    ] {
        for item in handle.iter(IterOptions::default()).unwrap() {
            let (k, v) = item.unwrap();
            state.insert((ks, k), v);
        }
    }
    state
}

fn get(db: &Db, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
    match ks {
        Ks::Default => db.get(key).unwrap(),
        Ks::Events => db.keyspace("events").unwrap().get(key).unwrap(),
    }
}

/// Reopens the database after a kill and checks it against `expected` (the state verified in
/// earlier rounds) plus this round's acknowledged operations; returns the new expected state.
fn verify_round(dir: &Path, round: u64, counts: &[u64], mut expected: State) -> State {
    let db = Db::open(dir, verify_options()).unwrap();
    for (t, &n) in (0u64..).zip(counts) {
        for i in 0..n {
            apply(&mut expected, &ops(round, t, i));
        }
        // Operation n may have been in flight: wholly there or wholly absent.
        let in_flight = ops(round, t, n);
        let Op::Put(first_ks, first_key, _) = &in_flight[0] else {
            unreachable!()
        };
        let mut with = expected.clone();
        apply(&mut with, &in_flight);
        let chosen = if get(&db, *first_ks, first_key).is_some() {
            with
        } else {
            expected
        };
        for op in &in_flight {
            let (Op::Put(ks, k, _) | Op::Delete(ks, k)) = op;
            assert_eq!(
                get(&db, *ks, k).as_deref(),
                chosen.get(&(*ks, k.clone())).map(Vec::as_slice),
                "round {round} thread {t}: in-flight batch {n} is torn at {:?}",
                String::from_utf8_lossy(k)
            );
        }
        expected = chosen;
    }
    let actual = read_state(&db);
    if actual != expected {
        let missing: Vec<_> = expected
            .iter()
            .filter(|(k, v)| actual.get(*k) != Some(*v))
            .map(|((ks, k), _)| (ks, String::from_utf8_lossy(k).into_owned()))
            .take(5)
            .collect();
        let extra: Vec<_> = actual
            .iter()
            .filter(|(k, v)| expected.get(*k) != Some(*v))
            .map(|((ks, k), _)| (ks, String::from_utf8_lossy(k).into_owned()))
            .take(5)
            .collect();
        panic!(
            "round {round}: {} keys expected, {} found; missing or different: {missing:?}; \
             unexpected or different: {extra:?}",
            expected.len(),
            actual.len()
        );
    }
    // Point reads agree with the scan (tombstones in memtable vs tables and so on).
    for ((ks, k), v) in expected.iter().step_by(7) {
        assert_eq!(get(&db, *ks, k).as_ref(), Some(v));
    }
    db.close().unwrap();
    expected
}

#[test]
fn sigkilled_writers_lose_no_acknowledged_synced_write_across_rounds() {
    kill_rounds(true, 12);
}

/// Unsynced writes have reached the OS when acknowledged (natively on Linux: copied into a
/// shared mapping of the preallocated log, with no write system call): killing the process
/// loses none of them.
#[test]
fn sigkilled_writers_lose_no_acknowledged_unsynced_write_across_rounds() {
    kill_rounds(false, 8);
}

/// `rounds` times: a child writes (synced or not) until it is killed, then the database is
/// reopened and checked.
fn kill_rounds(sync: bool, rounds: u64) {
    // Another seed explores other kill moments: SHALEDB_CRASH_SEED=<n>.
    let seed = std::env::var("SHALEDB_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0001u64);
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let mut expected = State::new();
    let mut total_acks = 0;
    for round in 0..rounds {
        let r = mix(seed ^ round);
        let mut running = spawn_child(dir.path(), round, sync);
        // Most rounds kill the child while it writes; every fourth kills it early, often while
        // it is still recovering from the previous kill.
        let early = round % 4 == 3;
        if early {
            std::thread::sleep(Duration::from_millis(5 + r % 146));
        } else {
            assert!(
                running.wait_for(Duration::from_secs(20), |l| l == "ready"),
                "round {round}: the child never opened the database"
            );
            std::thread::sleep(Duration::from_millis(5 + r % 296));
        }
        let lines = running.kill();
        // A failed write first: the child then ends by itself (closing, so its LOCK goes).
        let counts = acked_counts(&lines);
        let ready = lines.iter().any(|l| l == "ready");
        if ready {
            assert!(
                dir.path().join("LOCK").exists(),
                "round {round}: the killed child's LOCK file is gone; its last lines: {:?}",
                &lines[lines.len().saturating_sub(8)..]
            );
        }
        total_acks += counts.iter().sum::<u64>();
        eprintln!("round {round}: early={early} acked per thread {counts:?}");
        expected = verify_round(dir.path(), round, &counts, expected);
    }
    let db = Db::open(dir.path(), verify_options()).unwrap();
    let levels = db.stats().level_files;
    db.close().unwrap();
    eprintln!(
        "seed {seed}: {rounds} rounds (sync {sync}), {total_acks} acknowledged operations, {} keys, \
         tables per level {levels:?}, {:?}",
        expected.len(),
        started.elapsed()
    );
    assert!(total_acks > 0, "no child ever acknowledged a write");
}

#[test]
fn a_killed_process_leaves_a_stale_lock_that_the_next_open_takes_over() {
    let dir = tempfile::tempdir().unwrap();
    let mut running = spawn_child(dir.path(), 0, true);
    assert!(
        running.wait_for(Duration::from_secs(20), |l| l.starts_with("ack ")),
        "the child never acknowledged a write"
    );
    // While the child runs, its lock holds.
    let pid = running.child.id();
    match Db::open(dir.path(), verify_options()) {
        Err(Error::Locked { holder, .. }) => {
            assert!(holder.contains(&pid.to_string()), "holder {holder:?}");
        }
        other => panic!("open while the child runs: {other:?}"),
    }
    let lines = running.kill();
    assert!(
        dir.path().join("LOCK").exists(),
        "SIGKILL cannot remove the lock file"
    );
    // The lock is stale now: the next open takes it over and finds every acknowledged write.
    let counts = acked_counts(&lines);
    verify_round(dir.path(), 0, &counts, State::new());
    // And releases it on close: the next open works too.
    Db::open(dir.path(), verify_options())
        .unwrap()
        .close()
        .unwrap();
}
