//! The user iterator agrees with a `BTreeMap` built by replaying every write up to the
//! snapshot, for random sources (vectors and tables), point and range tombstones, snapshots,
//! bounds, prefixes, and random sequences of seeks and steps in both directions.
#![allow(clippy::unwrap_used)]
mod iter_support;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use iter_support::*;
use proptest::prelude::*;

use shaledb::iter::{
    BoxedInternalIterator, DbIterator, KeyBounds, MergingIterator, RangeTombstoneSet, VecIterator,
};
use shaledb::sstable::{Entry, ValueKind};
use shaledb::storage::memory::MemoryStorage;

/// Keys: "a", "b", "c", "aa", "ab", … (12 keys, so versions collide).
fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 1..=2)
}

#[derive(Debug, Clone)]
enum Write {
    Put(Vec<u8>),
    Del(Vec<u8>),
    DelRange(Vec<u8>, Vec<u8>),
}

fn write_strategy() -> impl Strategy<Value = Write> {
    prop_oneof![
        5 => key_strategy().prop_map(Write::Put),
        2 => key_strategy().prop_map(Write::Del),
        1 => (key_strategy(), key_strategy()).prop_map(|(a, b)| Write::DelRange(a, b)),
    ]
}

fn bound_strategy() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key_strategy().prop_map(Bound::Included),
        key_strategy().prop_map(Bound::Excluded),
    ]
}

fn bounds_strategy() -> impl Strategy<Value = KeyBounds> {
    prop_oneof![
        2 => Just(KeyBounds::all()),
        3 => (bound_strategy(), bound_strategy()).prop_map(|(l, u)| KeyBounds::new(l, u)),
        2 => prop::sample::select(vec![&b""[..], b"a", b"b", b"c", b"ab"])
            .prop_map(KeyBounds::prefix),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    Next,
    Prev,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::First),
        1 => Just(Op::Last),
        2 => key_strategy().prop_map(Op::Seek),
        2 => key_strategy().prop_map(Op::SeekForPrev),
        4 => Just(Op::Next),
        4 => Just(Op::Prev),
    ]
}

/// The write with sequence number `seq` as an entry.
fn to_entry(w: &Write, seq: u64) -> Entry {
    match w {
        Write::Put(k) => entry(k, seq, ValueKind::Value, format!("v{seq}").as_bytes()),
        Write::Del(k) => entry(k, seq, ValueKind::Tombstone, b""),
        Write::DelRange(a, b) => entry(a, seq, ValueKind::RangeTombstone, b),
    }
}

/// Replays writes 1..=snapshot; keeps the keys within `bounds`.
fn model(writes: &[Write], snapshot: u64, bounds: &KeyBounds) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut map = BTreeMap::new();
    for (i, w) in writes.iter().enumerate() {
        let seq = i as u64 + 1;
        if seq > snapshot {
            break;
        }
        match w {
            Write::Put(k) => {
                map.insert(k.clone(), format!("v{seq}").into_bytes());
            }
            Write::Del(k) => {
                map.remove(k);
            }
            Write::DelRange(a, b) => map.retain(|k, _| !(a <= k && k < b)),
        }
    }
    map.into_iter()
        .filter(|(k, _)| bounds.contains(k))
        .collect()
}

type Pair = (Vec<u8>, Vec<u8>);

fn current_pair<I: shaledb::iter::InternalIterator>(it: &DbIterator<I>) -> Option<Pair> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

fn run_ops<I: shaledb::iter::InternalIterator>(
    it: &mut DbIterator<I>,
    want: &[Pair],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    // Full scans first, both ways.
    it.seek_to_first().unwrap();
    let mut fwd = Vec::new();
    while let Some(p) = current_pair(it) {
        fwd.push(p);
        it.next().unwrap();
    }
    prop_assert_eq!(&fwd, want);
    it.seek_to_last().unwrap();
    let mut bwd = Vec::new();
    while let Some(p) = current_pair(it) {
        bwd.push(p);
        it.prev().unwrap();
    }
    bwd.reverse();
    prop_assert_eq!(&bwd, want);

    let mut pos: Option<usize> = None;
    for op in ops {
        match op {
            Op::First => {
                it.seek_to_first().unwrap();
                pos = (!want.is_empty()).then_some(0);
            }
            Op::Last => {
                it.seek_to_last().unwrap();
                pos = want.len().checked_sub(1);
            }
            Op::Seek(k) => {
                it.seek(k).unwrap();
                let i = want.partition_point(|(wk, _)| wk < k);
                pos = (i < want.len()).then_some(i);
            }
            Op::SeekForPrev(k) => {
                it.seek_for_prev(k).unwrap();
                pos = want.partition_point(|(wk, _)| wk <= k).checked_sub(1);
            }
            Op::Next => {
                it.next().unwrap();
                pos = pos.map(|p| p + 1).filter(|p| *p < want.len());
            }
            Op::Prev => {
                it.prev().unwrap();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        prop_assert_eq!(
            current_pair(it),
            pos.map(|p| want[p].clone()),
            "after {:?}",
            op
        );
    }
    Ok(())
}

mod iter_user_model {
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

        #[test]
        fn db_iterator_matches_replayed_btreemap(
            writes in prop::collection::vec(write_strategy(), 0..40),
            placement in prop::collection::vec(0usize..4, 40),
            n_sources in 1usize..=4,
            tables in any::<bool>(),
            snapshot_frac in 0u64..=10,
            bounds in bounds_strategy(),
            ops in prop::collection::vec(op_strategy(), 1..40),
        ) {
            let n = writes.len() as u64;
            let snapshot = (n + 1) * snapshot_frac / 10;
            // Each write goes to a random source; seqs are globally distinct.
            let mut per_source: Vec<Vec<Entry>> = vec![Vec::new(); n_sources];
            for (i, w) in writes.iter().enumerate() {
                let s = placement[i] % n_sources;
                per_source[s].push(to_entry(w, i as u64 + 1));
            }
            let storage = MemoryStorage::new();
            let mut tombstones = Vec::new();
            let mut children: Vec<BoxedInternalIterator<'static>> = Vec::new();
            for (i, entries) in per_source.into_iter().enumerate() {
                let mut child: BoxedInternalIterator<'static> = if tables && i % 2 == 1 {
                    Box::new(table(&storage, &format!("{i}.sst"), &entries).full_iter())
                } else {
                    Box::new(VecIterator::new(entries))
                };
                RangeTombstoneSet::collect_from(child.as_mut(), &mut tombstones).unwrap();
                children.push(child);
            }
            let set = Arc::new(RangeTombstoneSet::from_tombstones(tombstones));
            let want = model(&writes, snapshot, &bounds);
            let mut it = DbIterator::new(MergingIterator::new(children), set, snapshot, bounds);
            run_ops(&mut it, &want, &ops)?;
        }
    }
}
