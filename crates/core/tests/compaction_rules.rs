//! Compaction: picking, and output equal to the merge of its inputs minus exactly what the
//! rules allow to drop (shadowed versions within a snapshot stripe, covered versions, tombstones
//! only at the bottom), including the two resurrection regressions from the engine issue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use shaledb::compaction::{
    flush, CompactionJob, CompactionOptions, CompactionPicker, CompactionPlan, StepOutcome,
};
use shaledb::file_names::table_file_name;
use shaledb::iter::VecIterator;
use shaledb::sstable::{
    Entry, RangeTombstone, TableOptions, TableReadOptions, TableReader, ValueKind,
};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::version::edit::VersionEdit;
use shaledb::version::{FileMeta, VersionSet};

const MAX: u64 = (1 << 56) - 1;

fn put(k: &str, seq: u64, v: &str) -> Entry {
    Entry {
        key: k.as_bytes().to_vec(),
        seq,
        kind: ValueKind::Value,
        value: v.as_bytes().to_vec(),
    }
}
fn del(k: &str, seq: u64) -> Entry {
    Entry {
        key: k.as_bytes().to_vec(),
        seq,
        kind: ValueKind::Tombstone,
        value: Vec::new(),
    }
}
fn del_range(a: &str, b: &str, seq: u64) -> Entry {
    Entry {
        key: a.as_bytes().to_vec(),
        seq,
        kind: ValueKind::RangeTombstone,
        value: b.as_bytes().to_vec(),
    }
}

struct Db {
    storage: Arc<dyn Storage>,
    vs: VersionSet,
}

impl Db {
    fn new() -> Db {
        Db {
            storage: Arc::new(MemoryStorage::new()),
            vs: VersionSet::new(),
        }
    }

    /// Flushes `entries` to a new table and adds it at `level`.
    fn table(&mut self, level: u8, entries: Vec<Entry>) -> FileMeta {
        let n = self.vs.new_file_number();
        let mut it = VecIterator::new(entries);
        let meta = flush(&self.storage, n, &mut it, &TableOptions::default())
            .unwrap()
            .unwrap();
        self.vs
            .apply(&VersionEdit {
                files_added: vec![(level, meta.clone())],
                ..VersionEdit::default()
            })
            .unwrap();
        meta
    }

    fn open(&self, number: u64) -> TableReader {
        let f = self
            .storage
            .open(&table_file_name(number), OpenMode::Read)
            .unwrap();
        TableReader::open(f, TableReadOptions::default()).unwrap()
    }

    /// Runs `plan` in small steps, applies the edit, returns the output's entries.
    fn compact(
        &mut self,
        plan: CompactionPlan,
        snapshots: Vec<u64>,
        bottommost: bool,
        options: CompactionOptions,
    ) -> (Vec<Entry>, Vec<RangeTombstone>, VersionEdit) {
        let tables = plan
            .all_inputs()
            .map(|(_, f)| self.open(f.number))
            .collect();
        let mut job = CompactionJob::new(
            self.storage.clone(),
            plan,
            tables,
            snapshots,
            bottommost,
            options,
        )
        .unwrap();
        let mut steps = 0;
        let vs = &mut self.vs;
        while job.step(64, &mut || Ok(vs.new_file_number())).unwrap() == StepOutcome::Pending {
            steps += 1;
            assert!(steps < 100_000);
        }
        let edit = job.finish().unwrap();
        self.vs.apply(&edit).unwrap();
        let (mut points, mut rts) = (Vec::new(), Vec::new());
        for (_, f) in &edit.files_added {
            let t = self.open(f.number);
            let mut it = t.iter();
            it.seek_to_first().unwrap();
            while it.valid() {
                points.push(Entry {
                    key: it.key().to_vec(),
                    seq: it.seq(),
                    kind: it.kind(),
                    value: it.value().to_vec(),
                });
                it.next().unwrap();
            }
            rts.extend(t.range_tombstones().iter().cloned());
        }
        (points, rts, edit)
    }

    fn plan_l0(&self) -> CompactionPlan {
        CompactionPicker::new()
            .plan_level(&self.vs.current(), 0)
            .unwrap()
    }
}

fn keys_of(points: &[Entry]) -> Vec<(String, u64, ValueKind)> {
    points
        .iter()
        .map(|e| (String::from_utf8_lossy(&e.key).into_owned(), e.seq, e.kind))
        .collect()
}

/// go-sstables simpledb's resurrection bug: put k, delete k, then a compaction that leaves the
/// oldest table out must keep the tombstone, or the old value comes back.
#[test]
fn tombstone_is_kept_while_older_data_lies_below() {
    let mut db = Db::new();
    db.table(2, vec![put("k", 1, "old")]);
    db.table(0, vec![del("k", 2), put("a", 3, "x")]);
    db.table(0, vec![put("b", 4, "y"), put("c", 5, "z")]);
    let plan = db.plan_l0();
    assert_eq!(plan.inputs.len(), 2);
    let bottommost = plan.is_bottommost(&db.vs.current());
    assert!(!bottommost, "L2 still holds k");
    let (points, _, _) = db.compact(plan, vec![], bottommost, CompactionOptions::default());
    assert!(keys_of(&points).contains(&("k".into(), 2, ValueKind::Tombstone)));

    // Once nothing lies below, the same tombstone may go.
    let mut db = Db::new();
    db.table(0, vec![put("k", 1, "old")]);
    db.table(0, vec![del("k", 2), put("a", 3, "x")]);
    let plan = db.plan_l0();
    assert!(plan.is_bottommost(&db.vs.current()));
    let (points, _, _) = db.compact(plan, vec![], true, CompactionOptions::default());
    assert_eq!(keys_of(&points), vec![("a".into(), 3, ValueKind::Value)]);
}

/// A tombstone in a newer source hides the value in an older one when they are merged.
#[test]
fn newer_tombstone_hides_older_value_when_merged() {
    let mut db = Db::new();
    db.table(1, vec![put("k", 3, "old"), put("m", 1, "keep")]);
    db.table(0, vec![del("k", 5)]);
    let plan = db.plan_l0();
    assert_eq!(plan.next_inputs.len(), 1);
    let (points, _, edit) = db.compact(plan, vec![], false, CompactionOptions::default());
    assert_eq!(
        keys_of(&points),
        vec![
            ("k".into(), 5, ValueKind::Tombstone),
            ("m".into(), 1, ValueKind::Value)
        ]
    );
    assert_eq!(edit.files_deleted.len(), 2);
    assert_eq!(db.vs.current().files(0).len(), 0);
}

#[test]
fn versions_visible_to_a_snapshot_are_kept() {
    let mut db = Db::new();
    db.table(1, vec![put("k", 1, "v1"), put("k", 3, "v3")]);
    db.table(0, vec![put("k", 6, "v6"), del("k", 8)]);
    let plan = db.plan_l0();
    // Snapshot 4 sees v3; snapshot 6 sees v6; "now" sees the tombstone; v1 is hidden by v3.
    let (points, _, _) = db.compact(plan, vec![4, 6], true, CompactionOptions::default());
    assert_eq!(
        keys_of(&points),
        vec![
            ("k".into(), 8, ValueKind::Tombstone),
            ("k".into(), 6, ValueKind::Value),
            ("k".into(), 3, ValueKind::Value),
        ]
    );
}

#[test]
fn range_tombstones_are_carried_and_drop_only_what_they_safely_cover() {
    let mut db = Db::new();
    db.table(
        1,
        vec![put("c", 5, "c"), put("d", 9, "d"), put("g", 6, "g")],
    );
    db.table(0, vec![del_range("b", "f", 8), put("a", 10, "a")]);
    let plan = db.plan_l0();
    let (points, rts, _) = db.compact(plan, vec![], false, CompactionOptions::default());
    // c@5 is covered; d@9 is newer than the tombstone; g is outside it.
    assert_eq!(
        keys_of(&points),
        vec![
            ("a".into(), 10, ValueKind::Value),
            ("d".into(), 9, ValueKind::Value),
            ("g".into(), 6, ValueKind::Value),
        ]
    );
    assert_eq!(
        rts,
        vec![RangeTombstone {
            start: b"b".to_vec(),
            end: b"f".to_vec(),
            seq: 8
        }]
    );

    // A snapshot between c@5 and the tombstone keeps c.
    let mut db = Db::new();
    db.table(1, vec![put("c", 5, "c")]);
    db.table(0, vec![del_range("b", "f", 8)]);
    let plan = db.plan_l0();
    let (points, rts, _) = db.compact(plan, vec![6], true, CompactionOptions::default());
    assert_eq!(keys_of(&points), vec![("c".into(), 5, ValueKind::Value)]);
    assert_eq!(rts.len(), 1, "a snapshot older than the tombstone keeps it");
}

#[test]
fn outputs_are_cut_by_size_without_overlap_and_range_tombstones_are_split() {
    let mut db = Db::new();
    let big = "v".repeat(300);
    let mut older: Vec<Entry> = (0..200)
        .map(|i| put(&format!("k{i:04}"), 1 + i, &big))
        .collect();
    older.push(put("z", 1, "z"));
    db.table(1, older);
    db.table(
        0,
        vec![del_range("k0050", "k0150", 500), put("k0100", 600, "new")],
    );
    let plan = db.plan_l0();
    let options = CompactionOptions {
        target_file_size: 8 * 1024,
        table: TableOptions {
            block_size: 1024,
            ..TableOptions::default()
        },
        ..CompactionOptions::default()
    };
    // A snapshot below the tombstone keeps what it covers, so outputs fill up inside its range.
    let (points, rts, edit) = db.compact(plan, vec![499], false, options);
    assert!(
        edit.files_added.len() > 3,
        "{} outputs",
        edit.files_added.len()
    );
    // The version accepted them (L1 files must not overlap); check adjacency explicitly too.
    let l1 = db.vs.current().files(1).to_vec();
    for w in l1.windows(2) {
        assert_eq!(
            w[0].largest.cmp_internal(&w[1].smallest),
            std::cmp::Ordering::Less
        );
    }
    assert_eq!(points.len(), 200 + 1 + 1);
    // The tombstone's pieces tile [k0050, k0150) exactly, one per file it spans.
    let mut pieces: Vec<_> = rts
        .iter()
        .map(|t| (t.start.clone(), t.end.clone()))
        .collect();
    pieces.sort();
    assert!(pieces.len() > 1);
    assert_eq!(pieces.first().unwrap().0, b"k0050");
    assert_eq!(pieces.last().unwrap().1, b"k0150");
    for w in pieces.windows(2) {
        assert_eq!(w[0].1, w[1].0);
    }
    for f in &l1 {
        if f.has_range_tombstones {
            assert!(f.largest.seq == MAX || f.largest.key.as_slice() >= b"k0050".as_slice());
        }
    }
}

#[test]
fn trivial_moves_and_picking() {
    let mut db = Db::new();
    let options = CompactionOptions {
        l0_trigger: 2,
        base_level_bytes: 1,
        ..CompactionOptions::default()
    };
    let mut picker = CompactionPicker::new();
    assert!(picker.pick(&db.vs.current(), &options).is_none());
    db.table(0, vec![put("a", 1, "x")]);
    assert!(
        picker.pick(&db.vs.current(), &options).is_none(),
        "one L0 file is below the trigger of 2"
    );
    db.table(0, vec![put("b", 2, "y")]);
    let plan = picker.pick(&db.vs.current(), &options).unwrap();
    assert_eq!(
        (plan.level, plan.output_level, plan.inputs.len()),
        (0, 1, 2)
    );
    db.compact(plan, vec![], true, options.clone());
    // L1 is now over its 1-byte target: its single file moves down without a rewrite.
    let plan = picker.pick(&db.vs.current(), &options).unwrap();
    assert_eq!(plan.level, 1);
    assert!(plan.is_trivial_move());
    let moved = plan.inputs[0].number;
    let (_, _, edit) = db.compact(plan, vec![], true, options.clone());
    assert_eq!(edit.files_added[0].1.number, moved);
    assert_eq!(db.vs.current().files(2)[0].number, moved);
    // Level targets grow by the ratio.
    let o = CompactionOptions::default();
    assert_eq!(o.level_target_bytes(2), o.level_target_bytes(1) * 10);
    assert_eq!(o.level_target_bytes(6), u64::MAX);
}

// ---- model test ----

/// The value of `key` seen at snapshot `s` by a reader of `points` + `rts`.
fn visible(points: &[Entry], rts: &[RangeTombstone], key: &[u8], s: u64) -> Option<Vec<u8>> {
    let newest = points
        .iter()
        .filter(|e| e.key == key && e.seq <= s)
        .max_by_key(|e| e.seq)?;
    let covered = rts.iter().any(|t| {
        t.seq <= s && t.seq > newest.seq && t.start.as_slice() <= key && key < t.end.as_slice()
    });
    if covered || newest.kind == ValueKind::Tombstone {
        return None;
    }
    Some(newest.value.clone())
}

fn stripe(snapshots: &[u64], seq: u64) -> usize {
    snapshots.iter().filter(|&&t| t < seq).count()
}

#[derive(Debug, Clone)]
enum Op {
    Put(u8),
    Del(u8),
    DelRange(u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..12).prop_map(Op::Put),
        3 => (0u8..12).prop_map(Op::Del),
        1 => (0u8..12, 1u8..5).prop_map(|(a, n)| Op::DelRange(a, a + n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn compaction_output_equals_input_merge_minus_what_the_rules_drop(
        ops in prop::collection::vec(op(), 1..60),
        cuts in prop::collection::vec(any::<u8>(), 2),
        snaps in prop::collection::vec(0u64..70, 0..4),
        bottommost in any::<bool>(),
        small_files in any::<bool>(),
    ) {
        let key = |k: u8| format!("key{k:02}");
        let entries: Vec<Entry> = ops.iter().enumerate().map(|(i, o)| {
            let seq = i as u64 + 1;
            match o {
                Op::Put(k) => put(&key(*k), seq, &format!("v{seq}")),
                Op::Del(k) => del(&key(*k), seq),
                Op::DelRange(a, b) => del_range(&key(*a), &key(*b), seq),
            }
        }).collect();
        // Oldest entries to L1, the rest to two L0 tables (newest last).
        let n = entries.len();
        let mut c: Vec<usize> = cuts.iter().map(|&x| usize::from(x) % (n + 1)).collect();
        c.sort_unstable();
        let mut db = Db::new();
        let parts = [&entries[..c[0]], &entries[c[0]..c[1]], &entries[c[1]..]];
        for (i, part) in parts.iter().enumerate() {
            if !part.is_empty() {
                db.table(if i == 0 { 1 } else { 0 }, part.to_vec());
            }
        }
        let Some(plan) = CompactionPicker::new().plan_level(&db.vs.current(), 0) else {
            return Ok(());
        };
        let mut snapshots = snaps.clone();
        snapshots.sort_unstable();
        snapshots.dedup();
        let options = CompactionOptions {
            target_file_size: if small_files { 200 } else { 1 << 20 },
            table: TableOptions { block_size: 128, ..TableOptions::default() },
            ..CompactionOptions::default()
        };
        let input: Vec<Entry> = plan.all_inputs().flat_map(|(_, f)| {
            let t = db.open(f.number);
            let mut it = t.iter();
            it.seek_to_first().unwrap();
            let mut v = Vec::new();
            while it.valid() {
                v.push(Entry { key: it.key().to_vec(), seq: it.seq(), kind: it.kind(), value: it.value().to_vec() });
                it.next().unwrap();
            }
            v
        }).collect();
        let input_rts: Vec<RangeTombstone> = entries.iter()
            .filter(|e| e.kind == ValueKind::RangeTombstone)
            .map(|e| RangeTombstone { start: e.key.clone(), end: e.value.clone(), seq: e.seq })
            .collect();
        let trivial = plan.is_trivial_move();
        let (points, rts, _) = db.compact(plan, snapshots.clone(), bottommost, options);
        if trivial {
            // A single file moved down unchanged.
            prop_assert_eq!(&points, &input);
            return Ok(());
        }

        // 1. Every snapshot (and "now") reads the same values.
        let mut reads: Vec<u64> = snapshots.clone();
        reads.push(MAX);
        let all_keys: BTreeSet<Vec<u8>> = (0u8..18).map(|k| key(k).into_bytes()).collect();
        for &s in &reads {
            for k in &all_keys {
                prop_assert_eq!(visible(&points, &rts, k, s), visible(&input, &input_rts, k, s),
                    "key {:?} at snapshot {}", String::from_utf8_lossy(k), s);
            }
        }
        // 2. Nothing droppable survives: no two versions of a key share a stripe, no version is
        //    covered by a range tombstone of its stripe, no bottom tombstone in the first stripe.
        for w in points.windows(2) {
            if w[0].key == w[1].key {
                prop_assert_ne!(stripe(&snapshots, w[0].seq), stripe(&snapshots, w[1].seq));
            }
        }
        for e in &points {
            let st = stripe(&snapshots, e.seq);
            prop_assert!(!input_rts.iter().any(|t| t.seq > e.seq && t.start <= e.key && e.key < t.end
                && stripe(&snapshots, t.seq) == st), "covered {:?}", e);
            if bottommost && e.kind == ValueKind::Tombstone {
                prop_assert_ne!(st, 0);
            }
        }
        // 3. Nothing needed is dropped below: without `bottommost`, every input tombstone that
        //    is the newest of its stripe and not covered is still there.
        if !bottommost {
            for e in input.iter().filter(|e| e.kind == ValueKind::Tombstone) {
                let st = stripe(&snapshots, e.seq);
                let shadowed = input.iter().any(|o| o.key == e.key && o.seq > e.seq && stripe(&snapshots, o.seq) == st);
                let covered = input_rts.iter().any(|t| t.seq > e.seq && t.start <= e.key && e.key < t.end && stripe(&snapshots, t.seq) == st);
                if !shadowed && !covered {
                    prop_assert!(points.iter().any(|p| p.key == e.key && p.seq == e.seq), "tombstone {:?} lost", e);
                }
            }
        }
    }
}
