//! Tables with range tombstones: written as format version 2 with a range-del record, read back
//! at open; tables without them stay version 1.
#![allow(clippy::unwrap_used)]

use shaledb::sstable::{TableBuilder, TableOptions, TableReadOptions, TableReader, ValueKind};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

#[test]
fn range_tombstones_round_trip_in_a_version_2_table() {
    let s = MemoryStorage::new();
    let mut b = TableBuilder::new(
        s.open("1.sst", OpenMode::Create).unwrap(),
        TableOptions::default(),
    )
    .unwrap();
    b.add(b"a", 5, ValueKind::Value, b"x").unwrap();
    b.add(b"q", 9, ValueKind::RangeTombstone, b"t").unwrap();
    b.add_range_tombstone(b"c", b"f", 7).unwrap();
    b.add(b"d", 3, ValueKind::Value, b"y").unwrap();
    b.add_range_tombstone(b"f", b"c", 8).unwrap(); // empty: deletes nothing, not stored
    let sum = b.finish().unwrap();
    assert_eq!(sum.properties.format_version, 2);
    assert_eq!(sum.properties.range_tombstones, 2);
    assert_eq!((sum.properties.min_seq, sum.properties.max_seq), (3, 9));
    let t = TableReader::open(
        s.open("1.sst", OpenMode::Read).unwrap(),
        TableReadOptions::default(),
    )
    .unwrap();
    let rts: Vec<_> = t
        .range_tombstones()
        .iter()
        .map(|r| (r.start.clone(), r.end.clone(), r.seq))
        .collect();
    assert_eq!(
        rts,
        vec![
            (b"c".to_vec(), b"f".to_vec(), 7),
            (b"q".to_vec(), b"t".to_vec(), 9)
        ]
    );
    assert_eq!(t.properties().entries, 2, "points only");
    // Point reads and iteration see point entries only.
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        assert_ne!(it.kind(), ValueKind::RangeTombstone);
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, 2);

    // Without range tombstones: version 1, readable as before.
    let mut b = TableBuilder::new(
        s.open("2.sst", OpenMode::Create).unwrap(),
        TableOptions::default(),
    )
    .unwrap();
    b.add(b"a", 1, ValueKind::Value, b"x").unwrap();
    assert_eq!(b.finish().unwrap().properties.format_version, 1);
    let t = TableReader::open(
        s.open("2.sst", OpenMode::Read).unwrap(),
        TableReadOptions::default(),
    )
    .unwrap();
    assert!(t.range_tombstones().is_empty());
}
