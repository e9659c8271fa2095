//! Preparing the next log off the writer's path ([`crate::write::wal::PreparedLog`]), and
//! cutting sealed logs' preallocated tails left by memtable switches. The background thread
//! does this file work (without one, a sync-log job can prepare the log: `job_desk.rs`); a
//! switch takes the prepared log if one is ready, and creates one itself otherwise. Without a
//! background thread the switch cuts the sealed log itself, as nothing else would.

use crate::db::core::DbInner;
#[cfg(not(target_arch = "wasm32"))]
use crate::write::wal::PreparedLog;
use crate::write::wal::SealedTail;

impl DbInner {
    /// Cuts the sealed logs' tails waiting, then prepares the next log if none is ready.
    /// Failures change nothing that matters: an uncut tail is zeros readers skip, and a switch
    /// without a prepared log creates one.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn prepare_next_log(&self) {
        self.next_log.cut_tails();
        // (Never read-only: a read-only open runs no background thread.)
        if self.health.check_writable().is_err() {
            return;
        }
        let Some(switches) = self.next_log.due() else {
            return;
        };
        // Not under the slot's lock: a switch meanwhile creates its own log instead of waiting.
        let number = self.versions.lock().new_file_number();
        // A full memtable's log, preallocated whole (as RocksDB sizes its WAL preallocation).
        let reserve = self.options.memtable_size as u64;
        let options = self.options.wal_options();
        let Ok(log) = PreparedLog::create(&*self.storage, number, options, reserve) else {
            return;
        };
        if let Some(refused) = self.next_log.offer(switches, log) {
            let _ = refused.discard(&*self.storage);
        }
    }

    /// What to do with the tail of a log a switch just sealed: left for
    /// [`Self::prepare_next_log`] when a background thread runs it, else cut now.
    pub(crate) fn cut_later(&self, tail: SealedTail) {
        if self.maintenance.background().started() {
            self.next_log.push_tail(tail);
        } else {
            let _ = tail.trim();
        }
    }

    /// At close: deletes the prepared log, if any, and those of sync-log jobs still out (their
    /// late installs are then refused as not out), and cuts the tails waiting.
    pub(crate) fn discard_next_log(&self) {
        if let Some(prepared) = self.next_log.take_unused() {
            let _ = prepared.discard(&*self.storage);
        }
        for log in self.maintenance.lock().take_log_jobs() {
            let _ = log.discard(&*self.storage);
        }
        self.next_log.cut_tails();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::file_names::wal_numbers;
    use crate::storage::faulty::FaultyStorage;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::Storage;
    use crate::write::wal::PreparedLog;
    use crate::{Db, Options, WriteOptions};

    fn options() -> Options {
        Options {
            memtable_size: 64 * 1024,
            background_thread: false,
            wal_preallocation: 16 * 1024,
            ..Options::default()
        }
    }

    fn key(i: u64) -> Vec<u8> {
        format!("key-{i:06}").into_bytes()
    }

    fn logs(storage: &dyn Storage) -> Vec<u64> {
        wal_numbers(&storage.list().unwrap())
    }

    fn open(storage: &FaultyStorage) -> Db {
        Db::open_storage(Arc::new(storage.clone()), options()).unwrap()
    }

    /// Puts keys `from..to`, synced or not (values of 700 bytes: a log's records span pages,
    /// which a power loss keeps or loses each on its own).
    fn put(db: &Db, from: u64, to: u64, sync: bool) {
        for i in from..to {
            db.put_opt(&key(i), &[7; 700], WriteOptions { sync })
                .unwrap();
        }
    }

    fn held(db: &Db, from: u64, to: u64) -> Vec<bool> {
        (from..to)
            .map(|i| db.get(&key(i)).unwrap().is_some())
            .collect()
    }

    #[test]
    fn a_switch_into_a_prepared_log_syncs_nothing_and_creates_no_file() {
        let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let db = open(&storage);
        put(&db, 0, 10, false);
        db.inner.prepare_next_log();
        let before = (logs(&storage), storage.syncs(), storage.dir_syncs());
        assert_eq!(before.0.len(), 2, "the live log and the prepared one");
        db.seal_memtable().unwrap();
        assert_eq!(
            (logs(&storage), storage.syncs(), storage.dir_syncs()),
            before,
            "the switch took the prepared log"
        );
        put(&db, 10, 20, true);
        drop(db);
        let db = open(&storage);
        assert!(held(&db, 0, 20).iter().all(|&h| h));
    }

    #[test]
    fn a_crash_that_loses_a_prepared_logs_unsynced_header_keeps_every_synced_write() {
        for seed in 0..64 {
            let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
            let db = open(&storage);
            put(&db, 0, 10, true);
            db.inner.prepare_next_log();
            db.seal_memtable().unwrap();
            put(&db, 10, 20, false);
            if seed % 2 == 1 {
                put(&db, 20, 21, true);
            }
            storage.crash_torn(seed).unwrap();
            drop(db);
            storage.reset_faults();
            let db = open(&storage);
            let synced_to = if seed % 2 == 1 { 21 } else { 10 };
            assert!(
                held(&db, 0, synced_to).iter().all(|&h| h),
                "seed {seed}: a synced write was lost"
            );
            let rest = held(&db, 0, 21);
            let kept = rest.iter().take_while(|&&h| h).count();
            assert!(
                rest[kept..].iter().all(|&h| !h),
                "seed {seed}: not a prefix: {rest:?}"
            );
        }
    }

    #[test]
    fn an_unused_prepared_log_is_deleted_by_close_and_by_the_next_open_after_a_crash() {
        let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let db = open(&storage);
        put(&db, 0, 10, true);
        db.inner.prepare_next_log();
        let prepared = *logs(&storage).last().unwrap();
        db.close().unwrap();
        assert!(!logs(&storage).contains(&prepared), "close deleted it");

        // As a crash leaves it: created durably after the live log, never started.
        let prepared = prepared + 10;
        PreparedLog::create(&storage, prepared, options().wal_options(), 64 * 1024).unwrap();
        storage.crash().unwrap();
        storage.reset_faults();
        assert!(logs(&storage).contains(&prepared), "durably created");
        let db = open(&storage);
        assert!(held(&db, 0, 10).iter().all(|&h| h));
        assert!(!logs(&storage).contains(&prepared), "the open deleted it");
    }

    /// Regression (found reading the change): a log prepared while a switch created one of its
    /// own is numbered below that one; taken by the next switch, the sealed log would name an
    /// older log, which recovery refuses. It is refused and deleted instead.
    #[test]
    fn a_log_prepared_while_a_switch_created_its_own_is_refused_and_deleted() {
        let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let db = open(&storage);
        put(&db, 0, 10, true);
        let switches = db.inner.next_log.due().unwrap();
        let number = db.inner.versions.lock().new_file_number();
        let late = PreparedLog::create(&storage, number, options().wal_options(), 0).unwrap();
        db.seal_memtable().unwrap();
        assert!(
            *logs(&storage).last().unwrap() > number,
            "the switch's own log"
        );
        let refused = db.inner.next_log.offer(switches, late).unwrap();
        refused.discard(&storage).unwrap();
        assert!(!logs(&storage).contains(&number));
        put(&db, 10, 20, true);
        db.seal_memtable().unwrap();
        put(&db, 20, 30, true);
        drop(db);
        let db = open(&storage);
        assert!(held(&db, 0, 30).iter().all(|&h| h));
    }
}
