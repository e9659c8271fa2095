//! Model test of the whole engine: random sequences of writes (single, batched across two
//! keyspaces, range deletes, synced or not), reads (gets, bounded / prefix / reverse iterators,
//! snapshots), flushes, maintenance steps, range compactions, clean reopens and simulated power
//! losses, on the fault-injecting storage, checked against a `BTreeMap`.
//!
//! After a crash the database must show the *known durable* state (everything up to the last
//! write acknowledged with `sync: true`) followed by some prefix of the later, unsynced batches:
//! no synced write lost, nothing deleted back, no batch half-applied. The model then continues
//! from the state the database shows.
//!
//! `PROPTEST_CASES` raises the number of cases (default 64, bounded so the file runs in a few
//! seconds in a debug build).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on any unexpected error"
)]

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use proptest::prelude::*;
use shaledb::db::Budget;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Batch, Db, IterOptions, Keyspace, Options, Snapshot, WriteOptions};

/// Keyspace (0 = default, 1 = "two") and user key.
type Map = BTreeMap<(u8, Vec<u8>), Vec<u8>>;

const KEYS: u16 = 90;

/// Key number `i`: one of three prefixes ("a", "ab", "b") and a two-digit number, so prefix
/// iterators have something to select and range deletes cut across prefixes.
fn key(i: u16) -> Vec<u8> {
    let prefix = ["a", "ab", "b"][usize::from(i % 3)];
    format!("{prefix}{:02}", i / 3).into_bytes()
}

/// A value that names the operation that wrote it, padded to `len` bytes that do not compress
/// well (so tables reach their target sizes and levels form).
fn value(tag: usize, len: usize) -> Vec<u8> {
    let mut v = format!("v{tag}:").into_bytes();
    let mut x = (tag as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(b'a' + (x % 26) as u8);
    }
    v
}

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.target_file_size = 8 * 1024;
    o.base_level_size = 24 * 1024;
    o.level_size_ratio = 3;
    o.l0_compaction_trigger = 2;
    o.block_size = 1024;
    o.block_cache_size = 256 * 1024;
    o
}

#[derive(Debug, Clone)]
enum BatchOp {
    Put(u8, u16, usize),
    Delete(u8, u16),
    DeleteRange(u8, u16, u16),
}

#[derive(Debug, Clone)]
enum Op {
    Put {
        ks: u8,
        key: u16,
        len: usize,
        sync: bool,
    },
    Delete {
        ks: u8,
        key: u16,
        sync: bool,
    },
    DeleteRange {
        ks: u8,
        a: u16,
        b: u16,
        sync: bool,
    },
    Batch {
        ops: Vec<BatchOp>,
        sync: bool,
    },
    /// Many separate unsynced puts of mid-sized values: fills memtables so flushes and
    /// compactions happen.
    Fill {
        ks: u8,
        first: u16,
        count: u16,
        len: usize,
    },
    Get {
        ks: u8,
        key: u16,
    },
    Iter {
        ks: u8,
        lower: Bound<u16>,
        upper: Bound<u16>,
        prefix: Option<u8>,
        reverse: bool,
    },
    TakeSnapshot,
    ReadSnapshot {
        which: usize,
        ks: u8,
        key: u16,
        reverse: bool,
    },
    ReleaseSnapshot {
        which: usize,
    },
    Flush,
    Maintain {
        bytes: u64,
    },
    CompactRange {
        start: Option<u16>,
        end: Option<u16>,
    },
    /// An optimistic transaction: read one key, write another, commit; with `interfere`, the
    /// key read is written directly before the commit, which must then fail with `Conflict`.
    Txn {
        ks: u8,
        read: u16,
        write: u16,
        len: usize,
        interfere: bool,
        flush_between: bool,
        sync: bool,
    },
    Reopen,
    Crash {
        torn: Option<u64>,
    },
    /// Arms a fault, writes until a write fails (the database is then poisoned), then crashes
    /// (or, with `torn: None` and `clean`, closes) and reopens.
    Fault {
        fault: Fault,
        writes: u16,
        len: usize,
        torn: Option<u64>,
        clean: bool,
    },
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    FailSyncs(u64),
    DiskFull(u64),
    TearWrite(usize),
}

fn bound() -> impl Strategy<Value = Bound<u16>> {
    prop_oneof![
        Just(Bound::Unbounded),
        (0..KEYS).prop_map(Bound::Included),
        (0..KEYS).prop_map(Bound::Excluded),
    ]
}

fn batch_op() -> impl Strategy<Value = BatchOp> {
    prop_oneof![
        5 => (0..2u8, 0..KEYS, 0..600usize).prop_map(|(ks, k, l)| BatchOp::Put(ks, k, l)),
        2 => (0..2u8, 0..KEYS).prop_map(|(ks, k)| BatchOp::Delete(ks, k)),
        1 => (0..2u8, 0..KEYS, 0..KEYS).prop_map(|(ks, a, b)| BatchOp::DeleteRange(ks, a, b)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..2u8, 0..KEYS, 0..3000usize, any::<bool>())
            .prop_map(|(ks, key, len, sync)| Op::Put { ks, key, len, sync }),
        4 => (0..2u8, 0..KEYS, any::<bool>()).prop_map(|(ks, key, sync)| Op::Delete { ks, key, sync }),
        2 => (0..2u8, 0..KEYS, 0..KEYS, any::<bool>())
            .prop_map(|(ks, a, b, sync)| Op::DeleteRange { ks, a, b, sync }),
        4 => (prop::collection::vec(batch_op(), 1..8), any::<bool>())
            .prop_map(|(ops, sync)| Op::Batch { ops, sync }),
        3 => (0..2u8, 0..KEYS, 10..80u16, 200..1500usize)
            .prop_map(|(ks, first, count, len)| Op::Fill { ks, first, count, len }),
        4 => (0..2u8, 0..KEYS).prop_map(|(ks, key)| Op::Get { ks, key }),
        4 => (0..2u8, bound(), bound(), prop::option::weighted(0.3, 0..3u8), any::<bool>())
            .prop_map(|(ks, lower, upper, prefix, reverse)| Op::Iter { ks, lower, upper, prefix, reverse }),
        2 => Just(Op::TakeSnapshot),
        3 => (0..4usize, 0..2u8, 0..KEYS, any::<bool>())
            .prop_map(|(which, ks, key, reverse)| Op::ReadSnapshot { which, ks, key, reverse }),
        1 => (0..4usize).prop_map(|which| Op::ReleaseSnapshot { which }),
        2 => Just(Op::Flush),
        3 => (1u64..200_000).prop_map(|bytes| Op::Maintain { bytes }),
        1 => (prop::option::of(0..KEYS), prop::option::of(0..KEYS))
            .prop_map(|(start, end)| Op::CompactRange { start, end }),
        2 => (0..2u8, 0..KEYS, 0..KEYS, 0..2000usize, any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(ks, read, write, len, interfere, flush_between, sync)| Op::Txn {
                ks, read, write, len, interfere, flush_between, sync,
            }),
        1 => Just(Op::Reopen),
        1 => (
            prop_oneof![
                (1u64..3).prop_map(Fault::FailSyncs),
                (0u64..150_000).prop_map(Fault::DiskFull),
                (0usize..3000).prop_map(Fault::TearWrite),
            ],
            1..60u16,
            100..3000usize,
            prop::option::of(any::<u64>()),
            any::<bool>(),
        )
            .prop_map(|(fault, writes, len, torn, clean)| Op::Fault { fault, writes, len, torn, clean }),
        2 => prop::option::of(any::<u64>()).prop_map(|torn| Op::Crash { torn }),
    ]
}

/// One logical write, as the model applies it.
#[derive(Debug, Clone)]
enum Write {
    Put(u8, Vec<u8>, Vec<u8>),
    Delete(u8, Vec<u8>),
    DeleteRange(u8, Vec<u8>, Vec<u8>),
}

fn apply(map: &mut Map, writes: &[Write]) {
    for w in writes {
        match w {
            Write::Put(ks, k, v) => {
                map.insert((*ks, k.clone()), v.clone());
            }
            Write::Delete(ks, k) => {
                map.remove(&(*ks, k.clone()));
            }
            Write::DeleteRange(ks, start, end) => {
                map.retain(|(k_ks, k), _| !(k_ks == ks && start <= k && k < end));
            }
        }
    }
}

/// What the database must show: `durable`, then the `uncertain` batches (unsynced, in order),
/// of which a crash may keep any prefix.
#[derive(Debug, Default)]
struct Model {
    durable: Map,
    uncertain: Vec<Vec<Write>>,
    current: Map,
}

impl Model {
    fn write(&mut self, writes: Vec<Write>, sync: bool) {
        apply(&mut self.current, &writes);
        if sync {
            // A synced write makes it and everything before it durable.
            self.durable = self.current.clone();
            self.uncertain.clear();
        } else {
            self.uncertain.push(writes);
        }
    }

    /// After a clean close everything is durable.
    fn all_durable(&mut self) {
        self.durable = self.current.clone();
        self.uncertain.clear();
    }
}

struct Harness {
    storage: FaultyStorage,
    db: Option<Db>,
    keyspaces: Vec<Keyspace>,
    snapshots: Vec<(Snapshot, Map)>,
    model: Model,
    /// Operation counter, for unique values.
    tag: usize,
    log: Vec<String>,
}

impl Harness {
    fn new() -> Harness {
        let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let mut h = Harness {
            storage,
            db: None,
            keyspaces: Vec::new(),
            snapshots: Vec::new(),
            model: Model::default(),
            tag: 0,
            log: Vec::new(),
        };
        h.open();
        h
    }

    fn open(&mut self) {
        let storage: Arc<dyn Storage> = Arc::new(self.storage.clone());
        let db = Db::open_storage(storage, options()).expect("open");
        self.keyspaces = vec![db.default_keyspace(), db.keyspace("two").expect("keyspace")];
        self.db = Some(db);
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("open database")
    }

    fn ks(&self, ks: u8) -> &Keyspace {
        &self.keyspaces[usize::from(ks)]
    }

    fn close_handles(&mut self) {
        self.snapshots.clear();
        self.keyspaces.clear();
    }

    /// Everything in keyspace `ks` through `iter`, checked against gets.
    fn scan(&self, ks: u8) -> Map {
        self.ks(ks)
            .iter(IterOptions::default())
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("iteration");
                ((ks, k), v)
            })
            .collect()
    }

    fn state(&self) -> Map {
        let mut map = self.scan(0);
        map.extend(self.scan(1));
        map
    }

    fn ctx(&self) -> String {
        let start = self.log.len().saturating_sub(12);
        format!("last ops: {:#?}", &self.log[start..])
    }

    fn run(&mut self, op: &Op) {
        self.tag += 1;
        self.log.push(format!("{op:?}"));
        let tag = self.tag;
        match op {
            Op::Put {
                ks,
                key: k,
                len,
                sync,
            } => {
                let (k, v) = (key(*k), value(tag, *len));
                self.ks(*ks)
                    .put_opt(&k, &v, WriteOptions { sync: *sync })
                    .expect("put");
                self.model.write(vec![Write::Put(*ks, k, v)], *sync);
            }
            Op::Delete { ks, key: k, sync } => {
                let k = key(*k);
                self.ks(*ks)
                    .delete_opt(&k, WriteOptions { sync: *sync })
                    .expect("delete");
                self.model.write(vec![Write::Delete(*ks, k)], *sync);
            }
            Op::DeleteRange { ks, a, b, sync } => {
                let (a, b) = (key(*a), key(*b));
                if a >= b {
                    return;
                }
                let mut batch = Batch::new();
                batch
                    .delete_range(self.ks(*ks), &a, &b)
                    .expect("delete_range");
                self.db()
                    .write(&batch, WriteOptions { sync: *sync })
                    .expect("write");
                self.model.write(vec![Write::DeleteRange(*ks, a, b)], *sync);
            }
            Op::Batch { ops, sync } => {
                let mut batch = Batch::new();
                let mut writes = Vec::new();
                for (i, bop) in ops.iter().enumerate() {
                    match bop {
                        BatchOp::Put(ks, k, len) => {
                            let (k, v) = (key(*k), value(tag * 100 + i, *len));
                            batch.put(self.ks(*ks), &k, &v).expect("batch put");
                            writes.push(Write::Put(*ks, k, v));
                        }
                        BatchOp::Delete(ks, k) => {
                            let k = key(*k);
                            batch.delete(self.ks(*ks), &k).expect("batch delete");
                            writes.push(Write::Delete(*ks, k));
                        }
                        BatchOp::DeleteRange(ks, a, b) => {
                            let (a, b) = (key(*a), key(*b));
                            if a < b {
                                batch
                                    .delete_range(self.ks(*ks), &a, &b)
                                    .expect("batch range");
                                writes.push(Write::DeleteRange(*ks, a, b));
                            }
                        }
                    }
                }
                if writes.is_empty() {
                    return;
                }
                self.db()
                    .write(&batch, WriteOptions { sync: *sync })
                    .expect("write batch");
                self.model.write(writes, *sync);
            }
            Op::Fill {
                ks,
                first,
                count,
                len,
            } => {
                for i in 0..*count {
                    let k = key((first + i) % KEYS);
                    let v = value(tag * 1000 + usize::from(i), *len);
                    self.ks(*ks).put(&k, &v).expect("fill put");
                    self.model.write(vec![Write::Put(*ks, k, v)], false);
                }
            }
            Op::Get { ks, key: k } => {
                let k = key(*k);
                let got = self.ks(*ks).get(&k).expect("get");
                assert_eq!(
                    got.as_deref(),
                    self.model.current.get(&(*ks, k.clone())).map(Vec::as_slice),
                    "get {:?} in keyspace {ks}; {}",
                    String::from_utf8_lossy(&k),
                    self.ctx()
                );
            }
            Op::Iter {
                ks,
                lower,
                upper,
                prefix,
                reverse,
            } => {
                let lower = lower.map(key);
                let upper = upper.map(key);
                let prefix = prefix.map(|p| ["a", "ab", "b"][usize::from(p)].as_bytes().to_vec());
                let opts = IterOptions {
                    lower: lower.clone(),
                    upper: upper.clone(),
                    prefix: prefix.clone(),
                    reverse: *reverse,
                };
                let got: Vec<(Vec<u8>, Vec<u8>)> = self
                    .ks(*ks)
                    .iter(opts.clone())
                    .expect("iter")
                    .collect::<shaledb::Result<_>>()
                    .expect("iteration");
                let mut want: Vec<(Vec<u8>, Vec<u8>)> = self
                    .model
                    .current
                    .iter()
                    .filter(|((k_ks, k), _)| {
                        k_ks == ks
                            && (lower.as_ref(), upper.as_ref()).contains(k)
                            && prefix.as_ref().is_none_or(|p| k.starts_with(p))
                    })
                    .map(|((_, k), v)| (k.clone(), v.clone()))
                    .collect();
                if *reverse {
                    want.reverse();
                }
                assert_eq!(
                    keys_of(&got),
                    keys_of(&want),
                    "iter {opts:?} in keyspace {ks}; {}",
                    self.ctx()
                );
                assert!(got == want, "iter values differ; {}", self.ctx());
            }
            Op::TakeSnapshot => {
                if self.snapshots.len() < 4 {
                    let snap = self.db().snapshot();
                    self.snapshots.push((snap, self.model.current.clone()));
                }
            }
            Op::ReadSnapshot {
                which,
                ks,
                key: k,
                reverse,
            } => {
                if self.snapshots.is_empty() {
                    return;
                }
                let (snap, map) = &self.snapshots[which % self.snapshots.len()];
                let k = key(*k);
                let got = snap.get(self.ks(*ks), &k).expect("snapshot get");
                assert_eq!(
                    got.as_deref(),
                    map.get(&(*ks, k.clone())).map(Vec::as_slice),
                    "snapshot get {:?}; {}",
                    String::from_utf8_lossy(&k),
                    self.ctx()
                );
                let opts = IterOptions {
                    reverse: *reverse,
                    ..IterOptions::default()
                };
                let got: Vec<(Vec<u8>, Vec<u8>)> = snap
                    .iter(self.ks(*ks), opts)
                    .expect("snapshot iter")
                    .collect::<shaledb::Result<_>>()
                    .expect("snapshot iteration");
                let mut want: Vec<(Vec<u8>, Vec<u8>)> = map
                    .iter()
                    .filter(|((k_ks, _), _)| k_ks == ks)
                    .map(|((_, k), v)| (k.clone(), v.clone()))
                    .collect();
                if *reverse {
                    want.reverse();
                }
                assert_eq!(
                    keys_of(&got),
                    keys_of(&want),
                    "snapshot iter; {}",
                    self.ctx()
                );
                assert!(got == want, "snapshot iter values differ; {}", self.ctx());
            }
            Op::ReleaseSnapshot { which } => {
                if !self.snapshots.is_empty() {
                    let i = which % self.snapshots.len();
                    self.snapshots.remove(i);
                }
            }
            Op::Flush => self.db().flush().expect("flush"),
            Op::Maintain { bytes } => {
                self.db()
                    .maintain(Budget { bytes: *bytes })
                    .expect("maintain");
            }
            Op::CompactRange { start, end } => {
                let (s, e) = (start.map(key), end.map(key));
                self.db()
                    .compact_range(s.as_deref(), e.as_deref())
                    .expect("compact_range");
            }
            Op::Txn {
                ks,
                read,
                write,
                len,
                interfere,
                flush_between,
                sync,
            } => {
                let (rk, wk, v) = (key(*read), key(*write), value(tag, *len));
                let mut txn = self.db().transaction();
                let got = txn.get(self.ks(*ks), &rk).expect("txn get");
                assert_eq!(
                    got.as_deref(),
                    self.model
                        .current
                        .get(&(*ks, rk.clone()))
                        .map(Vec::as_slice),
                    "transaction get; {}",
                    self.ctx()
                );
                txn.put(self.ks(*ks), &wk, &v).expect("txn put");
                assert_eq!(
                    txn.get(self.ks(*ks), &wk).expect("txn get own write"),
                    Some(v.clone()),
                    "a transaction reads its own write; {}",
                    self.ctx()
                );
                if *interfere {
                    let iv = value(tag * 10 + 1, 10);
                    self.ks(*ks).put(&rk, &iv).expect("interfering put");
                    self.model
                        .write(vec![Write::Put(*ks, rk.clone(), iv)], false);
                }
                if *flush_between {
                    self.db().flush().expect("flush");
                }
                let result = txn.commit(WriteOptions { sync: *sync });
                if *interfere {
                    assert!(
                        matches!(result, Err(shaledb::Error::Conflict)),
                        "a changed read must fail the commit, got {result:?}; {}",
                        self.ctx()
                    );
                } else {
                    result.expect("commit");
                    self.model.write(vec![Write::Put(*ks, wk, v)], *sync);
                }
            }
            Op::Fault {
                fault,
                writes,
                len,
                torn,
                clean,
            } => {
                match *fault {
                    Fault::FailSyncs(n) => self.storage.fail_syncs(n),
                    Fault::DiskFull(n) => self.storage.fail_writes_after_bytes(n),
                    Fault::TearWrite(keep) => self.storage.tear_next_write(keep),
                }
                for i in 0..*writes {
                    let k = key((tag as u16).wrapping_add(i * 7) % KEYS);
                    let v = value(tag * 1000 + usize::from(i), *len);
                    let ks = (i % 2) as u8;
                    let sync = i % 3 == 2;
                    match self.ks(ks).put_opt(&k, &v, WriteOptions { sync }) {
                        Ok(()) => self.model.write(vec![Write::Put(ks, k, v)], sync),
                        Err(e) => {
                            // The failed write may or may not have reached the log.
                            self.model
                                .write(vec![Write::Put(ks, k.clone(), v.clone())], false);
                            let again = self.ks(ks).put(&k, &v);
                            assert!(
                                matches!(again, Err(shaledb::Error::Poisoned { .. })),
                                "after a failed write ({e}) the database must be poisoned, \
                                 got {again:?}; {}",
                                self.ctx()
                            );
                            break;
                        }
                    }
                }
                self.close_handles();
                let db = self.db.take().expect("db");
                match (torn, clean) {
                    (None, true) => {
                        self.storage.reset_faults();
                        db.close().expect("close a poisoned database");
                    }
                    (None, false) => {
                        self.storage.crash().expect("crash");
                        drop(db);
                    }
                    (Some(seed), _) => {
                        self.storage.crash_torn(*seed).expect("crash_torn");
                        drop(db);
                    }
                }
                self.storage.reset_faults();
                self.open();
                self.recover_model();
            }
            Op::Reopen => {
                self.close_handles();
                self.db.take().expect("db").close().expect("close");
                self.open();
                self.model.all_durable();
                self.check_full("after reopen");
            }
            Op::Crash { torn } => {
                match torn {
                    None => self.storage.crash().expect("crash"),
                    Some(seed) => self.storage.crash_torn(*seed).expect("crash_torn"),
                }
                self.close_handles();
                drop(self.db.take());
                self.storage.reset_faults();
                self.open();
                self.recover_model();
            }
        }
    }

    /// The database must equal the whole model.
    fn check_full(&self, when: &str) {
        let state = self.state();
        assert!(
            state == self.model.current,
            "{when}: database differs from the model\n{}\n{}",
            diff(&self.model.current, &state),
            self.ctx()
        );
        self.check_gets(&state);
    }

    /// Gets agree with the iterator's view, for present and absent keys.
    fn check_gets(&self, state: &Map) {
        for ks in 0..2u8 {
            for i in 0..KEYS {
                let k = key(i);
                let got = self.ks(ks).get(&k).expect("get");
                assert_eq!(
                    got.as_deref(),
                    state.get(&(ks, k.clone())).map(Vec::as_slice),
                    "get {:?} in keyspace {ks} disagrees with the iterator; {}",
                    String::from_utf8_lossy(&k),
                    self.ctx()
                );
            }
        }
    }

    /// After a crash: the database shows the durable state plus some prefix of the uncertain
    /// batches; continue from it.
    fn recover_model(&mut self) {
        let state = self.state();
        let mut candidate = self.model.durable.clone();
        let mut matched = candidate == state;
        if !matched {
            for batch in &self.model.uncertain {
                apply(&mut candidate, batch);
                if candidate == state {
                    matched = true;
                    break;
                }
            }
        }
        assert!(
            matched,
            "after a crash the database is not the durable state plus a prefix of the unsynced \
             batches ({} uncertain)\nagainst the durable state: {}\nagainst the full model: {}\n{}",
            self.model.uncertain.len(),
            diff(&self.model.durable, &state),
            diff(&self.model.current, &state),
            self.ctx()
        );
        self.check_gets(&state);
        self.model.durable = state.clone();
        self.model.current = state;
        self.model.uncertain.clear();
    }
}

fn keys_of(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<String> {
    entries
        .iter()
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .collect()
}

/// A short description of how `got` differs from `want`.
fn diff(want: &Map, got: &Map) -> String {
    let mut out = Vec::new();
    for (k, v) in want {
        match got.get(k) {
            None => out.push(format!("missing {}:{}", k.0, String::from_utf8_lossy(&k.1))),
            Some(g) if g != v => out.push(format!(
                "wrong {}:{} = {:.20} (want {:.20})",
                k.0,
                String::from_utf8_lossy(&k.1),
                String::from_utf8_lossy(g),
                String::from_utf8_lossy(v)
            )),
            Some(_) => {}
        }
    }
    for (k, g) in got {
        if !want.contains_key(k) {
            out.push(format!(
                "extra {}:{} = {:.20}",
                k.0,
                String::from_utf8_lossy(&k.1),
                String::from_utf8_lossy(g)
            ));
        }
    }
    out.truncate(20);
    out.join("\n")
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_matches_a_btreemap_through_crashes_and_reopens(
        ops in prop::collection::vec(op(), 1..60)
    ) {
        let mut h = Harness::new();
        for op in &ops {
            h.run(op);
        }
        // A final clean reopen must show everything.
        h.run(&Op::Reopen);
    }
}
