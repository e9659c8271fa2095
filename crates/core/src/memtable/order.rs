//! The memtable's order: internal order (user key ascending, sequence number descending, as
//! [`crate::key::compare_internal`]), decided on a key's first 16 bytes whenever they differ.

use std::cmp::Ordering;

/// The first 16 bytes of `key` as a big-endian number in two halves (high first), zero-padded.
/// Keys compare like their prefixes whenever the prefixes differ (a shorter key is padded with
/// zeros, and a key that is a proper prefix of another sorts first either way).
#[inline]
pub fn key_prefix(key: &[u8]) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), key.get(..n)) {
        dst.copy_from_slice(src);
    }
    let x = u128::from_be_bytes(b);
    [(x >> 64) as u64, x as u64]
}

/// A key to find: user key, sequence number and the key's [`key_prefix`].
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    pub key: &'a [u8],
    pub seq: u64,
    pub prefix: [u64; 2],
}

impl<'a> Probe<'a> {
    pub fn new(key: &'a [u8], seq: u64) -> Probe<'a> {
        Probe {
            key,
            seq,
            prefix: key_prefix(key),
        }
    }
}

/// Internal order of an entry (its key's prefix, key, sequence number) against `probe`.
#[inline]
pub fn compare(prefix: [u64; 2], key: &[u8], seq: u64, probe: &Probe<'_>) -> Ordering {
    prefix
        .cmp(&probe.prefix)
        .then_with(|| compare_after_prefix(key, seq, probe.key, probe.seq))
}

/// Internal order of two keys whose [`key_prefix`]es are equal, then of their sequence
/// numbers: equal prefixes mean equal first 16 bytes, with a key shorter than 16 bytes padded
/// with zeros. So if either key is shorter than 16 bytes, the shorter one is a prefix of the
/// other (or they are equal), and otherwise the bytes after the 16th decide.
#[inline]
fn compare_after_prefix(akey: &[u8], aseq: u64, bkey: &[u8], bseq: u64) -> Ordering {
    let keys = if akey.len() < 16 || bkey.len() < 16 {
        akey.len().cmp(&bkey.len())
    } else {
        akey.get(16..).cmp(&bkey.get(16..))
    };
    keys.then(bseq.cmp(&aseq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_order_like_their_internal_keys_whatever_their_prefixes() {
        let keys: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\0".to_vec(),
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            vec![b'x'; 15],
            vec![b'x'; 16],
            [vec![b'x'; 16], vec![0]].concat(),
            [vec![b'x'; 16], vec![1]].concat(),
            [vec![b'x'; 15], vec![0]].concat(),
            [vec![b'x'; 16], b"ab".to_vec()].concat(),
            [vec![b'x'; 16], b"b".to_vec()].concat(),
            vec![0xff; 20],
            vec![0x80; 9],
            [vec![0; 8], vec![0xff; 8]].concat(),
        ];
        for a in &keys {
            for b in &keys {
                for (sa, sb) in [(1, 1), (1, 2), (2, 1)] {
                    assert_eq!(
                        compare(key_prefix(a), a, sa, &Probe::new(b, sb)),
                        crate::key::compare_internal(a, sa, b, sb),
                        "{a:?}@{sa} vs {b:?}@{sb}"
                    );
                }
            }
        }
    }
}
