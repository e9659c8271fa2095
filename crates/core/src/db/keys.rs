//! How keyspaces share one LSM tree: every key is stored as `uvarint(keyspace id) ++ user key`.
//!
//! A uvarint is self-delimiting, so no keyspace's prefix is a prefix of another's: the keys of
//! one keyspace are contiguous in byte order, and a keyspace's range is
//! `[prefix, prefix_successor)`. The default keyspace has id 0 (prefix `00`), so its keys cost
//! one extra byte.

use std::ops::Bound;

use crate::iter::bounds::prefix_successor;
#[cfg(test)]
use crate::varint::get_uvarint;
use crate::varint::put_uvarint_vec;

/// The id of the default keyspace.
pub const DEFAULT_KEYSPACE: u32 = 0;

/// The stored form of `key` in keyspace `id`.
pub fn encode(id: u32, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 5);
    put_uvarint_vec(&mut out, u64::from(id));
    out.extend_from_slice(key);
    out
}

#[cfg(test)]
/// Splits a stored key into its keyspace id and user key; `None` if it has no valid prefix.
pub fn decode(stored: &[u8]) -> Option<(u32, &[u8])> {
    let mut pos = 0;
    let id = get_uvarint(stored, &mut pos).ok()?;
    Some((u32::try_from(id).ok()?, stored.get(pos..)?))
}

/// The length of keyspace `id`'s prefix.
pub fn prefix_len(id: u32) -> usize {
    encode(id, b"").len()
}

/// The smallest stored key after every key of keyspace `id` (exclusive upper end of its range).
pub fn keyspace_end(id: u32) -> Vec<u8> {
    let mut p = encode(id, b"");
    // The last byte of a uvarint is < 0x80, so incrementing it cannot overflow, and the result
    // is not a prefix of any key of keyspace `id`.
    if let Some(last) = p.last_mut() {
        *last += 1;
    }
    p
}

/// Maps user bounds of keyspace `id` (with an optional user prefix) to stored-key bounds.
pub fn stored_bounds(
    id: u32,
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
    prefix: Option<&[u8]>,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let wrap = |b: &Bound<Vec<u8>>| match b {
        Bound::Included(k) => Bound::Included(encode(id, k)),
        Bound::Excluded(k) => Bound::Excluded(encode(id, k)),
        Bound::Unbounded => Bound::Unbounded,
    };
    let mut lo = match wrap(lower) {
        Bound::Unbounded => Bound::Included(encode(id, b"")),
        b => b,
    };
    let mut hi = match wrap(upper) {
        Bound::Unbounded => Bound::Excluded(keyspace_end(id)),
        b => b,
    };
    if let Some(p) = prefix {
        let plo = encode(id, p);
        let phi = prefix_successor(p).map_or_else(|| keyspace_end(id), |s| encode(id, &s));
        if bound_key(&lo).is_none_or(|k| k < plo.as_slice()) {
            lo = Bound::Included(plo);
        }
        if bound_key(&hi).is_none_or(|k| k >= phi.as_slice()) {
            hi = Bound::Excluded(phi);
        }
    }
    (lo, hi)
}

fn bound_key(b: &Bound<Vec<u8>>) -> Option<&[u8]> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyspaces_are_contiguous_and_disjoint() {
        let ids = [0u32, 1, 127, 128, 300, 16_383, 16_384, u32::MAX];
        for &a in &ids {
            let end = keyspace_end(a);
            for &b in &ids {
                let k = encode(b, b"\xff\xff\xff");
                let empty = encode(b, b"");
                let inside = k.as_slice() >= encode(a, b"").as_slice() && k < end;
                assert_eq!(inside, a == b, "{a} {b}");
                assert_eq!(empty < end && empty >= encode(a, b""), a == b);
            }
            assert_eq!(decode(&encode(a, b"xy")), Some((a, &b"xy"[..])));
        }
    }

    #[test]
    fn prefix_narrows_bounds() {
        let (lo, hi) = stored_bounds(1, &Bound::Unbounded, &Bound::Unbounded, Some(b"user:"));
        assert_eq!(lo, Bound::Included(encode(1, b"user:")));
        assert_eq!(hi, Bound::Excluded(encode(1, b"user;")));
        let (lo, hi) = stored_bounds(
            1,
            &Bound::Excluded(b"user:5".to_vec()),
            &Bound::Included(b"zzz".to_vec()),
            Some(b"user:"),
        );
        assert_eq!(lo, Bound::Excluded(encode(1, b"user:5")));
        assert_eq!(hi, Bound::Excluded(encode(1, b"user;")));
    }
}
