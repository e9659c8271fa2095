//! Maintenance as file-in, file-out jobs (RocksDB's remote compaction, here for flushes too).
//!
//! A database hands out a [`MaintenanceJob`] ([`crate::Db::next_job`]): a plain value, encoded
//! to bytes with [`MaintenanceJob::encode`] to cross to another thread or process. Anyone with
//! a [`crate::storage::Storage`] over the same directory runs it ([`run_job`]): a flush turns a
//! sealed write-ahead log (the frozen memtable's writes are all in it) into one level-0 table;
//! a compaction turns its input tables into output tables; a sync log
//! ([`crate::Db::next_log_job`]) syncs the next write-ahead log the database created, and its
//! directory entry; a deletion removes obsolete tables and logs
//! ([`crate::Db::hand_out_deletions`]). The runner writes only files
//! numbered from the job's reserved numbers, created exclusively, synced with their directory
//! entries before it returns. The database installs the [`JobOutput`]
//! ([`crate::Db::install_job`]) with one manifest edit, or refuses it when its inputs are gone
//! or changed meanwhile; refused or abandoned outputs, and those of a runner that died, are
//! orphans, removed by the next install and at the latest by the next open.
//!
//! The byte layouts are in docs/FORMAT.md ("Maintenance jobs").

mod codec;
mod run;
mod spec;

pub use run::run_job;
pub use spec::{
    CompactionWork, DeleteWork, FlushWork, JobOutput, JobWork, MaintenanceJob, SyncLogWork,
};
