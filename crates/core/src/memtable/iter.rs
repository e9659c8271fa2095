//! [`MemTableIter`]: the memtable's cursor as an [`InternalIterator`].

use std::sync::Arc;

use super::order::Probe;
use super::skiplist::{Cursor, SkipList};
use crate::iter::InternalIterator;
use crate::key::ValueKind;
use crate::Result;

/// A cursor over a [`super::MemTable`], both directions: `next` follows a link, `prev` and the
/// seeks search the skip list (`O(log n)`). It holds the memtable's entries alive and reads
/// them in place (no copies).
pub struct MemTableIter {
    cursor: Cursor,
}

impl std::fmt::Debug for MemTableIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTableIter")
            .field("valid", &self.valid())
            .finish()
    }
}

impl MemTableIter {
    pub(super) fn new(list: Arc<SkipList>) -> MemTableIter {
        MemTableIter {
            cursor: Cursor::new(list),
        }
    }
}

impl InternalIterator for MemTableIter {
    fn valid(&self) -> bool {
        self.cursor.current().is_some()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.cursor.seek_to_first();
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor.seek_to_last();
        Ok(())
    }

    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.cursor.seek(&Probe::new(key, seq));
        Ok(())
    }

    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.cursor.seek_for_prev(&Probe::new(key, seq));
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.cursor.next();
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        self.cursor.prev();
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.cursor.current().map(|e| e.key()).unwrap_or_default()
    }

    fn seq(&self) -> u64 {
        self.cursor.current().map_or(0, |e| e.seq())
    }

    fn kind(&self) -> ValueKind {
        self.cursor
            .current()
            .map_or(ValueKind::Tombstone, |e| e.kind())
    }

    fn value(&self) -> &[u8] {
        self.cursor.current().map(|e| e.value()).unwrap_or_default()
    }
}
