//! The memtable behaves like an ordered map of (key, Reverse(seq)) → (kind, value): gets,
//! forward and reverse iteration, seeks, and mixed direction changes agree with a `BTreeMap`,
//! and iterators stay usable while other threads insert.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use shaledb::iter::InternalIterator;
use shaledb::memtable::MemTable;
use shaledb::sstable::ValueKind;

type Model = BTreeMap<(Vec<u8>, Reverse<u64>), (ValueKind, Vec<u8>)>;

type Item = (Vec<u8>, u64, ValueKind, Vec<u8>);

fn at(it: &impl InternalIterator) -> Option<Item> {
    it.valid()
        .then(|| (it.key().to_vec(), it.seq(), it.kind(), it.value().to_vec()))
}

fn model_items(m: &Model) -> Vec<Item> {
    m.iter()
        .map(|((k, s), (kind, v))| (k.clone(), s.0, *kind, v.clone()))
        .collect()
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0u8..4, 0..4)
}

#[derive(Debug, Clone)]
enum Step {
    Next,
    Prev,
    Seek(Vec<u8>, u64),
    SeekForPrev(Vec<u8>, u64),
    First,
    Last,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::Next),
        4 => Just(Step::Prev),
        1 => (key(), 0u64..60).prop_map(|(k, s)| Step::Seek(k, s)),
        1 => (key(), 0u64..60).prop_map(|(k, s)| Step::SeekForPrev(k, s)),
        1 => Just(Step::First),
        1 => Just(Step::Last),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn memtable_matches_a_btreemap_model(
        inserts in proptest::collection::vec((key(), 0u8..3, proptest::collection::vec(any::<u8>(), 0..4)), 0..50),
        steps in proptest::collection::vec(step(), 0..80),
        gets in proptest::collection::vec((key(), 0u64..60), 0..20),
    ) {
        let mem = Arc::new(MemTable::new());
        let mut model = Model::new();
        for (seq, (k, kind, v)) in inserts.iter().enumerate() {
            let seq = seq as u64 + 1;
            let kind = match kind { 0 => ValueKind::Tombstone, 1 => ValueKind::Value, _ => ValueKind::RangeTombstone };
            mem.insert(k, seq, kind, v);
            model.insert((k.clone(), Reverse(seq)), (kind, v.clone()));
        }
        prop_assert_eq!(mem.len(), model.len());

        // Point reads: newest point entry at or below the snapshot.
        for (k, snap) in &gets {
            let want = model
                .range((k.clone(), Reverse(*snap))..)
                .take_while(|((mk, _), _)| mk == k)
                .find(|(_, (kind, _))| *kind != ValueKind::RangeTombstone)
                .map(|((_, s), (kind, v))| (s.0, *kind, v.clone()));
            let got = mem.get(k, *snap).map(|(s, kind, v)| (s, kind, v.to_vec()));
            prop_assert_eq!(got, want);
        }

        // Full scans both ways.
        let items = model_items(&model);
        let mut it = mem.iter();
        it.seek_to_first().unwrap();
        let mut fwd = Vec::new();
        while let Some(x) = at(&it) { fwd.push(x); it.next().unwrap(); }
        prop_assert_eq!(&fwd, &items);
        it.seek_to_last().unwrap();
        let mut back = Vec::new();
        while let Some(x) = at(&it) { back.push(x); it.prev().unwrap(); }
        back.reverse();
        prop_assert_eq!(&back, &items);

        // Random walks: the cursor is an index into `items` (None = invalid).
        let mut cur: Option<usize> = None;
        for s in &steps {
            match s {
                Step::Next => { it.next().unwrap(); cur = cur.and_then(|i| (i + 1 < items.len()).then_some(i + 1)); }
                Step::Prev => { it.prev().unwrap(); cur = cur.and_then(|i| i.checked_sub(1)); }
                Step::First => { it.seek_to_first().unwrap(); cur = (!items.is_empty()).then_some(0); }
                Step::Last => { it.seek_to_last().unwrap(); cur = items.len().checked_sub(1); }
                Step::Seek(k, seq) => {
                    it.seek(k, *seq).unwrap();
                    cur = items.iter().position(|(ik, is, _, _)| (ik.as_slice(), Reverse(*is)) >= (k.as_slice(), Reverse(*seq)));
                }
                Step::SeekForPrev(k, seq) => {
                    it.seek_for_prev(k, *seq).unwrap();
                    cur = items.iter().rposition(|(ik, is, _, _)| (ik.as_slice(), Reverse(*is)) <= (k.as_slice(), Reverse(*seq)));
                }
            }
            let want = cur.and_then(|i| items.get(i).cloned());
            prop_assert_eq!(at(&it), want, "after {:?}", s);
        }
    }
}

#[test]
fn iterators_stay_valid_and_ordered_while_another_thread_inserts() {
    let mem = Arc::new(MemTable::new());
    for i in 0..1000u64 {
        mem.insert(
            format!("k{:05}", i * 2).as_bytes(),
            i + 1,
            ValueKind::Value,
            b"old",
        );
    }
    let writer = {
        let mem = Arc::clone(&mem);
        std::thread::spawn(move || {
            for i in 0..2000u64 {
                mem.insert(
                    format!("k{:05}", i).as_bytes(),
                    10_000 + i,
                    ValueKind::Value,
                    b"new",
                );
            }
        })
    };
    let mut rounds = 0;
    while rounds < 20 || !writer.is_finished() {
        rounds += 1;
        let mut it = mem.iter();
        it.seek_to_first().unwrap();
        let mut prev: Option<(Vec<u8>, u64)> = None;
        let mut old_seen = 0;
        while it.valid() {
            let cur = (it.key().to_vec(), it.seq());
            if let Some(p) = &prev {
                assert!(
                    shaledb::sstable::compare_internal(&p.0, p.1, &cur.0, cur.1).is_lt(),
                    "out of order: {p:?} then {cur:?}"
                );
            }
            if it.seq() <= 1000 {
                old_seen += 1;
            }
            prev = Some(cur);
            it.next().unwrap();
        }
        // Every entry inserted before the iterator was positioned is seen.
        assert_eq!(old_seen, 1000);
        // And backwards from the end.
        it.seek_to_last().unwrap();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.prev().unwrap();
        }
        assert!(n >= 1000);
    }
    writer.join().unwrap();
    assert_eq!(mem.len(), 3000);
}
