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

mod append;
mod deferred;
mod handle;
mod layout;
mod locked;
mod options;
mod record;
mod shared;
mod subscription;

use std::sync::Arc;

pub use handle::{Topic, TopicStats};
pub use options::{AppendOptions, From, ReadLimits, TopicOptions};
pub use record::{NewRecord, Record};
pub use subscription::Subscription;

use crate::db::catalog::Catalog;
use crate::db::Db;
use crate::topic::shared::{Registry, Shared, State};

use crate::Result;

pub use crate::db::catalog::MAX_NAME_LEN;

impl Db {
    /// The topic `name`, created durably if missing, with `options` (stored with the topic:
    /// opening it with other options replaces them). Names are 1 to 200 bytes, no NUL.
    pub fn topic(&self, name: &str, options: TopicOptions) -> Result<Topic> {
        validate_name("topic", name)?;
        let registry = Registry::of(self);
        let mut topics = registry.topics();
        let ks = catalog(self).keyspace(name)?;
        let catalog = catalog(self).entries()?;
        let encoded = shared_options(&options);
        let shared = match topics.get(name) {
            Some(shared) => {
                let mut state = shared.lock();
                if state.options != options {
                    catalog.put(name.as_bytes(), &encoded)?;
                    state.options = options;
                }
                drop(state);
                shared.clone()
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
                let shared = Arc::new(Shared {
                    name: name.to_owned(),
                    state: std::sync::Mutex::new(state),
                    appended: std::sync::Condvar::new(),
                });
                topics.insert(name.to_owned(), shared.clone());
                shared
            }
        };
        drop(topics);
        Ok(Topic {
            db: self.clone(),
            ks,
            shared,
            registry,
        })
    }

    /// The existing topic `name` with its stored options, or `None` (nothing is created).
    pub fn existing_topic(&self, name: &str) -> Result<Option<Topic>> {
        validate_name("topic", name)?;
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
        validate_name("topic", name)?;
        let registry = Registry::of(self);
        let mut topics = registry.topics();
        let shared = topics.get(name).cloned();
        let mut guard = shared.as_ref().map(|s| s.lock());
        if !catalog(self).delete(name)? {
            return Ok(false);
        }
        if let Some(state) = guard.as_deref_mut() {
            state.deleted = true;
        }
        drop(guard);
        if let Some(s) = topics.remove(name) {
            s.appended.notify_all();
        }
        Ok(true)
    }
}

/// The catalog of topics.
fn catalog(db: &Db) -> Catalog<'_> {
    Catalog { db, kind: "topic" }
}

fn shared_options(o: &TopicOptions) -> [u8; 26] {
    layout::encode_options(o)
}

/// `InvalidArgument` unless `name` is a valid topic name (1 to 200 bytes) or group name (0 to
/// 200 bytes), with no NUL.
pub(crate) fn validate_name(what: &str, name: &str) -> Result<()> {
    crate::db::catalog::validate_name(what, name, what != "topic")
}
