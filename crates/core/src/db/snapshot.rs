//! Snapshots: consistent read views while writes continue.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::iterator::DbIterator;
use crate::db::keys;
use crate::db::read::ReadAt;
use crate::db::snapshots::SnapshotGuard;
use crate::db::{IterOptions, Keyspace};
use crate::{Error, Result};

/// A consistent read view: gets and iterators through it see the database exactly as it was
/// when the snapshot was taken, whatever is written, flushed or compacted afterwards. Released
/// on drop (compaction may then discard the old versions it kept for it).
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) db: Arc<DbInner>,
    pub(crate) guard: SnapshotGuard,
}

impl Snapshot {
    pub(crate) fn new(db: &Arc<DbInner>) -> Snapshot {
        Snapshot {
            // Registered under the list's lock while the sequence number is read: a compaction
            // that starts meanwhile sees the registration (it reads the list under that lock).
            guard: db.snapshots.acquire_with(|| db.commit.visible_seq()),
            db: db.clone(),
        }
    }

    /// The sequence number the snapshot sees up to (inclusive).
    pub fn seq(&self) -> u64 {
        self.guard.seq()
    }

    /// The value of `key` in `keyspace` as of the snapshot.
    pub fn get(&self, keyspace: &Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.same_db(keyspace)?;
        self.db.check_key(key)?;
        self.db.get_stored(
            &keys::encode(keyspace.id, key),
            ReadAt::Snapshot(self.seq()),
        )
    }

    /// An iterator over `keyspace` as of the snapshot.
    pub fn iter(&self, keyspace: &Keyspace, options: IterOptions) -> Result<DbIterator> {
        self.same_db(keyspace)?;
        DbIterator::new(
            &self.db,
            keyspace.id,
            ReadAt::Snapshot(self.seq()),
            &options,
        )
    }

    fn same_db(&self, keyspace: &Keyspace) -> Result<()> {
        if Arc::ptr_eq(&self.db, &keyspace.db) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(
                "the keyspace belongs to another database".into(),
            ))
        }
    }
}
