//! The write-ahead log: one RecordIO file (ShaleDB format, CRC-32C over every byte) per log
//! number, named `wal-{number:06}.log`, holding a log header and one record per write batch
//! (format version 2, [`record`]; version 1 logs, without a header, are still read).
//!
//! # Writing ([`WalWriter`])
//!
//! [`WalWriter::append`] hands the record to the storage before it returns, so an appended
//! batch survives the process being killed; [`WalWriter::sync`] makes everything appended
//! durable. Every sync of a log goes through its [`SyncGate`]: one failed sync fails every later
//! one of that file (Linux reports a writeback error once). Each batch record carries how many
//! bytes of the log were durable when it was appended. A log is *sealed* when the next one takes
//! over ([`WalWriter::seal`]): a last record names the next log, with no sync; the next log's
//! gate follows it, so it is synced whole before any byte of the next log past its header.
//! After any failed write or sync the writer is poisoned.
//!
//! # Replaying ([`WalReader::replay`])
//!
//! Batches must be dense: each starts at the sequence number after the previous one (the first
//! at the header's `first_seq`). The log ends
//! - **cleanly** at the end of the file;
//! - in a **torn tail** at damage (a cut, zeroed, garbled or lost record) that hit only data
//!   that was never synced: no intact record after it claims a synced offset beyond it. Writeback
//!   reorders pages, so intact unsynced records may follow a lost page; they are dropped with it;
//! - in **corruption** (a typed error naming the file and offset) when a record after the damage
//!   says the damaged bytes were synced, or a sequence number is missing. Format 1 logs carry no
//!   synced offsets: there, any intact record after damage makes it corruption.
//!
//! Across logs ([`crate::db`] recovery) the sealed records chain the logs. Logs after the
//! chain's end (its last log lost its seal with its unsynced tail) may hold only batches never
//! synced (their records claim nothing synced past the log header), which are dropped.

mod log_file;
mod options;
mod prepared;
mod reader;
pub mod record;
mod record_writer;
mod repeat;
mod sync_gate;
mod writer;

pub use log_file::LogFile;
pub use options::WalOptions;
pub use prepared::{PreparedLog, SealedTail};
pub(crate) use reader::all_zero;
pub use reader::{WalEnd, WalReader, WalReplay};
pub use repeat::repeat_error;
pub use sync_gate::SyncGate;
pub use writer::WalWriter;

pub use crate::file_names::{parse_wal_file_name, wal_file_name};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recordio::Compression;
    use crate::storage::faulty::FaultyStorage;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{OpenMode, Storage};
    use crate::write::batch::WriteBatch;
    use crate::Error;
    use std::sync::Arc;

    fn batch(seq: u64, key: &[u8]) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(key, b"value").unwrap();
        b.set_first_seq(seq);
        b
    }

    fn replay_all(s: &dyn Storage, n: u64) -> (WalReplay, Vec<(u64, WriteBatch)>) {
        let mut got = Vec::new();
        let r = WalReader::replay(s, n, |seq, b| {
            got.push((seq, b));
            Ok(())
        })
        .unwrap();
        (r, got)
    }

    fn create(s: &dyn Storage, n: u64, first_seq: u64) -> WalWriter {
        WalWriter::create(s, n, first_seq, WalOptions::default()).unwrap()
    }

    #[test]
    fn file_names_round_trip() {
        assert_eq!(wal_file_name(7), "wal-000007.log");
        assert_eq!(wal_file_name(1234567), "wal-1234567.log");
        assert_eq!(parse_wal_file_name("wal-000007.log"), Some(7));
        assert_eq!(parse_wal_file_name("wal-1234567.log"), Some(1234567));
        for bad in [
            "wal-7.log",
            "wal-00000x.log",
            "000007.sst",
            "wal-000007.log.tmp",
        ] {
            assert_eq!(parse_wal_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn appended_batches_replay_in_order_with_a_clean_end() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 3, 1);
        assert_eq!(w.number(), 3);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.append_all(&[batch(2, b"b").as_bytes(), batch(3, b"c").as_bytes()])
            .unwrap();
        let size = w.size();
        let (r, got) = replay_all(&s, 3);
        assert_eq!(r.end, WalEnd::Clean);
        assert_eq!((r.valid_up_to, r.file_size, r.batches), (size, size, 3));
        assert_eq!((r.format, r.last_seq, r.next_seq), (2, Some(3), Some(4)));
        assert_eq!(r.header.map(|h| (h.number, h.first_seq)), Some((3, 1)));
        let seqs: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        assert_eq!(got[2].1, batch(3, b"c"));
    }

    #[test]
    fn a_new_log_states_where_it_starts_before_it_holds_a_batch() {
        let s = MemoryStorage::new();
        create(&s, 4, 77);
        let (r, got) = replay_all(&s, 4);
        assert!(got.is_empty());
        assert_eq!(
            (r.end, r.next_seq, r.last_seq),
            (WalEnd::Clean, Some(77), None)
        );
    }

    #[test]
    fn invalid_records_are_refused_without_poisoning() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        assert_eq!(w.append(b"short").unwrap_err().code(), "INVALID_ARGUMENT");
        w.append(batch(1, b"a").as_bytes()).unwrap();
        assert!(w.poisoned().is_none());
    }

    #[test]
    fn a_gap_in_sequence_numbers_is_corruption_naming_the_missing_writes() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.append(batch(5, b"b").as_bytes()).unwrap();
        let e = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION");
        assert!(e.to_string().contains("2..4 are missing"), "{e}");
        let mut w = create(&s, 2, 1);
        w.append(batch(2, b"a").as_bytes()).unwrap();
        assert_eq!(
            WalReader::replay(&s, 2, |_, _| Ok(())).unwrap_err().code(),
            "CORRUPTION"
        );
    }

    #[test]
    fn decreasing_sequence_numbers_are_corruption() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 5);
        w.append(batch(5, b"a").as_bytes()).unwrap();
        w.append(batch(5, b"b").as_bytes()).unwrap();
        let e = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION");
    }

    #[test]
    fn compressed_logs_replay() {
        let s = MemoryStorage::new();
        let opts = WalOptions {
            compression: Compression::Snappy,
            ..WalOptions::default()
        };
        let mut w = WalWriter::create(&s, 1, 1, opts).unwrap();
        let mut b = WriteBatch::new();
        b.put(b"k", &[7u8; 10_000]).unwrap();
        b.set_first_seq(1);
        w.append(b.as_bytes()).unwrap();
        assert!(w.size() < 2_000);
        let (r, got) = replay_all(&s, 1);
        assert_eq!(r.end, WalEnd::Clean);
        assert_eq!(got, vec![(1, b)]);
    }

    #[test]
    fn a_missing_log_is_not_found() {
        let s = MemoryStorage::new();
        let e = WalReader::replay(&s, 9, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "NOT_FOUND");
    }

    #[test]
    fn callback_errors_stop_the_replay() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.append(batch(2, b"b").as_bytes()).unwrap();
        let mut calls = 0;
        let e = WalReader::replay(&s, 1, |_, _| {
            calls += 1;
            Err(Error::InvalidArgument("stop".into()))
        })
        .unwrap_err();
        assert_eq!((calls, e.code()), (1, "INVALID_ARGUMENT"));
    }

    #[test]
    fn a_sealed_log_names_the_next_and_takes_no_more_writes() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        let header_end = w.synced_size();
        w.seal(2).unwrap();
        assert_eq!(w.synced_size(), header_end, "the seal does not sync");
        assert_eq!(
            w.append(batch(2, b"b").as_bytes()).unwrap_err().code(),
            "CLOSED"
        );
        let (r, _) = replay_all(&s, 1);
        assert_eq!((r.sealed, r.end, r.batches), (Some(2), WalEnd::Clean, 1));
    }

    #[test]
    fn a_sync_of_the_next_log_syncs_the_sealed_one_first_until_it_is_retired() {
        let s = MemoryStorage::new();
        let mut old = create(&s, 1, 1);
        old.append(batch(1, b"a").as_bytes()).unwrap();
        let mut new = create(&s, 2, 2);
        old.seal(2).unwrap();
        new.gate().follow(1, old.gate());
        new.append(batch(2, b"b").as_bytes()).unwrap();
        new.sync().unwrap();
        assert_eq!(old.synced_size(), old.size(), "synced whole first");

        let mut newer = create(&s, 3, 3);
        new.seal(3).unwrap();
        newer.gate().follow(2, new.gate());
        newer.gate().retire_before(3);
        newer.append(batch(3, b"c").as_bytes()).unwrap();
        newer.sync().unwrap();
        assert!(
            new.synced_size() < new.size(),
            "a retired log is not synced"
        );
    }

    /// Overwrites `len` bytes at `at` of log `n` with zeros (a page lost at a crash).
    fn lose(s: &dyn Storage, n: u64, at: u64, len: usize) {
        let f = s.open(&wal_file_name(n), OpenMode::ReadWrite).unwrap();
        f.write_at(at, &vec![0u8; len]).unwrap();
    }

    #[test]
    fn damage_in_never_synced_data_followed_by_intact_records_is_a_torn_tail() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.sync().unwrap();
        let synced = w.size();
        for seq in 2..10 {
            w.append(batch(seq, b"b").as_bytes()).unwrap();
        }
        // A page of the unsynced tail is lost while later ones were written back.
        lose(&s, 1, synced + 5, 10);
        let (r, got) = replay_all(&s, 1);
        assert_eq!(
            r.end,
            WalEnd::TornTail {
                valid_up_to: synced
            }
        );
        assert_eq!(got.len(), 1, "the synced batch, nothing after the damage");
    }

    #[test]
    fn damage_in_synced_data_is_corruption_naming_file_and_offset() {
        let s = MemoryStorage::new();
        let mut w = create(&s, 1, 1);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        let second = w.size();
        w.append(batch(2, b"b").as_bytes()).unwrap();
        w.sync().unwrap();
        w.append(batch(3, b"c").as_bytes()).unwrap();
        lose(&s, 1, second + 5, 4);
        let e = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION");
        assert!(e.to_string().contains("wal-000001.log"), "{e}");
        assert!(e.to_string().contains(&second.to_string()), "{e}");
    }

    #[test]
    fn a_log_whose_header_never_reached_the_disk_is_empty() {
        let s = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        s.tear_next_write(5);
        assert!(WalWriter::create(&s, 1, 1, WalOptions::default()).is_err());
        s.reset_faults();
        let (r, got) = replay_all(&s, 1);
        assert!(got.is_empty());
        assert_eq!(r.end, WalEnd::TornTail { valid_up_to: 0 });
    }
}
