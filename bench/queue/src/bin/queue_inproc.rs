//! The queue API in-process (`shaledb::queue`), suite "queue", engine `shaledb`: items per
//! second of push, take (also from an empty queue) and reserve+ack, one at a time and in
//! batches of 100, and the whole cycle push + reserve + ack in batches of 100 (the issue's
//! in-process target). One queue in a fresh database on disk (default options), no fsync.
//!
//! ```text
//! cargo run --release --bin queue-inproc [FILTER...]     # QUEUE_INPROC_N items per case (200000)
//! ```

use std::time::{Duration, Instant};

use shaledb::queue::{PushOptions, Queue, QueueOptions, ReserveOptions};
use shaledb::{Db, Options};
use shaledb_bench_support::{random_bytes, Bench};

fn main() -> shaledb::Result<()> {
    let bench = Bench::from_args("queue");
    let n: usize = std::env::var("QUEUE_INPROC_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    for (size, label) in [(64, "64B"), (1024, "1KiB")] {
        let values: Vec<Vec<u8>> = (0..100).map(|i| random_bytes(size, i)).collect();
        let cases: [(&str, Case); 8] = [
            ("push", push_one),
            ("push/batch100", push_batch),
            ("take", take_one),
            ("take/batch100", take_batch),
            ("take-from-empty", take_empty),
            ("reserve+ack", reserve_ack_one),
            ("reserve+ack/batch100", reserve_ack_batch),
            ("push+reserve+ack/batch100", cycle_batch),
        ];
        for (name, case) in cases {
            let id = format!("inproc/rust/{name}/{label}");
            if !bench.enabled(&id) {
                continue;
            }
            let dir = bench.scratch();
            let db = Db::open(dir.path(), Options::default())?;
            let queue = db.queue("bench", QueueOptions::default())?;
            let elapsed = case(&queue, &values, n)?;
            bench.emit(&id, "shaledb", "items/s", n as f64 / elapsed.as_secs_f64());
            drop(queue);
            db.close()?;
        }
    }
    Ok(())
}

/// One case: its timed part on `n` items of a fresh queue (filling it first where it reads).
type Case = fn(&Queue, &[Vec<u8>], usize) -> shaledb::Result<Duration>;

fn fill(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<()> {
    for chunk in 0..n.div_ceil(100) {
        let k = (n - chunk * 100).min(100);
        q.push_many(&values[..k], PushOptions::default())?;
    }
    Ok(())
}

fn push_one(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    let t = Instant::now();
    for i in 0..n {
        q.push(&values[i % values.len()], PushOptions::default())?;
    }
    Ok(t.elapsed())
}

fn push_batch(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    let t = Instant::now();
    fill(q, values, n)?;
    Ok(t.elapsed())
}

fn take_one(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    fill(q, values, n)?;
    let t = Instant::now();
    for _ in 0..n {
        expect(q.take(None)?.is_some())?;
    }
    Ok(t.elapsed())
}

fn take_batch(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    fill(q, values, n)?;
    let t = Instant::now();
    let mut got = 0;
    while got < n {
        let items = q.take_many(100, None)?;
        expect(!items.is_empty())?;
        got += items.len();
    }
    Ok(t.elapsed())
}

/// Takes from an empty queue (a consumer polling; many of siberite-bench's flood gets find
/// their queue empty).
fn take_empty(q: &Queue, _values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    let t = Instant::now();
    for _ in 0..n {
        expect(q.take(None)?.is_none())?;
    }
    Ok(t.elapsed())
}

fn reserve_ack_one(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    fill(q, values, n)?;
    let t = Instant::now();
    for _ in 0..n {
        let item = q.reserve(ReserveOptions::default())?;
        let Some(item) = item else {
            return Err(shaledb::Error::InvalidArgument("queue ran dry".into()));
        };
        q.ack(item.lease())?;
    }
    Ok(t.elapsed())
}

fn reserve_ack_batch(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    fill(q, values, n)?;
    let t = Instant::now();
    let mut got = 0;
    while got < n {
        let items = q.reserve_many(100, ReserveOptions::default())?;
        expect(!items.is_empty())?;
        let leases: Vec<_> = items.iter().map(|i| i.lease()).collect();
        q.ack_many(&leases)?;
        got += items.len();
    }
    Ok(t.elapsed())
}

fn cycle_batch(q: &Queue, values: &[Vec<u8>], n: usize) -> shaledb::Result<Duration> {
    let t = Instant::now();
    let mut done = 0;
    while done < n {
        q.push_many(values, PushOptions::default())?;
        let items = q.reserve_many(100, ReserveOptions::default())?;
        expect(items.len() == values.len())?;
        let leases: Vec<_> = items.iter().map(|i| i.lease()).collect();
        q.ack_many(&leases)?;
        done += items.len();
    }
    Ok(t.elapsed())
}

fn expect(ok: bool) -> shaledb::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(shaledb::Error::InvalidArgument(
            "the queue held fewer items than pushed".into(),
        ))
    }
}
