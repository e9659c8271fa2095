//! The write path: [`batch`] (atomic write batches and their encoding, the payload of a WAL
//! record), [`wal`] (the write-ahead log: chained RecordIO files, synced through one gate each)
//! and [`group_commit`] (many writers sharing one WAL write and one sync; visibility in commit
//! order).

pub mod batch;
pub mod group_commit;
pub mod wal;
