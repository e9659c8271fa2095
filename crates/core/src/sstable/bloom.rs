//! Bloom filter over user keys: xxh3-64 of the key, `k` probes by double hashing
//! (Kirsch–Mitzenmacher), ~10 bits per key for ~1% false positives. With `h1` the low and `h2`
//! the high 32 bits of the hash (`h2 | 1`), probe `i` sets bit `((h1 + i*h2) mod 2^32) * m >> 32`.
//!
//! Encoded as the bit array (`m / 8` bytes, bit `i` is `byte[i / 8] >> (i % 8) & 1`) followed
//! by one byte `k`. An empty or unreadable filter answers "may contain" for every key.

use xxhash_rust::xxh3::xxh3_64;

/// Most probes a filter may declare; more is treated as a damaged filter.
const MAX_PROBES: u8 = 30;

/// The hash a filter stores for `key`.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    xxh3_64(key)
}

/// Builds the encoded filter for the key hashes in `hashes` at `bits_per_key`, into `out`.
pub fn build(hashes: &[u64], bits_per_key: u32, out: &mut Vec<u8>) {
    out.clear();
    let bits_per_key = bits_per_key.max(1) as u64;
    // k = bits_per_key * ln 2, rounded, in 1..=30.
    let k = ((bits_per_key * 69) / 100).clamp(1, u64::from(MAX_PROBES)) as u8;
    let bits = (hashes.len() as u64 * bits_per_key).max(64);
    let bytes = bits.div_ceil(8) as usize;
    let m = bytes as u64 * 8;
    out.resize(bytes, 0);
    for &h in hashes {
        let (mut h1, h2) = split(h);
        for _ in 0..k {
            let bit = probe(h1, m);
            if let Some(b) = out.get_mut((bit / 8) as usize) {
                *b |= 1 << (bit % 8);
            }
            h1 = h1.wrapping_add(h2);
        }
    }
    out.push(k);
}

/// The two 32-bit hashes of double hashing.
#[inline]
fn split(h: u64) -> (u32, u32) {
    (h as u32, ((h >> 32) as u32) | 1)
}

/// Maps a 32-bit probe hash onto `0..m` by multiply-shift (no division).
#[inline]
fn probe(h: u32, m: u64) -> u64 {
    ((u128::from(h) * u128::from(m)) >> 32) as u64
}

/// A decoded filter, borrowed from its record.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    bits: Vec<u8>,
    k: u8,
}

impl BloomFilter {
    /// Decodes `data`; `None` if it is not a well-formed filter.
    pub fn decode(mut data: Vec<u8>) -> Option<BloomFilter> {
        let k = data.pop()?;
        if k == 0 || k > MAX_PROBES || data.is_empty() {
            return None;
        }
        Some(BloomFilter { bits: data, k })
    }

    /// Whether `key` may be in the set (false: certainly not).
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_hash(key_hash(key))
    }

    /// [`BloomFilter::may_contain`] for a precomputed [`key_hash`].
    #[inline]
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let m = self.bits.len() as u64 * 8;
        let (mut h1, h2) = split(h);
        for _ in 0..self.k {
            let bit = probe(h1, m);
            match self.bits.get((bit / 8) as usize) {
                Some(b) if b & (1 << (bit % 8)) != 0 => {}
                _ => return false,
            }
            h1 = h1.wrapping_add(h2);
        }
        true
    }

    /// The filter's size in bytes.
    pub fn len(&self) -> usize {
        self.bits.len() + 1
    }

    /// Never true for a decoded filter.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let hashes: Vec<u64> = (0..10_000u32).map(|i| key_hash(&i.to_be_bytes())).collect();
        let mut enc = Vec::new();
        build(&hashes, 10, &mut enc);
        let f = BloomFilter::decode(enc).unwrap();
        for i in 0..10_000u32 {
            assert!(f.may_contain(&i.to_be_bytes()));
        }
        let fp = (10_000..110_000u32)
            .filter(|i| f.may_contain(&i.to_be_bytes()))
            .count();
        let rate = fp as f64 / 100_000.0;
        assert!(rate < 0.02, "false-positive rate {rate}");
    }

    #[test]
    fn malformed_filters_are_refused() {
        assert!(BloomFilter::decode(vec![]).is_none());
        assert!(BloomFilter::decode(vec![7]).is_none());
        assert!(BloomFilter::decode(vec![0, 0, 99]).is_none());
    }
}
