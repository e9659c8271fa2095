//! Snapshots: consistent read views while writes continue.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::iterator::DbIterator;
use crate::db::keys;
use crate::db::keyspace::Keyspace;
use crate::db::options::IterOptions;
use crate::db::read::ReadAt;
use crate::db::snapshots::SnapshotGuard;
use crate::db::view::View;
use crate::{Error, Result};

/// A consistent read view: gets and iterators through it see the database exactly as it was
/// when the snapshot was taken, whatever is written, flushed or compacted afterwards. Released
/// on drop (compaction may then discard the old versions it kept for it).
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) db: Arc<DbInner>,
    pub(crate) guard: SnapshotGuard,
    /// On a read-only open, the view the snapshot was taken in (see [`ReadAt::Pinned`]).
    view: Option<Arc<View>>,
}

impl Snapshot {
    pub(crate) fn new(db: &Arc<DbInner>) -> Snapshot {
        if db.options.read_only {
            let (view, seq) = db.read_point(ReadAt::Latest);
            return Snapshot {
                guard: db.snapshots.acquire_with(|| seq),
                db: db.clone(),
                view: Some(view),
            };
        }
        Snapshot {
            // Registered under the list's lock while the sequence number is read: a compaction
            // that starts meanwhile sees the registration (it reads the list under that lock).
            guard: db.snapshots.acquire_with(|| db.writes.visible_seq()),
            db: db.clone(),
            view: None,
        }
    }

    /// What reads through the snapshot see.
    fn read_at(&self) -> ReadAt {
        match &self.view {
            Some(view) => ReadAt::Pinned(view.clone(), self.seq()),
            None => ReadAt::Snapshot(self.seq()),
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
        self.db
            .get_stored(&keys::encode(keyspace.id, key), self.read_at())
    }

    /// An iterator over `keyspace` as of the snapshot.
    pub fn iter(&self, keyspace: &Keyspace, options: IterOptions) -> Result<DbIterator> {
        self.same_db(keyspace)?;
        DbIterator::new(&self.db, keyspace.id, self.read_at(), &options)
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
