//! ShaleDB: an embedded key-value database (an LSM tree) built on one container format,
//! RecordIO. A library that opens a directory of files; no server.
//!
//! # The database
//!
//! Start with [`Db`]: open a directory, read and write keys, in named [`Keyspace`]s that share
//! one write-ahead log, atomically across keyspaces with a [`Batch`]:
//!
//! ```
//! use shaledb::{Batch, Db, IterOptions, Options, WriteOptions};
//!
//! let db = Db::open_in_memory(Options::default())?; // Db::open(path, options) on disk
//! db.put(b"user:1", b"ada")?;                         // reached the OS: survives a kill
//! db.put_opt(b"user:2", b"grace", WriteOptions::SYNC)?; // fsynced: survives a power loss
//! let events = db.keyspace("events")?;
//! let mut batch = Batch::new();                        // all or nothing, across keyspaces
//! batch.put(&events, b"0001", b"signup")?.delete(&db.default_keyspace(), b"user:2")?;
//! db.write(&batch, WriteOptions::default())?;
//! let users: Vec<_> = db.iter(IterOptions::prefix(b"user:".to_vec()))?
//!     .collect::<shaledb::Result<_>>()?;
//! assert_eq!(users, vec![(b"user:1".to_vec(), b"ada".to_vec())]);
//! db.close()?;
//! # Ok::<(), shaledb::Error>(())
//! ```
//!
//! [`Snapshot`]s read one consistent state while writes go on; [`Transaction`]s are optimistic
//! (a commit fails with [`Error::Conflict`] when a key it read changed). Flush and compaction run
//! on a background thread, or as bounded steps you drive ([`Db::maintain`]). What a write's
//! acknowledgement promises, how a failed fsync or a full disk stops writes ([`Error::Poisoned`])
//! and what recovery does after a crash are in [`db`].
//!
//! # Queues, topic logs and the change feed
//!
//! In the same database, atomic with the application's own writes: durable queues with
//! reliable reads, consumer groups, delays and dead letters ([`queue`]); topic logs with dense
//! offsets, subscriptions and committed consumer offsets ([`topic`]); and the change feed
//! ([`Db::changes`]): every committed batch, in commit order, read back from the write-ahead
//! log, with durable cursors ([`Db::ack_changes`]) and followers that apply it with the
//! leader's sequence numbers ([`Db::apply_change`]):
//!
//! ```
//! use shaledb::{Change, Db, Options};
//!
//! let leader = Db::open_in_memory(Options::default())?;
//! leader.put(b"k", b"v")?;
//! let mut options = Options::default();
//! options.follower = true; // every write but apply_change fails with Error::ReadOnly
//! let follower = Db::open_in_memory(options)?;
//! for change in leader.changes(follower.sequence() + 1)? {
//!     let bytes = change?.to_bytes(); // what a forwarder sends over the network
//!     follower.apply_change(&Change::from_bytes(&bytes)?, None)?;
//! }
//! assert_eq!(follower.get(b"k")?, Some(b"v".to_vec()));
//! assert_eq!(follower.sequence(), leader.sequence());
//! # Ok::<(), shaledb::Error>(())
//! ```
//!
//! # The layers you can use on their own
//!
//! - [`storage`]: the one I/O seam — a flat directory of named files ([`storage::Storage`]),
//!   on disk ([`storage::std_fs`]) or in memory ([`storage::memory`]); the fault-injecting
//!   storage of the crash tests (`storage::faulty`) is behind the `testing` feature.
//! - [`recordio`]: the record container every file is made of; reads go-sstables' RecordIO
//!   files, writes ShaleDB's checksummed format.
//! - [`sstable`]: sorted string tables on RecordIO: [`sstable::TableBuilder`] and
//!   [`sstable::TableReader`].
//! - [`verify`]: checks every byte of a database directory without opening it.
//!
//! Every error is one [`Error`] enum with a stable [`Error::code`]; corruption errors name the
//! file and offset. The byte layouts of every file are in `docs/FORMAT.md` in the repository.
//!
//! # Feature flags
//!
//! - `gzip` (default): RecordIO's gzip codec, for go-sstables files written with it. The
//!   database never uses gzip; without the feature such a record is
//!   [`Error::UnsupportedCompression`]. Left out of the WebAssembly build (about 40 KB).
//! - `lzw` (default): RecordIO's LZW decoder, for go-sstables' legacy LZW files; likewise.
//! - `testing`: the fault-injecting storage (`storage::faulty::FaultyStorage`) the crash and
//!   fault-sweep tests use: fail or crash at the Nth I/O call, Linux's fsync error semantics,
//!   power losses that drop unsynced pages in any order.
//!
//! The engine's inner layers (the internal key model, the write path, versions, compaction,
//! iterators, memtables) are public for the WebAssembly bindings, the benchmarks and the
//! tests, but hidden here: they are not a stable API.
#![deny(unsafe_code)]
#![warn(missing_docs)]
// On wasm32 nothing is `Send`/`Sync` (JS-backed storage; no threads) and `std::fs::File` is an
// empty stub, so these two lints only flag the single-threaded build.
#![cfg_attr(
    target_arch = "wasm32",
    allow(
        clippy::arc_with_non_send_sync,
        clippy::drop_non_drop,
        reason = "wasm32 is single-threaded and its std::fs is a stub"
    )
)]

// The documented layers: the database, its errors, the storage seam, RecordIO, SSTables, and
// verification of a whole database.
pub mod db;
pub mod error;
pub mod jobs;
pub mod queue;
pub mod recordio;
pub mod sstable;
pub mod storage;
pub mod topic;
pub mod verify;

// The engine's inner layers: public for the bindings, the benchmarks and the tests, not a
// stable API (hidden from the documentation).
#[doc(hidden)]
pub mod compaction;
#[doc(hidden)]
pub mod file_names;
#[doc(hidden)]
pub mod iter;
#[doc(hidden)]
pub mod key;
#[doc(hidden)]
pub mod memtable;
#[doc(hidden)]
pub mod varint;
#[doc(hidden)]
pub mod version;
#[doc(hidden)]
pub mod write;

// What the named logs (queues, topics) share, built on the database.
mod named;
// Sorting with one instantiation of the sort in the WebAssembly module.
mod sorting;
// A condition variable that skips the wake-up when nobody sleeps.
mod waiters;

pub use db::{
    Applied, Batch, Change, ChangeOp, ChangeRetention, Changes, Clock, CompactProgress, Db,
    IterOptions, Keyspace, MaintenancePriority, Options, Snapshot, Transaction, WriteOptions,
    RESERVED_KEYSPACE_PREFIX,
};
pub use error::{Error, Result};
pub use version::MAX_KEYSPACE_METADATA;
