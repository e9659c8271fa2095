//! [`Topic`]: a handle on a named topic log.

use std::ops::Bound;
use std::sync::Arc;

use crate::db::{IterOptions, Keyspace};
use crate::named::catalog::validate_group;
use crate::named::handle::{Handle, Named};
use crate::named::locked::run;
use crate::named::registry::deleted;
use crate::named::state::NamedState;
use crate::topic::append;
use crate::topic::layout;
use crate::topic::locked::Locked;
use crate::topic::options::{AppendOptions, From, ReadLimits, TopicOptions};
use crate::topic::record::{self, NewRecord, Record};
use crate::topic::state::State;
use crate::topic::tail::{Tail, TailRead};
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// A named topic log of a database (see the [module documentation](crate::topic)). Cheap to
/// clone; natively `Send + Sync`; every handle of one name shares one state.
#[derive(Clone)]
pub struct Topic {
    pub(crate) handle: Handle<State>,
    /// The committed tail (the state's, held here to be read without the topic's lock).
    pub(crate) tail: Arc<Tail>,
}

impl std::fmt::Debug for Topic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topic").field("name", &self.name()).finish()
    }
}

impl Named for Topic {
    type State = State;
    fn handle(&self) -> &Handle<State> {
        &self.handle
    }
}

/// Figures about a topic ([`Topic::stats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicStats {
    /// The first offset the topic holds.
    pub first: u64,
    /// The offset the next record gets.
    pub next: u64,
    /// Bytes of the held records as stored.
    pub bytes: u64,
    /// Per consumer group: name, committed offset, lag (records after it).
    pub groups: Vec<(String, u64, u64)>,
}

impl Topic {
    /// The topic's name.
    pub fn name(&self) -> &str {
        self.handle.name()
    }

    /// The topic's options.
    pub fn options(&self) -> TopicOptions {
        self.handle.shared.lock().options.clone()
    }

    /// Appends `record`; returns its offset. When it returns the record has reached the OS
    /// (with `options.sync`, stable storage) and subscribers are woken.
    pub fn append(&self, record: NewRecord, options: &AppendOptions) -> Result<u64> {
        Ok(self.append_many(std::slice::from_ref(&record), options)?[0])
    }

    /// Appends every record of `records` atomically, at consecutive offsets; returns them.
    pub fn append_many(&self, records: &[NewRecord], options: &AppendOptions) -> Result<Vec<u64>> {
        for r in records {
            self.handle.db.check_value(&r.value)?;
        }
        self.locked(options.sync, |t, batch| {
            append::append(t.state, &self.handle.ks, records, t.now, batch)
        })
    }

    /// Up to `limits` records from `from` on, in offset order (empty at the end of the log).
    /// Errors: `OffsetOutOfRange` when `from` is below the first record held (retention dropped
    /// it) or past the next offset.
    pub fn read(&self, from: &From, limits: ReadLimits) -> Result<Vec<Record>> {
        let offset = self.resolve(from)?;
        self.read_at(offset, limits)
    }

    /// The last `n` records (fewer if the topic holds fewer).
    pub fn latest(&self, n: usize) -> Result<Vec<Record>> {
        let (first, next) = self.tail.bounds();
        let from = next.saturating_sub(n as u64).max(first);
        self.read_at(
            from,
            ReadLimits {
                limit: n,
                max_bytes: usize::MAX,
            },
        )
    }

    /// The offset `from` names now.
    pub fn resolve(&self, from: &From) -> Result<u64> {
        let group = match from {
            From::Committed(group) => self.state()?.groups.get(group).copied(),
            _ => None,
        };
        let (first, next) = self.tail.bounds();
        let offset = match from {
            From::Offset(o) => *o,
            From::Earliest => first,
            From::Latest => next,
            From::Committed(_) => group.unwrap_or(first),
            From::Time(t) => return self.offset_at_time(*t, first, next),
        };
        if offset < first || offset > next {
            return Err(self.out_of_range(offset, first, next));
        }
        Ok(offset)
    }

    /// Up to `limits` records from `offset` on: from the committed tail when it holds them,
    /// else from the tree.
    pub(crate) fn read_at(&self, offset: u64, limits: ReadLimits) -> Result<Vec<Record>> {
        match self.tail.read(offset, limits) {
            TailRead::Records(records) => Ok(records),
            TailRead::Closed => Err(deleted(State::KIND, self.name())),
            TailRead::OutOfRange { first, next } => Err(self.out_of_range(offset, first, next)),
            TailRead::Stored { next } => self.read_stored(offset, next, limits),
        }
    }

    /// Up to `limits` records of `offset..next` from the tree.
    fn read_stored(&self, offset: u64, next: u64, limits: ReadLimits) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let stored = self.handle.ks.iter(IterOptions {
            lower: Bound::Included(layout::RECORDS.key(offset).to_vec()),
            upper: Bound::Excluded(layout::RECORDS.key(next).to_vec()),
            ..IterOptions::default()
        })?;
        for entry in stored {
            if out.len() >= limits.limit || (bytes >= limits.max_bytes && !out.is_empty()) {
                break;
            }
            let (key, value) = entry?;
            let at = layout::RECORDS.number(&key).ok_or_else(|| self.damaged())?;
            if at != offset + out.len() as u64 {
                // Retention dropped the start of the read meanwhile.
                let (first, next) = self.tail.bounds();
                return Err(self.out_of_range(offset, first, next));
            }
            bytes += value.len();
            out.push(record::decode(&value, at, self.name())?);
        }
        Ok(out)
    }

    /// The first offset whose record was appended at or after `time` (append times never go
    /// back, so a binary search over the offsets finds it).
    fn offset_at_time(&self, time: u64, first: u64, next: u64) -> Result<u64> {
        let (mut lo, mut hi) = (first, next);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.handle.ks.get(&layout::RECORDS.key(mid))? {
                Some(v) if record::time_of(&v, self.name())? >= time => hi = mid,
                _ => lo = mid + 1,
            }
        }
        Ok(lo)
    }

    /// Commits `offset` for consumer group `group` (the next record it will read), creating the
    /// group. Errors: `OffsetOutOfRange` past the next offset.
    pub fn commit(&self, group: &str, offset: u64) -> Result<()> {
        validate_group(group)?;
        self.locked(false, |t, batch| {
            commit_offset(t.state, &self.handle.ks, self.name(), group, offset, batch)
        })
    }

    /// The committed offset of `group`, if it committed one.
    pub fn committed(&self, group: &str) -> Result<Option<u64>> {
        Ok(self.state()?.groups.get(group).copied())
    }

    /// Removes consumer group `group` (retention no longer waits for it). Returns false if it
    /// did not exist.
    pub fn remove_group(&self, group: &str) -> Result<bool> {
        validate_group(group)?;
        let mut state = self.state()?;
        if !state.groups.contains_key(group) {
            return Ok(false);
        }
        let mut batch = WriteBatch::new();
        batch.delete_prefixed(&self.handle.ks.prefix, &layout::group_key(group))?;
        self.handle.db.write_encoded(batch, false)?;
        state.groups.remove(group);
        Ok(true)
    }

    /// Drops the records past a retention limit now (appends do it too).
    pub fn apply_retention(&self) -> Result<()> {
        self.locked(false, |t, batch| {
            let before = t.state.counters;
            append::retain(t.state, &self.handle.ks, t.now, &[], batch)?;
            if t.state.counters != before {
                let encoded = t.state.counters.encode();
                batch.put_prefixed(&self.handle.ks.prefix, layout::STATS_KEY, &encoded)?;
            }
            Ok(())
        })
    }

    /// Figures about the topic now.
    pub fn stats(&self) -> Result<TopicStats> {
        let state = self.state()?;
        let c = state.counters;
        Ok(TopicStats {
            first: c.first,
            next: c.next,
            bytes: c.bytes,
            groups: state
                .groups
                .iter()
                .map(|(g, &o)| (g.clone(), o, c.next.saturating_sub(o)))
                .collect(),
        })
    }

    /// Runs `op` on this topic, locked ([`run`]), and commits the writes it adds to the batch
    /// (synced if `sync`).
    fn locked<T>(
        &self,
        sync: bool,
        op: impl FnOnce(&mut Locked<'_>, &mut WriteBatch) -> Result<T>,
    ) -> Result<T> {
        let db = &self.handle.db;
        let mut commit = |b| db.write_encoded(b, sync);
        run(
            &[&self.handle],
            WriteBatch::new(),
            &mut commit,
            |ts, batch| op(&mut ts[0], batch),
        )
    }

    /// The topic's state, locked. Errors: `InvalidArgument` if the topic was deleted.
    pub(crate) fn state(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.handle.shared.lock_live()
    }

    fn out_of_range(&self, offset: u64, first: u64, next: u64) -> Error {
        Error::OffsetOutOfRange {
            topic: self.name().to_owned(),
            offset,
            first,
            next,
        }
    }

    fn damaged(&self) -> Error {
        Error::corruption(
            format!("topic {:?}", self.name()),
            0,
            "malformed record key",
        )
    }
}

/// Commits `offset` for `group` into `batch` and the state (which
/// [`run`](crate::named::locked::run) puts back if the commit fails).
pub(crate) fn commit_offset(
    state: &mut State,
    ks: &Keyspace,
    name: &str,
    group: &str,
    offset: u64,
    batch: &mut WriteBatch,
) -> Result<()> {
    let c = state.counters;
    if offset > c.next {
        return Err(Error::OffsetOutOfRange {
            topic: name.to_owned(),
            offset,
            first: c.first,
            next: c.next,
        });
    }
    batch.put_prefixed(
        &ks.prefix,
        &layout::group_key(group),
        &layout::encode_offset(offset),
    )?;
    state.groups.insert(group.to_owned(), offset);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, Options};

    /// An append committed to the tree but not yet published to the tail: the moment between
    /// the commit and its publication (`locked.rs`), made to last.
    fn commit_unpublished(topic: &Topic, values: &[&str]) {
        let records: Vec<NewRecord> = values.iter().map(|v| NewRecord::value(*v)).collect();
        let mut state = topic.state().unwrap();
        let mut batch = WriteBatch::new();
        append::append(&mut state, &topic.handle.ks, &records, 0, &mut batch).unwrap();
        topic.handle.db.write_encoded(batch, false).unwrap();
    }

    #[test]
    fn a_read_from_the_tree_stops_at_the_published_end() {
        let db = Db::open_in_memory(Options::default()).unwrap();
        let topic = db.topic("t", TopicOptions::default()).unwrap();
        let none = AppendOptions::default();
        topic.append(NewRecord::value("a"), &none).unwrap();
        topic.append(NewRecord::value("b"), &none).unwrap();
        commit_unpublished(&topic, &["c", "d"]);
        let limits = ReadLimits::default();
        let read = topic.read_at(0, limits).unwrap();
        assert_eq!(read.len(), 2, "only the published records");
        let position = read.last().map_or(0, |r| r.offset + 1);
        assert_eq!(topic.read_at(position, limits).unwrap(), Vec::new());
    }
}
