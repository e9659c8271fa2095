//! The byte contract between these bindings and the TypeScript package, written once on this
//! side: every constant of the layouts that cross (docs/FORMAT.md, "JavaScript ↔
//! WebAssembly"), and the one reader of packed fields. `packages/js/src/encoding/wire.ts` is
//! the other side; the package's test `wire-contract.test.ts` reads this file and checks that
//! both sides hold the same names and values (so keep each constant on one line:
//! `pub const NAME: type = value;`).
//!
//! Common to every packed layout: integers little-endian; a *field* is a `u32` length then that
//! many bytes; ids, offsets, sequence numbers and times cross as `f64` (exact up to 2^53 - 1).

// Both sides hold every constant; the key-value module (built without the `full` feature) uses
// only those of the key-value layouts.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

use shaledb::Error;

/// Packed batch (`dbWrite`, `dbWriteIds`), per operation: `op u8, number u32` (a keyspace,
/// queue or topic handle number), then fields. Put: key, value.
pub const OP_PUT: u8 = 0;
/// Delete: key.
pub const OP_DELETE: u8 = 1;
/// Range deletion: start, end.
pub const OP_DELETE_RANGE: u8 = 2;
/// Queue push (queue handle): value, push options ([`PUSH_OPTIONS_LEN`] bytes).
pub const OP_PUSH: u8 = 3;
/// Queue ack (queue handle): the lease ([`LEASE_LEN`] bytes).
pub const OP_ACK: u8 = 4;
/// Topic append (topic handle): one packed record.
pub const OP_APPEND: u8 = 5;
/// Topic offset commit (topic handle): group name, offset `u64`.
pub const OP_COMMIT_OFFSET: u8 = 6;
/// The batch's meta for the change feed (number 0): the meta. Always first.
pub const OP_META: u8 = 7;
/// Push options: delay and ttl in ms, `f64` each, negative for none.
pub const PUSH_OPTIONS_LEN: u32 = 16;
/// A lease: the item id `u64`, the delivery `u32`.
pub const LEASE_LEN: u32 = 12;
/// `queueRead` modes.
pub const READ_TAKE: u8 = 0;
/// A reservation (leased).
pub const READ_RESERVE: u8 = 1;
/// A look, nothing changed.
pub const READ_PEEK: u8 = 2;
/// Queue items read back: `id f64, pushedAt f64, leaseUntil f64 (-1: none), deliveries
/// u32, value length u32` (this many bytes), then the value.
pub const ITEM_HEADER_LEN: u32 = 32;
/// `iterNext` flags: include keys.
pub const ITER_WITH_KEYS: u32 = 1;
/// Include values.
pub const ITER_WITH_VALUES: u32 = 2;
/// A field length that says "absent": a topic record's key, a change's meta.
pub const NO_FIELD: u32 = 0xFFFF_FFFF;
/// Change ops read back: `kind u8` then keyspace name, key (start), and for a put or a
/// range deletion the value (end). A put.
pub const CHANGE_PUT: u8 = 0;
/// A deletion.
pub const CHANGE_DELETE: u8 = 1;
/// A range deletion.
pub const CHANGE_DELETE_RANGE: u8 = 2;
/// Bytes of a change read back before its meta: `seq, lastSeq, time` (`f64` each).
pub const CHANGE_HEAD_LEN: u32 = 24;
/// Where a topic read starts (`topicRead`, `topicResolve`: kind, value, group): at offset
/// `value`.
pub const FROM_OFFSET: u8 = 0;
/// At the first record held.
pub const FROM_EARLIEST: u8 = 1;
/// At the next record appended.
pub const FROM_LATEST: u8 = 2;
/// At the first record appended at or after time `value` (ms since the epoch).
pub const FROM_TIME: u8 = 3;
/// At the committed offset of consumer group `group`.
pub const FROM_GROUP: u8 = 4;

/// Reads the fields of a packed layout; running past its end is `INVALID_ARGUMENT` naming
/// `what` (e.g. "batch").
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { bytes, what }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn truncated(&self) -> Error {
        Error::InvalidArgument(format!("truncated {}", self.what))
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.bytes.len() < n {
            return Err(self.truncated());
        }
        let (out, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let (n, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or_else(|| self.truncated())?;
        self.bytes = rest;
        Ok(*n)
    }

    pub fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u32(&mut self) -> Result<u32, Error> {
        self.array().map(u32::from_le_bytes)
    }

    pub fn u64(&mut self) -> Result<u64, Error> {
        self.array().map(u64::from_le_bytes)
    }

    pub fn f64(&mut self) -> Result<f64, Error> {
        self.array().map(f64::from_le_bytes)
    }

    /// A length-prefixed field.
    pub fn field(&mut self) -> Result<&'a [u8], Error> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// A field whose length may be [`NO_FIELD`] (absent: `None`).
    pub fn optional_field(&mut self) -> Result<Option<&'a [u8]>, Error> {
        let n = self.u32()?;
        if n == NO_FIELD {
            return Ok(None);
        }
        self.take(n as usize).map(Some)
    }
}

/// Appends `bytes` as a field (a length the `u32` cannot hold is cut to [`NO_FIELD`], which a
/// reader refuses as truncated rather than misreads).
pub fn put_field(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(NO_FIELD).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Queue id (or topic offset) `id` as a JavaScript number; an id past 2^53 - 1 (which a number would round) is
/// `InvalidArgument` rather than a wrong id.
pub fn js_id(id: u64) -> Result<f64, Error> {
    if id > MAX_SAFE_INTEGER {
        return Err(Error::InvalidArgument(format!(
            "queue id or topic offset {id} is beyond 2^53 - 1, which a JavaScript number cannot hold exactly"
        )));
    }
    Ok(id as f64)
}

/// Queue ids as JavaScript numbers ([`js_id`]).
pub fn js_ids(ids: Vec<u64>) -> Result<Vec<f64>, Error> {
    ids.into_iter().map(js_id).collect()
}

/// A duration in ms from JavaScript: `None` if negative or not a number.
pub fn optional_ms(ms: f64) -> Option<std::time::Duration> {
    (ms >= 0.0).then(|| std::time::Duration::from_millis(ms as u64))
}

/// A count from JavaScript: `None` if negative or not a number.
pub fn optional_count(value: f64) -> Option<u64> {
    (value >= 0.0).then_some(value as u64)
}
