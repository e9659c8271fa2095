//! A cursor over one table, moving forward and backward across data blocks.

use std::sync::Arc;

use super::block::BlockCursor;
use super::format::MAX_SEQ;
use super::open_table::Inner;
use super::readahead::Readahead;
use crate::key::ValueKind;
use crate::Result;

/// A position in a table. Invalid until a seek, and after moving off either end. Methods that
/// may read a block return `Result`; after an error the cursor is invalid.
#[derive(Debug)]
pub struct TableIter {
    table: Arc<Inner>,
    block_index: usize,
    cursor: Option<BlockCursor>,
    /// Reads blocks ahead while the cursor moves forward block after block.
    readahead: Readahead,
}

impl TableIter {
    pub(crate) fn new(table: Arc<Inner>) -> TableIter {
        TableIter {
            table,
            block_index: 0,
            cursor: None,
            readahead: Readahead::default(),
        }
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.cursor.as_ref().is_some_and(BlockCursor::valid)
    }

    /// The current user key (empty when invalid).
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.cursor
            .as_ref()
            .map(BlockCursor::key)
            .unwrap_or_default()
    }

    /// The current sequence number.
    #[inline]
    pub fn seq(&self) -> u64 {
        self.cursor.as_ref().map(BlockCursor::seq).unwrap_or(0)
    }

    /// The current kind.
    #[inline]
    pub fn kind(&self) -> ValueKind {
        self.cursor
            .as_ref()
            .map(BlockCursor::kind)
            .unwrap_or(ValueKind::Value)
    }

    /// The current value (empty when invalid).
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.cursor
            .as_ref()
            .map(BlockCursor::value)
            .unwrap_or_default()
    }

    /// Loads block `i` into the cursor; `false` if there is no such block.
    fn load(&mut self, i: usize) -> Result<bool> {
        self.block_index = i;
        if let Some(c) = &self.cursor {
            let same = self
                .table
                .index
                .get(i)
                .is_some_and(|e| e.handle.offset == c.block().offset_in_file());
            if same {
                return Ok(true);
            }
        }
        self.cursor = None;
        match self.table.block_via(i, Some(&mut self.readahead))? {
            Some(b) => {
                self.cursor = Some(BlockCursor::new(b));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.cursor = None;
        }
        r
    }

    /// Moves to the first entry of the table.
    pub fn seek_to_first(&mut self) -> Result<()> {
        let r = self.first_from(0);
        self.guard(r)
    }

    /// Moves to the last entry of the table.
    pub fn seek_to_last(&mut self) -> Result<()> {
        let n = self.table.index.len();
        let r = if n == 0 {
            self.cursor = None;
            Ok(())
        } else {
            self.last_from(n - 1)
        };
        self.guard(r)
    }

    /// Moves to the first entry whose key is `>= key` (its newest version first).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.seek_at(key, MAX_SEQ)
    }

    /// Moves to the first entry at or after (`key`, `seq`) in table order: the newest version of
    /// `key` with sequence number `<= seq`, or else the next entry.
    pub fn seek_at(&mut self, key: &[u8], seq: u64) -> Result<()> {
        let r = self.seek_inner(key, seq);
        self.guard(r)
    }

    fn seek_inner(&mut self, key: &[u8], seq: u64) -> Result<()> {
        let i = self.table.index_lower_bound(key, seq);
        if !self.load(i)? {
            return Ok(());
        }
        if let Some(c) = &mut self.cursor {
            c.seek(key, seq)?;
            if c.valid() {
                return Ok(());
            }
        }
        self.first_from(i + 1)
    }

    /// Moves to the next entry.
    #[allow(
        clippy::should_implement_trait,
        reason = "a fallible cursor step, not an Iterator"
    )]
    pub fn next(&mut self) -> Result<()> {
        let r = self.next_inner();
        self.guard(r)
    }

    fn next_inner(&mut self) -> Result<()> {
        let Some(c) = &mut self.cursor else {
            return Ok(());
        };
        if !c.valid() {
            return Ok(());
        }
        c.next()?;
        if c.valid() {
            return Ok(());
        }
        self.first_from(self.block_index + 1)
    }

    /// Moves to the previous entry.
    pub fn prev(&mut self) -> Result<()> {
        let r = self.prev_inner();
        self.guard(r)
    }

    fn prev_inner(&mut self) -> Result<()> {
        let Some(c) = &mut self.cursor else {
            return Ok(());
        };
        if !c.valid() {
            return Ok(());
        }
        c.prev()?;
        if c.valid() {
            return Ok(());
        }
        match self.block_index.checked_sub(1) {
            Some(i) => self.last_from(i),
            None => {
                self.cursor = None;
                Ok(())
            }
        }
    }

    /// First entry of block `i`, or of the first non-empty block after it.
    fn first_from(&mut self, mut i: usize) -> Result<()> {
        loop {
            if !self.load(i)? {
                return Ok(());
            }
            if let Some(c) = &mut self.cursor {
                c.seek_to_first()?;
                if c.valid() {
                    return Ok(());
                }
            }
            i += 1;
        }
    }

    /// Last entry of block `i`, or of the last non-empty block before it.
    fn last_from(&mut self, mut i: usize) -> Result<()> {
        loop {
            if !self.load(i)? {
                return Ok(());
            }
            if let Some(c) = &mut self.cursor {
                c.seek_to_last()?;
                if c.valid() {
                    return Ok(());
                }
            }
            match i.checked_sub(1) {
                Some(p) => i = p,
                None => {
                    self.cursor = None;
                    return Ok(());
                }
            }
        }
    }
}
