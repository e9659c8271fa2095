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
mod counters;
mod deferred;
mod handle;
mod item;
mod layout;
mod open;
mod options;
mod position;
mod produce;
mod state;
mod tx;
mod unwritten;

pub use admin::{GroupStats, QueueStats};
pub use handle::Queue;
pub use item::{Lease, QueueItem};
pub use options::{GroupStart, PushOptions, QueueOptions, ReserveOptions, WhenFull};

use crate::db::Db;
use crate::named::registry::Registry;
use crate::queue::open::{catalog, validate_options};
use crate::queue::state::State;
use crate::Result;

pub use crate::db::names::MAX_NAME_LEN;

impl Db {
    /// The queue `name`, created durably if missing, with `options` (stored with the queue:
    /// opening it with other options replaces them). Names are 1 to 200 bytes, no NUL.
    pub fn queue(&self, name: &str, options: QueueOptions) -> Result<Queue> {
        validate_options(name, &options)?;
        Queue::open(self, name, Some(options))
    }

    /// The queue `name` with its stored options (created durably with default options if
    /// missing): for a handle that must not change how the queue is configured.
    pub fn open_queue(&self, name: &str) -> Result<Queue> {
        Queue::open(self, name, None)
    }

    /// The names of the queues, sorted.
    pub fn queues(&self) -> Result<Vec<String>> {
        catalog(self).names()
    }

    /// Deletes queue `name` and every item in it; returns false if there was no such queue.
    /// Handles still held fail with `InvalidArgument`; waiting consumers wake up and fail.
    pub fn delete_queue(&self, name: &str) -> Result<bool> {
        Registry::<State>::delete(self, name)
    }
}
