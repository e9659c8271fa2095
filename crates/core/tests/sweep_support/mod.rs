//! The model the fault sweep checks a recovered database against.
//!
//! Every write the test attempts is logged in order with its outcome. Recovery replays a
//! prefix of the log, so a recovered database must equal the writes of *some* prefix of the
//! attempts, and that prefix must hold every write that was promised to survive: every
//! acknowledged one after a process restart, every durable one (acknowledged with `sync`, or
//! before a successful flush or close) after a power loss. Failed writes may be in it or not:
//! their outcome is unknown. Nothing is ever "deleted back": a prefix cannot undo a later write.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]
#![allow(dead_code, reason = "each test binary uses part of the support module")]

use std::collections::BTreeMap;

use shaledb::{Batch, Db, IterOptions, WriteOptions};

/// Keys and values of the default keyspace.
pub type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// One attempted write batch: puts (`Some`) and deletes (`None`).
#[derive(Debug, Clone)]
pub struct Attempt {
    pub ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub acked: bool,
}

/// The log of attempts and what each outcome promised.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub attempts: Vec<Attempt>,
    /// Attempts before this index must survive a process restart.
    pub acked_upto: usize,
    /// Attempts before this index must survive a power loss.
    pub durable_upto: usize,
}

impl Model {
    /// Writes `ops` as one batch (synced if `sync`) and logs the attempt and its outcome.
    pub fn write(&mut self, db: &Db, ops: Vec<(Vec<u8>, Option<Vec<u8>>)>, sync: bool) -> bool {
        let ks = db.default_keyspace();
        let mut batch = Batch::new();
        for (k, v) in &ops {
            match v {
                Some(v) => batch.put(&ks, k, v).unwrap(),
                None => batch.delete(&ks, k).unwrap(),
            };
        }
        let acked = db.write(&batch, WriteOptions { sync }).is_ok();
        self.attempts.push(Attempt { ops, acked });
        if acked {
            self.acked_upto = self.attempts.len();
            if sync {
                self.durable_upto = self.attempts.len();
            }
        }
        acked
    }

    /// Everything acknowledged so far is durable now (a flush, compaction or close succeeded).
    pub fn all_acked_durable(&mut self) {
        self.durable_upto = self.acked_upto;
    }

    /// The state after the first `n` attempts.
    pub fn state_after(&self, n: usize) -> Map {
        let mut m = Map::new();
        for a in &self.attempts[..n] {
            for (k, v) in &a.ops {
                match v {
                    Some(v) => m.insert(k.clone(), v.clone()),
                    None => m.remove(k),
                };
            }
        }
        m
    }

    /// Checks that `got` is the state of a prefix of the attempts that holds the first
    /// `must` ones; returns the prefix length.
    pub fn check(&self, got: &Map, must: usize) -> Result<usize, String> {
        for n in (must..=self.attempts.len()).rev() {
            if &self.state_after(n) == got {
                return Ok(n);
            }
        }
        let want = self.state_after(must);
        let missing: Vec<_> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(v))
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .take(5)
            .collect();
        Err(format!(
            "the state is no prefix of the {} attempts holding the first {must}; keys of that \
             prefix differing: {missing:?}; {} keys recovered",
            self.attempts.len(),
            got.len()
        ))
    }
}

/// Every key and value of the default keyspace.
pub fn scan(db: &Db) -> Map {
    db.iter(IterOptions::default())
        .unwrap()
        .collect::<shaledb::Result<Vec<_>>>()
        .unwrap()
        .into_iter()
        .collect()
}

/// Key `i`.
pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A value of `len` bytes for key `i`, version `v`.
pub fn value(i: u32, v: u32, len: usize) -> Vec<u8> {
    let mut out = format!("v{v}-{i}-").into_bytes();
    out.resize(len, b'a' + (i % 26) as u8);
    out
}
