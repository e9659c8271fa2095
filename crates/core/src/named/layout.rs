//! Encodings queues and topics share (FORMAT.md, "Queues" and "Topics"): keys numbered in
//! order (items by id, records by offset) and fixed records of little-endian numbers after a
//! format version byte (their counters).

/// Keys numbered in order: a tag byte, then a number (u64 big-endian), so the keys of one tag
/// sort by number (a queue's items by id, a topic's records by offset).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumberedKeys(pub u8);

impl NumberedKeys {
    /// The key of number `n`.
    pub(crate) fn key(self, n: u64) -> [u8; 9] {
        let mut k = [self.0; 9];
        k[1..].copy_from_slice(&n.to_be_bytes());
        k
    }

    /// The number of `key`, if it is one of these keys.
    pub(crate) fn number(self, key: &[u8]) -> Option<u64> {
        match key {
            [t, n @ ..] if *t == self.0 => Some(u64::from_be_bytes(n.try_into().ok()?)),
            _ => None,
        }
    }
}

/// A record of format `version` holding `fields` (u64 little-endian each): `N` is
/// `1 + 8 * fields.len()` (fields past it are left out).
pub(crate) fn u64_record<const N: usize>(version: u8, fields: &[u64]) -> [u8; N] {
    let mut out = [0; N];
    out[0] = version;
    for (chunk, v) in out[1..].chunks_exact_mut(8).zip(fields) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_keys_sort_by_number_and_parse_back() {
        let (items, records) = (NumberedKeys(b'i'), NumberedKeys(b'r'));
        assert!(items.key(255) < items.key(256));
        assert_eq!(items.number(&items.key(9)), Some(9));
        assert_eq!(records.number(&items.key(9)), None);
        assert_eq!(items.number(b"i\x00"), None);
        let r: [u8; 17] = u64_record(1, &[2, 3]);
        assert_eq!((r[0], r[1], r[9]), (1, 2, 3));
    }
}
