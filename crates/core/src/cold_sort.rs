//! Stable sorting for cold paths (version installs, table finishing, verification) that costs
//! one copy of the standard library's sort in the binary, not one per call site.
//!
//! `slice::sort_by` is generic over the element type and the comparison closure, so every call
//! site instantiates the whole driftsort (about 6 KB of WebAssembly each). [`sort_by`] sorts a
//! permutation of indices through a `dyn` comparison instead (one instantiation for every
//! caller), then moves the elements into that order. It allocates and calls the comparison
//! through a pointer: use it where a sort runs per file or per table, never per key.

use std::cmp::Ordering;

/// Sorts `v` by `compare`, stably (equal elements keep their order), as `v.sort_by(compare)`.
pub(crate) fn sort_by<T>(v: &mut Vec<T>, compare: impl Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    {
        let items: &[T] = v;
        sort_indices(&mut order, &|a, b| match (items.get(a), items.get(b)) {
            (Some(x), Some(y)) => compare(x, y),
            _ => Ordering::Equal,
        });
    }
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(
        order
            .iter()
            .filter_map(|&i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// The one instantiation of the standard library's stable sort behind [`sort_by`].
#[inline(never)]
fn sort_indices(order: &mut [usize], compare: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| compare(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library_and_keeps_equal_elements_in_order() {
        let mut x = 0x2545_f491u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for len in [0usize, 1, 2, 3, 20, 21, 100, 1000] {
            // (key, original position): keys repeat, so stability shows.
            let items: Vec<(u32, usize)> = (0..len).map(|i| (next() % 7, i)).collect();
            let mut ours = items.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = items;
            std.sort_by_key(|a| a.0);
            assert_eq!(ours, std, "len {len}");
        }
    }

    #[test]
    fn moves_elements_that_are_not_copy() {
        let mut v = vec![String::from("b"), String::from("c"), String::from("a")];
        sort_by(&mut v, |a, b| b.cmp(a));
        assert_eq!(v, ["c", "b", "a"]);
    }
}
