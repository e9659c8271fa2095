//! Read-only opens ([`crate::Options::read_only`]): the database as the files show it, with no
//! lock and nothing written, caught up with its writer on request ([`crate::Db::catch_up`]).
//!
//! The state is recovered exactly as an open does (the manifest, then the logs replayed into
//! a memtable, [`super::open::recover`]) but nothing is written back: the recovered memtable
//! is the live one, and the group commit and manifest writer, which every write path needs,
//! are given a scratch in-memory storage that nothing ever writes to (every write is refused
//! first). A writer working meanwhile can make a recovery fail half way (a log sealed or a
//! table deleted between the listing and the read): recovery is then tried again.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::open::{recover, Recovered};
use crate::db::options::Options;
use crate::db::versions::Versions;
use crate::db::write_path::WritePath;
use crate::storage::memory::MemoryStorage;
use crate::storage::Storage;
use crate::version::manifest::{ManifestOptions, ManifestWriter};
use crate::version::{Version, NUM_LEVELS};
use crate::write::wal::{WalOptions, WalWriter};
use crate::{Error, Result};

/// Recoveries tried before a failure is reported (a writer may change the files under one;
/// the pause between tries doubles from 1 ms up to 64 ms).
const ATTEMPTS: u32 = 20;

impl DbInner {
    /// Opens `storage` read-only (module doc).
    pub(crate) fn open_read_only(
        storage: Arc<dyn Storage>,
        mut options: Options,
    ) -> Result<DbInner> {
        options.create_if_missing = false;
        options.error_if_exists = false;
        options.background_thread = false;
        let Recovered { mut versions, logs } = recover_while_written(&storage, &options)?;
        let first_version = versions.current();
        let scratch: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
        let wal_number = versions.log_number();
        let wal_writer = WalWriter::create(
            &*scratch,
            wal_number,
            logs.last_seq + 1,
            WalOptions::default(),
        )?;
        versions.set_last_sequence(logs.last_seq);
        let manifest_writer =
            ManifestWriter::create(scratch, &mut versions, ManifestOptions::default())?;
        let writes = WritePath::new(wal_writer, versions.last_sequence());
        let read_only = options.read_only;
        let versions = Versions::new(versions, manifest_writer, logs.mem, wal_number, read_only);
        let inner = DbInner::assemble(storage, options, versions, writes, None);
        match inner.open_tables(&first_version) {
            Ok(()) => Ok(inner),
            // The writer compacted meanwhile: read its newer state.
            Err(Error::NotFound { .. }) => inner.catch_up().map(|()| inner),
            Err(e) => Err(e),
        }
    }

    /// Opens every table of `version` now (RocksDB's secondaries keep every file open too):
    /// a table the writer deletes later stays readable through its open handle.
    fn open_tables(&self, version: &Version) -> Result<()> {
        for level in 0..NUM_LEVELS {
            for file in version.files(level) {
                self.tables.get(file.number)?;
            }
        }
        Ok(())
    }

    /// Reads what the writer did since the open or the last catch-up: the manifest and logs
    /// as they are now. Reads already started go on with the state they had. Errors:
    /// `InvalidArgument` unless the database was opened read-only.
    pub(crate) fn catch_up(&self) -> Result<()> {
        self.health.check_open()?;
        if !self.options.read_only {
            return Err(Error::InvalidArgument(
                "catch_up is for databases opened read-only".into(),
            ));
        }
        let mut attempts = 0;
        let Recovered { versions, logs } = loop {
            let recovered = recover_while_written(&self.storage, &self.options)?;
            match self.open_tables(&recovered.versions.current()) {
                Ok(()) => break recovered,
                Err(Error::NotFound { .. }) if attempts < ATTEMPTS => attempts += 1,
                Err(e) => return Err(e),
            }
        };
        let mut current = self.versions.lock();
        // The view and the sequence number change together, under the view lock, so a read
        // never pairs the new tables with the old sequence number or the reverse.
        current.replace(versions, logs.mem, logs.last_seq, || {
            self.writes.set_visible_seq(logs.last_seq);
        });
        // Tables no version in use names any more are closed (the writer deleted them).
        self.tables.retain(&current.live_files());
        Ok(())
    }
}

/// [`recover`], again while it fails in a way a concurrent writer can cause.
fn recover_while_written(storage: &Arc<dyn Storage>, options: &Options) -> Result<Recovered> {
    let mut last = None;
    for attempt in 0..ATTEMPTS {
        match recover(storage, options) {
            Ok(r) => return Ok(r),
            // A log or table changed under the read: read again, a moment later.
            Err(e) if matches!(e, Error::NotFound { .. }) || e.code() == "CORRUPTION" => {
                last = Some(e);
                pause(attempt);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| Error::Closed("recovery failed".into())))
}

/// Waits a moment before recovery is tried again (natively; WebAssembly cannot block).
fn pause(attempt: u32) {
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::sleep(std::time::Duration::from_millis(1 << attempt.min(6)));
    #[cfg(target_arch = "wasm32")]
    let _ = attempt;
}
