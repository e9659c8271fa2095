//! What a maintenance job is and what running it yields: plain values, nothing shared with the
//! database that issued them.

use crate::sstable::TableOptions;
use crate::version::FileMeta;

/// One job: its work, how its tables are written, and the file numbers it may create.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceJob {
    /// Unique among the jobs of one open database.
    pub id: u64,
    /// What to do.
    pub work: JobWork,
    /// How output tables are written (`sync_on_finish` is always on for jobs).
    pub table: TableOptions,
    /// The numbers output tables take, in order; no other file has them or will. A job that
    /// needs more fails ([`crate::Error::InvalidArgument`]) and is issued again later.
    pub outputs: Vec<u64>,
}

/// The work of a job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobWork {
    /// A sealed log into a level-0 table.
    Flush(FlushWork),
    /// Input tables into output tables one level down.
    Compaction(CompactionWork),
    /// Make the next write-ahead log, created by the database, durable: its file and its
    /// directory entry synced (the file work of a memtable switch, off the database's thread).
    SyncLog(SyncLogWork),
    /// Remove obsolete tables and logs (the database's deletions, off its thread).
    Delete(DeleteWork),
}

/// The removal of tables and logs no version, memtable or change-feed reader needs any more
/// (never handed out again: file numbers are not reused). A file already gone is not an
/// error; the runner creates no file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteWork {
    /// Numbers of the table files to remove.
    pub tables: Vec<u64>,
    /// Numbers of the log files to remove.
    pub logs: Vec<u64>,
}

/// The sync of log `wal`, which the database created (holding only its file header) for its
/// next memtable switch; the runner creates no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncLogWork {
    /// The log's file number.
    pub wal: u64,
}

/// A flush: every write of log `wal` (a sealed log) into one level-0 table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushWork {
    /// The log's file number.
    pub wal: u64,
    /// Entries the log holds (the frozen memtable's count): the runner checks it replayed as
    /// many, so a log that does not hold what the memtable held is never installed.
    pub entries: u64,
}

/// A compaction of `inputs` (at `level`) and `next_inputs` (at `level + 1`) into tables at
/// `level + 1`, dropping what the rules of [`crate::compaction::job`] allow.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionWork {
    /// The level compacted.
    pub level: usize,
    /// Input tables of `level` (L0: newest first).
    pub inputs: Vec<FileMeta>,
    /// Overlapping input tables of `level + 1`, in key order.
    pub next_inputs: Vec<FileMeta>,
    /// Sequence numbers of the snapshots live when the job was issued.
    pub snapshots: Vec<u64>,
    /// Whether no level below `level + 1` held data in the inputs' key range when issued.
    pub bottommost: bool,
    /// An output table is cut at the next key boundary once it reaches this size.
    pub target_file_size: u64,
}

/// What a runner made of a job: the tables written (finished, synced, their directory entries
/// synced), for the database to install.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutput {
    /// The job's id.
    pub id: u64,
    /// The tables, in key order (a flush: none when the log held nothing to write, else one).
    pub tables: Vec<FileMeta>,
}

impl JobOutput {
    /// Bytes of the tables written.
    pub fn bytes_written(&self) -> u64 {
        self.tables.iter().map(|t| t.size).sum()
    }
}
