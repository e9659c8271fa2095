//! Exports of iterators. Entries cross the boundary in batches: one call returns many entries
//! packed into one byte array, which JavaScript slices without further copies.

use std::cell::RefCell;
use std::ops::Bound;

use shaledb::db::DbIterator;
use shaledb::{Error, IterOptions};
use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};
use crate::handles::{with, Table};
use crate::scratch;
use crate::snapshots::SNAPSHOTS;
use crate::wire::{ITER_WITH_KEYS, ITER_WITH_VALUES};

thread_local! {
    static ITERATORS: RefCell<Table<DbIterator>> = RefCell::new(Table::new("iterator"));
}

fn bound(key: Option<Vec<u8>>, inclusive: bool) -> Bound<Vec<u8>> {
    match key {
        None => Bound::Unbounded,
        Some(k) if inclusive => Bound::Included(k),
        Some(k) => Bound::Excluded(k),
    }
}

/// Opens an iterator over keyspace `ks` of `db` at `snapshot` (0: a snapshot taken now).
#[wasm_bindgen(js_name = iterOpen)]
#[allow(
    clippy::too_many_arguments,
    reason = "a flat signature is cheapest to cross"
)]
pub fn iter_open(
    db: u32,
    ks: u32,
    snapshot: u32,
    lower: Option<Vec<u8>>,
    lower_inclusive: bool,
    upper: Option<Vec<u8>>,
    upper_inclusive: bool,
    prefix: Option<Vec<u8>>,
    reverse: bool,
) -> JsResult<u32> {
    let options = IterOptions {
        lower: bound(lower, lower_inclusive),
        upper: bound(upper, upper_inclusive),
        prefix,
        reverse,
    };
    let iterator = js_result(with_db(db, |entry| {
        let keyspace = entry.keyspace(ks)?;
        if snapshot == 0 {
            keyspace.iter(options)
        } else {
            with(&SNAPSHOTS, |t| t.get(snapshot)?.iter(keyspace, options))
        }
    }))?;
    Ok(with(&ITERATORS, |t| t.insert(iterator)))
}

/// The next entries of iterator `it`: at most `max_entries`, and no more once `max_bytes` are
/// packed (at least one entry is always returned if any is left). Layout: one byte, 1 if the
/// iterator is exhausted after these entries (else 0); the number of entries, u32 LE; then per
/// entry `key length u32 LE, key` if `flags & 1` and `value length u32 LE, value` if
/// `flags & 2`.
///
/// The batch is left in the output buffer ([`crate::scratch`]), whose memory is reused from
/// batch to batch; returns its address, its length in the scratch buffer's first 4 bytes.
/// JavaScript copies it out once.
#[wasm_bindgen(js_name = iterNext)]
pub fn iter_next(it: u32, max_entries: u32, max_bytes: u32, flags: u32) -> JsResult<u32> {
    js_result(with(&ITERATORS, |t| {
        let iterator = t.get_mut(it)?;
        scratch::output_with(|out| {
            next_batch(iterator, max_entries, max_bytes as usize, flags, out)
        })
    }))
}

fn next_batch(
    iterator: &mut DbIterator,
    max_entries: u32,
    max_bytes: usize,
    flags: u32,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    out.extend_from_slice(&[0u8; 5]);
    let mut count = 0u32;
    while iterator.valid() && count < max_entries && out.len() < max_bytes {
        if flags & ITER_WITH_KEYS != 0 {
            put_bytes(out, iterator.key())?;
        }
        if flags & ITER_WITH_VALUES != 0 {
            put_bytes(out, iterator.value())?;
        }
        count += 1;
        iterator.advance()?;
    }
    let done = u8::from(!iterator.valid());
    if let Some(header) = out.get_mut(..5) {
        header[0] = done;
        header[1..].copy_from_slice(&count.to_le_bytes());
    }
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Error> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| Error::InvalidArgument("entry too large for an iterator batch".into()))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// Moves iterator `it` to the first key `>= key` (reverse: the last key `<= key`) within its
/// range and at its snapshot; the next [`iter_next`] starts there. Seeking an exhausted iterator
/// makes it valid again if an entry is there.
#[wasm_bindgen(js_name = iterSeek)]
pub fn iter_seek(it: u32, key: &[u8]) -> JsResult<()> {
    js_result(with(&ITERATORS, |t| t.get_mut(it)?.seek(key)))
}

/// Releases iterator `it` (idempotent).
#[wasm_bindgen(js_name = iterClose)]
pub fn iter_close(it: u32) {
    drop(with(&ITERATORS, |t| t.remove(it)));
}
