//! Topic logs in the database: ordered, durable sequences of records that many readers consume
//! at their own pace, from any point — atomic with the application's own writes and its queues.
//!
//! ```
//! use shaledb::topic::{AppendOptions, From, NewRecord, ReadLimits, TopicOptions};
//! use shaledb::{Batch, Db, Options, WriteOptions};
//!
//! let db = Db::open_in_memory(Options::default())?;
//! let events = db.topic("events", TopicOptions::default())?;
//! let first = events.append(NewRecord::value(b"signup:ada".to_vec()), &AppendOptions::default())?;
//! assert_eq!(first, 0); // offsets are dense, from 0, in commit order
//!
//! // The transactional outbox: a change and its event in one write.
//! let mut batch = Batch::new();
//! batch.put(&db.default_keyspace(), b"user:2", b"grace")?
//!     .append(&events, NewRecord::value(b"signup:grace".to_vec()))?;
//! db.write(&batch, WriteOptions::default())?;
//!
//! // A consumer: read from its committed offset, write its output and its progress atomically.
//! let records = events.read(&From::Committed("mailer".into()), ReadLimits::default())?;
//! let mut done = Batch::new();
//! for r in &records {
//!     done.put(&db.default_keyspace(), format!("mail:{}", r.offset).as_bytes(), &r.value)?;
//! }
//! done.commit_offset(&events, "mailer", records.last().map_or(0, |r| r.offset + 1))?;
//! db.write(&done, WriteOptions::default())?;
//! assert_eq!(events.committed("mailer")?, Some(2));
//! # Ok::<(), shaledb::Error>(())
//! ```
//!
//! # Model
//!
//! Each topic lives in its own keyspace: records by offset, the counters, and the committed
//! offsets of its consumer groups. Appends hold the topic's lock through their commit, so
//! offsets are dense and follow commit order; append times never go back, so a read from a time
//! is a binary search. Retention (by age, bytes or count, checked in each append's write) drops
//! the oldest records with one range tombstone, which compaction reclaims, and stops at the
//! lowest committed offset of a group unless `retention_passes_groups`. Reads below the first
//! record held fail with [`crate::Error::OffsetOutOfRange`], which says where the log starts now.
//! A [`Subscription`] yields records from a position on and then waits for the next commit.
//! Each commit is published to the topic's committed tail, which keeps the last records while
//! someone reads near the end: readers there take them without the topic's lock (which an
//! append holds through its commit) and without an iterator over the tree.

mod append;
mod deferred;
mod handle;
mod layout;
mod locked;
mod options;
mod record;
mod state;
mod subscription;
mod tail;

pub use handle::{Topic, TopicStats};
pub use options::{AppendOptions, From, ReadLimits, TopicOptions};
pub use record::{NewRecord, Record};
pub use subscription::Subscription;

use crate::db::Db;
use crate::named::catalog::Catalog;
use crate::named::handle::Handle;
use crate::named::registry::Registry;
use crate::named::state::NamedState;
use crate::topic::state::State;
use crate::Result;

pub use crate::db::names::MAX_NAME_LEN;

impl Db {
    /// The topic `name`, created durably if missing, with `options` (stored with the topic:
    /// opening it with other options replaces them). Names are 1 to 200 bytes, no NUL.
    pub fn topic(&self, name: &str, options: TopicOptions) -> Result<Topic> {
        catalog(self).validate(name)?;
        let registry = Registry::<State>::of(self);
        let mut topics = registry.lock();
        let ks = catalog(self).keyspace(name)?;
        let catalog = catalog(self).entries()?;
        let encoded = layout::encode_options(&options);
        let shared = match topics.get(name) {
            Some(shared) => {
                let mut state = shared.lock();
                if state.options != options {
                    catalog.put(name.as_bytes(), &encoded)?;
                    state.options = options;
                }
                drop(state);
                shared
            }
            None => {
                let stored = catalog.get(name.as_bytes())?;
                if stored.as_deref() != Some(&encoded[..]) {
                    catalog.put(name.as_bytes(), &encoded)?;
                }
                let state = match stored {
                    Some(_) => State::load(&ks, name, options)?,
                    None => State::new(options),
                };
                topics.insert(self, name, state)
            }
        };
        drop(topics);
        let tail = shared.lock().tail.clone();
        Ok(Topic {
            tail,
            handle: Handle {
                db: self.clone(),
                ks,
                shared,
                registry,
            },
        })
    }

    /// The existing topic `name` with its stored options, or `None` (nothing is created).
    pub fn existing_topic(&self, name: &str) -> Result<Option<Topic>> {
        catalog(self).validate(name)?;
        match catalog(self).entries()?.get(name.as_bytes())? {
            Some(v) => {
                let options = layout::decode_options(&v, name)?;
                self.topic(name, options).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The names of the topics, sorted.
    pub fn topics(&self) -> Result<Vec<String>> {
        catalog(self).names()
    }

    /// Deletes topic `name` and every record in it; returns false if there was no such topic.
    /// Handles still held fail with `InvalidArgument`; waiting subscribers wake up and fail.
    pub fn delete_topic(&self, name: &str) -> Result<bool> {
        Registry::<State>::delete(self, name)
    }
}

/// The catalog of topics.
fn catalog(db: &Db) -> Catalog<'_> {
    Catalog::of(db, State::KIND)
}
