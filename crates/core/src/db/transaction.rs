//! Optimistic transactions: read from a snapshot, buffer writes, check for conflicts at commit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::keys;
use crate::db::keyspace::{Batch, Keyspace};
use crate::db::options::WriteOptions;
use crate::db::snapshot::Snapshot;
use crate::{Error, Result};

/// An optimistic transaction. Reads see a snapshot taken when the transaction began, plus the
/// transaction's own writes; writes are buffered. [`Transaction::commit`] writes them
/// atomically, unless a key the transaction read was written by someone else after the
/// snapshot: then it fails with [`Error::Conflict`] and writes nothing, and the caller retries.
/// Read-modify-write through a transaction is therefore safe under concurrency.
#[derive(Debug)]
pub struct Transaction {
    snapshot: Snapshot,
    reads: BTreeSet<Vec<u8>>,
    /// Stored key → `Some(value)` (put) or `None` (delete), for reading own writes.
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    batch: Batch,
}

impl Transaction {
    pub(crate) fn new(db: &Arc<DbInner>) -> Transaction {
        Transaction {
            snapshot: Snapshot::new(db),
            reads: BTreeSet::new(),
            writes: BTreeMap::new(),
            batch: Batch::new(),
        }
    }

    /// The value of `key`: the transaction's own write if any, else as of its snapshot. The
    /// key is recorded as read, so a concurrent change to it fails the commit.
    pub fn get(&mut self, keyspace: &Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let stored = keys::encode(keyspace.id, key);
        if let Some(own) = self.writes.get(&stored) {
            return Ok(own.clone());
        }
        let value = self.snapshot.get(keyspace, key)?;
        self.reads.insert(stored);
        Ok(value)
    }

    /// Buffers setting `key` to `value`.
    pub fn put(&mut self, keyspace: &Keyspace, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.put(keyspace, key, value)?;
        self.writes
            .insert(keys::encode(keyspace.id, key), Some(value.to_vec()));
        Ok(())
    }

    /// Buffers deleting `key`.
    pub fn delete(&mut self, keyspace: &Keyspace, key: &[u8]) -> Result<()> {
        self.batch.delete(keyspace, key)?;
        self.writes.insert(keys::encode(keyspace.id, key), None);
        Ok(())
    }

    /// Writes the buffered writes atomically if no key read was changed since the snapshot by
    /// another writer; else [`Error::Conflict`] and nothing is written.
    pub fn commit(self, options: WriteOptions) -> Result<()> {
        self.commit_with_ids(options).map(|_| ())
    }

    /// [`Transaction::commit`], returning the ids of the transaction's queue pushes in order.
    pub fn commit_with_ids(self, options: WriteOptions) -> Result<Vec<u64>> {
        let db = self.snapshot.db.clone();
        let snapshot = self.snapshot.seq();
        let reads = self.reads;
        self.batch.commit_to(
            &db,
            options.sync,
            Some(&mut || {
                for key in &reads {
                    if db.latest_seq(key)?.is_some_and(|seq| seq > snapshot) {
                        return Err(Error::Conflict);
                    }
                }
                Ok(())
            }),
        )
    }

    /// The transaction's buffered writes, for layers built on the engine (queues) to join.
    pub(crate) fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    /// Drops the buffered writes (the same as dropping the transaction).
    pub fn rollback(self) {}
}
