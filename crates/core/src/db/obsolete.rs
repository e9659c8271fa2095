//! Deleting what the database no longer needs: WALs older than the log number (unless the
//! change feed keeps them), tables no live version names, older manifests, temporary files.

use crate::db::core::DbInner;
use crate::db::maintenance::MaintenanceGuard;
use crate::file_names::{parse_file_name, FileKind};
use crate::jobs::DeleteWork;
use crate::storage::Storage;
use crate::version::manifest;
use crate::{Error, Result};

impl DbInner {
    /// Removes WALs older than the log number, tables in no live version (and not being
    /// written by the work in progress), old manifests and temporary files. Takes the
    /// maintenance lock's guard: no flush or compaction writes a table meanwhile. Does nothing
    /// on a read-only open (the files are the writer's).
    ///
    /// With deletions left to jobs ([`crate::Db::hand_out_deletions`]), obsolete tables and
    /// logs are only noted for the next deletion job (removing a big file can hold a thread
    /// for milliseconds); those an issued deletion job has are skipped either way.
    pub(crate) fn delete_obsolete_files(&self, work: &mut MaintenanceGuard<'_>) -> Result<()> {
        if self.options.read_only {
            return Ok(());
        }
        let pending = work.pending_outputs();
        let (live, log_number, manifest_number) = {
            let mut versions = self.versions.lock();
            (
                versions.live_files(),
                versions.log_number(),
                versions.manifest_number(),
            )
        };
        let names = self.storage.list()?;
        let logs = crate::file_names::wal_numbers(&names);
        let obsolete_logs: Vec<u64> = logs.iter().copied().filter(|&n| n < log_number).collect();
        let kept = self.logs_to_keep(&obsolete_logs, &logs)?;
        // Older logs' writes are in tables: a sync of the live log no longer syncs them first.
        // Those kept for the change feed are synced whole now (sealed without a sync, they
        // could otherwise lose writes out of the middle of the feed at a power loss).
        self.writes
            .retire_logs_before(log_number, |n| kept.contains(&n))?;
        let by_jobs = self.maintenance.deletions_by_jobs();
        let mut doomed = DeleteWork::default();
        for name in &names {
            match parse_file_name(name) {
                Some(FileKind::Wal(n)) if n < log_number && !kept.contains(&n) => {
                    if work.deleting_log(n) {
                        continue;
                    }
                    if by_jobs {
                        self.changes.logs().retire(n);
                        doomed.logs.push(n);
                        continue;
                    }
                    self.changes.logs().forget(n);
                }
                Some(FileKind::Table(n)) if !live.contains(&n) && !pending.contains(&n) => {
                    if work.deleting_table(n) {
                        continue;
                    }
                    self.tables.evict(n);
                    if by_jobs {
                        doomed.tables.push(n);
                        continue;
                    }
                }
                _ => continue,
            }
            remove_if_there(&*self.storage, name)?;
        }
        work.set_doomed(doomed);
        for name in manifest::obsolete_manifests(&names, manifest_number) {
            remove_if_there(&*self.storage, &name)?;
        }
        Ok(())
    }
}

/// Removes `name`; one already gone is what was wanted. (A listed file can go before its
/// removal: the background thread discards a prepared log that a switch made useless — one
/// numbered below the log the switch created, so it is obsolete here too.)
fn remove_if_there(storage: &dyn Storage, name: &str) -> Result<()> {
    match storage.remove(name) {
        Ok(()) | Err(Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
