//! The internal iterator protocol: a cursor over internal entries that every source
//! (memtable, table, merge) implements.

use crate::key::ValueKind;
use crate::Result;

/// A boxed source for a [`MergingIterator`](super::MergingIterator): `Send` natively (so a
/// database iterator can move between threads), no bound on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxedInternalIterator<'a> = Box<dyn InternalIterator + Send + 'a>;
/// A boxed source for a [`MergingIterator`](super::MergingIterator): `Send` natively (so a
/// database iterator can move between threads), no bound on wasm32.
#[cfg(target_arch = "wasm32")]
pub type BoxedInternalIterator<'a> = Box<dyn InternalIterator + 'a>;

/// A cursor over internal entries in internal order. Every source (memtable, table, merge)
/// implements it, so the engine composes them freely.
///
/// Contract: after any positioning call returns `Ok`, `valid()` tells whether the cursor is on
/// an entry; `key`/`seq`/`kind`/`value` require `valid()` (they return empty/zero otherwise,
/// never panic). After an `Err` the cursor's position is unspecified; callers stop.
pub trait InternalIterator {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// Moves to the last entry.
    fn seek_to_last(&mut self) -> Result<()>;
    /// Moves to the first entry at or after (`key`, `seq`) in internal order (so `seq =
    /// u64::MAX` finds the newest version of `key` or the next key).
    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()>;
    /// Moves to the last entry at or before (`key`, `seq`) in internal order (so `seq = 0`
    /// finds the oldest version of `key` or the previous key).
    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()>;
    /// Moves to the next entry (invalid past the last).
    fn next(&mut self) -> Result<()>;
    /// Moves to the previous entry (invalid before the first).
    fn prev(&mut self) -> Result<()>;
    /// The current user key.
    fn key(&self) -> &[u8];
    /// The current sequence number.
    fn seq(&self) -> u64;
    /// The current kind.
    fn kind(&self) -> ValueKind;
    /// The current value (for a range tombstone: its exclusive end key).
    fn value(&self) -> &[u8];
}

impl<T: InternalIterator + ?Sized> InternalIterator for Box<T> {
    #[inline]
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        (**self).seek_to_last()
    }
    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        (**self).seek(key, seq)
    }
    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        (**self).seek_for_prev(key, seq)
    }
    fn next(&mut self) -> Result<()> {
        (**self).next()
    }
    fn prev(&mut self) -> Result<()> {
        (**self).prev()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    #[inline]
    fn seq(&self) -> u64 {
        (**self).seq()
    }
    #[inline]
    fn kind(&self) -> ValueKind {
        (**self).kind()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        (**self).value()
    }
}
