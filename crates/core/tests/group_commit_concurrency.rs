//! Group commit with concurrent writers on FaultyStorage over MemoryStorage: every write is
//! acknowledged with unique, dense sequence numbers, synced writes share syncs and survive a
//! crash, and a failed sync fails its group and poisons every later commit.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

use shaledb::memtable::MemTable;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::write::batch::WriteBatch;
use shaledb::write::group_commit::GroupCommit;
use shaledb::write::wal::{WalOptions, WalReader, WalWriter};

const THREADS: u64 = 8;

fn setup() -> (FaultyStorage, Arc<GroupCommit>, Arc<MemTable>) {
    let s = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let wal = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    (
        s,
        Arc::new(GroupCommit::new(wal, 0)),
        Arc::new(MemTable::new()),
    )
}

/// Thread `t`'s `i`-th batch: `i % 3 + 1` puts of keys unique to (t, i).
fn batch(t: u64, i: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    for j in 0..(i % 3 + 1) {
        b.put(format!("t{t}-i{i}-j{j}").as_bytes(), &[t as u8; 20])
            .unwrap();
    }
    b
}

/// Runs `THREADS` writers of `per_thread` batches each; returns, per acknowledged batch, its
/// (first seq, op count, thread, index), and the number of failed commits.
fn run_writers(
    gc: &Arc<GroupCommit>,
    mem: &Arc<MemTable>,
    per_thread: u64,
    sync: bool,
) -> (Vec<(u64, u64, u64, u64)>, usize) {
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (gc, mem, barrier) = (Arc::clone(gc), Arc::clone(mem), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut apply = |seq: u64, b: &WriteBatch| {
                    mem.apply(seq, b);
                    Ok(())
                };
                barrier.wait();
                let mut acked = Vec::new();
                let mut failed = 0;
                for i in 0..per_thread {
                    let b = batch(t, i);
                    let n = b.len() as u64;
                    match gc.commit(b, sync, &mut apply) {
                        Ok(seq) => acked.push((seq, n, t, i)),
                        Err(_) => failed += 1,
                    }
                }
                (acked, failed)
            })
        })
        .collect();
    let mut acked = Vec::new();
    let mut failed = 0;
    for h in handles {
        let (a, f) = h.join().unwrap();
        acked.extend(a);
        failed += f;
    }
    acked.sort();
    (acked, failed)
}

#[test]
fn concurrent_synced_writers_share_syncs_and_get_dense_unique_sequence_numbers() {
    let (s, gc, mem) = setup();
    let per_thread = 40;
    let (acked, failed) = run_writers(&gc, &mem, per_thread, true);
    assert_eq!(failed, 0);
    let writes = THREADS * per_thread;
    assert_eq!(acked.len() as u64, writes);
    // Dense and unique: batches tile 1..=total exactly.
    let mut next = 1;
    for &(seq, n, _, _) in &acked {
        assert_eq!(seq, next, "sequence numbers must be dense and unique");
        next += n;
    }
    assert_eq!(gc.visible_seq(), next - 1);
    assert_eq!(mem.len() as u64, next - 1);
    let stats = gc.stats();
    let syncs = s.syncs() - 1; // the WAL's creation synced once
    assert_eq!(stats.syncs, syncs);
    assert!(syncs <= writes, "{syncs} syncs for {writes} writes");
    println!(
        "group commit: {writes} synced writes, {syncs} syncs, {} groups ({:.2} writes per sync)",
        stats.groups,
        writes as f64 / syncs.max(1) as f64
    );

    // Every acknowledged synced batch survives a power loss, with its sequence number.
    s.crash().unwrap();
    let mut replayed = BTreeMap::new();
    WalReader::replay(&s, 1, |seq, b| {
        replayed.insert(seq, b);
        Ok(())
    })
    .unwrap();
    assert_eq!(replayed.len(), acked.len());
    for &(seq, _, t, i) in &acked {
        let mut want = batch(t, i);
        want.set_first_seq(seq);
        assert_eq!(replayed.get(&seq), Some(&want));
    }
}

#[test]
fn unsynced_acknowledged_writes_are_in_the_log_without_a_crash() {
    let (s, gc, mem) = setup();
    let (acked, failed) = run_writers(&gc, &mem, 20, false);
    assert_eq!((failed, acked.len() as u64), (0, THREADS * 20));
    assert_eq!(gc.stats().syncs, 0);
    // A process kill loses nothing handed to the OS: the log holds every acknowledged batch.
    let r = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap();
    assert_eq!(r.batches, acked.len() as u64);
}

#[test]
fn a_failed_sync_fails_its_group_and_poisons_every_later_commit() {
    let (s, gc, mem) = setup();
    let (before, _) = run_writers(&gc, &mem, 5, true);
    s.fail_next_sync();
    let (acked, failed) = run_writers(&gc, &mem, 10, true);
    assert!(failed > 0, "the failed sync reached some writer");
    let mut apply = |_: u64, _: &WriteBatch| Ok(());
    let e = gc.commit(batch(99, 0), true, &mut apply).unwrap_err();
    assert_eq!(e.code(), "IO");
    assert!(e.to_string().contains("injected"), "cause kept: {e}");
    assert!(gc.poisoned().is_some());
    // Writes acknowledged before the failure survive a crash; nothing acknowledged after it.
    let acked_total = before.len() + acked.len();
    s.reset_faults();
    s.crash().unwrap();
    let r = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap();
    assert!(r.batches as usize >= acked_total);
}

#[test]
fn concurrent_synced_writers_on_a_real_disk_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let s = shaledb::storage::std_fs::StdFsStorage::open(dir.path()).unwrap();
    let wal = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    let gc = Arc::new(GroupCommit::new(wal, 0));
    let mem = Arc::new(MemTable::new());
    let per_thread = 10;
    let started = std::time::Instant::now();
    let (acked, failed) = run_writers(&gc, &mem, per_thread, true);
    assert_eq!((failed, acked.len() as u64), (0, THREADS * per_thread));
    let stats = gc.stats();
    assert!(stats.syncs <= THREADS * per_thread);
    println!(
        "group commit on disk: {} synced writes, {} fsyncs ({:.2} writes per fsync) in {:?}",
        acked.len(),
        stats.syncs,
        acked.len() as f64 / stats.syncs.max(1) as f64,
        started.elapsed()
    );
}
