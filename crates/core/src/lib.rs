//! ShaleDB: an embedded key-value database built on one container format, RecordIO.
//!
//! This crate is the engine core. All I/O goes through the [`storage::Storage`] trait, so the
//! same code runs natively (on `std::fs`), in memory, under fault injection in tests, and in
//! WebAssembly (on a storage object supplied by JavaScript).
//!
//! Layers, bottom up:
//! - [`storage`]: the I/O seam and its implementations.
//! - [`recordio`]: the record container every file is made of (go-sstables compatible reader,
//!   ShaleDB's own checksummed format by default).
//! - [`sstable`]: sorted string tables whose data blocks are RecordIO records.
//! - Write path: [`batch`] (atomic write batches and their encoding), [`wal`] (the write-ahead
//!   log), [`group_commit`] (concurrent writers sharing one WAL write and sync), [`memtable`].
//! - Tables over time: [`manifest`] and [`version_edit`] (the durable record of which tables
//!   make up the tree), [`version`], [`compaction`] (leveled, in bounded steps).
//! - Reads: [`iter`] (merging, range tombstones, snapshot-filtered user iteration).
//! - [`db`]: the database itself — [`Db`], keyspaces, batches, snapshots, transactions.
//!
//! Start with [`Db`]:
//!
//! ```
//! let db = shaledb::Db::open_in_memory(shaledb::Options::default())?;
//! db.put(b"hello", b"world")?;
//! assert_eq!(db.get(b"hello")?, Some(b"world".to_vec()));
//! # Ok::<(), shaledb::Error>(())
//! ```
#![deny(unsafe_code)]
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

pub mod batch;
pub mod compaction;
pub mod compaction_output;
pub mod compaction_picker;
pub mod db;
pub mod error;
pub mod file_names;
pub mod group_commit;
pub mod iter;
pub mod manifest;
pub mod memtable;
pub mod recordio;
pub mod sstable;
pub mod storage;
pub mod varint;
pub mod verify;
pub mod version;
pub mod version_edit;
pub mod wal;

pub use db::{Batch, Db, IterOptions, Keyspace, Options, Snapshot, Transaction, WriteOptions};
pub use error::{Error, Result};
