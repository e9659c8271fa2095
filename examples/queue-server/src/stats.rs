//! The server's counters and the `stats` reply, in Kestrel's format (`STAT <name> <value>`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use shaledb::queue::QueueStats;

/// Counters of the server since it started; every field counts up (but `curr_connections`).
#[derive(Debug)]
pub struct Counters {
    started: Instant,
    /// Connections open now.
    pub curr_connections: AtomicU64,
    /// Connections accepted since start.
    pub total_connections: AtomicU64,
    /// `get` requests (not peeks).
    pub cmd_get: AtomicU64,
    /// `get .../peek` requests.
    pub cmd_peek: AtomicU64,
    /// `set` requests.
    pub cmd_set: AtomicU64,
    /// Gets that returned an item.
    pub get_hits: AtomicU64,
    /// Gets that found the queue empty.
    pub get_misses: AtomicU64,
    /// Items stored since start.
    pub total_items: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            started: Instant::now(),
            curr_connections: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
            cmd_get: AtomicU64::new(0),
            cmd_peek: AtomicU64::new(0),
            cmd_set: AtomicU64::new(0),
            get_hits: AtomicU64::new(0),
            get_misses: AtomicU64::new(0),
            total_items: AtomicU64::new(0),
        }
    }
}

/// Adds one to a counter.
pub fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// The `stats` reply: server-wide lines, then `queue_<name>_<stat>` lines per queue, then `END`.
pub fn render(counters: &Counters, now_unix: u64, queues: &[(String, QueueStats)]) -> Vec<u8> {
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let curr_items: u64 = queues.iter().map(|(_, s)| s.items).sum();
    let bytes: u64 = queues.iter().map(|(_, s)| s.bytes).sum();
    let mut lines: Vec<(String, String)> = vec![
        (
            "uptime".into(),
            counters.started.elapsed().as_secs().to_string(),
        ),
        ("time".into(), now_unix.to_string()),
        ("version".into(), crate::server::VERSION.into()),
        ("curr_items".into(), curr_items.to_string()),
        ("total_items".into(), get(&counters.total_items).to_string()),
        ("bytes".into(), bytes.to_string()),
        (
            "curr_connections".into(),
            get(&counters.curr_connections).to_string(),
        ),
        (
            "total_connections".into(),
            get(&counters.total_connections).to_string(),
        ),
        ("cmd_get".into(), get(&counters.cmd_get).to_string()),
        ("cmd_set".into(), get(&counters.cmd_set).to_string()),
        ("cmd_peek".into(), get(&counters.cmd_peek).to_string()),
        ("get_hits".into(), get(&counters.get_hits).to_string()),
        ("get_misses".into(), get(&counters.get_misses).to_string()),
    ];
    for (name, s) in queues {
        let q = |stat: &str| format!("queue_{name}_{stat}");
        lines.push((q("items"), s.items.to_string()));
        lines.push((q("bytes"), s.bytes.to_string()));
        lines.push((q("age"), s.oldest_age_ms.unwrap_or(0).to_string()));
        lines.push((q("open_transactions"), s.reserved.to_string()));
        lines.push((q("dead_lettered"), s.dead_lettered.to_string()));
    }
    let mut out = Vec::new();
    for (k, v) in lines {
        out.extend_from_slice(format!("STAT {k} {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"END\r\n");
    out
}
