//! Behaviour of the user-facing iterator over real tables and in-memory sources: what a
//! reader sees through tombstones, range tombstones, snapshots, bounds and direction changes.
#![allow(clippy::unwrap_used)]
mod iter_support;

use std::ops::Bound;
use std::sync::Arc;

use iter_support::*;

use shaledb::iter::{
    BoxedInternalIterator, DbIterator, InternalIterator, KeyBounds, MergingIterator,
    RangeTombstoneSet, VecIterator,
};
use shaledb::sstable::{Entry, ValueKind};
use shaledb::storage::memory::MemoryStorage;
use shaledb::{Error, Result};

type Iter = DbIterator<MergingIterator<'static>>;

/// A DbIterator over `sources` (newest first), gathering their range tombstones.
fn db_iter(mut sources: Vec<BoxedInternalIterator<'static>>, snapshot: u64, b: KeyBounds) -> Iter {
    let mut ts = Vec::new();
    for s in &mut sources {
        RangeTombstoneSet::collect_from(s.as_mut(), &mut ts).unwrap();
    }
    DbIterator::new(
        MergingIterator::new(sources),
        Arc::new(RangeTombstoneSet::from_tombstones(ts)),
        snapshot,
        b,
    )
}

fn vec_src(entries: Vec<Entry>) -> BoxedInternalIterator<'static> {
    Box::new(VecIterator::new(entries))
}

fn forward(it: &mut Iter) -> Vec<(String, String)> {
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(pair(it));
        it.next().unwrap();
    }
    out
}

fn backward(it: &mut Iter) -> Vec<(String, String)> {
    it.seek_to_last().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(pair(it));
        it.prev().unwrap();
    }
    out
}

fn pair(it: &Iter) -> (String, String) {
    (
        String::from_utf8_lossy(it.key()).into_owned(),
        String::from_utf8_lossy(it.value()).into_owned(),
    )
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A source that fails once the cursor reaches `fail_at`.
struct Failing {
    inner: VecIterator,
    fail_at: Vec<u8>,
}

impl Failing {
    fn check(&self) -> Result<()> {
        if self.inner.valid() && self.inner.key() == self.fail_at.as_slice() {
            return Err(Error::corruption("failing.sst", 42, "injected"));
        }
        Ok(())
    }
}

impl InternalIterator for Failing {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.inner.seek_to_first()?;
        self.check()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.inner.seek_to_last()?;
        self.check()
    }
    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.inner.seek(key, seq)?;
        self.check()
    }
    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.inner.seek_for_prev(key, seq)?;
        self.check()
    }
    fn next(&mut self) -> Result<()> {
        self.inner.next()?;
        self.check()
    }
    fn prev(&mut self) -> Result<()> {
        self.inner.prev()?;
        self.check()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn seq(&self) -> u64 {
        self.inner.seq()
    }
    fn kind(&self) -> ValueKind {
        self.inner.kind()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
}

mod iter_user {
    use super::*;

    #[test]
    fn tombstone_in_newer_source_hides_value_in_older_table() {
        // A toy Go SSTable engine let a memtable tombstone fall through to an older table.
        let storage = MemoryStorage::new();
        let older = table(&storage, "1.sst", &[put("k", 1, "old"), put("m", 2, "m1")]);
        let memtable = vec![del("k", 3)];
        for snapshot in [3, 10] {
            let mut it = db_iter(
                vec![vec_src(memtable.clone()), Box::new(older.full_iter())],
                snapshot,
                KeyBounds::all(),
            );
            assert_eq!(forward(&mut it), kv(&[("m", "m1")]));
            assert_eq!(backward(&mut it), kv(&[("m", "m1")]));
            it.seek(b"k").unwrap();
            assert_eq!(pair(&it), ("m".into(), "m1".into()));
            it.seek_for_prev(b"l").unwrap();
            assert!(!it.valid());
        }
        // Before the delete, the old value is there.
        let mut it = db_iter(
            vec![vec_src(memtable), Box::new(older.full_iter())],
            2,
            KeyBounds::all(),
        );
        assert_eq!(forward(&mut it), kv(&[("k", "old"), ("m", "m1")]));
    }

    #[test]
    fn range_tombstone_hides_older_but_not_newer_writes() {
        let storage = MemoryStorage::new();
        let older = table(
            &storage,
            "1.sst",
            &[
                put("a", 1, "a1"),
                put("b", 2, "b2"),
                put("c", 3, "c3"),
                put("d", 4, "d4"),
            ],
        );
        let newer = vec![
            del_range("b", "d", 5),
            put("c", 6, "c6"),
            put("b\0", 4, "under"), // older than the tombstone, in a newer source
        ];
        let mut it = db_iter(
            vec![vec_src(newer.clone()), Box::new(older.full_iter())],
            10,
            KeyBounds::all(),
        );
        let want = kv(&[("a", "a1"), ("c", "c6"), ("d", "d4")]);
        assert_eq!(forward(&mut it), want);
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(backward(&mut it), rev);
        // At a snapshot before the range delete, everything older is visible.
        let mut it = db_iter(
            vec![vec_src(newer.clone()), Box::new(older.full_iter())],
            4,
            KeyBounds::all(),
        );
        assert_eq!(
            forward(&mut it),
            kv(&[
                ("a", "a1"),
                ("b", "b2"),
                ("b\0", "under"),
                ("c", "c3"),
                ("d", "d4")
            ])
        );
        // Between the delete and the rewrite of c, c is gone.
        let mut it = db_iter(
            vec![vec_src(newer), Box::new(older.full_iter())],
            5,
            KeyBounds::all(),
        );
        assert_eq!(forward(&mut it), kv(&[("a", "a1"), ("d", "d4")]));
    }

    #[test]
    fn two_tables_and_a_memtable_merge_into_newest_values() {
        let storage = MemoryStorage::new();
        let l1: Vec<Entry> = (0..300u32)
            .map(|i| put(&format!("k{i:03}"), 1, "l1"))
            .collect();
        let l0: Vec<Entry> = (0..300u32)
            .filter(|i| i % 3 == 0)
            .map(|i| {
                if i % 2 == 0 {
                    del(&format!("k{i:03}"), 100 + u64::from(i))
                } else {
                    put(&format!("k{i:03}"), 100 + u64::from(i), "l0")
                }
            })
            .collect();
        let mem: Vec<Entry> = (0..300u32)
            .filter(|i| i % 5 == 0)
            .map(|i| put(&format!("k{i:03}"), 1000 + u64::from(i), "mem"))
            .collect();
        let t1 = table(&storage, "1.sst", &l1);
        let t0 = table(&storage, "0.sst", &l0);
        let want: Vec<(String, String)> = (0..300u32)
            .filter_map(|i| {
                let v = if i % 5 == 0 {
                    "mem"
                } else if i % 6 == 0 {
                    return None;
                } else if i % 3 == 0 {
                    "l0"
                } else {
                    "l1"
                };
                Some((format!("k{i:03}"), v.to_string()))
            })
            .collect();
        let mut it = db_iter(
            vec![
                vec_src(mem),
                Box::new(t0.full_iter()),
                Box::new(t1.full_iter()),
            ],
            u64::MAX,
            KeyBounds::all(),
        );
        assert_eq!(forward(&mut it), want);
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(backward(&mut it), rev);
        // Zig-zag: next/prev alternate around every key.
        it.seek_to_first().unwrap();
        for w in want.windows(2) {
            assert_eq!(pair(&it), w[0]);
            it.next().unwrap();
            assert_eq!(pair(&it), w[1]);
            it.prev().unwrap();
            assert_eq!(pair(&it), w[0]);
            it.next().unwrap();
        }
    }

    #[test]
    fn snapshot_hides_later_writes_and_later_deletes() {
        let src = vec![
            put("a", 1, "a1"),
            put("a", 3, "a3"),
            del("b", 4),
            put("b", 2, "b2"),
        ];
        let mut it = db_iter(vec![vec_src(src.clone())], 2, KeyBounds::all());
        assert_eq!(forward(&mut it), kv(&[("a", "a1"), ("b", "b2")]));
        let mut it = db_iter(vec![vec_src(src.clone())], 3, KeyBounds::all());
        assert_eq!(backward(&mut it), kv(&[("b", "b2"), ("a", "a3")]));
        let mut it = db_iter(vec![vec_src(src)], 0, KeyBounds::all());
        assert_eq!(forward(&mut it), kv(&[]));
    }

    #[test]
    fn bounds_are_inclusive_or_exclusive_at_each_end() {
        let src: Vec<Entry> = ["a", "b", "c", "d", "e"]
            .iter()
            .enumerate()
            .map(|(i, k)| put(k, i as u64 + 1, k))
            .collect();
        let b = |l: Bound<&str>, u: Bound<&str>| {
            KeyBounds::new(
                l.map(|s| s.as_bytes().to_vec()),
                u.map(|s| s.as_bytes().to_vec()),
            )
        };
        let keys = |bounds: KeyBounds| {
            let mut it = db_iter(vec![vec_src(src.clone())], 100, bounds);
            let f: Vec<String> = forward(&mut it).into_iter().map(|p| p.0).collect();
            let mut r: Vec<String> = backward(&mut it).into_iter().map(|p| p.0).collect();
            r.reverse();
            assert_eq!(f, r);
            f.join("")
        };
        use Bound::*;
        assert_eq!(keys(b(Included("b"), Included("d"))), "bcd");
        assert_eq!(keys(b(Excluded("b"), Excluded("d"))), "c");
        assert_eq!(keys(b(Excluded("a\0"), Included("c\0"))), "bc");
        assert_eq!(keys(b(Unbounded, Excluded("c"))), "ab");
        assert_eq!(keys(b(Excluded("c"), Unbounded)), "de");
        assert_eq!(keys(b(Included("d"), Included("b"))), "");
        assert_eq!(keys(b(Excluded("c"), Excluded("c"))), "");

        // Seeks outside the bounds clamp to them.
        let mut it = db_iter(
            vec![vec_src(src.clone())],
            100,
            b(Excluded("b"), Excluded("d")),
        );
        it.seek(b"a").unwrap();
        assert_eq!(it.key(), b"c");
        it.seek(b"d").unwrap();
        assert!(!it.valid());
        it.seek_for_prev(b"z").unwrap();
        assert_eq!(it.key(), b"c");
        it.seek_for_prev(b"b").unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn prefix_yields_exactly_the_keys_with_that_prefix() {
        let keys: [&[u8]; 9] = [
            b"a",
            b"ab",
            b"ab\xff",
            b"ab\xff\xff",
            b"ac",
            b"b",
            b"\xff",
            b"\xff\xff",
            b"\xff\xff\x01",
        ];
        let src: Vec<Entry> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| entry(k, i as u64 + 1, ValueKind::Value, b"v"))
            .collect();
        let prefixes: [&[u8]; 7] = [b"", b"a", b"ab", b"ab\xff", b"\xff", b"\xff\xff", b"c"];
        for prefix in prefixes {
            let mut it = db_iter(vec![vec_src(src.clone())], 100, KeyBounds::prefix(prefix));
            let want: Vec<Vec<u8>> = keys
                .iter()
                .filter(|k| k.starts_with(prefix))
                .map(|k| k.to_vec())
                .collect();
            let mut got = Vec::new();
            it.seek_to_first().unwrap();
            while it.valid() {
                got.push(it.key().to_vec());
                it.next().unwrap();
            }
            assert_eq!(got, want, "prefix {prefix:?}");
            let mut back = Vec::new();
            it.seek_to_last().unwrap();
            while it.valid() {
                back.push(it.key().to_vec());
                it.prev().unwrap();
            }
            back.reverse();
            assert_eq!(back, want, "prefix {prefix:?} reversed");
        }
    }

    #[test]
    fn sequence_zero_versions_are_skipped_on_direction_change() {
        // Compaction may zero the sequence numbers of bottom-level entries.
        let src = vec![
            put("a", 0, "a0"),
            put("b", 0, "b0"),
            put("b", 7, "b7"),
            put("c", 0, "c0"),
        ];
        let mut it = db_iter(vec![vec_src(src.clone())], 10, KeyBounds::all());
        it.seek_to_last().unwrap();
        it.prev().unwrap();
        assert_eq!(pair(&it), ("b".into(), "b7".into()));
        it.next().unwrap();
        assert_eq!(pair(&it), ("c".into(), "c0".into()));
        it.prev().unwrap();
        it.prev().unwrap();
        assert_eq!(pair(&it), ("a".into(), "a0".into()));
        it.next().unwrap();
        assert_eq!(pair(&it), ("b".into(), "b7".into()));
        let mut it = db_iter(
            vec![vec_src(src)],
            10,
            KeyBounds::new(Bound::Excluded(b"b".to_vec()), Bound::Unbounded),
        );
        it.seek_to_first().unwrap();
        assert_eq!(pair(&it), ("c".into(), "c0".into()));
    }

    #[test]
    fn an_error_in_one_source_reaches_the_caller() {
        let failing: BoxedInternalIterator<'static> = Box::new(Failing {
            inner: VecIterator::new(vec![put("a", 1, "a"), put("c", 2, "c")]),
            fail_at: b"c".to_vec(),
        });
        let mut merged = MergingIterator::new(vec![vec_src(vec![put("b", 3, "b")]), failing]);
        merged.seek_to_first().unwrap();
        assert!(matches!(merged.next(), Err(Error::Corruption { .. })));
        assert!(!merged.valid());
        assert!(merged.seek(b"c", u64::MAX).is_err());

        let failing: BoxedInternalIterator<'static> = Box::new(Failing {
            inner: VecIterator::new(vec![put("a", 1, "a"), put("c", 2, "c")]),
            fail_at: b"c".to_vec(),
        });
        let mut it = DbIterator::new(
            MergingIterator::new(vec![failing]),
            Arc::new(RangeTombstoneSet::new()),
            10,
            KeyBounds::all(),
        );
        it.seek_to_first().unwrap();
        assert_eq!(it.key(), b"a");
        assert!(it.next().is_err());
        assert!(!it.valid());
        assert!(it.seek_to_last().is_err());
        assert_eq!(it.key(), b"");
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn db_iterator_can_move_between_threads() {
        fn sendable<T: Send>(_: &T) {}
        let it = db_iter(vec![vec_src(vec![put("a", 1, "a")])], 1, KeyBounds::all());
        sendable(&it);
    }
}
