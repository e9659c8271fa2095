//! What the layers built on the engine (queues, topics) use of a database besides its public
//! API: encoded writes, the size check of values, whether it is open, their shared state
//! ([`Layers`](super::layers::Layers)), and joining a [`Batch`] through the deferred-write
//! seam.

use std::sync::Arc;

use crate::db::deferred::DeferredWrites;
use crate::db::keyspace::Batch;
use crate::db::layers::Layer;
use crate::db::Db;
use crate::write::batch::WriteBatch;
use crate::Result;

impl Db {
    /// Commits `batch`, whose keys already carry their keyspace prefix, as
    /// [`Db::write`] does (refused on a follower or a read-only open).
    pub(crate) fn write_encoded(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        self.inner.write(batch, sync).map(|_| ())
    }

    /// `InvalidArgument` unless `value` fits the value size limit.
    pub(crate) fn check_value(&self, value: &[u8]) -> Result<()> {
        self.inner.check_value(value)
    }

    /// Fails with [`crate::Error::Closed`] once the database is closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        self.inner.health.check_open()
    }

    /// The database's state of layer `L`, made on first use.
    pub(crate) fn layer<L: Layer>(&self) -> Arc<L> {
        self.inner.layers.get(&self.inner.options)
    }

    /// The deferred writes of type `T` in `batch` (made by `create` if it has none), after
    /// binding the batch to this database, and the index of the write about to be added
    /// ([`Batch::deferred_mut`]). Errors: `InvalidArgument` if the batch holds writes to
    /// another database.
    pub(crate) fn defer<'b, T: DeferredWrites + 'static>(
        &self,
        batch: &'b mut Batch,
        create: impl FnOnce() -> T,
    ) -> Result<(&'b mut T, usize)> {
        batch.deferred_mut(&self.inner, create)
    }
}
