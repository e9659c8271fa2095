//! Model test of topics: random appends (single, several, inside batches with a put), reads
//! from offsets, times and the end, consumer-group commits (alone and in batches), a
//! subscription, retention by count held back by groups, a moving clock, flushes and reopens (a
//! killed process), checked against a simple in-memory model.
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

use proptest::prelude::*;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::topic::{
    AppendOptions, From, NewRecord, ReadLimits, Subscription, Topic, TopicOptions,
};
use shaledb::{Batch, Clock, Db, Error, Options, WriteOptions};

const MAX_RECORDS: u64 = 8;
const GROUPS: [&str; 2] = ["a", "b"];

#[derive(Debug, Clone)]
enum Op {
    Append {
        n: u8,
        in_batch: bool,
    },
    Read {
        from: u8,
        limit: u8,
    },
    ReadTime(u16),
    Latest(u8),
    Commit {
        group: usize,
        offset: u8,
        in_batch: bool,
    },
    SubNext,
    Advance(u16),
    Reopen,
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u8..4, any::<bool>()).prop_map(|(n, in_batch)| Op::Append { n, in_batch }),
        2 => (any::<u8>(), 1u8..6).prop_map(|(from, limit)| Op::Read { from, limit }),
        1 => any::<u16>().prop_map(Op::ReadTime),
        1 => (0u8..5).prop_map(Op::Latest),
        2 => (0usize..2, any::<u8>(), any::<bool>())
            .prop_map(|(group, offset, in_batch)| Op::Commit { group, offset, in_batch }),
        3 => Just(Op::SubNext),
        1 => (0u16..500).prop_map(Op::Advance),
        1 => Just(Op::Reopen),
        1 => Just(Op::Flush),
    ]
}

#[derive(Debug, Default, Clone)]
struct Model {
    /// Every record ever appended: offset → (value, time).
    history: BTreeMap<u64, (Vec<u8>, u64)>,
    first: u64,
    next: u64,
    last_time: u64,
    groups: BTreeMap<String, u64>,
    now: u64,
}

impl Model {
    fn append(&mut self, values: &[Vec<u8>]) -> Vec<u64> {
        let time = self.now.max(self.last_time);
        self.last_time = time;
        let offsets: Vec<u64> = values
            .iter()
            .map(|v| {
                let o = self.next;
                self.history.insert(o, (v.clone(), time));
                self.next += 1;
                o
            })
            .collect();
        let stop = self
            .groups
            .values()
            .min()
            .copied()
            .unwrap_or(self.next)
            .min(self.next);
        while self.next - self.first > MAX_RECORDS && self.first < stop {
            self.first += 1;
        }
        offsets
    }

    fn read(&self, from: u64, limit: usize) -> Result<Vec<(u64, Vec<u8>)>, String> {
        if from < self.first || from > self.next {
            return Err("OFFSET_OUT_OF_RANGE".into());
        }
        Ok((from..self.next)
            .take(limit)
            .map(|o| (o, self.history[&o].0.clone()))
            .collect())
    }
}

struct Harness {
    storage: Arc<MemoryStorage>,
    clock: Arc<AtomicU64>,
    db: Db,
    topic: Topic,
    sub: Subscription,
    sub_pos: u64,
    model: Model,
    counter: u32,
}

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o
}

fn open(storage: &Arc<MemoryStorage>, clock: &Arc<AtomicU64>) -> (Db, Topic) {
    let c = clock.clone();
    let mut o = options();
    o.clock = Clock::from_fn(move || c.load(Ordering::SeqCst));
    let db = Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap();
    let t = db
        .topic(
            "t",
            TopicOptions {
                max_records: Some(MAX_RECORDS),
                ..TopicOptions::default()
            },
        )
        .unwrap();
    (db, t)
}

fn got<T>(r: shaledb::Result<T>) -> Result<T, String> {
    r.map_err(|e| e.code().to_string())
}

impl Harness {
    fn new() -> Harness {
        let storage = Arc::new(MemoryStorage::new());
        let clock = Arc::new(AtomicU64::new(1_000));
        let (db, topic) = open(&storage, &clock);
        let sub = topic.subscribe(&From::Earliest).unwrap();
        Harness {
            storage,
            model: Model {
                now: 1_000,
                ..Model::default()
            },
            clock,
            db,
            topic,
            sub,
            sub_pos: 0,
            counter: 0,
        }
    }

    fn run(&mut self, op: &Op) {
        let m = &mut self.model;
        match *op {
            Op::Append { n, in_batch } => {
                let values: Vec<Vec<u8>> = (0..n)
                    .map(|_| {
                        self.counter += 1;
                        format!("v{}", self.counter).into_bytes()
                    })
                    .collect();
                let records: Vec<NewRecord> =
                    values.iter().map(|v| NewRecord::value(v.clone())).collect();
                let offsets = if in_batch {
                    let mut b = Batch::new();
                    b.put(&self.db.default_keyspace(), b"k", b"v").unwrap();
                    for r in records {
                        b.append(&self.topic, r).unwrap();
                    }
                    self.db.write_with_ids(&b, WriteOptions::default()).unwrap()
                } else {
                    self.topic
                        .append_many(&records, &AppendOptions::default())
                        .unwrap()
                };
                assert_eq!(offsets, m.append(&values), "{op:?}");
            }
            Op::Read { from, limit } => {
                let from = u64::from(from) % (m.next + 2);
                let limits = ReadLimits {
                    limit: usize::from(limit),
                    ..ReadLimits::default()
                };
                let r = got(self.topic.read(&From::Offset(from), limits)).map(|rs| {
                    rs.into_iter()
                        .map(|r| (r.offset, r.value))
                        .collect::<Vec<_>>()
                });
                assert_eq!(r, m.read(from, usize::from(limit)), "{op:?}");
            }
            Op::ReadTime(t) => {
                let time = 1_000 + u64::from(t) % 3_000;
                let r = self
                    .topic
                    .read(&From::Time(time), ReadLimits::default())
                    .unwrap();
                let expect = (m.first..m.next)
                    .find(|o| m.history[o].1 >= time)
                    .unwrap_or(m.next);
                assert_eq!(r.first().map_or(m.next, |r| r.offset), expect, "{op:?}");
            }
            Op::Latest(n) => {
                let r: Vec<u64> = self
                    .topic
                    .latest(usize::from(n))
                    .unwrap()
                    .iter()
                    .map(|r| r.offset)
                    .collect();
                let from = m.next.saturating_sub(u64::from(n)).max(m.first);
                assert_eq!(r, (from..m.next).collect::<Vec<_>>(), "{op:?}");
            }
            Op::Commit {
                group,
                offset,
                in_batch,
            } => {
                let g = GROUPS[group];
                let offset = u64::from(offset) % (m.next + 2);
                let r = if in_batch {
                    let mut b = Batch::new();
                    b.put(&self.db.default_keyspace(), b"out", g.as_bytes())
                        .unwrap();
                    b.commit_offset(&self.topic, g, offset).unwrap();
                    got(self.db.write(&b, WriteOptions::default()))
                } else {
                    got(self.topic.commit(g, offset))
                };
                let expect = if offset > m.next {
                    Err("OFFSET_OUT_OF_RANGE".to_string())
                } else {
                    m.groups.insert(g.to_string(), offset);
                    Ok(())
                };
                assert_eq!(r, expect, "{op:?}");
                assert_eq!(self.topic.committed(g).unwrap(), m.groups.get(g).copied());
            }
            Op::SubNext => match self.sub.try_next() {
                Ok(Some(r)) => {
                    // Records it read ahead may since have gone to retention: still the same.
                    assert_eq!(r.offset, self.sub_pos, "{op:?}");
                    assert_eq!(r.value, m.history[&r.offset].0, "{op:?}");
                    self.sub_pos += 1;
                }
                Ok(None) => assert_eq!(self.sub_pos, m.next, "{op:?}"),
                Err(Error::OffsetOutOfRange { first, .. }) => {
                    assert!(self.sub_pos < m.first, "{op:?}");
                    assert_eq!(first, m.first);
                    self.sub = self.topic.subscribe(&From::Earliest).unwrap();
                    self.sub_pos = m.first;
                }
                Err(e) => panic!("{op:?}: {e}"),
            },
            Op::Advance(ms) => {
                m.now += u64::from(ms);
                self.clock.store(m.now, Ordering::SeqCst);
            }
            Op::Flush => self.db.flush().unwrap(),
            Op::Reopen => {
                let (db, topic) = open(&Arc::new(MemoryStorage::new()), &self.clock);
                let old = std::mem::replace(&mut self.db, db);
                self.topic = topic;
                self.sub = self.topic.subscribe(&From::Earliest).unwrap();
                drop(old); // not closed: a killed process
                let (db, topic) = open(&self.storage, &self.clock);
                self.db = db;
                self.topic = topic;
                let from = m.groups.get("a").copied().unwrap_or(m.first).max(m.first);
                self.sub = self.topic.subscribe(&From::Offset(from)).unwrap();
                self.sub_pos = from;
            }
        }
        let s = self.topic.stats().unwrap();
        assert_eq!(
            (s.first, s.next),
            (self.model.first, self.model.next),
            "after {op:?}"
        );
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
    fn topics_match_a_model_through_groups_retention_and_reopens(
        ops in prop::collection::vec(op(), 1..80)
    ) {
        let mut h = Harness::new();
        for op in &ops {
            h.run(op);
        }
    }
}
