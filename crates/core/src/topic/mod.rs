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

use crate::db::{Db, IterOptions};
use crate::topic::shared::{Registry, Shared, State};
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// The reserved keyspace holding every topic's name and options.
const CATALOG: &str = "\0topics";

/// Longest topic or group name, in bytes.
pub const MAX_NAME_LEN: usize = 200;

impl Db {
    /// The topic `name`, created durably if missing, with `options` (stored with the topic:
    /// opening it with other options replaces them). Names are 1 to 200 bytes, no NUL.
    pub fn topic(&self, name: &str, options: TopicOptions) -> Result<Topic> {
        validate_name("topic", name)?;
        let registry = Registry::of(&self.inner);
        let mut topics = registry.topics();
        let ks = self.reserved_keyspace(&format!("\0topic:{name}"))?;
        let catalog = self.reserved_keyspace(CATALOG)?;
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
        let catalog = self.reserved_keyspace(CATALOG)?;
        match catalog.get(name.as_bytes())? {
            Some(v) => {
                let options = layout::decode_options(&v, name)?;
                self.topic(name, options).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The names of the topics, sorted.
    pub fn topics(&self) -> Result<Vec<String>> {
        let catalog = self.reserved_keyspace(CATALOG)?;
        catalog
            .iter(IterOptions::default())?
            .map(|e| {
                let (k, _) = e?;
                String::from_utf8(k)
                    .map_err(|_| Error::corruption("topic catalog", 0, "a topic name is not UTF-8"))
            })
            .collect()
    }

    /// Deletes topic `name` and every record in it; returns false if there was no such topic.
    /// Handles still held fail with `InvalidArgument`; waiting subscribers wake up and fail.
    pub fn delete_topic(&self, name: &str) -> Result<bool> {
        validate_name("topic", name)?;
        let registry = Registry::of(&self.inner);
        let mut topics = registry.topics();
        let catalog = self.reserved_keyspace(CATALOG)?;
        if catalog.get(name.as_bytes())?.is_none() {
            return Ok(false);
        }
        let ks = self.reserved_keyspace(&format!("\0topic:{name}"))?;
        let shared = topics.get(name).cloned();
        let mut guard = shared.as_ref().map(|s| s.lock());
        let mut batch = WriteBatch::new();
        batch.delete_prefixed(&catalog.prefix, name.as_bytes())?;
        batch.delete_range(
            &[&ks.prefix[..], layout::ALL_START].concat(),
            &[&ks.prefix[..], layout::ALL_END].concat(),
        )?;
        self.inner.write(batch, false)?;
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

fn shared_options(o: &TopicOptions) -> [u8; 26] {
    layout::encode_options(o)
}

/// `InvalidArgument` unless `name` is a valid topic name (1 to 200 bytes) or group name (0 to
/// 200 bytes), with no NUL.
pub(crate) fn validate_name(what: &str, name: &str) -> Result<()> {
    let empty_ok = what != "topic";
    if (name.is_empty() && !empty_ok) || name.len() > MAX_NAME_LEN || name.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "a {what} name must be {} to {MAX_NAME_LEN} bytes with no NUL character",
            u8::from(!empty_ok)
        )));
    }
    Ok(())
}
