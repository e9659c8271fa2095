//! [`InternalIterator`] for a table cursor ([`TableIter`]).

use crate::iter::InternalIterator;
use crate::key::{compare_internal, ValueKind};
use crate::sstable::iter::TableIter;
use crate::Result;
use std::cmp::Ordering;

impl InternalIterator for TableIter {
    #[inline]
    fn valid(&self) -> bool {
        TableIter::valid(self)
    }

    fn seek_to_first(&mut self) -> Result<()> {
        TableIter::seek_to_first(self)
    }

    fn seek_to_last(&mut self) -> Result<()> {
        TableIter::seek_to_last(self)
    }

    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.seek_at(key, seq)
    }

    /// A forward seek to the first entry at or after the target, then one step back unless it
    /// landed exactly on the target (or, past the end, the last entry).
    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.seek_at(key, seq)?;
        if !TableIter::valid(self) {
            return TableIter::seek_to_last(self);
        }
        if compare_internal(TableIter::key(self), TableIter::seq(self), key, seq) != Ordering::Equal
        {
            TableIter::prev(self)?;
        }
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        TableIter::next(self)
    }

    fn prev(&mut self) -> Result<()> {
        TableIter::prev(self)
    }

    #[inline]
    fn key(&self) -> &[u8] {
        TableIter::key(self)
    }

    #[inline]
    fn seq(&self) -> u64 {
        TableIter::seq(self)
    }

    #[inline]
    fn kind(&self) -> ValueKind {
        TableIter::kind(self)
    }

    #[inline]
    fn value(&self) -> &[u8] {
        TableIter::value(self)
    }
}
