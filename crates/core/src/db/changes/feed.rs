//! [`Changes`]: reads committed batches back from the write-ahead logs, in commit order, from a
//! sequence number on; follows the chain of logs through their sealed records.
//!
//! Only batches at or below the visible sequence number read *before* the records are read
//! are yielded: those are wholly written. At the end of the live log's data (its end, zeros of
//! preallocation, or a record still being written) a read stops for now; the next call goes on
//! from the same offset.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::db::changes::change::Change;
use crate::db::changes::resume::ResumePoint;
use crate::db::core::DbInner;
use crate::recordio::Reader;
use crate::storage::OpenMode;
use crate::write::batch::WriteBatch;
use crate::write::wal::record::LogRecord;
use crate::write::wal::{wal_file_name, WalReader};
use crate::{Error, Result};

/// The change feed of a database from a sequence number on ([`crate::Db::changes`]).
///
/// As an [`Iterator`] it yields the batches committed so far and ends; [`Changes::try_next`]
/// may be called again later for newer ones, and natively [`Changes::next_timeout`] waits for
/// them.
pub struct Changes {
    db: Arc<DbInner>,
    /// The next batch must start at this sequence number (before the first one is found: at
    /// or after it).
    next: u64,
    /// Whether a batch was yielded (from then on batches must be dense).
    started: bool,
    /// The log being read and the offset of its next record.
    at: Option<(u64, u64)>,
    /// A reader of that log positioned at that offset, kept between reads (its buffer makes
    /// reading sequential; at the end of what it saw it refreshes its view of the file).
    reader: Option<Reader>,
    /// Keyspace ids to names, refreshed when a batch names an id not in it.
    names: BTreeMap<u32, String>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("next", &self.next).finish()
    }
}

impl Changes {
    /// A feed of the batches starting at `since` or later. Errors at once with
    /// [`Error::ChangesTruncated`] if `since` is below the oldest batch kept.
    pub(crate) fn new(db: Arc<DbInner>, since: u64) -> Result<Changes> {
        db.health.check_open()?;
        let mut feed = Changes {
            db,
            next: since.max(1),
            started: false,
            at: None,
            reader: None,
            names: BTreeMap::new(),
        };
        match feed.db.changes.resume_points().find(feed.next) {
            // Where a feed from the same point stopped: no batch from `next` on lies before it.
            // A log removed since is found missing when read, and the feed locates again.
            Some(point) => feed.at = Some((point.log, point.offset)),
            None => feed.locate()?,
        }
        Ok(feed)
    }

    /// The sequence number the next batch yielded starts at (or, before the first, at or
    /// after).
    pub fn position(&self) -> u64 {
        self.next
    }

    /// The next committed batch, or `None` if none is committed yet (call again later).
    pub fn try_next(&mut self) -> Result<Option<Change>> {
        loop {
            let visible = self.db.writes.visible_seq();
            if visible < self.next {
                self.db.health.check_open()?;
                self.remember();
                return Ok(None);
            }
            match self.read_log(visible)? {
                Step::Change(c) => return Ok(Some(c)),
                Step::Continue => continue,
                Step::End => {
                    self.remember();
                    return Ok(None);
                }
            }
        }
    }

    /// Records where this feed stands (at the end of what is committed, or dropped), for a new
    /// feed from the same sequence number: another reader at the tip starts here.
    fn remember(&self) {
        if let Some((log, offset)) = self.at {
            if offset > 0 {
                self.db.changes.resume_points().record(ResumePoint {
                    next: self.next,
                    log,
                    offset,
                });
            }
        }
    }

    /// The next committed batch, waiting up to `timeout` for one; `None` if none came.
    /// Errors: [`Error::Closed`] once the database is closed.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn next_timeout(&mut self, timeout: std::time::Duration) -> Result<Option<Change>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(c) = self.try_next()? {
                return Ok(Some(c));
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let seen = self.db.writes.visible_seq();
            let db = &self.db;
            db.changes.wait_for_commit(deadline - now, || {
                db.writes.visible_seq() != seen || db.health.check_open().is_err()
            });
        }
    }

    /// Finds the log holding `self.next` (the newest whose first sequence number is at or
    /// below it).
    fn locate(&mut self) -> Result<()> {
        let storage = &*self.db.storage;
        let numbers = crate::file_names::wal_numbers(&storage.list()?);
        let logs = self.db.changes.logs();
        let mut oldest = None;
        for &n in numbers.iter().rev() {
            let Some(first) = logs.first_seq(storage, n)? else {
                continue;
            };
            oldest = Some(first);
            if first <= self.next {
                self.at = Some((n, 0));
                self.reader = None;
                return Ok(());
            }
        }
        Err(Error::ChangesTruncated {
            since: self.next,
            oldest: oldest.unwrap_or(self.next),
        })
    }

    /// Reads the current log from its offset, up to the next batch at or below `visible`.
    fn read_log(&mut self, visible: u64) -> Result<Step> {
        let Some((number, offset)) = self.at else {
            self.locate()?;
            return Ok(Step::Continue);
        };
        let name = wal_file_name(number);
        // Whether the reader sees the file as it is now (a kept one sees it as it was then).
        let (mut reader, mut current) = match self.reader.take() {
            Some(r) => (r, false),
            None => match self.open_reader(number, offset, &name)? {
                Ok(r) => (r, true),
                Err(step) => return Ok(step),
            },
        };
        loop {
            let rec = match reader.read_next() {
                Ok(Some(rec)) => rec,
                Err(e @ Error::Io { .. }) => return Err(e),
                // The end of what a kept reader saw: look again, from the same offset, at what
                // was written since.
                Ok(None) | Err(_) if !current => {
                    reader.seek(self.at.map_or(offset, |(_, o)| o));
                    reader.refresh()?;
                    current = true;
                    continue;
                }
                // The end of the data (or damage: a crash's torn tail, or a record still being
                // written). At the live log's end the reader is kept for the next read.
                Ok(None) | Err(_) => {
                    let step = self.end_of_data(number)?;
                    if matches!(step, Step::End) && self.at.is_some_and(|(n, _)| n == number) {
                        self.reader = Some(reader);
                    }
                    return Ok(step);
                }
            };
            let Some(data) = rec.data else {
                return Err(Error::corruption(&name, rec.offset, "nil record in a WAL"));
            };
            let (at, next_offset) = (rec.offset, rec.next_offset);
            match LogRecord::decode(data, &name, at)? {
                LogRecord::SyncedMark { .. } => {
                    self.at = Some((number, next_offset));
                }
                LogRecord::Sealed { next, .. } => {
                    self.at = Some((next, 0));
                    return Ok(Step::Continue);
                }
                LogRecord::Batch { batch, .. } => {
                    let (first, batch) = WriteBatch::decode(batch, &name, at)?;
                    let last = first + (batch.len() as u64).saturating_sub(1);
                    if last > visible {
                        return Ok(Step::End);
                    }
                    self.at = Some((number, next_offset));
                    if !self.started && first < self.next {
                        continue;
                    }
                    // Before the first batch yielded, one starting past `since` is the first
                    // (`since` may fall inside a batch); from then on they must be dense.
                    if self.started && first != self.next {
                        return Err(Error::corruption(
                            &name,
                            at,
                            format!(
                                "the change feed expected sequence number {}, found {first}",
                                self.next
                            ),
                        ));
                    }
                    self.started = true;
                    self.next = last + 1;
                    self.reader = Some(reader);
                    return Ok(Step::Change(self.change(first, batch)));
                }
            }
        }
    }

    /// A reader of log `number` at `offset` (0: the start, whose header it skips), or the step
    /// to take instead (the log was removed, or holds no data yet).
    fn open_reader(
        &mut self,
        number: u64,
        offset: u64,
        name: &str,
    ) -> Result<std::result::Result<Reader, Step>> {
        let file = match self.db.storage.open(name, OpenMode::Read) {
            Ok(f) => f,
            // Retention removed it meanwhile: where does the feed stand now?
            Err(Error::NotFound { .. }) => {
                self.at = None;
                self.locate()?;
                return Ok(Err(Step::Continue));
            }
            Err(e) => return Err(e),
        };
        let mut reader = match Reader::open(file, WalReader::reader_options()) {
            Ok(r) => r,
            Err(e @ Error::Io { .. }) => return Err(e),
            // A log whose creation is not finished (no file header yet), or cut short by a
            // crash while it was created.
            Err(_) => return self.end_of_data(number).map(Err),
        };
        reader.read_from_tip();
        let mut offset = offset;
        if offset == 0 {
            // The log header: skip it.
            match reader.read_next() {
                Ok(Some(rec)) => offset = rec.next_offset,
                Err(e @ Error::Io { .. }) => return Err(e),
                Ok(None) | Err(_) => return self.end_of_data(number).map(Err),
            }
            self.at = Some((number, offset));
        }
        reader.seek(offset);
        Ok(Ok(reader))
    }

    /// The end of a log's data: for the live log, the end for now; for an older log that was
    /// never sealed (the database crashed while it was live), the next log goes on.
    fn end_of_data(&mut self, number: u64) -> Result<Step> {
        let live = self.db.versions.lock().live_wal();
        if number >= live {
            return Ok(Step::End);
        }
        let numbers = crate::file_names::wal_numbers(&self.db.storage.list()?);
        match numbers.into_iter().find(|&n| n > number) {
            Some(n) => {
                self.at = Some((n, 0));
                self.reader = None;
                Ok(Step::Continue)
            }
            None => Ok(Step::End),
        }
    }

    fn change(&mut self, seq: u64, batch: WriteBatch) -> Change {
        let keyspaces = match Change::keyspaces_of(&batch, &self.names) {
            Some(k) => k,
            None => {
                // A keyspace created since the names were read (they are never dropped).
                self.names = self.db.versions.lock().keyspace_names().clone();
                Change::keyspaces_of(&batch, &self.names).unwrap_or_default()
            }
        };
        Change {
            seq,
            batch,
            keyspaces,
        }
    }
}

impl Drop for Changes {
    fn drop(&mut self) {
        self.remember();
    }
}

enum Step {
    Change(Change),
    Continue,
    End,
}

impl Iterator for Changes {
    type Item = Result<Change>;

    /// The next batch committed so far; `None` at the current end.
    fn next(&mut self) -> Option<Result<Change>> {
        self.try_next().transpose()
    }
}
