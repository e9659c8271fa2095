//! [`WalWriter`]: appends write batches to one log (format version 2, [`super::record`]).

use std::sync::Arc;

use crate::file_names::wal_file_name;
use crate::recordio::{Compression, Writer};
use crate::storage::{FileHandle, OpenMode, Storage};
use crate::write::batch::{BATCH_HEADER_LEN, MAX_BATCH_SIZE};
use crate::write::wal::log_file::LogFile;
use crate::write::wal::options::WalOptions;
use crate::write::wal::prepared::{PreparedLog, SealedTail};
use crate::write::wal::record::{
    batch_prefix, sealed_record, synced_mark, LogHeader, MAX_PREFIX_LEN,
};
use crate::write::wal::record_writer::record_writer;
use crate::write::wal::repeat::repeat_error;
use crate::write::wal::sync_gate::SyncGate;
use crate::{Error, Result};

/// Appends write batches to one log file. Not shared between threads by itself: see
/// [`crate::write::group_commit`]. Its syncs go through its [`SyncGate`], shared with whoever syncs
/// the log without holding the writer.
#[derive(Debug)]
pub struct WalWriter {
    number: u64,
    /// The log's file (preallocated and mapped where the options and the storage allow).
    log: Arc<LogFile>,
    writer: Writer,
    compression: Compression,
    gate: Arc<SyncGate>,
    poisoned: Option<Error>,
    sealed: bool,
}

impl WalWriter {
    /// Creates log `number` (which must not exist: else [`Error::AlreadyExists`]) whose first
    /// batch will have sequence number `first_seq`: writes the RecordIO file header and the log
    /// header, and makes the file and its directory entry durable (`sync`, `sync_dir`). With
    /// `options.preallocation`, the file is extended ahead of the data ([`LogFile`]).
    pub fn create(
        storage: &dyn Storage,
        number: u64,
        first_seq: u64,
        options: WalOptions,
    ) -> Result<WalWriter> {
        let wal = WalWriter::start(storage, number, first_seq, options)?;
        wal.gate.sync(wal.writer.offset())?;
        storage.sync_dir()?;
        Ok(wal)
    }

    /// Starts log `prepared.number` in the file prepared for it ([`PreparedLog`], durably
    /// created), its first batch numbered `first_seq`: hands the log header to the storage,
    /// without a sync (the log's first sync makes it durable with the first records; recovery
    /// ends the chain at a log without an intact header, which held no synced write).
    pub fn start_prepared(prepared: PreparedLog, first_seq: u64) -> Result<WalWriter> {
        let PreparedLog {
            number,
            log,
            writer,
            options,
        } = prepared;
        WalWriter::begin(log, writer, number, first_seq, options)
    }

    /// Creates the file and hands its RecordIO and log headers to the storage.
    fn start(
        storage: &dyn Storage,
        number: u64,
        first_seq: u64,
        options: WalOptions,
    ) -> Result<WalWriter> {
        let log = Arc::new(LogFile::new(
            storage.open(&wal_file_name(number), OpenMode::CreateNew)?,
            options.preallocation,
        ));
        let writer = record_writer(&log, &options)?;
        WalWriter::begin(log, writer, number, first_seq, options)
    }

    /// Hands the log header of log `number` (and whatever `writer` holds) to `log`.
    fn begin(
        log: Arc<LogFile>,
        mut writer: Writer,
        number: u64,
        first_seq: u64,
        options: WalOptions,
    ) -> Result<WalWriter> {
        let file: FileHandle = log.clone();
        writer.write_with(
            Some(&LogHeader { number, first_seq }.encode()),
            Compression::None,
        )?;
        writer.flush()?;
        let gate = Arc::new(SyncGate::new(file, 0));
        gate.written_to(writer.offset());
        Ok(WalWriter {
            number,
            log,
            writer,
            compression: options.compression,
            gate,
            poisoned: None,
            sealed: false,
        })
    }

    /// Appends one encoded write batch ([`crate::write::batch::WriteBatch::as_bytes`], sequence number
    /// set) as one record. When this returns `Ok`, the record has reached the OS (survives a
    /// process kill, not a power loss). `InvalidArgument` (the writer stays usable) for bytes
    /// shorter than a batch header or over [`MAX_BATCH_SIZE`]; a storage failure poisons the
    /// writer.
    pub fn append(&mut self, batch_bytes: &[u8]) -> Result<()> {
        self.append_all(&[batch_bytes])
    }

    /// Appends several encoded batches, one record each, handed to the storage together (one
    /// `write_at` when they fit the 1 MiB buffer). Each batch stays atomic on replay; after a
    /// crash any of them may be lost, and recovery keeps the intact ones before the first
    /// loss. Errors as [`WalWriter::append`]; nothing is written if any batch is invalid.
    pub fn append_all(&mut self, batches: &[&[u8]]) -> Result<()> {
        self.append_iter(batches.iter().copied())
    }

    /// [`WalWriter::append_all`] of the batches `batches` yields (it is walked twice: checked
    /// whole before anything is written).
    pub fn append_iter<'a>(
        &mut self,
        batches: impl Iterator<Item = &'a [u8]> + Clone,
    ) -> Result<()> {
        self.check()?;
        for b in batches.clone() {
            if b.len() < BATCH_HEADER_LEN || b.len() > MAX_BATCH_SIZE {
                return Err(Error::InvalidArgument(format!(
                    "a WAL record must be an encoded write batch of {BATCH_HEADER_LEN} to \
                     {MAX_BATCH_SIZE} bytes, not {}",
                    b.len()
                )));
            }
        }
        let synced = self.gate.durable();
        let mut prefix = [0u8; MAX_PREFIX_LEN];
        let n = batch_prefix(synced, &mut prefix);
        let prefix = prefix.get(..n).unwrap_or_default();
        let mut r = Ok(());
        for b in batches {
            r = if self.compression == Compression::None {
                self.writer.write_joined(prefix, b).map(drop)
            } else {
                let mut joined = Vec::with_capacity(prefix.len() + b.len());
                joined.extend_from_slice(prefix);
                joined.extend_from_slice(b);
                self.writer.write(&joined).map(drop)
            };
            if r.is_err() {
                break;
            }
        }
        let r = r.and_then(|()| self.writer.flush());
        self.gate.written_to(self.writer.offset());
        self.poison_on_error(r)
    }

    /// Seals the log: appends the record saying that the log continues in log `next` (which
    /// must exist already, durably), then cuts the preallocated bytes after it. No sync: the
    /// next log's gate must follow this one ([`SyncGate::follow`]), so that this log is synced
    /// whole before any byte of the next one is. Nothing can be appended afterwards. A failure
    /// poisons the writer.
    pub fn seal(&mut self, next: u64) -> Result<()> {
        self.seal_untrimmed(next)?;
        self.trim().map(drop)
    }

    /// [`Self::seal`] leaving the cut of the preallocated bytes to the caller, who may run it
    /// elsewhere, later, or never (readers take zeros after a sealed record for its end): a
    /// `ftruncate` waits for the file system's journal, which a flush's sync can hold for
    /// tens of milliseconds.
    pub fn seal_untrimmed(&mut self, next: u64) -> Result<SealedTail> {
        self.check()?;
        self.append_record(&sealed_record(self.gate.durable(), next))?;
        self.sealed = true;
        Ok(SealedTail {
            log: Arc::clone(&self.log),
            end: self.writer.offset(),
        })
    }

    /// For a close: syncs the log and, if records were appended since the last record that
    /// vouches for what is synced, appends a synced mark, so that recovery can tell later
    /// damage to any synced byte from a torn write; cuts the preallocated bytes after the data
    /// and syncs again if either changed the file. A failure poisons the writer.
    pub fn sync_for_close(&mut self) -> Result<()> {
        if self.sealed {
            return self.sync();
        }
        let vouched = self.gate.durable();
        self.sync()?;
        let marked = self.gate.durable() > vouched;
        if marked {
            self.check()?;
            self.append_record(&synced_mark(self.gate.durable()))?;
        }
        if self.trim()? || marked {
            self.sync()?;
        }
        Ok(())
    }

    /// Cuts the preallocated bytes after the data ([`LogFile::trim`]); whether the file
    /// changed. A failure poisons the writer.
    fn trim(&mut self) -> Result<bool> {
        let r = self.log.trim(self.writer.offset());
        let trimmed = r.as_ref().is_ok_and(|&t| t);
        self.poison_on_error(r.map(drop))?;
        Ok(trimmed)
    }

    /// Appends one uncompressed record and hands it to the storage.
    fn append_record(&mut self, record: &[u8]) -> Result<()> {
        let r = self
            .writer
            .write_with(Some(record), Compression::None)
            .and_then(|_| self.writer.flush());
        self.gate.written_to(self.writer.offset());
        self.poison_on_error(r)
    }

    /// Makes every appended record durable (fdatasync / `F_FULLFSYNC`), through the gate. A
    /// failure poisons the writer: what reached the disk is unknown, and stays so.
    pub fn sync(&mut self) -> Result<()> {
        if let Some(e) = &self.poisoned {
            return Err(repeat_error(e, "the WAL failed earlier"));
        }
        let r = self.gate.sync(self.writer.offset());
        self.poison_on_error(r)
    }

    /// The log number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The log's sync gate, for syncing it without holding the writer (group commit).
    pub fn gate(&self) -> Arc<SyncGate> {
        self.gate.clone()
    }

    /// The log's file name.
    pub fn file_name(&self) -> String {
        wal_file_name(self.number)
    }

    /// Bytes in the log, file header included (all of them handed to the storage).
    pub fn size(&self) -> u64 {
        self.writer.offset()
    }

    /// Bytes known durable (as of the last successful sync).
    pub fn synced_size(&self) -> u64 {
        self.gate.durable()
    }

    /// The error that poisoned the writer, if any.
    pub fn poisoned(&self) -> Option<&Error> {
        self.poisoned.as_ref()
    }

    fn check(&self) -> Result<()> {
        if self.sealed {
            return Err(Error::Closed(format!(
                "the WAL {:?} is sealed and accepts no more writes",
                self.file_name()
            )));
        }
        match &self.poisoned {
            None => Ok(()),
            Some(e) => Err(repeat_error(
                e,
                &format!(
                    "the WAL {:?} failed earlier and accepts no more writes; reopen the database",
                    self.file_name()
                ),
            )),
        }
    }

    fn poison_on_error(&mut self, r: Result<()>) -> Result<()> {
        if let Err(e) = r {
            if self.poisoned.is_none() {
                self.poisoned = Some(repeat_error(&e, "WAL writer poisoned"));
            }
            return Err(e);
        }
        Ok(())
    }
}
