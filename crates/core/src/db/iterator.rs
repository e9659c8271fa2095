//! The public iterator: keys and values of one keyspace in order (or reverse), at a snapshot.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::keys;
use crate::db::options::IterOptions;
use crate::db::read::{ReadAt, ViewIterator};
use crate::db::view::View;
use crate::iter::KeyBounds;
use crate::Result;

/// A cursor over the keys and values of one keyspace, in key order or (with
/// [`IterOptions::reverse`]) backwards, seeing one consistent state of the database — writes
/// after it was created are not seen. It pins the tables it reads until dropped.
///
/// Use it as a cursor (`valid`, `key`, `value`, `advance`, `seek`: no copies) or as a Rust
/// [`Iterator`] of owned `(key, value)` pairs.
pub struct DbIterator {
    inner: ViewIterator,
    _view: Arc<View>,
    keyspace: u32,
    prefix_len: usize,
    reverse: bool,
    /// The iterator is positioned on an entry `next()` has not returned yet.
    fresh: bool,
    failed: bool,
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("reverse", &self.reverse)
            .field("valid", &self.valid())
            .finish()
    }
}

impl DbIterator {
    pub(crate) fn new(
        db: &Arc<DbInner>,
        keyspace: u32,
        at: ReadAt,
        options: &IterOptions,
    ) -> Result<DbIterator> {
        let (lower, upper) = keys::stored_bounds(
            keyspace,
            &options.lower,
            &options.upper,
            options.prefix.as_deref(),
        );
        let (inner, view) = db.view_iterator(at, KeyBounds::new(lower, upper))?;
        let mut it = DbIterator {
            inner,
            _view: view,
            keyspace,
            prefix_len: keys::prefix_len(keyspace),
            reverse: options.reverse,
            fresh: true,
            failed: false,
        };
        let positioned = if it.reverse {
            it.inner.seek_to_last()
        } else {
            it.inner.seek_to_first()
        };
        it.track(positioned)?;
        Ok(it)
    }

    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        !self.failed && self.inner.valid()
    }

    /// The current key (empty unless `valid()`).
    pub fn key(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        self.inner.key().get(self.prefix_len..).unwrap_or_default()
    }

    /// The current value (empty unless `valid()`).
    pub fn value(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        self.inner.value()
    }

    /// Moves to the next entry in the iterator's direction.
    pub fn advance(&mut self) -> Result<()> {
        self.fresh = false;
        let r = if self.reverse {
            self.inner.prev()
        } else {
            self.inner.next()
        };
        self.track(r)
    }

    /// Moves to the first key `>= key` (forward) or the last key `<= key` (reverse), within
    /// the iterator's bounds; the next call of [`Iterator::next`] returns that entry.
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let stored = keys::encode(self.keyspace, key);
        let r = if self.reverse {
            self.inner.seek_for_prev(&stored)
        } else {
            self.inner.seek(&stored)
        };
        self.fresh = true;
        self.track(r)
    }

    fn track(&mut self, r: Result<()>) -> Result<()> {
        if r.is_err() {
            self.failed = true;
        }
        r
    }
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    /// The entry under the cursor (first call, or after a seek), then each following one.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if !self.fresh {
            if let Err(e) = self.advance() {
                return Some(Err(e));
            }
        }
        self.fresh = false;
        self.valid()
            .then(|| Ok((self.key().to_vec(), self.value().to_vec())))
    }
}
