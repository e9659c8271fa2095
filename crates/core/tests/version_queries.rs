//! Version queries the read path needs: files for a key (L0 newest first, binary search on
//! L1+), files overlapping a range, level sizes, the live-file set.
#![allow(clippy::unwrap_used)]

use shaledb::key::{InternalKey, RANGE_SENTINEL_SEQ};
use shaledb::version::edit::VersionEdit;
use shaledb::version::{FileMeta, VersionSet};

fn meta(number: u64, lo: &str, hi: &str, seq: u64) -> FileMeta {
    FileMeta {
        number,
        size: 100 * number,
        smallest: InternalKey::new(lo.as_bytes().to_vec(), seq),
        largest: InternalKey::new(hi.as_bytes().to_vec(), seq),
        min_seq: seq,
        max_seq: seq,
        entries: 1,
        has_range_tombstones: false,
    }
}

fn numbers(files: &[std::sync::Arc<FileMeta>]) -> Vec<u64> {
    files.iter().map(|f| f.number).collect()
}

#[test]
fn overlap_queries_follow_level_order() {
    let mut vs = VersionSet::new();
    let mut touching = meta(7, "m", "p", 4);
    touching.largest = InternalKey::new(b"q".to_vec(), RANGE_SENTINEL_SEQ);
    vs.apply(&VersionEdit {
        files_added: vec![
            (0, meta(1, "a", "z", 10)),
            (0, meta(2, "c", "d", 20)),
            (1, meta(3, "a", "b", 1)),
            (1, meta(4, "e", "g", 2)),
            (1, touching),
            (1, meta(8, "q", "s", 3)),
        ],
        ..VersionEdit::default()
    })
    .unwrap();
    let v = vs.current();
    assert_eq!(numbers(v.files(0)), vec![2, 1], "L0 newest first");
    assert_eq!(numbers(&v.files_for_key(0, b"c")), vec![2, 1]);
    assert_eq!(numbers(&v.files_for_key(0, b"e")), vec![1]);
    assert_eq!(numbers(&v.files_for_key(1, b"f")), vec![4]);
    assert_eq!(numbers(&v.files_for_key(1, b"c")), Vec::<u64>::new());
    assert_eq!(
        numbers(&v.files_for_key(1, b"q")),
        vec![7, 8],
        "touching at a sentinel"
    );
    assert_eq!(
        numbers(&v.overlapping(1, Some(b"b"), Some(b"f"))),
        vec![3, 4]
    );
    assert_eq!(numbers(&v.overlapping(1, None, Some(b"a"))), vec![3]);
    assert_eq!(
        numbers(&v.overlapping(1, Some(b"t"), None)),
        Vec::<u64>::new()
    );
    assert_eq!(v.level_bytes(1), 300 + 400 + 700 + 800);
    assert!(v.has_data_below(0, b"a", b"b"));
    assert!(!v.has_data_below(1, b"a", b"z"));
    assert_eq!(v.deepest_nonempty_level(), Some(1));
}

#[test]
fn live_files_include_versions_still_in_use() {
    let mut vs = VersionSet::new();
    vs.apply(&VersionEdit {
        files_added: vec![(0, meta(1, "a", "b", 1))],
        ..VersionEdit::default()
    })
    .unwrap();
    let held = vs.current();
    vs.apply(&VersionEdit {
        files_deleted: vec![(0, 1)],
        files_added: vec![(1, meta(2, "a", "b", 1))],
        ..VersionEdit::default()
    })
    .unwrap();
    assert_eq!(vs.live_files().into_iter().collect::<Vec<_>>(), vec![1, 2]);
    drop(held);
    assert_eq!(vs.live_files().into_iter().collect::<Vec<_>>(), vec![2]);
    assert!(vs.next_file_number() > 2);
    // Deleting a file that is not there, or overlapping L1 files, is refused.
    assert!(vs
        .apply(&VersionEdit {
            files_deleted: vec![(0, 9)],
            ..VersionEdit::default()
        })
        .is_err());
    assert!(vs
        .apply(&VersionEdit {
            files_added: vec![(1, meta(3, "b", "c", 5))],
            ..VersionEdit::default()
        })
        .is_err());
}
