//! Sorting with one copy of the sort's code in the WebAssembly module.
//!
//! The standard library's sorts are instantiated once per element type and comparator, each
//! 4–8 KB of WebAssembly: the engine's fifteen sorts were 113 KB, 11% of the module. In
//! WebAssembly, [`sort_by`] instead sorts an array of indices through one non-generic function
//! (so one instantiation of the sort for the whole engine) and then moves the elements into
//! place, a few dozen bytes per element type. Natively it is the standard library's stable sort
//! (code size matters less there than the extra pass). Both are stable: elements that compare
//! equal keep their given order, so the two builds order every input the same.
//!
//! The indirection costs: sorting a million 16-byte keys takes twice the standard sort's time
//! (natively, 0.95 s against 0.49 s). Use it for the cold sorts (file lists, versions, range
//! tombstones, a batch's layers); a hot one keeps the standard library's sort.

use std::cmp::Ordering;

/// Sorts `v` by `compare`, stably (module doc). Use it instead of the slice's own sorts.
pub(crate) fn sort_by<T>(v: &mut [T], compare: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(not(target_arch = "wasm32"))]
    v.sort_by(compare);
    #[cfg(target_arch = "wasm32")]
    if v.len() > 1 {
        let mut compare = compare;
        let mut order = sorted_order(v.len(), &mut |a, b| compare(&v[a], &v[b]));
        permute(v, &mut order);
    }
}

/// Sorts `v` by the key `key` gives, stably (module doc).
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` in ascending order, stably (module doc).
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The indices `0..len` ordered by `compare` (ties by index: the order a stable sort gives).
/// Not generic: the one instantiation of the standard library's sort.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn sorted_order(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_unstable_by(|&a, &b| compare(a, b).then(a.cmp(&b)));
    order
}

/// Rearranges `v` so that position `i` holds what was at `order[i]` (`order` is a permutation
/// of `0..v.len()`; it is used up). Follows each cycle with swaps: no element is cloned.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            // Marks `at` placed; a placed start is a fixed point, so the loop ends at once.
            order[at] = at;
            if from == start || from == at {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_sort_orders_like_the_standard_stable_sort() {
        // (key, original position): ties on the key must keep their positions' order.
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 3, 17, 200, 1000] {
            let input: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 59) as u8, i)
                })
                .collect();
            let mut expected = input.clone();
            expected.sort_by_key(|e| e.0);
            let mut got = input.clone();
            let mut order = sorted_order(got.len(), &mut |a, b| input[a].0.cmp(&input[b].0));
            permute(&mut got, &mut order);
            assert_eq!(got, expected, "length {len}");
            let mut through_api = input;
            sort_by_key(&mut through_api, |e| e.0);
            assert_eq!(through_api, expected, "length {len}");
        }
    }

    #[test]
    fn permute_moves_every_element_to_its_place() {
        let mut v = vec!['a', 'b', 'c', 'd', 'e'];
        permute(&mut v, &mut [3, 0, 4, 1, 2]);
        assert_eq!(v, vec!['d', 'a', 'e', 'b', 'c']);
    }
}
