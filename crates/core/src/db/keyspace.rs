//! Keyspaces (named column families sharing one WAL) and atomic batches across them.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::deferred::{commit_layers, DeferredWrites};
use crate::db::iterator::DbIterator;
use crate::db::keys;
use crate::db::options::{IterOptions, WriteOptions};
use crate::db::read::ReadAt;
use crate::version::edit::VersionEdit;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// Keyspace names starting with this character are ShaleDB's own (the records of queues,
/// topics and the browser's exactly-once writes): [`crate::Db::keyspace`] refuses them.
pub const RESERVED_KEYSPACE_PREFIX: char = '\0';

/// A named keyspace of a database. Keys of different keyspaces never collide. All keyspaces
/// share one write-ahead log, so a [`Batch`] across keyspaces is atomic. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Keyspace {
    pub(crate) db: Arc<DbInner>,
    pub(crate) id: u32,
    pub(crate) name: Arc<str>,
    /// The stored-key prefix of this keyspace ([`keys::encode`] of an empty key).
    pub(crate) prefix: Arc<[u8]>,
}

impl Keyspace {
    pub(crate) fn new(db: &Arc<DbInner>, id: u32, name: &str) -> Keyspace {
        Keyspace {
            db: db.clone(),
            id,
            name: name.into(),
            prefix: keys::encode(id, b"").into(),
        }
    }

    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets `key` to `value`. When it returns, the write has reached the OS.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_opt(key, value, WriteOptions::default())
    }

    /// Sets `key` to `value`, synced to stable storage if `options.sync`.
    pub fn put_opt(&self, key: &[u8], value: &[u8], options: WriteOptions) -> Result<()> {
        self.db.check_key(key)?;
        self.db.check_value(value)?;
        let mut b = WriteBatch::with_capacity(
            self.prefix.len() + key.len() + value.len() + WriteBatch::OP_OVERHEAD,
        );
        b.put_prefixed(&self.prefix, key, value)?;
        self.db.write(b, options.sync).map(|_| ())
    }

    /// The value of `key`, or `None`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.check_key(key)?;
        self.db
            .get_stored(&keys::encode(self.id, key), ReadAt::Latest)
    }

    /// Deletes `key` (a tombstone; deleting a missing key is fine).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_opt(key, WriteOptions::default())
    }

    /// Deletes `key`, synced if `options.sync`.
    pub fn delete_opt(&self, key: &[u8], options: WriteOptions) -> Result<()> {
        self.db.check_key(key)?;
        let mut b =
            WriteBatch::with_capacity(self.prefix.len() + key.len() + WriteBatch::OP_OVERHEAD);
        b.delete_prefixed(&self.prefix, key)?;
        self.db.write(b, options.sync).map(|_| ())
    }

    /// Deletes every key in `[start, end)` with one range tombstone (not a delete per key).
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut b = Batch::new();
        b.delete_range(self, start, end)?;
        self.db.write(b.take(&self.db)?, false).map(|_| ())
    }

    /// Compacts this keyspace's keys in `[start, end]` (`None` = to the keyspace's first or
    /// last key) down to the deepest level; see [`crate::Db::compact_range`].
    pub fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let start = keys::encode(self.id, start.unwrap_or_default());
        let end = match end {
            Some(end) => keys::encode(self.id, end),
            None => keys::keyspace_end(self.id),
        };
        self.db.health.check_writable()?;
        self.db.compact_range(Some(&start), Some(&end), &mut |_| {})
    }

    /// [`Keyspace::compact_range`] done by maintenance jobs; see
    /// [`crate::Db::request_compaction`] (the ticket it returns).
    pub fn request_compaction(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<u64> {
        let start = keys::encode(self.id, start.unwrap_or_default());
        let end = match end {
            Some(end) => keys::encode(self.id, end),
            None => keys::keyspace_end(self.id),
        };
        self.db.request_compaction(Some(&start), Some(&end))
    }

    /// The keyspace's metadata: a small opaque record kept in the manifest with the keyspace
    /// (like a schema: not a write, no sequence number, not in the change feed), or `None` if
    /// none was set. The JavaScript package keeps the keyspace's key and value encodings there
    /// (FORMAT.md, "Keyspace metadata").
    pub fn metadata(&self) -> Result<Option<Vec<u8>>> {
        self.db.health.check_open()?;
        Ok(self
            .db
            .versions
            .lock()
            .keyspace_metadata(self.id)
            .map(<[u8]>::to_vec))
    }

    /// Replaces the keyspace's metadata with `metadata` (empty removes it), durably: one synced
    /// manifest edit, kept by flushes, compactions, manifest rewrites, checkpoints and exports;
    /// setting what is already there writes nothing. Allowed on a follower (it is not a data
    /// write). Errors: `InvalidArgument` over [`crate::MAX_KEYSPACE_METADATA`] bytes
    /// (64 KiB); `ReadOnly` on a read-only open; `Poisoned`, `Closed`; a storage failure
    /// poisons the database (whether the edit reached the disk is unknown).
    pub fn set_metadata(&self, metadata: &[u8]) -> Result<()> {
        self.db.health.check_writable()?;
        self.db.options.check_not_read_only()?;
        if metadata.len() > crate::version::MAX_KEYSPACE_METADATA {
            return Err(Error::InvalidArgument(format!(
                "keyspace metadata of {} bytes is over the limit of {} bytes",
                metadata.len(),
                crate::version::MAX_KEYSPACE_METADATA
            )));
        }
        let mut versions = self.db.versions.lock();
        let current = versions.keyspace_metadata(self.id);
        if current.map_or(metadata.is_empty(), |c| c == metadata) {
            return Ok(());
        }
        let edit = VersionEdit {
            keyspace_metadata: vec![(self.id, metadata.to_vec())],
            ..VersionEdit::default()
        };
        versions.log_edit(edit, &self.db.health)
    }

    /// An iterator over the keyspace at the current state (it sees a snapshot taken now).
    pub fn iter(&self, options: IterOptions) -> Result<DbIterator> {
        DbIterator::new(&self.db, self.id, ReadAt::Latest, &options)
    }

    /// The keyspace `name` of `db`, created (durably, in the manifest) if missing. `reserved`:
    /// whether the caller opens one of ShaleDB's own keyspaces, whose names (and only theirs)
    /// start with [`RESERVED_KEYSPACE_PREFIX`].
    pub(crate) fn open(db: &Arc<DbInner>, name: &str, reserved: bool) -> Result<Keyspace> {
        db.health.check_open()?;
        if name.is_empty() || name.len() > 255 {
            return Err(Error::InvalidArgument(
                "a keyspace name must be 1 to 255 bytes long".into(),
            ));
        }
        if name.starts_with(RESERVED_KEYSPACE_PREFIX) != reserved {
            return Err(Error::InvalidArgument(if reserved {
                format!(
                    "{name:?} is not a reserved keyspace name (those start with a NUL character)"
                )
            } else {
                "keyspace names starting with a NUL character are reserved for ShaleDB".into()
            }));
        }
        let id = db.versions.lock().create_keyspace(name, &db.health)?;
        Ok(Keyspace::new(db, id, name))
    }
}

/// An atomic group of writes, possibly across keyspaces of one database: after a crash either
/// all of them are there or none.
#[derive(Debug, Default)]
pub struct Batch {
    inner: WriteBatch,
    db: Option<Arc<DbInner>>,
    /// Writes of layers built on the engine (queue pushes and acks, topic appends), one entry
    /// per layer, materialized at commit.
    deferred: Vec<Box<dyn DeferredWrites>>,
    deferred_len: usize,
    /// The writer's annotation for the change feed ([`Batch::set_meta`]).
    meta: Option<Vec<u8>>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Sets `key` to `value` in `keyspace`. Errors: `InvalidArgument` for an oversize key or
    /// value, or a keyspace of another database.
    pub fn put(&mut self, keyspace: &Keyspace, key: &[u8], value: &[u8]) -> Result<&mut Batch> {
        self.bind(keyspace)?;
        keyspace.db.check_key(key)?;
        keyspace.db.check_value(value)?;
        self.inner.put_prefixed(&keyspace.prefix, key, value)?;
        Ok(self)
    }

    /// Deletes `key` from `keyspace`.
    pub fn delete(&mut self, keyspace: &Keyspace, key: &[u8]) -> Result<&mut Batch> {
        self.bind(keyspace)?;
        keyspace.db.check_key(key)?;
        self.inner.delete_prefixed(&keyspace.prefix, key)?;
        Ok(self)
    }

    /// Deletes every key in `[start, end)` of `keyspace` (`start < end`).
    pub fn delete_range(
        &mut self,
        keyspace: &Keyspace,
        start: &[u8],
        end: &[u8],
    ) -> Result<&mut Batch> {
        self.bind(keyspace)?;
        keyspace.db.check_key(start)?;
        keyspace.db.check_key(end)?;
        if start >= end {
            return Err(Error::InvalidArgument(
                "delete_range needs start < end".into(),
            ));
        }
        self.inner.delete_range(
            &keys::encode(keyspace.id, start),
            &keys::encode(keyspace.id, end),
        )?;
        Ok(self)
    }

    /// Attaches `meta` to the batch: the change feed shows it with the batch
    /// ([`crate::Change::meta`]), for an idempotency key or the id of the origin a replicated
    /// write came from. Replaces an earlier meta; empty means none. Errors: `InvalidArgument`
    /// over 64 KiB.
    pub fn set_meta(&mut self, meta: &[u8]) -> Result<&mut Batch> {
        if meta.len() > crate::write::batch::MAX_META_SIZE {
            return Err(Error::InvalidArgument(format!(
                "meta of {} bytes is over the limit of {} bytes",
                meta.len(),
                crate::write::batch::MAX_META_SIZE
            )));
        }
        self.meta = (!meta.is_empty()).then(|| meta.to_vec());
        Ok(self)
    }

    /// The meta set with [`Batch::set_meta`].
    pub fn meta(&self) -> Option<&[u8]> {
        self.meta.as_deref()
    }

    /// Number of operations (queue operations count once each).
    pub fn len(&self) -> usize {
        self.inner.len() + self.deferred_len
    }

    /// Whether the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.inner.clear();
        self.deferred.clear();
        self.deferred_len = 0;
        self.meta = None;
    }

    /// The deferred writes of type `T` (creating them with `create`), after binding the batch
    /// to `db`, and the index of the write about to be added (the order of the ids
    /// [`crate::Db::write_with_ids`] returns). For the layers built on the engine.
    pub(crate) fn deferred_mut<T: DeferredWrites + 'static>(
        &mut self,
        db: &Arc<DbInner>,
        create: impl FnOnce() -> T,
    ) -> Result<(&mut T, usize)> {
        self.bind_db(db)?;
        let index = self.deferred_len;
        self.deferred_len += 1;
        let at = match self
            .deferred
            .iter_mut()
            .position(|d| d.as_any_mut().downcast_mut::<T>().is_some())
        {
            Some(at) => at,
            None => {
                self.deferred.push(Box::new(create()));
                self.deferred.len() - 1
            }
        };
        let layer = self.deferred[at].as_any_mut().downcast_mut::<T>();
        layer
            .map(|l| (l, index))
            .ok_or_else(|| Error::InvalidArgument("a batch lost track of its writes".into()))
    }

    /// Commits the batch to `db` (its database): the plain writes, plus the deferred ones if
    /// any, under `check` if given. Returns the ids of the deferred writes.
    pub(crate) fn commit_to(
        &self,
        db: &Arc<DbInner>,
        sync: bool,
        check: Option<&mut dyn FnMut() -> Result<()>>,
    ) -> Result<Vec<u64>> {
        let plain = self.encoded_for(db)?;
        let sync = sync || self.deferred_wants_sync();
        let mut check = check;
        let meta = self.meta.as_deref();
        // The write refuses followers and read-only opens (an empty batch writes nothing and
        // passes, as an empty write does).
        commit_layers(&self.deferred, plain, &mut |mut b| {
            db.annotate(&mut b, meta)?;
            match check.as_deref_mut() {
                Some(check) => db.commit_checked(b, sync, check),
                None => db.write(b, sync).map(|_| ()),
            }
        })
    }

    fn bind(&mut self, keyspace: &Keyspace) -> Result<()> {
        self.bind_db(&keyspace.db)
    }

    fn bind_db(&mut self, db: &Arc<DbInner>) -> Result<()> {
        match &self.db {
            Some(own) if !Arc::ptr_eq(own, db) => Err(Error::InvalidArgument(
                "a batch can only hold writes to keyspaces of one database".into(),
            )),
            Some(_) => Ok(()),
            None => {
                self.db = Some(db.clone());
                Ok(())
            }
        }
    }

    /// The encoded batch, for committing to `db` (which must be the batch's database).
    pub(crate) fn encoded_for(&self, db: &Arc<DbInner>) -> Result<WriteBatch> {
        self.check_database(db)?;
        Ok(self.inner.clone())
    }

    /// Whether the batch holds writes of a layer built on the engine.
    pub(crate) fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Whether a layer's write asks for the batch to be synced.
    fn deferred_wants_sync(&self) -> bool {
        self.deferred.iter().any(|d| d.wants_sync())
    }

    /// The encoded batch, moved out (no copy), for `db`.
    pub(crate) fn take(mut self, db: &Arc<DbInner>) -> Result<WriteBatch> {
        self.check_database(db)?;
        Ok(std::mem::take(&mut self.inner))
    }

    /// `InvalidArgument` if the batch holds writes to a keyspace of another database.
    fn check_database(&self, db: &Arc<DbInner>) -> Result<()> {
        match &self.db {
            Some(own) if !Arc::ptr_eq(own, db) => Err(Error::InvalidArgument(
                "the batch holds writes to another database".into(),
            )),
            _ => Ok(()),
        }
    }
}
