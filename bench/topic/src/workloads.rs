//! minikafka's three benchmark workloads on an in-process topic (`shaledb::topic`), with the
//! same durability as the log server: each append returns once its record reached the OS.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shaledb::topic::{AppendOptions, From, NewRecord, Topic};

/// `workers` threads append 5-byte records one at a time, each waiting for its append, until
/// `run` has passed. Returns (appends, elapsed).
pub fn publish_1_topic(topic: &Topic, workers: usize, run: Duration) -> (u64, Duration) {
    let count = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let (topic, count) = (topic.clone(), count.clone());
            std::thread::spawn(move || {
                let o = AppendOptions::default();
                while start.elapsed() < run {
                    topic
                        .append(NewRecord::value(b"Hello".to_vec()), &o)
                        .unwrap();
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    (count.load(Ordering::Relaxed), start.elapsed())
}

/// One publisher appends `n` records `Hello\n<i>`, one at a time, while one subscriber reads
/// until it has all of them. Returns the time until the subscriber has the last.
pub fn throughput(topic: &Topic, n: u64) -> Duration {
    let mut sub = topic.subscribe(&From::Earliest).unwrap();
    let start = Instant::now();
    let reader = std::thread::spawn(move || {
        for i in 0..n {
            let r = sub.next().unwrap().unwrap();
            assert_eq!(r.value, format!("Hello\n{i}").into_bytes());
        }
    });
    let o = AppendOptions::default();
    for i in 0..n {
        topic
            .append(NewRecord::value(format!("Hello\n{i}").into_bytes()), &o)
            .unwrap();
    }
    reader.join().unwrap();
    start.elapsed()
}

/// What an end-to-end latency run measured.
pub struct Latencies {
    /// Each record's latency, ns from just before its append to the subscriber having it.
    pub sorted_ns: Vec<u64>,
    /// Time until the subscriber had the last record.
    pub elapsed: Duration,
    /// Time the publisher took to append all.
    pub publish_elapsed: Duration,
    /// Each append's duration (ns), sorted: the publisher's share of the latency.
    pub append_sorted_ns: Vec<u64>,
}

/// One publisher appends `n` records holding their send time, flooded (`rate` `None`) or
/// paced at `rate` records per second (on average); one subscriber records each record's
/// latency.
pub fn end_to_end(topic: &Topic, n: u64, rate: Option<f64>) -> Latencies {
    let base = Instant::now();
    let mut sub = topic.subscribe(&From::Earliest).unwrap();
    let reader = std::thread::spawn(move || {
        let mut lat = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let r = sub.next().unwrap().unwrap();
            let now = base.elapsed().as_nanos() as u64;
            let sent = u64::from_le_bytes(r.value[..8].try_into().unwrap());
            lat.push(now.saturating_sub(sent));
        }
        (lat, base.elapsed())
    });
    let o = AppendOptions::default();
    let start = base.elapsed();
    let interval = rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let mut append_ns = Vec::with_capacity(n as usize);
    for i in 0..n {
        if let Some(interval) = interval {
            // Paced by sleeping until the record is due (a sleep may overshoot: the records
            // due by then go out back to back, each stamped when its append starts).
            let due = start + interval.mul_f64(i as f64);
            if let Some(wait) = due.checked_sub(base.elapsed()).filter(|d| !d.is_zero()) {
                std::thread::sleep(wait);
            }
        }
        let now = base.elapsed().as_nanos() as u64;
        topic
            .append(NewRecord::value(now.to_le_bytes().to_vec()), &o)
            .unwrap();
        append_ns.push((base.elapsed().as_nanos() as u64).saturating_sub(now));
    }
    let publish_elapsed = base.elapsed() - start;
    let (mut sorted_ns, end) = reader.join().unwrap();
    sorted_ns.sort_unstable();
    append_ns.sort_unstable();
    Latencies {
        sorted_ns,
        elapsed: end - start,
        publish_elapsed,
        append_sorted_ns: append_ns,
    }
}
