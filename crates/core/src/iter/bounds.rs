//! [`KeyBounds`]: the user-key range a [`super::DbIterator`] is confined to.

use std::ops::Bound;

/// A range of user keys: each end inclusive, exclusive or open. A prefix is the range
/// `[prefix, successor(prefix))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBounds {
    /// The lower end.
    pub lower: Bound<Vec<u8>>,
    /// The upper end.
    pub upper: Bound<Vec<u8>>,
}

impl Default for KeyBounds {
    fn default() -> Self {
        KeyBounds::all()
    }
}

impl KeyBounds {
    /// Every key.
    pub fn all() -> KeyBounds {
        KeyBounds {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }

    /// Keys between `lower` and `upper`. An empty range (lower above upper) is allowed and
    /// yields nothing.
    pub fn new(lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> KeyBounds {
        KeyBounds { lower, upper }
    }

    /// Keys starting with `prefix`: `[prefix, successor(prefix))`, open above when the
    /// prefix is empty or all `0xff`.
    pub fn prefix(prefix: &[u8]) -> KeyBounds {
        KeyBounds {
            lower: Bound::Included(prefix.to_vec()),
            upper: match prefix_successor(prefix) {
                Some(s) => Bound::Excluded(s),
                None => Bound::Unbounded,
            },
        }
    }

    /// Whether `key` lies below the lower end.
    #[inline]
    pub fn below_lower(&self, key: &[u8]) -> bool {
        match &self.lower {
            Bound::Unbounded => false,
            Bound::Included(l) => key < l.as_slice(),
            Bound::Excluded(l) => key <= l.as_slice(),
        }
    }

    /// Whether `key` lies above the upper end.
    #[inline]
    pub fn above_upper(&self, key: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => false,
            Bound::Included(u) => key > u.as_slice(),
            Bound::Excluded(u) => key >= u.as_slice(),
        }
    }

    /// Whether `key` lies within the bounds.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        !self.below_lower(key) && !self.above_upper(key)
    }
}

/// The smallest key greater than every key starting with `prefix`: the prefix without its
/// trailing `0xff` bytes, last byte incremented. `None` if there is none (empty or all `0xff`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut s = prefix.get(..=keep)?.to_vec();
    if let Some(last) = s.last_mut() {
        *last += 1;
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_successor_skips_trailing_ff() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        assert_eq!(prefix_successor(b""), None);
    }

    #[test]
    fn prefix_bounds_contain_exactly_the_prefixed_keys() {
        let b = KeyBounds::prefix(b"a\xff");
        assert!(b.contains(b"a\xff"));
        assert!(b.contains(b"a\xff\xff\x00"));
        assert!(!b.contains(b"a\xfe"));
        assert!(!b.contains(b"b"));
        let all = KeyBounds::prefix(b"");
        assert!(all.contains(b"") && all.contains(b"\xff\xff"));
    }

    #[test]
    fn exclusive_and_inclusive_ends() {
        let b = KeyBounds::new(
            Bound::Excluded(b"b".to_vec()),
            Bound::Included(b"d".to_vec()),
        );
        assert!(!b.contains(b"b"));
        assert!(b.contains(b"b\x00"));
        assert!(b.contains(b"d"));
        assert!(!b.contains(b"d\x00"));
    }
}
