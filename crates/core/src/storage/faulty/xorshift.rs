//! A small deterministic generator for the fault model: the same seed gives the same crash.

/// xorshift64, seeded through splitmix64 so that nearby seeds give unrelated streams.
#[derive(Debug, Clone)]
pub(super) struct XorShift(u64);

impl XorShift {
    pub(super) fn new(seed: u64) -> XorShift {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 1 } else { z })
    }

    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `0..n` (`0` if `n == 0`).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// A fair coin.
    pub(super) fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_is_deterministic_and_seeds_differ() {
        let draw = |seed| {
            let mut r = XorShift::new(seed);
            (0..4).map(|_| r.next()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(0), draw(1));
        assert!(draw(0).iter().all(|&x| x != 0));
        assert_eq!(XorShift::new(3).below(0), 0);
        assert!((0..100).all(|_| XorShift::new(9).below(5) < 5));
    }
}
