//! The WAL under crashes and faults (FaultyStorage over MemoryStorage): a crash keeps a prefix of
//! whole batches, synced batches always survive, lost unsynced pages (in any order) are a torn
//! tail, never corruption, damage to synced data is, and a failed sync or write poisons the
//! writer.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;

use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::write::batch::WriteBatch;
use shaledb::write::wal::{wal_file_name, WalEnd, WalOptions, WalReader, WalReplay, WalWriter};
use shaledb::Error;

fn faulty() -> FaultyStorage {
    FaultyStorage::new(Arc::new(MemoryStorage::new()))
}

/// Batch `i` has `i % 4 + 1` operations of varying sizes, first sequence number `seq`.
fn batch(i: u64, seq: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    for j in 0..(i % 4 + 1) {
        let key = format!("key-{i}-{j}");
        let value = vec![(i % 251) as u8; ((i * 37 + j * 11) % 300) as usize];
        b.put(key.as_bytes(), &value).unwrap();
    }
    if i % 5 == 0 {
        b.delete(format!("gone-{i}").as_bytes()).unwrap();
    }
    b.set_first_seq(seq);
    b
}

/// Writes `n` batches to log 1, syncing after batch `sync_after` (if any); returns the batches.
fn write_log(s: &FaultyStorage, n: u64, sync_after: Option<u64>) -> Vec<WriteBatch> {
    write_log_with(s, n, sync_after, 0)
}

/// [`write_log`] to a log preallocated `step` bytes at a time (0: none).
fn write_log_with(
    s: &FaultyStorage,
    n: u64,
    sync_after: Option<u64>,
    step: u64,
) -> Vec<WriteBatch> {
    let options = WalOptions {
        preallocation: step,
        ..WalOptions::default()
    };
    let mut w = WalWriter::create(s, 1, 1, options).unwrap();
    let mut seq = 1;
    let mut out = Vec::new();
    for i in 0..n {
        let b = batch(i, seq);
        seq += b.len() as u64;
        w.append(b.as_bytes()).unwrap();
        if Some(i) == sync_after {
            w.sync().unwrap();
        }
        out.push(b);
    }
    out
}

fn replay(s: &dyn Storage) -> shaledb::Result<(WalReplay, Vec<WriteBatch>)> {
    let mut got = Vec::new();
    let r = WalReader::replay(s, 1, |seq, b| {
        assert_eq!(seq, b.first_seq());
        got.push(b);
        Ok(())
    })?;
    Ok((r, got))
}

#[test]
fn crash_after_unsynced_appends_keeps_exactly_the_synced_batches() {
    let s = faulty();
    let written = write_log(&s, 40, Some(24));
    s.crash().unwrap();
    let (r, got) = replay(&s).unwrap();
    assert_eq!(r.end, WalEnd::Clean);
    assert_eq!(got, written[..25].to_vec());
}

#[test]
fn crash_before_any_sync_leaves_an_empty_log() {
    let s = faulty();
    write_log(&s, 10, None);
    s.crash().unwrap();
    let (r, got) = replay(&s).unwrap();
    assert_eq!((r.end, r.batches), (WalEnd::Clean, 0));
    assert!(got.is_empty());
}

#[test]
fn torn_crashes_at_many_seeds_yield_whole_batch_prefixes_never_corruption() {
    for seed in 0..300u64 {
        let s = faulty();
        let n = 5 + seed % 20;
        let synced = (seed % 3 == 0).then_some(seed % n);
        let written = write_log(&s, n, synced);
        s.crash_torn(seed).unwrap();
        let (r, got) = match replay(&s) {
            Ok(x) => x,
            Err(e) => panic!("seed {seed}: {e}"),
        };
        if std::env::var_os("WAL_TEST_VERBOSE").is_some() {
            eprintln!(
                "seed {seed}: {:?} {} of {}",
                r.end,
                got.len(),
                written.len()
            );
        }
        // Never a damaged batch: whatever came back is a prefix of what was written.
        assert!(got.len() <= written.len(), "seed {seed}");
        assert_eq!(got[..], written[..got.len()], "seed {seed}");
        if let Some(k) = synced {
            assert!(got.len() as u64 > k, "seed {seed}: synced batch {k} lost");
        }
        assert!(r.valid_up_to <= r.file_size, "seed {seed}");
    }
}

/// Preallocated logs: the data is followed by zeros up to a multiple of the step.
mod preallocated {
    use super::*;

    const STEP: u64 = 4096;

    #[test]
    fn a_crash_keeps_exactly_the_synced_batches_and_the_zeros_after_them_are_a_torn_tail() {
        let s = faulty();
        let written = write_log_with(&s, 40, Some(24), STEP);
        s.crash().unwrap();
        let (r, got) = replay(&s).unwrap();
        assert_eq!(got, written[..25].to_vec());
        assert!(matches!(r.end, WalEnd::TornTail { .. }), "{:?}", r.end);
        assert!(r.file_size > r.valid_up_to, "zeros follow the data");
    }

    #[test]
    fn torn_crashes_at_many_seeds_yield_whole_batch_prefixes_never_corruption() {
        for seed in 0..300u64 {
            let s = faulty();
            let n = 5 + seed % 40;
            let synced = (seed % 3 == 0).then_some(seed % n);
            let written = write_log_with(&s, n, synced, STEP);
            s.crash_torn(seed).unwrap();
            let (r, got) = match replay(&s) {
                Ok(x) => x,
                Err(e) => panic!("seed {seed}: {e}"),
            };
            assert!(got.len() <= written.len(), "seed {seed}");
            assert_eq!(got[..], written[..got.len()], "seed {seed}");
            if let Some(k) = synced {
                assert!(got.len() as u64 > k, "seed {seed}: synced batch {k} lost");
            }
            assert!(r.valid_up_to <= r.file_size, "seed {seed}");
        }
    }

    #[test]
    fn a_flipped_byte_in_synced_data_is_corruption_although_zeros_follow() {
        let s = faulty();
        let written = write_log_with(&s, 10, Some(8), STEP);
        let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
        let reader = shaledb::recordio::Reader::open(f.clone(), Default::default()).unwrap();
        let mut off = reader.read_at(8).unwrap().unwrap().next_offset;
        for _ in 0..3 {
            off = reader.read_at(off).unwrap().unwrap().next_offset;
        }
        assert!(f.size().unwrap() >= STEP, "preallocated");
        let mut b = [0u8];
        f.read_exact_at(off + 20, &mut b).unwrap();
        f.write_at(off + 20, &[b[0] ^ 0x40]).unwrap();
        let e = replay(&s).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION", "{e}");
        assert!(e.to_string().contains(&off.to_string()), "{e}");
        assert_eq!(written.len(), 10);
    }

    #[test]
    fn a_sealed_log_is_cut_to_its_data_and_ends_cleanly() {
        let s = faulty();
        let options = WalOptions {
            preallocation: STEP,
            ..WalOptions::default()
        };
        let mut w = WalWriter::create(&s, 1, 1, options).unwrap();
        w.append(batch(0, 1).as_bytes()).unwrap();
        let f = s.open(&wal_file_name(1), OpenMode::Read).unwrap();
        assert_eq!(f.size().unwrap(), STEP);
        w.seal(2).unwrap();
        assert_eq!(f.size().unwrap(), w.size(), "cut to the data");
        // What the next log's first sync does before its own.
        w.sync().unwrap();
        s.crash().unwrap();
        let (r, got) = replay(&s).unwrap();
        assert_eq!((r.end, r.sealed, got.len()), (WalEnd::Clean, Some(2), 1));
    }

    #[test]
    fn zeros_after_a_sealed_record_are_the_clean_end_of_the_log() {
        let s = faulty();
        let mut w = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
        w.append(batch(0, 1).as_bytes()).unwrap();
        w.seal(2).unwrap();
        let end = w.size();
        // A preallocated tail whose cut a crash undid.
        let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
        f.truncate(end + 3000).unwrap();
        let (r, got) = replay(&s).unwrap();
        assert_eq!((r.end, r.sealed, got.len()), (WalEnd::Clean, Some(2), 1));
        assert_eq!((r.valid_up_to, r.file_size), (end, end + 3000));
        // Anything but zeros there is not.
        f.write_at(end + 100, b"junk").unwrap();
        let (r, _) = replay(&s).unwrap();
        assert!(matches!(r.end, WalEnd::TornTail { .. }), "{:?}", r.end);
    }

    #[test]
    fn closing_cuts_the_log_to_its_data_after_vouching_for_it() {
        let s = faulty();
        let options = WalOptions {
            preallocation: STEP,
            ..WalOptions::default()
        };
        let mut w = WalWriter::create(&s, 1, 1, options).unwrap();
        w.append(batch(0, 1).as_bytes()).unwrap();
        w.sync_for_close().unwrap();
        let f = s.open(&wal_file_name(1), OpenMode::Read).unwrap();
        assert_eq!(f.size().unwrap(), w.size());
        s.crash().unwrap();
        let (r, got) = replay(&s).unwrap();
        assert_eq!((r.end, got.len()), (WalEnd::Clean, 1));
    }
}

#[test]
fn a_flipped_byte_in_synced_data_is_corruption_naming_file_and_offset() {
    let s = faulty();
    // Synced through batch 8; batch 9's record vouches for it.
    let written = write_log(&s, 10, Some(8));
    // Find record offsets by replaying sizes: flip a byte inside the 4th batch's payload.
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    let mut offsets = Vec::new();
    let reader = shaledb::recordio::Reader::open(f.clone(), Default::default()).unwrap();
    let mut off = reader.read_at(8).unwrap().unwrap().next_offset; // after the log header
    for _ in 0..written.len() {
        let rec = reader.read_at(off).unwrap().unwrap();
        offsets.push(off);
        off = rec.next_offset;
    }
    let target = offsets[3] + 20;
    let mut byte = [0u8];
    f.read_exact_at(target, &mut byte).unwrap();
    f.write_at(target, &[byte[0] ^ 0x40]).unwrap();
    let mut seen = 0;
    let e = WalReader::replay(&s, 1, |_, _| {
        seen += 1;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(seen, 3, "the three batches before the damage are replayed");
    assert_eq!(e.code(), "CORRUPTION");
    match e {
        Error::ChecksumMismatch { file, offset, .. } => {
            assert_eq!((file.as_str(), offset), ("wal-000001.log", offsets[3]));
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn damage_in_the_last_record_is_a_torn_tail() {
    let s = faulty();
    let written = write_log(&s, 5, None);
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    let size = f.size().unwrap();
    f.write_at(size - 3, &[0xAA]).unwrap();
    let (r, got) = replay(&s).unwrap();
    assert!(matches!(r.end, WalEnd::TornTail { .. }));
    assert_eq!(got, written[..4].to_vec());
}

#[test]
fn a_log_cut_inside_its_header_is_a_torn_tail_at_zero() {
    let s = faulty();
    write_log(&s, 1, None);
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    f.truncate(5).unwrap();
    let (r, got) = replay(&s).unwrap();
    assert_eq!((r.end, got.len()), (WalEnd::TornTail { valid_up_to: 0 }, 0));
}

#[test]
fn a_log_whose_creation_was_cut_short_with_noise_in_its_unsynced_sectors_is_a_torn_tail_at_zero() {
    // Found by the retention sweep of issue 22: a log whose header write failed, then a torn
    // power loss zeroed the header and left noise further on; the database did not open
    // (VERSION_UNSUPPORTED).
    let s = faulty();
    let f = s.open(&wal_file_name(1), OpenMode::Create).unwrap();
    f.write_at(0, &[0u8; 16384]).unwrap();
    f.write_at(9000, &[0x5a, 0xb7, 0x13, 0xff, 0x00, 0x42])
        .unwrap();
    let (r, got) = replay(&s).unwrap();
    assert_eq!((r.end, got.len()), (WalEnd::TornTail { valid_up_to: 0 }, 0));
}

#[test]
fn a_damaged_file_header_before_intact_records_is_corruption() {
    let s = faulty();
    write_log(&s, 5, Some(4));
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    f.write_at(0, &[0u8; 8]).unwrap();
    assert!(replay(&s).is_err(), "the records after it were synced");
}

#[test]
fn a_lost_unsynced_page_before_intact_records_is_a_torn_tail_not_corruption() {
    // Writeback reorders pages: a middle page of the unsynced tail can be lost while a later
    // one reached the disk. That is a torn tail; the synced batches are all there.
    let s = faulty();
    let written = write_log(&s, 60, Some(9));
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    let size = f.size().unwrap();
    f.write_at(size / 2, &[0u8; 64]).unwrap();
    let (r, got) = replay(&s).unwrap();
    assert!(matches!(r.end, WalEnd::TornTail { .. }), "{:?}", r.end);
    assert!(got.len() >= 10 && got.len() < written.len());
    assert_eq!(got[..], written[..got.len()]);
}

#[test]
fn the_records_of_a_closed_log_vouch_for_every_synced_byte() {
    // After a close (sync, synced mark, sync), damage anywhere in the log is corruption.
    let s = faulty();
    let mut w = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    let mut seq = 1;
    for i in 0..5 {
        let b = batch(i, seq);
        seq += b.len() as u64;
        w.append(b.as_bytes()).unwrap();
    }
    w.sync_for_close().unwrap();
    let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
    f.write_at(80, &[0xFF; 4]).unwrap();
    assert_eq!(replay(&s).unwrap_err().code(), "CORRUPTION");
}

#[test]
fn a_failed_sync_poisons_the_writer_for_good() {
    let s = faulty();
    let mut w = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    w.append(batch(0, 1).as_bytes()).unwrap();
    s.fail_next_sync();
    let first = w.sync().unwrap_err();
    assert_eq!(first.code(), "IO");
    // The next sync would succeed at the storage, but the writer must not pretend.
    for e in [
        w.sync().unwrap_err(),
        w.append(batch(1, 2).as_bytes()).unwrap_err(),
    ] {
        assert_eq!(e.code(), "IO");
        assert!(e.to_string().contains("injected"), "cause kept: {e}");
    }
    assert!(w.poisoned().is_some());
    assert_eq!(s.syncs(), 1, "only the sync in create succeeded");
}

#[test]
fn a_failed_write_poisons_the_writer_and_replay_keeps_whole_batches() {
    let s = faulty();
    let mut w = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    w.append(batch(0, 1).as_bytes()).unwrap();
    s.tear_next_write(7);
    assert_eq!(w.append(batch(1, 2).as_bytes()).unwrap_err().code(), "IO");
    assert_eq!(w.append(batch(2, 3).as_bytes()).unwrap_err().code(), "IO");
    s.reset_faults();
    let (r, got) = replay(&s).unwrap();
    assert!(matches!(r.end, WalEnd::TornTail { .. }));
    assert_eq!(got, vec![batch(0, 1)]);
}

#[test]
fn a_full_disk_poisons_the_writer_and_replay_keeps_whole_batches() {
    let s = faulty();
    let mut w = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
    s.fail_writes_after_bytes(500);
    let mut written = Vec::new();
    let mut failed = None;
    let mut seq = 1;
    for i in 0..20 {
        let b = batch(i, seq);
        seq += b.len() as u64;
        match w.append(b.as_bytes()) {
            Ok(()) => written.push(b),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    assert_eq!(
        failed.unwrap().code(),
        "QUOTA",
        "a full disk is QUOTA: out of space"
    );
    s.reset_faults();
    assert_eq!(
        w.append(batch(20, seq).as_bytes()).unwrap_err().code(),
        "QUOTA"
    );
    let (r, got) = replay(&s).unwrap();
    assert!(matches!(r.end, WalEnd::TornTail { .. }));
    assert_eq!(got, written);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Damaged logs never panic and never yield a damaged batch: replay returns a prefix of
        /// what was written, or a typed corruption error.
        #[test]
        fn replay_of_damaged_logs_yields_a_prefix_or_a_typed_error(
            n in 1u64..12,
            flips in proptest::collection::vec((any::<u64>(), 1u8..=255), 0..4),
            cut in proptest::option::of(any::<u64>()),
        ) {
            let s = faulty();
            let written = write_log(&s, n, None);
            let f = s.open(&wal_file_name(1), OpenMode::ReadWrite).unwrap();
            let size = f.size().unwrap();
            for (at, x) in flips {
                let at = at % size;
                let mut b = [0u8];
                f.read_exact_at(at, &mut b).unwrap();
                f.write_at(at, &[b[0] ^ x]).unwrap();
            }
            if let Some(c) = cut {
                f.truncate(c % (size + 1)).unwrap();
            }
            match replay(&s) {
                Ok((r, got)) => {
                    prop_assert!(got.len() <= written.len());
                    prop_assert_eq!(&got[..], &written[..got.len()]);
                    prop_assert!(r.valid_up_to <= r.file_size);
                }
                Err(e) => prop_assert!(
                    matches!(e.code(), "CORRUPTION" | "VERSION_UNSUPPORTED"),
                    "unexpected error {}", e
                ),
            }
        }
    }
}
