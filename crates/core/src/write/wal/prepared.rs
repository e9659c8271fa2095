//! A log's file work done off the writer's path: [`PreparedLog`], the next log created,
//! preallocated and made durable ahead of need, and [`SealedTail`], the cut of a sealed log's preallocated
//! bytes left for later. On Linux, creating a file, extending it and cutting it wait for the
//! file system's journal, which a flush's or a compaction's sync may hold for tens of
//! milliseconds; a memtable switch that did them inline stalled every writer that long.

use std::sync::Arc;

use crate::file_names::wal_file_name;
use crate::recordio::Writer;
use crate::storage::{OpenMode, Storage, StorageFile};
use crate::write::wal::log_file::LogFile;
use crate::write::wal::options::WalOptions;
use crate::write::wal::record_writer::record_writer;
use crate::Result;

/// A log file made ahead of need, durably (file and directory entry synced), holding only
/// the RecordIO file header ([`super::WalWriter::start_prepared`] starts it). Left unused (a
/// crash, a close), it is a log without a header that recovery ignores and the next open
/// deletes; [`PreparedLog::discard`] deletes it at once.
#[derive(Debug)]
pub struct PreparedLog {
    pub(crate) number: u64,
    pub(crate) log: Arc<LogFile>,
    /// The log's RecordIO writer, its file header written.
    pub(crate) writer: Writer,
    pub(crate) options: WalOptions,
}

impl PreparedLog {
    /// Creates log file `number` (which must not exist), preallocates its first `reserve`
    /// bytes (rounded up to `options.preallocation` steps; nothing without preallocation),
    /// and makes the file and its directory entry durable.
    pub fn create(
        storage: &dyn Storage,
        number: u64,
        options: WalOptions,
        reserve: u64,
    ) -> Result<PreparedLog> {
        let prepared = PreparedLog::create_unsynced(storage, number, options, reserve)?;
        prepared.log.sync()?;
        storage.sync_dir()?;
        Ok(prepared)
    }

    /// [`PreparedLog::create`] without its syncs: the file and its directory entry are not
    /// durable yet. It may take a switch only once they are (a sync-log job,
    /// [`crate::jobs::SyncLogWork`], makes them so elsewhere).
    pub fn create_unsynced(
        storage: &dyn Storage,
        number: u64,
        options: WalOptions,
        reserve: u64,
    ) -> Result<PreparedLog> {
        let file = storage.open(&wal_file_name(number), OpenMode::CreateNew)?;
        let log = Arc::new(LogFile::new(file, options.preallocation));
        let mut writer = record_writer(&log, &options)?;
        writer.flush()?;
        log.reserve(reserve);
        Ok(PreparedLog {
            number,
            log,
            writer,
            options,
        })
    }

    /// Deletes the unused file from `storage`.
    pub fn discard(self, storage: &dyn Storage) -> Result<()> {
        let PreparedLog {
            number,
            log,
            writer,
            ..
        } = self;
        drop((writer, log));
        storage.remove(&wal_file_name(number))
    }
}

/// The preallocated bytes after a sealed log's last record, still to be cut
/// ([`super::WalWriter::seal_untrimmed`]).
#[derive(Debug)]
pub struct SealedTail {
    pub(crate) log: Arc<LogFile>,
    pub(crate) end: u64,
}

impl SealedTail {
    /// Cuts them. A failure leaves zeros after the sealed record, which readers take for the
    /// log's end; the cut is durable with the log's next sync, if any.
    pub fn trim(self) -> Result<bool> {
        self.log.trim(self.end)
    }
}
