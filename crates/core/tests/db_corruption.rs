//! Damaged files at the `Db` level: bytes flipped and files truncated in every kind of file
//! (WAL, table, manifest, CURRENT), at a few deterministic positions each. Reopening either
//! gives a database that returns only correct data (every key present has its latest value;
//! keys may be missing only when the damage is a torn tail of the last WAL, and then only the
//! newest writes), or refuses with a typed corruption error naming the damaged file. Never a
//! panic, never wrong data. Damage inside a table's data block that opening does not read is
//! reported by the reads that reach it, with a typed error naming the table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on any unexpected error"
)]

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use shaledb::db::Budget;
use shaledb::file_names::{parse_file_name, FileKind};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::write::wal::WalReader;
use shaledb::{Db, Error, IterOptions, Options};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.target_file_size = 16 * 1024;
    o.base_level_size = 32 * 1024;
    o.l0_compaction_trigger = 2;
    o.block_size = 1024;
    o.create_if_missing = false;
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:04}", i % 400).into_bytes()
}

fn value(n: u32) -> Vec<u8> {
    let mut v = format!("value-{n}-").into_bytes();
    let mut x = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while v.len() < 300 + (n % 7) as usize * 100 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(b'a' + (x % 26) as u8);
    }
    v
}

/// One write of the history: a put or (value `None`) a delete.
type Write = (Vec<u8>, Option<Vec<u8>>);

/// A closed database holding tables in L0 and deeper levels, a manifest, two WALs (an
/// immutable memtable's and the live one's) and overwrites and deletes throughout; and the
/// writes in order.
fn build() -> (MemoryStorage, Vec<Write>) {
    let storage = MemoryStorage::new();
    let mut o = options();
    o.create_if_missing = true;
    let db = Db::open_storage(Arc::new(storage.clone()), o).unwrap();
    let mut history = Vec::new();
    let mut n = 0u32;
    let mut write = |db: &Db, n: &mut u32| {
        *n += 1;
        let k = key(n.wrapping_mul(7919));
        if *n % 5 == 0 {
            db.delete(&k).unwrap();
            history.push((k, None));
        } else {
            let v = value(*n);
            db.put(&k, &v).unwrap();
            history.push((k, Some(v)));
        }
    };
    for round in 0..7 {
        for _ in 0..150 {
            write(&db, &mut n);
        }
        db.flush().unwrap();
        if round % 2 == 1 {
            while db.maintain(Budget { bytes: 1 << 20 }).unwrap().more {}
        }
    }
    // Leave an unflushed immutable memtable (its own WAL) and a live one.
    let wals_before = wal_numbers(&storage).len();
    while wal_numbers(&storage).len() == wals_before {
        write(&db, &mut n);
    }
    for _ in 0..40 {
        write(&db, &mut n);
    }
    let stats = db.stats();
    assert!(stats.level_files[0] > 0 && stats.level_files.iter().skip(1).sum::<usize>() > 0);
    db.close().unwrap();
    assert!(wal_numbers(&storage).len() >= 2, "two WALs at close");
    (storage, history)
}

fn wal_numbers(storage: &MemoryStorage) -> Vec<u64> {
    shaledb::file_names::wal_numbers(&storage.list().unwrap())
}

fn state_after(history: &[Write]) -> Map {
    let mut map = Map::new();
    for (k, v) in history {
        match v {
            Some(v) => map.insert(k.clone(), v.clone()),
            None => map.remove(k),
        };
    }
    map
}

fn copy(storage: &MemoryStorage) -> MemoryStorage {
    let out = MemoryStorage::new();
    for name in storage.list().unwrap() {
        let bytes = read(storage, &name);
        let f = out.open(&name, OpenMode::CreateNew).unwrap();
        f.write_at(0, &bytes).unwrap();
    }
    out
}

fn read(storage: &MemoryStorage, name: &str) -> Vec<u8> {
    let f = storage.open(name, OpenMode::Read).unwrap();
    let mut buf = vec![0; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut buf).unwrap();
    buf
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip(u64),
    Truncate(u64),
}

fn apply(storage: &MemoryStorage, name: &str, damage: Damage) {
    let f = storage.open(name, OpenMode::ReadWrite).unwrap();
    match damage {
        Damage::Flip(at) => {
            let mut b = [0u8];
            f.read_exact_at(at, &mut b).unwrap();
            f.write_at(at, &[b[0] ^ 0x5A]).unwrap();
        }
        Damage::Truncate(len) => f.truncate(len).unwrap(),
    }
}

fn damages(len: u64) -> Vec<Damage> {
    let mut at: Vec<u64> = vec![0, 1, 5, 9, 13, 20, len / 3, len / 2, len * 2 / 3, len - 9]
        .into_iter()
        .chain([len.saturating_sub(3), len - 1])
        .filter(|&p| p < len)
        .collect();
    at.sort_unstable();
    at.dedup();
    let mut out: Vec<Damage> = at.iter().map(|&p| Damage::Flip(p)).collect();
    let mut cut: Vec<u64> = vec![0, 5, len / 2, len.saturating_sub(1), len.saturating_sub(20)];
    cut.sort_unstable();
    cut.dedup();
    out.extend(cut.into_iter().filter(|&c| c < len).map(Damage::Truncate));
    out
}

fn is_typed_damage(e: &Error) -> bool {
    matches!(
        e.code(),
        "CORRUPTION" | "VERSION_UNSUPPORTED" | "UNSUPPORTED_COMPRESSION" | "RECORD_TOO_LARGE"
    )
}

/// Everything the database shows: a full scan, forward and reverse, and a get of every key the
/// history touched. The first error ends the reading.
fn contents(db: &Db, history: &[Write]) -> Result<Map, Error> {
    let forward: Map = db.iter(IterOptions::default())?.collect::<Result<_, _>>()?;
    let mut reverse: Vec<(Vec<u8>, Vec<u8>)> = db
        .iter(IterOptions::default().reversed())?
        .collect::<Result<_, _>>()?;
    reverse.reverse();
    assert_eq!(
        forward.clone().into_iter().collect::<Vec<_>>(),
        reverse,
        "forward and reverse scans agree"
    );
    for (k, _) in history {
        let got = db.get(k)?;
        assert_eq!(got.as_ref(), forward.get(k), "get and scan agree on {k:?}");
    }
    Ok(forward)
}

/// Opens `storage` after `damage` to `name` and checks the outcome; returns what happened.
fn check(
    storage: &MemoryStorage,
    name: &str,
    damage: Damage,
    history: &[Write],
    last_wal: &str,
    last_wal_batches: usize,
) -> Result<&'static str, String> {
    let what = format!("{damage:?} of {name}");
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let db = match Db::open_storage(Arc::new(storage.clone()), options()) {
            Ok(db) => db,
            Err(e) => return Err(e),
        };
        let result = contents(&db, history);
        drop(db);
        result
    }));
    let outcome = match outcome {
        Ok(o) => o,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            return Err(format!("{what}: panicked: {msg}"));
        }
    };
    match outcome {
        Err(e) => {
            if !is_typed_damage(&e) {
                return Err(format!(
                    "{what}: refused with {e:?} ({}), not a typed corruption error",
                    e.code()
                ));
            }
            if !e.to_string().contains(name) {
                return Err(format!(
                    "{what}: the error does not name the damaged file: {e}"
                ));
            }
            Ok("refused")
        }
        Ok(shown) => {
            let full = state_after(history);
            if shown == full {
                return Ok("intact");
            }
            // Only a torn tail of the last WAL may lose writes, and only its newest ones.
            let first_allowed = history.len() - last_wal_batches;
            let ok = name == last_wal
                && (first_allowed..history.len()).any(|i| state_after(&history[..i]) == shown);
            if !ok {
                return Err(format!(
                    "{what}: the database opened and shows wrong data: {}",
                    describe(&full, &shown)
                ));
            }
            Ok("lost a tail")
        }
    }
}

fn describe(want: &Map, got: &Map) -> String {
    let mut out = Vec::new();
    for (k, v) in want {
        match got.get(k) {
            None => out.push(format!("missing {}", String::from_utf8_lossy(k))),
            Some(g) if g != v => out.push(format!(
                "wrong {}: {:.16} (want {:.16})",
                String::from_utf8_lossy(k),
                String::from_utf8_lossy(g),
                String::from_utf8_lossy(v)
            )),
            _ => {}
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        out.push(format!(
            "back from the dead: {}",
            String::from_utf8_lossy(k)
        ));
    }
    let n = out.len();
    out.truncate(12);
    format!("{n} differences: {}", out.join("; "))
}

#[test]
fn damaged_files_are_refused_with_a_typed_error_or_recovered_without_wrong_data() {
    let (base, history) = build();
    let wals = wal_numbers(&base);
    let last = *wals.last().unwrap();
    let last_wal = shaledb::write::wal::wal_file_name(last);
    let replay = WalReader::replay(&base, last, |_, _| Ok(())).unwrap();
    let last_wal_batches = replay.batches as usize;

    let mut names = base.list().unwrap();
    names.sort();
    let mut seen_kinds = Vec::new();
    let mut summary = BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    for name in &names {
        let kind = match parse_file_name(name) {
            Some(FileKind::Wal(_)) => "wal",
            Some(FileKind::Table(_)) => "table",
            Some(FileKind::Manifest(_)) => "manifest",
            Some(FileKind::Current) => "current",
            _ => continue,
        };
        seen_kinds.push(kind);
        let len = read(&base, name).len() as u64;
        for damage in damages(len) {
            let storage = copy(&base);
            apply(&storage, name, damage);
            match check(
                &storage,
                name,
                damage,
                &history,
                &last_wal,
                last_wal_batches,
            ) {
                Ok(outcome) => *summary.entry(format!("{kind} {outcome}")).or_default() += 1,
                Err(failure) => failures.push(failure),
            }
        }
    }
    for kind in ["wal", "table", "manifest", "current"] {
        assert!(seen_kinds.contains(&kind), "a {kind} file was damaged");
    }
    eprintln!("outcomes: {summary:?}");
    assert!(
        failures.is_empty(),
        "{} damaged databases misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Damage in a table's data block is not seen at open (only the footer, index and filter are
/// read): the reads that reach it fail with a typed error naming the table.
#[test]
fn damaged_table_block_fails_reads_with_an_error_naming_the_table() {
    let storage = MemoryStorage::new();
    let mut o = options();
    o.create_if_missing = true;
    o.compression = false;
    let db = Db::open_storage(Arc::new(storage.clone()), o).unwrap();
    for i in 0..200 {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let table = storage
        .list()
        .unwrap()
        .into_iter()
        .find(|n| matches!(parse_file_name(n), Some(FileKind::Table(_))))
        .unwrap();
    // A byte in the middle of the first data blocks.
    apply(&storage, &table, Damage::Flip(2000));

    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let mut errors = 0;
    for i in 0..200 {
        match db.get(&key(i)) {
            Ok(Some(v)) => assert_eq!(v, value(i), "an intact block reads correctly"),
            Ok(None) => panic!("key {i} missing without an error"),
            Err(e) => {
                assert_eq!(e.code(), "CORRUPTION", "{e}");
                assert!(e.to_string().contains(&table), "{e} names {table}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0, "some get reached the damaged block");
    let scan: Result<Vec<_>, Error> = db.iter(IterOptions::default()).unwrap().collect();
    let e = scan.expect_err("a full scan reaches the damaged block");
    assert_eq!(e.code(), "CORRUPTION");
    assert!(e.to_string().contains(&table), "{e} names {table}");
}
