//! Preallocated write-ahead logs through the database (`Options::wal_preallocation`): a log is
//! extended ahead of its data (natively on Linux: reserved with `fallocate` and written through
//! a shared mapping), cut back to its data when it is sealed or the database closes, and read
//! back whole whatever is left after it.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;

use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::write::wal::{parse_wal_file_name, WalEnd, WalReader};
use shaledb::{Db, Options, WriteOptions};

fn options(step: u64) -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.wal_preallocation = step;
    o
}

fn wal_numbers(s: &dyn Storage) -> Vec<u64> {
    let mut v: Vec<u64> = s
        .list()
        .unwrap()
        .iter()
        .filter_map(|n| parse_wal_file_name(n))
        .collect();
    v.sort_unstable();
    v
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} {}", "x".repeat((i % 200) as usize)).into_bytes()
}

#[test]
fn a_database_on_disk_writes_through_its_preallocated_log_and_closes_it_cut_to_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(StdFsStorage::open(dir.path()).unwrap());
    // 64 KiB steps: the log is extended (and remapped) many times.
    let db = Db::open_storage(storage.clone(), options(64 * 1024)).unwrap();
    for i in 0..5_000u32 {
        let sync = WriteOptions { sync: i % 500 == 0 };
        db.put_opt(&key(i), &value(i), sync).unwrap();
    }
    let live = *wal_numbers(&*storage).last().unwrap();
    let name = shaledb::write::wal::wal_file_name(live);
    let size = storage.open(&name, OpenMode::Read).unwrap().size().unwrap();
    assert_eq!(size % (64 * 1024), 0, "preallocated in steps: {size}");
    // Before the close, the log replays with a tail of zeros after the data.
    let open_replay = WalReader::replay(&*storage, live, |_, _| Ok(())).unwrap();
    assert!(matches!(open_replay.end, WalEnd::TornTail { .. }));
    assert_eq!(open_replay.batches, 5_000);
    db.close().unwrap();
    let replay = WalReader::replay(&*storage, live, |_, _| Ok(())).unwrap();
    assert_eq!(replay.end, WalEnd::Clean, "cut to its data");
    assert_eq!(replay.file_size, replay.valid_up_to);
    let db = Db::open_storage(storage, options(64 * 1024)).unwrap();
    for i in (0..5_000u32).step_by(37) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "{i}");
    }
    db.close().unwrap();
}

#[test]
fn a_sealed_log_followed_by_zeros_leads_on_to_the_next_log() {
    let memory = MemoryStorage::new();
    let storage: Arc<dyn Storage> = Arc::new(memory.clone());
    let db = Db::open_storage(storage.clone(), options(4096)).unwrap();
    db.put(b"before", b"the seal").unwrap();
    db.seal_memtable().unwrap();
    db.put(b"after", b"the seal").unwrap();
    // The process dies: nothing is flushed, both logs are replayed at the next open.
    let wals = wal_numbers(&*storage);
    assert!(wals.len() >= 2, "{wals:?}");
    std::mem::forget(db);
    // A crash undid the cut of the sealed log's preallocated tail.
    let sealed = shaledb::write::wal::wal_file_name(wals[wals.len() - 2]);
    let f = storage.open(&sealed, OpenMode::ReadWrite).unwrap();
    let size = f.size().unwrap();
    f.truncate(size + 5000).unwrap();
    let reopened = MemoryStorage::new();
    for name in storage.list().unwrap() {
        if name == "LOCK" {
            continue;
        }
        let src = storage.open(&name, OpenMode::Read).unwrap();
        let mut bytes = vec![0u8; src.size().unwrap() as usize];
        src.read_exact_at(0, &mut bytes).unwrap();
        reopened
            .open(&name, OpenMode::CreateNew)
            .unwrap()
            .write_at(0, &bytes)
            .unwrap();
    }
    let db = Db::open_storage(Arc::new(reopened), options(4096)).unwrap();
    assert_eq!(
        db.get(b"before").unwrap().as_deref(),
        Some(&b"the seal"[..])
    );
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"the seal"[..]));
}
