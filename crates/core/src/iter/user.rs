//! [`DbIterator`]: the user-facing iterator. Over a merge of internal sources it yields each
//! user key once, with its newest value visible at a snapshot, within bounds, both ways.
//!
//! Visibility: an entry is visible at snapshot `S` when its seq ≤ `S`. A key is shown when its
//! newest visible entry (range tombstone entries aside) is a value that no range tombstone
//! visible at `S` and newer than the value covers. Range tombstone entries in the stream are
//! skipped: they take effect through the [`RangeTombstoneSet`] given at construction.
//!
//! Positioning follows LevelDB's `DBIter`:
//! - Forward: the inner cursor sits on the current key's newest visible entry, so `key` and
//!   `value` borrow from it. `next` remembers the key (one copy into a reused buffer) and skips
//!   its older versions.
//! - Reverse: versions come oldest first, so the iterator reads all versions of a key and stops
//!   on the previous key's last entry; the current key and value are copies (reused buffers).
//! - Switching forward → reverse: `seek_for_prev(current key, u64::MAX)` puts the inner cursor
//!   on the last entry of an earlier key; reverse → forward: `seek(current key, 0)` puts it on
//!   the current key's oldest entry or the next key, and that key's entries are skipped. (A
//!   seek rather than LevelDB's step-and-scan: a merge repositions all children on a direction
//!   change anyway, and the seek also skips versions newer than the snapshot.)

use std::sync::Arc;

use super::bounds::KeyBounds;
use super::internal::InternalIterator;
use super::range_del::RangeTombstoneSet;

use crate::key::ValueKind;
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A cursor over user keys and values at a snapshot, confined to [`KeyBounds`]. Invalid until
/// positioned. After an `Err` it is invalid; position it again to continue.
#[derive(Debug)]
pub struct DbIterator<I> {
    inner: I,
    tombstones: Arc<RangeTombstoneSet>,
    snapshot: u64,
    bounds: KeyBounds,
    direction: Direction,
    valid: bool,
    /// Forward: the key whose versions are being skipped. Reverse: the current key.
    saved_key: Vec<u8>,
    /// Reverse: the current value.
    saved_value: Vec<u8>,
}

impl<I: InternalIterator> DbIterator<I> {
    /// An iterator over `inner` (typically a [`super::MergingIterator`] of every source of the
    /// read view, newest first) at sequence number `snapshot`, hiding what `tombstones` (every
    /// range tombstone of those sources) deletes, within `bounds`.
    pub fn new(
        inner: I,
        tombstones: Arc<RangeTombstoneSet>,
        snapshot: u64,
        bounds: KeyBounds,
    ) -> DbIterator<I> {
        DbIterator {
            inner,
            tombstones,
            snapshot,
            bounds,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
        }
    }

    /// The snapshot sequence number.
    pub fn snapshot(&self) -> u64 {
        self.snapshot
    }

    /// The bounds.
    pub fn bounds(&self) -> &KeyBounds {
        &self.bounds
    }

    /// Whether the iterator is on a key.
    #[inline]
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key (empty when invalid).
    #[inline]
    pub fn key(&self) -> &[u8] {
        match (self.valid, self.direction) {
            (false, _) => &[],
            (true, Direction::Forward) => self.inner.key(),
            (true, Direction::Reverse) => &self.saved_key,
        }
    }

    /// The current value (empty when invalid).
    #[inline]
    pub fn value(&self) -> &[u8] {
        match (self.valid, self.direction) {
            (false, _) => &[],
            (true, Direction::Forward) => self.inner.value(),
            (true, Direction::Reverse) => &self.saved_value,
        }
    }

    fn guard(&mut self, r: Result<()>) -> Result<()> {
        if r.is_err() {
            self.valid = false;
        }
        r
    }

    /// Moves to the first key within the bounds.
    pub fn seek_to_first(&mut self) -> Result<()> {
        let r = match self.bounds.lower.clone() {
            std::ops::Bound::Unbounded => {
                self.direction = Direction::Forward;
                self.inner
                    .seek_to_first()
                    .and_then(|()| self.find_next_user_entry(false))
            }
            std::ops::Bound::Included(l) | std::ops::Bound::Excluded(l) => self.forward_from(&l),
        };
        self.guard(r)
    }

    /// Moves to the last key within the bounds.
    pub fn seek_to_last(&mut self) -> Result<()> {
        let r = match self.bounds.upper.clone() {
            std::ops::Bound::Unbounded => {
                self.direction = Direction::Reverse;
                self.inner
                    .seek_to_last()
                    .and_then(|()| self.find_prev_user_entry())
            }
            std::ops::Bound::Included(u) | std::ops::Bound::Excluded(u) => self.reverse_from(&u),
        };
        self.guard(r)
    }

    /// Moves to the first key `>= key` within the bounds (and sets the direction forward).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let r = self.forward_from(key);
        self.guard(r)
    }

    /// Moves to the last key `<= key` within the bounds (and sets the direction reverse).
    pub fn seek_for_prev(&mut self, key: &[u8]) -> Result<()> {
        let r = self.reverse_from(key);
        self.guard(r)
    }

    /// Moves to the next key (invalid past the last). Does nothing when invalid.
    #[allow(
        clippy::should_implement_trait,
        reason = "a fallible cursor step, not an Iterator"
    )]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let r = self.next_inner();
        self.guard(r)
    }

    /// Moves to the previous key (invalid before the first). Does nothing when invalid.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let r = self.prev_inner();
        self.guard(r)
    }

    fn next_inner(&mut self) -> Result<()> {
        match self.direction {
            Direction::Forward => {
                self.saved_key.clear();
                self.saved_key.extend_from_slice(self.inner.key());
                self.inner.next()?;
            }
            Direction::Reverse => {
                // saved_key holds the current key; land on its oldest version or after it.
                self.direction = Direction::Forward;
                self.inner.seek(&self.saved_key, 0)?;
            }
        }
        self.find_next_user_entry(true)
    }

    fn prev_inner(&mut self) -> Result<()> {
        if self.direction == Direction::Forward {
            self.saved_key.clear();
            self.saved_key.extend_from_slice(self.inner.key());
            self.direction = Direction::Reverse;
            // The last entry of an earlier key: (key, u64::MAX) precedes every version of key.
            self.inner.seek_for_prev(&self.saved_key, u64::MAX)?;
        }
        self.find_prev_user_entry()
    }

    /// Forward from the first key `>= target`, clamped to the lower bound.
    fn forward_from(&mut self, target: &[u8]) -> Result<()> {
        self.direction = Direction::Forward;
        match &self.bounds.lower {
            std::ops::Bound::Excluded(l) if target <= l.as_slice() => {
                self.saved_key.clear();
                self.saved_key.extend_from_slice(l);
                self.inner.seek(l, 0)?;
                self.find_next_user_entry(true)
            }
            std::ops::Bound::Included(l) if target < l.as_slice() => {
                self.inner.seek(l, u64::MAX)?;
                self.find_next_user_entry(false)
            }
            _ => {
                self.inner.seek(target, u64::MAX)?;
                self.find_next_user_entry(false)
            }
        }
    }

    /// Reverse from the last key `<= target`, clamped to the upper bound.
    fn reverse_from(&mut self, target: &[u8]) -> Result<()> {
        self.direction = Direction::Reverse;
        match &self.bounds.upper {
            // Last entry of a key < u.
            std::ops::Bound::Excluded(u) if target >= u.as_slice() => {
                self.inner.seek_for_prev(u, u64::MAX)?
            }
            // Last entry of a key <= u (all versions of u included).
            std::ops::Bound::Included(u) if target > u.as_slice() => {
                self.inner.seek_for_prev(u, 0)?
            }
            _ => self.inner.seek_for_prev(target, 0)?,
        }
        self.find_prev_user_entry()
    }

    /// Forward scan from the inner position to the next shown key. With `skipping`, entries
    /// of `saved_key` are passed over.
    fn find_next_user_entry(&mut self, mut skipping: bool) -> Result<()> {
        while self.inner.valid() {
            let key = self.inner.key();
            if self.bounds.above_upper(key) {
                break;
            }
            let seq = self.inner.seq();
            if seq <= self.snapshot && !(skipping && key == self.saved_key.as_slice()) {
                match self.inner.kind() {
                    ValueKind::Value if !self.tombstones.covers(key, seq, self.snapshot) => {
                        self.valid = true;
                        return Ok(());
                    }
                    // Deleted (point or range): hide its older versions too.
                    ValueKind::Value | ValueKind::Tombstone => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(key);
                        skipping = true;
                    }
                    // RangeTombstone: applied through the set, not a version of its key.
                    _ => {}
                }
            }
            self.inner.next()?;
        }
        self.valid = false;
        Ok(())
    }

    /// Reverse scan from the inner position: reads the versions of a key (oldest first) and
    /// stops on the entry before the first key whose newest visible version is shown.
    fn find_prev_user_entry(&mut self) -> Result<()> {
        let mut found = false;
        while self.inner.valid() {
            let key = self.inner.key();
            if self.bounds.below_lower(key) {
                break;
            }
            let seq = self.inner.seq();
            if seq <= self.snapshot {
                let kind = self.inner.kind();
                if kind != ValueKind::RangeTombstone {
                    if found && key < self.saved_key.as_slice() {
                        // An earlier key: the current one is settled.
                        break;
                    }
                    if kind == ValueKind::Value && !self.tombstones.covers(key, seq, self.snapshot)
                    {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                        found = true;
                    } else {
                        found = false;
                    }
                }
            }
            self.inner.prev()?;
        }
        self.valid = found;
        Ok(())
    }
}
