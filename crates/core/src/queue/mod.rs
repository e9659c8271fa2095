//! Durable queues in the database: Kestrel's reliable reads, embedded, atomic with the
//! application's own writes.
//!
//! ```
//! use std::time::Duration;
//! use shaledb::queue::{PushOptions, QueueOptions, ReserveOptions};
//! use shaledb::{Batch, Db, Options, WriteOptions};
//!
//! let db = Db::open_in_memory(Options::default())?;
//! let jobs = db.queue("jobs", QueueOptions::default())?;
//! jobs.push(b"resize 1.jpg", PushOptions::default())?;
//!
//! // A job and the record it is about, in one atomic write.
//! let mut batch = Batch::new();
//! batch.put(&db.default_keyspace(), b"photo:2", b"...")?.push(&jobs, b"resize 2.jpg", PushOptions::default())?;
//! db.write(&batch, WriteOptions::default())?;
//!
//! // A reliable read: invisible to other consumers until acked; back by itself if the lease
//! // runs out, and delivered again after a crash.
//! let job = jobs.reserve(ReserveOptions { lease: Some(Duration::from_secs(30)), ..Default::default() })?
//!     .expect("a job");
//! assert_eq!(job.value, b"resize 1.jpg");
//! jobs.ack(job.lease())?;
//! assert_eq!(jobs.take(None)?.map(|j| j.value), Some(b"resize 2.jpg".to_vec()));
//! # Ok::<(), shaledb::Error>(())
//! ```
//!
//! # Model
//!
//! A queue is a stream of items with increasing ids (in commit order) and one or more
//! *consumer groups* (the default group `""`, and named ones from [`Queue::group`]), each with
//! its own position in the stream and its own reservations: every group sees every item pushed
//! after it was created (fanout). An item is deleted once every group is done with it (taken,
//! acked, expired, or moved to the dead-letter queue), or when a `DiscardOldest` limit drops it.
//!
//! Each queue lives in its own keyspace. Reads seek straight to a group's position (consumed
//! items are never scanned); consumed stretches are also covered by range tombstones, so
//! compaction drops them. In memory a queue keeps its counters and each group's position and
//! pending entries (reserved, released, delayed items): bounded by those, not by the backlog.
//!
//! Every queue operation is one atomic write; its in-memory effects are undone if the write
//! fails. Pushes and acks can also join a [`Batch`](crate::Batch) or a
//! [`Transaction`](crate::Transaction) with ordinary writes ([`crate::Batch::push`],
//! [`crate::Batch::ack`]).

mod admin;
mod consume;
mod deferred;
mod handle;
mod item;
mod layout;
mod locked;
mod options;
mod produce;
mod registry;
mod state;
mod tx;

use std::sync::Arc;

pub use admin::{GroupStats, QueueStats};
pub use handle::Queue;
pub use item::{Lease, QueueItem};
pub use options::{GroupStart, PushOptions, QueueOptions, ReserveOptions, WhenFull};

use crate::db::catalog::Catalog;
use crate::db::{Db, Keyspace};
use crate::queue::registry::{Registry, Shared};
use crate::queue::state::State;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

pub use crate::db::catalog::MAX_NAME_LEN;

impl Db {
    /// The queue `name`, created durably if missing, with `options` (stored with the queue:
    /// opening it with other options replaces them). Names are 1 to 200 bytes, no NUL.
    pub fn queue(&self, name: &str, options: QueueOptions) -> Result<Queue> {
        validate_options(name, &options)?;
        open(self, name, Some(options))
    }

    /// The queue `name` with its stored options (created durably with default options if
    /// missing): for a handle that must not change how the queue is configured.
    pub fn open_queue(&self, name: &str) -> Result<Queue> {
        open(self, name, None)
    }

    /// The names of the queues, sorted.
    pub fn queues(&self) -> Result<Vec<String>> {
        catalog(self).names()
    }

    /// Deletes queue `name` and every item in it; returns false if there was no such queue.
    /// Handles still held fail with `InvalidArgument`; waiting consumers wake up and fail.
    pub fn delete_queue(&self, name: &str) -> Result<bool> {
        validate_name("queue", name)?;
        let registry = Registry::of(self);
        let mut queues = registry.queues();
        let shared = queues.get(name).cloned();
        let mut guard = shared.as_ref().map(|s| s.lock());
        if !catalog(self).delete(name)? {
            return Ok(false);
        }
        if let Some(state) = guard.as_deref_mut() {
            state.deleted = true;
        }
        drop(guard);
        if let Some(s) = queues.remove(name) {
            s.available.notify_all();
        }
        Ok(true)
    }
}

/// Opens queue `name` of `db`: with `Some(options)` creating it or replacing its options; with
/// `None` creating it with default options or keeping the stored ones.
pub(crate) fn open(db: &Db, name: &str, options: Option<QueueOptions>) -> Result<Queue> {
    validate_name("queue", name)?;
    let registry = Registry::of(db);
    let mut queues = registry.queues();
    let ks = catalog(db).keyspace(name)?;
    let catalog = catalog(db).entries()?;
    let shared = match queues.get(name) {
        Some(shared) => {
            if let Some(options) = options {
                let mut state = shared.lock();
                if state.options != options {
                    catalog.put(name.as_bytes(), &layout::encode_options(&options))?;
                    state.options = options;
                }
            }
            shared.clone()
        }
        None => {
            let stored = catalog
                .get(name.as_bytes())?
                .map(|v| layout::decode_options(&v, name))
                .transpose()?;
            let state = match stored {
                Some(stored) => {
                    let options = options.unwrap_or(stored.clone());
                    if options != stored {
                        catalog.put(name.as_bytes(), &layout::encode_options(&options))?;
                    }
                    let (state, returned) = State::load(&ks, name, options, registry.now())?;
                    // The reservations that came back are written as such, so that the
                    // state on disk is the state in memory.
                    let mut batch = WriteBatch::new();
                    for (group, id, entry) in returned {
                        batch.put_prefixed(
                            &ks.prefix,
                            &layout::pending_key(&group, id),
                            &entry.encode(),
                        )?;
                    }
                    db.write_encoded(batch, false)?;
                    state
                }
                None => create(db, &catalog, &ks, name, options.unwrap_or_default())?,
            };
            let shared = Arc::new(Shared::new(name, state));
            queues.insert(name.to_owned(), shared.clone());
            shared
        }
    };
    drop(queues);
    Ok(Queue {
        db: db.clone(),
        ks,
        shared,
        registry,
        group: Arc::from(""),
    })
}

/// Creates queue `name`: its catalog entry, counters and default group, in one write.
fn create(
    db: &Db,
    catalog: &Keyspace,
    ks: &Keyspace,
    name: &str,
    options: QueueOptions,
) -> Result<State> {
    let state = State::new(options);
    let mut batch = WriteBatch::new();
    batch.put_prefixed(
        &catalog.prefix,
        name.as_bytes(),
        &layout::encode_options(&state.options),
    )?;
    batch.put_prefixed(&ks.prefix, layout::STATS_KEY, &state.counters.encode())?;
    batch.put_prefixed(
        &ks.prefix,
        &layout::group_key(""),
        &layout::encode_group(state.counters.next_id),
    )?;
    db.write_encoded(batch, false)?;
    Ok(state)
}

/// The catalog of queues.
fn catalog(db: &Db) -> Catalog<'_> {
    Catalog { db, kind: "queue" }
}

/// The dead-letter queue of queue `name`.
pub(crate) fn dead_letter_name(name: &str, options: &QueueOptions) -> String {
    options
        .dead_letter
        .clone()
        .unwrap_or_else(|| format!("{name}.dead"))
}

/// `InvalidArgument` unless `name` is a valid queue name (`what == "queue"`: 1 to 200 bytes)
/// or group name (0 to 200 bytes; `""` is the default group), with no NUL.
pub(crate) fn validate_name(what: &str, name: &str) -> Result<()> {
    crate::db::catalog::validate_name(what, name, what != "queue")
}

fn validate_options(name: &str, o: &QueueOptions) -> Result<()> {
    if o.max_deliveries == Some(0) {
        return Err(Error::InvalidArgument(
            "max_deliveries must be at least 1".into(),
        ));
    }
    if o.default_lease.is_zero() {
        return Err(Error::InvalidArgument(
            "default_lease must be at least 1 ms".into(),
        ));
    }
    if o.max_deliveries.is_some() {
        let dead = dead_letter_name(name, o);
        validate_name("queue", &dead)?;
        if dead == name {
            return Err(Error::InvalidArgument(
                "a queue cannot be its own dead-letter queue".into(),
            ));
        }
    }
    Ok(())
}
