//! [`WriteBatch`]: an ordered list of writes applied atomically, and its binary encoding (the
//! payload of one WAL record).
//!
//! # Encoding (version 1)
//!
//! | field | size | meaning |
//! |-------|------|---------|
//! | first_seq | u64 LE | sequence number of the first operation; operation `i` gets `first_seq + i` |
//! | count | u32 LE | number of operations |
//! | ops | ... | `count` operations back to back, nothing after them |
//!
//! Each operation: `u8 tag` (0 delete, 1 put, 2 delete_range, 3 annotation), `uvarint key_len`,
//! key, then for a put `uvarint value_len`, value; for a delete_range `uvarint end_len`, end
//! (exclusive). A delete has nothing more. An annotation (at most one per batch, the last
//! operation) says something about the batch instead of writing a key: its "key" is the commit
//! time (8 bytes, u64 LE milliseconds since the Unix epoch) or empty (no time), its second part
//! the writer's meta (`uvarint len`, bytes; empty for none, at most [`MAX_META_SIZE`]). It takes
//! a sequence number like any operation (so a batch replayed elsewhere keeps its numbers) and
//! is never inserted into a memtable.
//!
//! The batch keeps its encoded form as it grows, so handing it to the WAL costs no encoding
//! step. Keys are opaque bytes here (the database layer prefixes keyspace ids).
//!
//! Decoding bytes read from disk ([`WriteBatch::decode`]) is total: malformed input gives
//! [`Error::Corruption`], never a panic, and allocates at most the input's size.

use crate::key::MAX_SEQ;
use crate::varint::{get_uvarint, put_uvarint_vec};
use crate::{Error, Result};

/// Largest user key: 64 KiB.
pub const MAX_USER_KEY_SIZE: usize = 64 * 1024;

/// Largest key a batch accepts: a user key of [`MAX_USER_KEY_SIZE`] plus the keyspace prefix
/// the database puts in front of it (a uvarint of a `u32`, at most 5 bytes). Larger keys are
/// rejected with [`Error::InvalidArgument`] when added, and are corruption when decoded.
pub const MAX_KEY_SIZE: usize = MAX_USER_KEY_SIZE + 5;

/// Largest value a batch accepts: 256 MiB. Larger values are rejected with
/// [`Error::InvalidArgument`] when added, and are corruption when decoded.
pub const MAX_VALUE_SIZE: usize = 256 * 1024 * 1024;

/// Largest encoded batch: 512 MiB (room for one maximal value and more). A write that would
/// grow a batch past it is rejected with [`Error::InvalidArgument`]; the WAL reader accepts
/// records up to this size.
pub const MAX_BATCH_SIZE: usize = 512 * 1024 * 1024;

/// Largest meta a batch may carry ([`WriteBatch::annotate`]): 64 KiB.
pub const MAX_META_SIZE: usize = 64 * 1024;

/// Size of the encoded header (`first_seq` and `count`).
pub const BATCH_HEADER_LEN: usize = 12;

const TAG_DELETE: u8 = 0;
const TAG_PUT: u8 = 1;
const TAG_DELETE_RANGE: u8 = 2;
const TAG_ANNOTATION: u8 = 3;

/// One operation of a batch, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Delete `key`.
    Delete {
        /// The key.
        key: &'a [u8],
    },
    /// Delete every key in `start..end` (end exclusive; `start < end`).
    DeleteRange {
        /// First key deleted.
        start: &'a [u8],
        /// First key after the range.
        end: &'a [u8],
    },
    /// The batch's annotation: when it was committed and what its writer said about it.
    Annotation {
        /// Commit time, milliseconds since the Unix epoch, if recorded.
        time: Option<u64>,
        /// The writer's meta, if any.
        meta: Option<&'a [u8]>,
    },
}

/// An ordered list of writes, applied atomically: after a crash either all of them are
/// recovered or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    /// The encoded batch, header included; always a valid encoding.
    rep: Vec<u8>,
    count: u32,
    /// Whether the last operation is an annotation (then no operation may follow).
    annotated: bool,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch {
            rep: vec![0; BATCH_HEADER_LEN],
            count: 0,
            annotated: false,
        }
    }

    /// An empty batch with room for `bytes` bytes of operations without growing (a single
    /// put of a key and value takes their lengths plus [`WriteBatch::OP_OVERHEAD`]).
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(BATCH_HEADER_LEN.saturating_add(bytes));
        rep.extend_from_slice(&[0; BATCH_HEADER_LEN]);
        WriteBatch {
            rep,
            count: 0,
            annotated: false,
        }
    }

    /// Bytes an operation takes beyond its key and value (tag, lengths), at most.
    pub const OP_OVERHEAD: usize = 1 + 10 + 10;

    /// Adds "set `key` to `value`". Errors (the batch is unchanged): `InvalidArgument` if the
    /// key is over [`MAX_KEY_SIZE`], the value over [`MAX_VALUE_SIZE`], or the batch would grow
    /// past [`MAX_BATCH_SIZE`] or `u32::MAX` operations.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        check_key(key)?;
        if value.len() > MAX_VALUE_SIZE {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes is over the limit of {MAX_VALUE_SIZE} bytes",
                value.len()
            )));
        }
        self.push(TAG_PUT, key, Some(value))
    }

    /// Adds "delete `key`". Errors as [`WriteBatch::put`].
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        check_key(key)?;
        self.push(TAG_DELETE, key, None)
    }

    /// Adds "delete every key in `start..end`" (end exclusive), one range tombstone. Errors as
    /// [`WriteBatch::put`], and `InvalidArgument` unless `start < end`.
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        check_key(start)?;
        check_key(end)?;
        if start >= end {
            return Err(Error::InvalidArgument(
                "delete_range needs start < end (end is exclusive)".into(),
            ));
        }
        self.push(TAG_DELETE_RANGE, start, Some(end))
    }

    /// Adds the batch's annotation (module doc): the commit `time` and the writer's `meta`, as
    /// the last operation. Errors (the batch is unchanged): `InvalidArgument` if the batch is
    /// annotated already, the meta is over [`MAX_META_SIZE`], or the batch is full.
    pub fn annotate(&mut self, time: Option<u64>, meta: Option<&[u8]>) -> Result<()> {
        if self.annotated() {
            return Err(Error::InvalidArgument(
                "the batch is annotated already".into(),
            ));
        }
        let meta = meta.unwrap_or_default();
        if meta.len() > MAX_META_SIZE {
            return Err(Error::InvalidArgument(format!(
                "meta of {} bytes is over the limit of {MAX_META_SIZE} bytes",
                meta.len()
            )));
        }
        let time = time.map(u64::to_le_bytes);
        self.push(
            TAG_ANNOTATION,
            time.as_ref().map_or(&[][..], |t| &t[..]),
            Some(meta),
        )?;
        self.annotated = true;
        Ok(())
    }

    /// Whether the batch carries an annotation ([`WriteBatch::annotate`]).
    pub fn annotated(&self) -> bool {
        self.annotated
    }

    /// Appends every operation of `other`, in order. Errors (the batch is unchanged) if the
    /// result would be over [`MAX_BATCH_SIZE`] or `u32::MAX` operations.
    pub fn append(&mut self, other: &WriteBatch) -> Result<()> {
        let ops = other.rep.get(BATCH_HEADER_LEN..).unwrap_or_default();
        let count = self.count.checked_add(other.count);
        if self.annotated && !other.is_empty() {
            return Err(Error::InvalidArgument(
                "nothing can follow a batch's annotation".into(),
            ));
        }
        match count {
            Some(count) if self.rep.len() + ops.len() <= MAX_BATCH_SIZE => {
                self.rep.extend_from_slice(ops);
                self.set_count(count);
                self.annotated |= other.annotated;
                Ok(())
            }
            _ => Err(Error::InvalidArgument(
                "appending would make the batch too large".into(),
            )),
        }
    }

    fn push(&mut self, tag: u8, key: &[u8], second: Option<&[u8]>) -> Result<()> {
        self.push_parts(tag, &[], key, second)
    }

    /// Like [`WriteBatch::put`] with the key given in two parts, `prefix ++ key`, without
    /// concatenating them first (the database's keyspace prefix and the user's key).
    pub fn put_prefixed(&mut self, prefix: &[u8], key: &[u8], value: &[u8]) -> Result<()> {
        check_key_len(prefix.len() + key.len())?;
        if value.len() > MAX_VALUE_SIZE {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes is over the limit of {MAX_VALUE_SIZE} bytes",
                value.len()
            )));
        }
        self.push_parts(TAG_PUT, prefix, key, Some(value))
    }

    /// Like [`WriteBatch::delete`] with the key given as `prefix ++ key`.
    pub fn delete_prefixed(&mut self, prefix: &[u8], key: &[u8]) -> Result<()> {
        check_key_len(prefix.len() + key.len())?;
        self.push_parts(TAG_DELETE, prefix, key, None)
    }

    /// Appends one operation whose key is `prefix ++ key`, growing the buffer once.
    fn push_parts(
        &mut self,
        tag: u8,
        prefix: &[u8],
        key: &[u8],
        second: Option<&[u8]>,
    ) -> Result<()> {
        if self.annotated {
            return Err(Error::InvalidArgument(
                "nothing can follow a batch's annotation".into(),
            ));
        }
        let key_len = prefix.len() + key.len();
        let second_len = second.map_or(0, |s| s.len() + 10);
        let grown = self.rep.len() + 1 + 10 + key_len + second_len;
        let Some(count) = self.count.checked_add(1) else {
            return Err(Error::InvalidArgument(
                "a batch holds at most u32::MAX operations".into(),
            ));
        };
        if grown > MAX_BATCH_SIZE {
            return Err(Error::InvalidArgument(format!(
                "the batch would grow past {MAX_BATCH_SIZE} bytes; split it"
            )));
        }
        self.rep.reserve(grown - self.rep.len());
        self.rep.push(tag);
        put_uvarint_vec(&mut self.rep, key_len as u64);
        self.rep.extend_from_slice(prefix);
        self.rep.extend_from_slice(key);
        if let Some(s) = second {
            put_uvarint_vec(&mut self.rep, s.len() as u64);
            self.rep.extend_from_slice(s);
        }
        self.set_count(count);
        Ok(())
    }

    fn set_count(&mut self, count: u32) {
        self.count = count;
        if let Some(b) = self.rep.get_mut(8..BATCH_HEADER_LEN) {
            b.copy_from_slice(&count.to_le_bytes());
        }
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Size of the encoded batch in bytes (what its WAL record will hold, before compression).
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Removes every operation (keeps the allocation) and resets the sequence number to 0.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(BATCH_HEADER_LEN, 0);
        self.count = 0;
        self.annotated = false;
    }

    /// The operations, in the order they were added.
    pub fn iter(&self) -> BatchIter<'_> {
        BatchIter {
            data: &self.rep,
            pos: BATCH_HEADER_LEN,
            remaining: self.count,
        }
    }

    /// The sequence number of the first operation, as stored in the encoding (0 until
    /// [`WriteBatch::set_first_seq`] or when decoded).
    pub fn first_seq(&self) -> u64 {
        let mut b = [0u8; 8];
        if let Some(s) = self.rep.get(..8) {
            b.copy_from_slice(s);
        }
        u64::from_le_bytes(b)
    }

    /// Stores `first_seq` in the encoding: operation `i` gets `first_seq + i`.
    pub fn set_first_seq(&mut self, first_seq: u64) {
        if let Some(b) = self.rep.get_mut(..8) {
            b.copy_from_slice(&first_seq.to_le_bytes());
        }
    }

    /// The encoded batch (the module doc's layout), with the sequence number last set.
    pub fn as_bytes(&self) -> &[u8] {
        &self.rep
    }

    /// Decodes an encoded batch; returns its first sequence number and the batch. Any
    /// malformation (short header, unknown tag, a length past the end, a key or value over the
    /// limits, `start >= end` in a range, too few or too many bytes for `count`, sequence
    /// numbers past [`MAX_SEQ`]) is [`Error::Corruption`] naming `file` and `offset` (where the
    /// caller found the bytes), with the position inside the batch in the reason.
    pub fn decode(data: &[u8], file: &str, offset: u64) -> Result<(u64, WriteBatch)> {
        let corrupt = |at: usize, why: &str| {
            Error::corruption(file, offset, format!("write batch, byte {at}: {why}"))
        };
        let (Some(seq_bytes), Some(count_bytes)) = (data.get(..8), data.get(8..BATCH_HEADER_LEN))
        else {
            return Err(corrupt(0, "shorter than the 12-byte batch header"));
        };
        let mut s = [0u8; 8];
        s.copy_from_slice(seq_bytes);
        let first_seq = u64::from_le_bytes(s);
        let mut c = [0u8; 4];
        c.copy_from_slice(count_bytes);
        let count = u32::from_le_bytes(c);
        if first_seq > MAX_SEQ || first_seq.saturating_add(u64::from(count)) > MAX_SEQ + 1 {
            return Err(corrupt(0, "sequence numbers past the maximum"));
        }
        let mut pos = BATCH_HEADER_LEN;
        let mut annotated = false;
        for _ in 0..count {
            let at = pos;
            if annotated {
                return Err(corrupt(at, "an operation after the annotation"));
            }
            let op = parse_op(data, &mut pos).map_err(|why| corrupt(at, why))?;
            annotated = matches!(op, BatchOp::Annotation { .. });
        }
        if pos != data.len() {
            return Err(corrupt(pos, "bytes after the last operation"));
        }
        Ok((
            first_seq,
            WriteBatch {
                rep: data.to_vec(),
                count,
                annotated,
            },
        ))
    }
}

fn check_key(key: &[u8]) -> Result<()> {
    check_key_len(key.len())
}

fn check_key_len(len: usize) -> Result<()> {
    if len > MAX_KEY_SIZE {
        return Err(Error::InvalidArgument(format!(
            "key of {len} bytes is over the limit of {MAX_KEY_SIZE} bytes"
        )));
    }
    Ok(())
}

/// Reads a uvarint length followed by that many bytes, at most `limit` of them.
fn take<'a>(data: &'a [u8], pos: &mut usize, limit: usize) -> Result<&'a [u8], &'static str> {
    let len = get_uvarint(data, pos).map_err(|_| "bad length varint")?;
    if len > limit as u64 {
        return Err("length over the limit");
    }
    let end = pos.checked_add(len as usize).ok_or("length past the end")?;
    let bytes = data.get(*pos..end).ok_or("length past the end")?;
    *pos = end;
    Ok(bytes)
}

/// Parses one operation at `*pos`, advancing it.
fn parse_op<'a>(data: &'a [u8], pos: &mut usize) -> Result<BatchOp<'a>, &'static str> {
    let tag = *data.get(*pos).ok_or("operation missing")?;
    *pos += 1;
    let key = take(data, pos, MAX_KEY_SIZE)?;
    let op = match tag {
        TAG_DELETE => BatchOp::Delete { key },
        TAG_PUT => BatchOp::Put {
            key,
            value: take(data, pos, MAX_VALUE_SIZE)?,
        },
        TAG_DELETE_RANGE => {
            let end = take(data, pos, MAX_KEY_SIZE)?;
            if key >= end {
                return Err("range with start >= end");
            }
            BatchOp::DeleteRange { start: key, end }
        }
        TAG_ANNOTATION => {
            let meta = take(data, pos, MAX_META_SIZE)?;
            let time = match key.len() {
                0 => None,
                8 => {
                    let mut t = [0u8; 8];
                    t.copy_from_slice(key);
                    Some(u64::from_le_bytes(t))
                }
                _ => return Err("an annotation's time must be 0 or 8 bytes"),
            };
            let meta = (!meta.is_empty()).then_some(meta);
            BatchOp::Annotation { time, meta }
        }
        _ => return Err("unknown operation tag"),
    };
    Ok(op)
}

/// Iterator over a batch's operations ([`WriteBatch::iter`]).
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: u32,
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = BatchOp<'a>;

    fn next(&mut self) -> Option<BatchOp<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // A batch's encoding is valid by construction (built or decoded), so this never fails;
        // if it did, iteration stops rather than panics.
        match parse_op(self.data, &mut self.pos) {
            Ok(op) => Some(op),
            Err(_) => {
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining as usize))
    }
}

impl<'a> IntoIterator for &'a WriteBatch {
    type Item = BatchOp<'a>;
    type IntoIter = BatchIter<'a>;
    fn into_iter(self) -> BatchIter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prefixed_keys_encode_like_their_concatenation() {
        let mut a = WriteBatch::new();
        a.put(b"\x07user:1", b"v").unwrap();
        a.delete(b"\x07user:2").unwrap();
        let mut b = WriteBatch::new();
        b.put_prefixed(b"\x07", b"user:1", b"v").unwrap();
        b.delete_prefixed(b"\x07", b"user:2").unwrap();
        assert_eq!(a.as_bytes(), b.as_bytes());
        let long = vec![0u8; MAX_KEY_SIZE];
        assert!(matches!(
            b.put_prefixed(b"\x07", &long, b"v"),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn encoding_is_the_documented_layout() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"vv").unwrap();
        b.delete(b"d").unwrap();
        b.delete_range(b"a", b"b").unwrap();
        b.set_first_seq(0x0102);
        let expected: Vec<u8> = [
            &[0x02, 0x01, 0, 0, 0, 0, 0, 0][..],
            &[3, 0, 0, 0],
            &[1, 1, b'k', 2, b'v', b'v'],
            &[0, 1, b'd'],
            &[2, 1, b'a', 1, b'b'],
        ]
        .concat();
        assert_eq!(b.as_bytes(), &expected[..]);
        assert_eq!(b.approximate_size(), expected.len());
        let (seq, d) = WriteBatch::decode(&expected, "f", 0).unwrap();
        assert_eq!(seq, 0x0102);
        assert_eq!(d, b);
    }

    #[test]
    fn limits_are_enforced_with_invalid_argument_and_leave_the_batch_unchanged() {
        let mut b = WriteBatch::new();
        let big_key = vec![0u8; MAX_KEY_SIZE + 1];
        assert_eq!(b.put(&big_key, b"").unwrap_err().code(), "INVALID_ARGUMENT");
        assert_eq!(b.delete(&big_key).unwrap_err().code(), "INVALID_ARGUMENT");
        assert!(b.put(&big_key[..MAX_KEY_SIZE], b"v").is_ok());
        assert_eq!(
            b.delete_range(b"b", b"a").unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            b.delete_range(b"a", b"a").unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(b.len(), 1);
        let before = b.clone();
        let _ = b.delete_range(b"z", b"a");
        assert_eq!(b, before);
    }

    #[test]
    fn clear_empties_the_batch() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        b.set_first_seq(9);
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b, WriteBatch::new());
        assert_eq!(b.iter().count(), 0);
    }

    #[test]
    fn append_concatenates_operations() {
        let mut a = WriteBatch::new();
        a.put(b"a", b"1").unwrap();
        let mut b = WriteBatch::new();
        b.delete(b"b").unwrap();
        b.delete_range(b"c", b"d").unwrap();
        a.append(&b).unwrap();
        let ops: Vec<_> = a.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put {
                    key: b"a",
                    value: b"1"
                },
                BatchOp::Delete { key: b"b" },
                BatchOp::DeleteRange {
                    start: b"c",
                    end: b"d"
                }
            ]
        );
        assert_eq!(WriteBatch::decode(a.as_bytes(), "f", 0).unwrap().1, a);
    }

    #[test]
    fn decode_rejects_each_malformation_as_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value").unwrap();
        let good = b.as_bytes().to_vec();
        let cases: Vec<Vec<u8>> = vec![
            good[..5].to_vec(),                                         // short header
            good[..good.len() - 1].to_vec(),                            // value cut
            [&good[..], &[0]].concat(),                                 // trailing byte
            [&good[..8], &[2, 0, 0, 0], &good[12..]].concat(),          // count too high
            [&good[..12], &[7], &good[13..]].concat(),                  // unknown tag
            [&u64::MAX.to_le_bytes()[..], &good[8..]].concat(),         // seq past max
            [&good[..12], &[2, 1, b'b', 1, b'a']].concat(),             // range start > end
            [&good[..12], &[0, 0xff, 0xff, 0xff, 0xff, 0x0f]].concat(), // key len huge
        ];
        for (i, case) in cases.iter().enumerate() {
            let e = WriteBatch::decode(case, "wal-000001.log", 77).unwrap_err();
            match e {
                Error::Corruption { file, offset, .. } => {
                    assert_eq!((file.as_str(), offset), ("wal-000001.log", 77), "case {i}")
                }
                other => panic!("case {i}: {other}"),
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put(Vec<u8>, Vec<u8>),
        Delete(Vec<u8>),
        Range(Vec<u8>, Vec<u8>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let k = || proptest::collection::vec(any::<u8>(), 0..12);
        prop_oneof![
            (k(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(k, v)| Op::Put(k, v)),
            k().prop_map(Op::Delete),
            (k(), k()).prop_map(|(a, b)| Op::Range(a, b)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn encode_decode_round_trips(ops in proptest::collection::vec(op(), 0..20), seq in 0..MAX_SEQ / 2) {
            let mut b = WriteBatch::new();
            let mut want = Vec::new();
            for op in &ops {
                match op {
                    Op::Put(k, v) => { b.put(k, v).unwrap(); want.push(op.clone()); }
                    Op::Delete(k) => { b.delete(k).unwrap(); want.push(op.clone()); }
                    Op::Range(s, e) => {
                        if b.delete_range(s, e).is_ok() { want.push(op.clone()); }
                        else { prop_assert!(s >= e); }
                    }
                }
            }
            b.set_first_seq(seq);
            let (got_seq, d) = WriteBatch::decode(b.as_bytes(), "f", 0).unwrap();
            prop_assert_eq!(got_seq, seq);
            prop_assert_eq!(d.len(), want.len());
            for (got, w) in d.iter().zip(&want) {
                let same = match (got, w) {
                    (BatchOp::Put { key, value }, Op::Put(k, v)) => key == &k[..] && value == &v[..],
                    (BatchOp::Delete { key }, Op::Delete(k)) => key == &k[..],
                    (BatchOp::DeleteRange { start, end }, Op::Range(s, e)) => start == &s[..] && end == &e[..],
                    _ => false,
                };
                prop_assert!(same);
            }
        }

        #[test]
        fn decode_never_panics_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = WriteBatch::decode(&data, "f", 0);
        }

        #[test]
        fn decode_of_mutated_batches_is_ok_or_corruption(
            ops in proptest::collection::vec(op(), 1..8),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            cut in any::<usize>(),
        ) {
            let mut b = WriteBatch::new();
            for op in &ops {
                let _ = match op {
                    Op::Put(k, v) => b.put(k, v),
                    Op::Delete(k) => b.delete(k),
                    Op::Range(s, e) => b.delete_range(s, e),
                };
            }
            let mut data = b.as_bytes().to_vec();
            for (at, x) in flips {
                let n = data.len();
                if let Some(byte) = data.get_mut(at % n) { *byte ^= x; }
            }
            data.truncate(cut % (data.len() + 1));
            match WriteBatch::decode(&data, "f", 3) {
                Ok((_, d)) => {
                    // Whatever decodes is a valid batch: re-encoding it is identical.
                    prop_assert_eq!(d.as_bytes(), &data[..]);
                    prop_assert_eq!(d.iter().count(), d.len());
                }
                Err(e) => prop_assert_eq!(e.code(), "CORRUPTION"),
            }
        }
    }
}
