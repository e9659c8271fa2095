//! The merging iterator yields the union of its sources in internal order, both ways, with
//! seeks and direction changes anywhere; table cursors behave as internal iterators.
#![allow(clippy::unwrap_used)]
mod iter_support;

use iter_support::*;
use proptest::prelude::*;

use shaledb::iter::{BoxedInternalIterator, InternalIterator, MergingIterator, VecIterator};
use shaledb::sstable::{compare_internal, Entry, ValueKind};
use shaledb::storage::memory::MemoryStorage;

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(u8, u64),
    SeekForPrev(u8, u64),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::First),
        Just(Op::Last),
        (0u8..10, 0u64..40).prop_map(|(k, s)| Op::Seek(k, s)),
        (0u8..10, 0u64..40).prop_map(|(k, s)| Op::SeekForPrev(k, s)),
        Just(Op::Next),
        Just(Op::Next),
        Just(Op::Prev),
        Just(Op::Prev),
    ]
}

fn key(k: u8) -> Vec<u8> {
    vec![b'a' + k]
}

/// Sources: per source, a set of (key, seq) with globally distinct seqs.
fn sources() -> impl Strategy<Value = Vec<Vec<Entry>>> {
    prop::collection::vec(prop::collection::vec((0u8..8, any::<bool>()), 0..12), 1..5).prop_map(
        |srcs| {
            let mut seq = 1u64;
            srcs.into_iter()
                .enumerate()
                .map(|(si, src)| {
                    src.into_iter()
                        .map(|(k, tomb)| {
                            seq += 1;
                            let value = format!("s{si}q{seq}");
                            entry(
                                &key(k),
                                seq,
                                if tomb {
                                    ValueKind::Tombstone
                                } else {
                                    ValueKind::Value
                                },
                                value.as_bytes(),
                            )
                        })
                        .collect()
                })
                .collect()
        },
    )
}

fn boxed(entries: Vec<Entry>) -> BoxedInternalIterator<'static> {
    Box::new(VecIterator::new(entries))
}

/// The model: every entry sorted by (key, seq desc, source), a position index.
fn check_ops(merged: &mut dyn InternalIterator, all: &[(Entry, usize)], ops: &[Op]) {
    let mut pos: Option<usize> = None;
    for op in ops {
        match op {
            Op::First => {
                merged.seek_to_first().unwrap();
                pos = (!all.is_empty()).then_some(0);
            }
            Op::Last => {
                merged.seek_to_last().unwrap();
                pos = all.len().checked_sub(1);
            }
            Op::Seek(k, s) => {
                merged.seek(&key(*k), *s).unwrap();
                let i = all.partition_point(|(e, _)| {
                    compare_internal(&e.key, e.seq, &key(*k), *s).is_lt()
                });
                pos = (i < all.len()).then_some(i);
            }
            Op::SeekForPrev(k, s) => {
                merged.seek_for_prev(&key(*k), *s).unwrap();
                let i = all.partition_point(|(e, _)| {
                    compare_internal(&e.key, e.seq, &key(*k), *s).is_le()
                });
                pos = i.checked_sub(1);
            }
            Op::Next => {
                merged.next().unwrap();
                pos = pos.map(|p| p + 1).filter(|p| *p < all.len());
            }
            Op::Prev => {
                merged.prev().unwrap();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        let want = pos.map(|p| all[p].0.clone());
        assert_eq!(current(merged), want, "after {op:?}");
    }
}

fn model(srcs: &[Vec<Entry>]) -> Vec<(Entry, usize)> {
    let mut all: Vec<(Entry, usize)> = srcs
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.iter().cloned().map(move |e| (e, i)))
        .collect();
    all.sort_by(|(a, ai), (b, bi)| compare_internal(&a.key, a.seq, &b.key, b.seq).then(ai.cmp(bi)));
    all
}

mod iter_merge {
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

        #[test]
        fn merge_matches_sorted_union(srcs in sources(), ops in prop::collection::vec(op(), 1..40)) {
            let all = model(&srcs);
            let mut merged = MergingIterator::new(srcs.iter().cloned().map(boxed).collect());
            let fwd: Vec<Entry> = all.iter().map(|(e, _)| e.clone()).collect();
            prop_assert_eq!(collect_forward(&mut merged), fwd.clone());
            let mut bwd = fwd;
            bwd.reverse();
            prop_assert_eq!(collect_backward(&mut merged), bwd);
            check_ops(&mut merged, &all, &ops);
        }

        #[test]
        fn merge_of_tables_matches_sorted_union(srcs in sources(), ops in prop::collection::vec(op(), 1..40)) {
            let storage = MemoryStorage::new();
            let all = model(&srcs);
            let children: Vec<BoxedInternalIterator<'static>> = srcs
                .iter()
                .enumerate()
                .map(|(i, s)| -> BoxedInternalIterator<'static> {
                    if i % 2 == 0 {
                        Box::new(table(&storage, &format!("{i}.sst"), s).full_iter())
                    } else {
                        boxed(s.clone())
                    }
                })
                .collect();
            let mut merged = MergingIterator::new(children);
            check_ops(&mut merged, &all, &ops);
        }
    }

    /// Going forward, a step that leaves the current source at or before the runner-up keeps
    /// it current without a scan: long runs from one source, a run ending where another's
    /// begins (the same key, older and newer versions), and direction changes inside runs.
    #[test]
    fn runs_of_one_source_and_ties_where_runs_meet_come_out_in_order() {
        let mut seq = 100u64;
        let mut run = |keys: std::ops::Range<u8>| -> Vec<Entry> {
            keys.map(|k| {
                seq -= 1;
                entry(&key(k), seq, ValueKind::Value, b"v")
            })
            .collect()
        };
        // Source 0: a..f, source 1: f..k (f in both, other versions), source 2: a run after
        // both, source 3: empty.
        let srcs = vec![run(0..6), run(5..11), run(11..16), Vec::new()];
        let all = model(&srcs);
        let mut merged = MergingIterator::new(srcs.iter().cloned().map(boxed).collect());
        let mut ops = vec![Op::First];
        ops.extend(std::iter::repeat_n(Op::Next, 8));
        ops.extend([Op::Prev, Op::Prev, Op::Prev]);
        ops.extend(std::iter::repeat_n(Op::Next, all.len()));
        ops.extend([
            Op::Seek(5, 0),
            Op::Next,
            Op::Next,
            Op::SeekForPrev(12, 50),
            Op::Next,
        ]);
        check_ops(&mut merged, &all, &ops);
    }

    #[test]
    fn identical_entries_in_two_sources_do_not_panic_and_the_earlier_source_wins() {
        let newer = vec![put("a", 5, "new"), put("b", 3, "new")];
        let older = vec![put("a", 5, "old"), put("b", 3, "old"), put("c", 1, "old")];
        let srcs = vec![newer, older];
        let mut merged = MergingIterator::new(srcs.iter().cloned().map(boxed).collect());
        let f: Vec<Vec<u8>> = collect_forward(&mut merged)
            .into_iter()
            .map(|e| e.value)
            .collect();
        assert_eq!(f, [&b"new"[..], b"old", b"new", b"old", b"old"]);
        let b: Vec<Vec<u8>> = collect_backward(&mut merged)
            .into_iter()
            .map(|e| e.value)
            .collect();
        assert_eq!(b, [&b"old"[..], b"old", b"new", b"old", b"new"]);
        // Direction changes on a duplicate.
        let all = model(&srcs);
        check_ops(
            &mut merged,
            &all,
            &[
                Op::First,
                Op::Next,
                Op::Prev,
                Op::Next,
                Op::Next,
                Op::Prev,
                Op::Prev,
                Op::Last,
                Op::Prev,
                Op::Prev,
                Op::Next,
            ],
        );
    }

    #[test]
    fn table_cursor_seek_for_prev_lands_on_last_entry_at_or_before_target() {
        let storage = MemoryStorage::new();
        let entries: Vec<Entry> = (0..200u32)
            .flat_map(|i| {
                let k = format!("k{:04}", i * 2);
                [put(&k, 10, "x"), put(&k, 5, "y")]
            })
            .collect();
        let t = table(&storage, "t.sst", &entries);
        let mut it = t.iter();
        it.seek_for_prev(b"k0010", 7).unwrap();
        assert_eq!((it.key(), it.seq()), (&b"k0010"[..], 10));
        it.seek_for_prev(b"k0010", 5).unwrap();
        assert_eq!((it.key(), it.seq()), (&b"k0010"[..], 5));
        it.seek_for_prev(b"k0011", u64::MAX).unwrap();
        assert_eq!((it.key(), it.seq()), (&b"k0010"[..], 5));
        it.seek_for_prev(b"zzz", 0).unwrap();
        assert_eq!((it.key(), it.seq()), (&b"k0398"[..], 5));
        it.seek_for_prev(b"k0000", 11).unwrap();
        assert!(!it.valid());
        InternalIterator::seek(&mut it, b"k0011", u64::MAX).unwrap();
        assert_eq!((it.key(), it.seq()), (&b"k0012"[..], 10));
    }

    #[test]
    fn empty_merge_is_never_valid() {
        let mut merged = MergingIterator::new(Vec::new());
        merged.seek_to_first().unwrap();
        assert!(!merged.valid());
        merged.seek_to_last().unwrap();
        assert!(!merged.valid());
        merged.next().unwrap();
        merged.prev().unwrap();
        assert!(!merged.valid());
        assert_eq!(merged.key(), b"");
    }
}
