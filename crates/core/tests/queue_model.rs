//! Model test of queues: random sequences of pushes (single, in batches, with expiry), takes,
//! peeks, reservations, acks, releases (with delays) and extends of current and stale leases,
//! for two consumer groups, with a limit on items, a moving clock, flushes and reopens (a
//! killed process: every write reached the OS), checked against a simple in-memory model.
//!
//! The model is the contract: per group, items released, delayed or back from a lease that ran
//! out are delivered first (by the time they became ready, then id), then the stream in id
//! order; expired items are never delivered; an item is deleted once every group is done with
//! it; after a reopen every open reservation is deliverable again with its delivery count kept.
//!
//! `PROPTEST_CASES` raises the number of cases (default 48).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on any unexpected error"
)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use shaledb::queue::{GroupStart, Lease, PushOptions, Queue, QueueOptions, ReserveOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Batch, Clock, Db, Options, WriteOptions};

const MAX_ITEMS: u64 = 12;

#[derive(Debug, Clone)]
enum Op {
    Push {
        len: u8,
        ttl: Option<u16>,
        in_batch: bool,
    },
    Take(usize),
    TakeMany(usize, u8),
    ReserveMany {
        group: usize,
        n: u8,
        lease: u16,
    },
    Peek(usize),
    Reserve {
        group: usize,
        lease: u16,
    },
    Ack {
        group: usize,
        pick: usize,
    },
    Release {
        group: usize,
        pick: usize,
        delay: u16,
    },
    Extend {
        group: usize,
        pick: usize,
        lease: u16,
    },
    Advance(u16),
    Reopen,
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..20, prop::option::weighted(0.2, 1u16..3000), any::<bool>())
            .prop_map(|(len, ttl, in_batch)| Op::Push { len, ttl, in_batch }),
        2 => (0usize..2).prop_map(Op::Take),
        1 => (0usize..2, 0u8..6).prop_map(|(g, n)| Op::TakeMany(g, n)),
        1 => (0usize..2, 0u8..6, 1u16..3000)
            .prop_map(|(group, n, lease)| Op::ReserveMany { group, n, lease }),
        1 => (0usize..2).prop_map(Op::Peek),
        3 => (0usize..2, 1u16..3000).prop_map(|(group, lease)| Op::Reserve { group, lease }),
        2 => (0usize..2, any::<usize>()).prop_map(|(group, pick)| Op::Ack { group, pick }),
        1 => (0usize..2, any::<usize>(), 0u16..2000)
            .prop_map(|(group, pick, delay)| Op::Release { group, pick, delay }),
        1 => (0usize..2, any::<usize>(), 1u16..3000)
            .prop_map(|(group, pick, lease)| Op::Extend { group, pick, lease }),
        2 => (1u16..4000).prop_map(Op::Advance),
        1 => Just(Op::Reopen),
        1 => Just(Op::Flush),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum St {
    Leased(u64),
    Ready(u64),
    /// Ready after its holder released it: that delivery's lease is unknown, not expired.
    Released(u64),
}

#[derive(Debug, Clone, Default)]
struct MGroup {
    next: u64,
    pending: BTreeMap<u64, (u32, St)>,
}

#[derive(Debug, Clone)]
struct Model {
    now: u64,
    next_id: u64,
    /// id → (value, expires_at)
    items: BTreeMap<u64, (Vec<u8>, u64)>,
    groups: Vec<MGroup>,
}

/// What an operation returned: an item (id, value, deliveries), nothing, or an error code.
type Outcome = Result<Option<(u64, Vec<u8>, u32)>, String>;

impl Model {
    fn done_for_all(&self, id: u64) -> bool {
        self.groups
            .iter()
            .all(|g| id < g.next && !g.pending.contains_key(&id))
    }

    fn finish(&mut self, g: usize, id: u64) {
        self.groups[g].pending.remove(&id);
        if self.done_for_all(id) {
            self.items.remove(&id);
        }
    }

    /// The next deliverable item of group `g`: (id, value, deliveries so far).
    fn candidate(&mut self, g: usize) -> Option<(u64, Vec<u8>, u32)> {
        let now = self.now;
        let expired: Vec<(u64, u64)> = (self.groups[g].pending.iter())
            .filter_map(|(&id, &(_, s))| match s {
                St::Leased(until) if until <= now => Some((id, until)),
                _ => None,
            })
            .collect();
        for (id, until) in expired {
            if let Some(p) = self.groups[g].pending.get_mut(&id) {
                p.1 = St::Ready(until);
            }
        }
        loop {
            let first = (self.groups[g].pending.iter())
                .filter_map(|(&id, &(d, s))| match s {
                    St::Ready(at) | St::Released(at) if at <= now => Some((at, id, d)),
                    _ => None,
                })
                .min();
            let Some((_, id, d)) = first else { break };
            match self.items.get(&id).cloned() {
                None => {
                    self.groups[g].pending.remove(&id);
                }
                Some((_, exp)) if exp <= now => self.finish(g, id),
                Some((v, _)) => return Some((id, v, d)),
            }
        }
        loop {
            let next = self.groups[g].next;
            let (&id, (v, exp)) = self.items.range(next..).next()?;
            let (v, exp) = (v.clone(), *exp);
            self.groups[g].next = id + 1;
            if exp <= now {
                self.finish(g, id);
            } else {
                return Some((id, v, 0));
            }
        }
    }

    fn held(&self, g: usize, lease: Lease) -> Result<(u32, St), String> {
        let Some(&(d, s)) = self.groups[g].pending.get(&lease.id) else {
            return Err("UNKNOWN_RESERVATION".into());
        };
        match s {
            St::Leased(until) if until > self.now && d == lease.delivery => Ok((d, s)),
            _ if d < lease.delivery || d == 0 => Err("UNKNOWN_RESERVATION".into()),
            St::Released(_) if d == lease.delivery => Err("UNKNOWN_RESERVATION".into()),
            _ => Err("LEASE_EXPIRED".into()),
        }
    }
}

struct Harness {
    storage: Arc<MemoryStorage>,
    clock: Arc<AtomicU64>,
    db: Db,
    queues: Vec<Queue>,
    model: Model,
    /// Every lease handed out per group, stale ones included.
    leases: Vec<Vec<Lease>>,
}

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o
}

fn queue_options() -> QueueOptions {
    QueueOptions {
        max_items: Some(MAX_ITEMS),
        ..QueueOptions::default()
    }
}

impl Harness {
    fn new() -> Harness {
        let storage = Arc::new(MemoryStorage::new());
        let clock = Arc::new(AtomicU64::new(1_000_000));
        let (db, queues) = Harness::open(&storage, &clock);
        Harness {
            storage,
            model: Model {
                now: clock.load(Ordering::SeqCst),
                next_id: 1,
                items: BTreeMap::new(),
                groups: vec![
                    MGroup {
                        next: 1,
                        ..MGroup::default()
                    };
                    2
                ],
            },
            clock,
            db,
            queues,
            leases: vec![Vec::new(), Vec::new()],
        }
    }

    fn open(storage: &Arc<MemoryStorage>, clock: &Arc<AtomicU64>) -> (Db, Vec<Queue>) {
        let c = clock.clone();
        let mut o = options();
        o.clock = Clock::from_fn(move || c.load(Ordering::SeqCst));
        let db = Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap();
        let q = db.queue("q", queue_options()).unwrap();
        let g = q.group("g", GroupStart::Tail).unwrap();
        (db, vec![q, g])
    }

    fn pick(&self, g: usize, pick: usize) -> Option<Lease> {
        let l = &self.leases[g];
        (!l.is_empty()).then(|| l[pick % l.len()])
    }

    fn run(&mut self, op: &Op) {
        let m = &mut self.model;
        match *op {
            Op::Push { len, ttl, in_batch } => {
                let value = vec![len; usize::from(len)];
                let options = PushOptions {
                    ttl: ttl.map(|t| Duration::from_millis(u64::from(t))),
                    ..PushOptions::default()
                };
                let got = if in_batch {
                    let mut b = Batch::new();
                    b.put(&self.db.default_keyspace(), b"k", &value).unwrap();
                    b.push(&self.queues[0], &value, options).unwrap();
                    self.db
                        .write_with_ids(&b, WriteOptions::default())
                        .map(|ids| ids[0])
                } else {
                    self.queues[0].push(&value, options)
                };
                let expect: Result<u64, String> = if m.items.len() as u64 >= MAX_ITEMS {
                    Err("QUEUE_FULL".into())
                } else {
                    let id = m.next_id;
                    m.next_id += 1;
                    let exp = ttl.map_or(u64::MAX, |t| m.now + u64::from(t));
                    m.items.insert(id, (value, exp));
                    Ok(id)
                };
                assert_eq!(got.map_err(|e| e.code().to_string()), expect, "{op:?}");
            }
            Op::Take(g) => {
                let got: Outcome = self.queues[g]
                    .take(None)
                    .map(|i| i.map(|i| (i.id, i.value, i.deliveries)))
                    .map_err(|e| e.code().into());
                let expect = m.candidate(g).map(|(id, v, d)| {
                    m.finish(g, id);
                    (id, v, d + 1)
                });
                assert_eq!(got, Ok(expect), "{op:?}");
            }
            Op::TakeMany(g, n) => {
                let got: Vec<_> = self.queues[g]
                    .take_many(usize::from(n), None)
                    .unwrap()
                    .into_iter()
                    .map(|i| (i.id, i.value, i.deliveries))
                    .collect();
                let mut expect = Vec::new();
                while expect.len() < usize::from(n) {
                    let Some((id, v, d)) = m.candidate(g) else {
                        break;
                    };
                    m.finish(g, id);
                    expect.push((id, v, d + 1));
                }
                assert_eq!(got, expect, "{op:?}");
            }
            Op::ReserveMany { group, n, lease } => {
                let opts = ReserveOptions {
                    lease: Some(Duration::from_millis(u64::from(lease))),
                    wait: None,
                };
                let got = self.queues[group]
                    .reserve_many(usize::from(n), opts)
                    .unwrap();
                let mut expect = Vec::new();
                while expect.len() < usize::from(n) {
                    let Some((id, v, d)) = m.candidate(group) else {
                        break;
                    };
                    let until = m.now + u64::from(lease);
                    m.groups[group]
                        .pending
                        .insert(id, (d + 1, St::Leased(until)));
                    expect.push((id, v, d + 1));
                }
                let got_t: Vec<_> = got
                    .iter()
                    .map(|i| (i.id, i.value.clone(), i.deliveries))
                    .collect();
                assert_eq!(got_t, expect, "{op:?}");
                self.leases[group].extend(got.iter().map(|i| i.lease()));
            }
            Op::Peek(g) => {
                let got = self.queues[g]
                    .peek()
                    .unwrap()
                    .map(|i| (i.id, i.value, i.deliveries));
                let expect = m.clone().candidate(g);
                assert_eq!(got, expect, "{op:?}");
            }
            Op::Reserve { group, lease } => {
                let opts = ReserveOptions {
                    lease: Some(Duration::from_millis(u64::from(lease))),
                    wait: None,
                };
                let got = self.queues[group].reserve(opts).unwrap();
                let expect = m.candidate(group).map(|(id, v, d)| {
                    let until = m.now + u64::from(lease);
                    m.groups[group]
                        .pending
                        .insert(id, (d + 1, St::Leased(until)));
                    (id, v, d + 1)
                });
                let got_t = got.as_ref().map(|i| (i.id, i.value.clone(), i.deliveries));
                assert_eq!(got_t, expect, "{op:?}");
                if let Some(i) = got {
                    self.leases[group].push(i.lease());
                }
            }
            Op::Ack { group, pick } => {
                let Some(lease) = self.pick(group, pick) else {
                    return;
                };
                let m = &mut self.model;
                let got = self.queues[group]
                    .ack(lease)
                    .map_err(|e| e.code().to_string());
                let expect = m.held(group, lease).map(|_| m.finish(group, lease.id));
                assert_eq!(got, expect, "{op:?} {lease:?}");
            }
            Op::Release { group, pick, delay } => {
                let Some(lease) = self.pick(group, pick) else {
                    return;
                };
                let m = &mut self.model;
                let d = Some(Duration::from_millis(u64::from(delay)));
                let got = self.queues[group]
                    .release(lease, d)
                    .map_err(|e| e.code().to_string());
                let expect = m.held(group, lease).map(|(dl, _)| {
                    let at = m.now + u64::from(delay);
                    m.groups[group]
                        .pending
                        .insert(lease.id, (dl, St::Released(at)));
                });
                assert_eq!(got, expect, "{op:?} {lease:?}");
            }
            Op::Extend {
                group,
                pick,
                lease: ms,
            } => {
                let Some(lease) = self.pick(group, pick) else {
                    return;
                };
                let m = &mut self.model;
                let got = self.queues[group]
                    .extend(lease, Duration::from_millis(u64::from(ms)))
                    .map_err(|e| e.code().to_string());
                let expect = m.held(group, lease).map(|(dl, _)| {
                    let until = m.now + u64::from(ms);
                    m.groups[group]
                        .pending
                        .insert(lease.id, (dl, St::Leased(until)));
                    until
                });
                assert_eq!(got, expect, "{op:?} {lease:?}");
            }
            Op::Advance(ms) => {
                m.now += u64::from(ms);
                self.clock.store(m.now, Ordering::SeqCst);
            }
            Op::Flush => self.db.flush().unwrap(),
            Op::Reopen => {
                let db = std::mem::replace(&mut self.db, Db::open_in_memory(options()).unwrap());
                self.queues.clear();
                drop(db); // not closed: a killed process
                let (db, queues) = Harness::open(&self.storage, &self.clock);
                self.db = db;
                self.queues = queues;
                let now = m.now;
                for g in &mut m.groups {
                    for p in g.pending.values_mut() {
                        if let St::Leased(_) = p.1 {
                            p.1 = St::Ready(now);
                        }
                    }
                }
            }
        }
        let stats = self.queues[0].stats().unwrap();
        assert_eq!(
            stats.items,
            self.model.items.len() as u64,
            "items after {op:?}"
        );
        let bytes: u64 = self.model.items.values().map(|(v, _)| v.len() as u64).sum();
        assert_eq!(stats.bytes, bytes, "bytes after {op:?}");
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn queues_match_a_model_through_leases_groups_limits_and_reopens(
        ops in prop::collection::vec(op(), 1..80)
    ) {
        let mut h = Harness::new();
        for op in &ops {
            h.run(op);
        }
    }
}
