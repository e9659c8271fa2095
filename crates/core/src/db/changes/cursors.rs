//! Durable change cursors ([`crate::Db::ack_changes`]): each a manifest record of how far its
//! reader got, holding the logs it still needs (`retention.rs`).

use crate::db::core::DbInner;
use crate::db::names::validate_name;
use crate::version::edit::VersionEdit;
use crate::Result;

impl DbInner {
    /// Sets change cursor `name` to `seq` (its reader is done with every batch up to it): syncs
    /// what the live log holds (commits go on meanwhile), then one manifest edit; then removes
    /// logs no longer needed.
    pub(crate) fn ack_changes(&self, name: &str, seq: u64) -> Result<()> {
        self.health.check_writable()?;
        validate_name("change cursor", name, false)?;
        let visible = self.writes.visible_seq();
        if seq > visible {
            return Err(crate::Error::InvalidArgument(format!(
                "cannot acknowledge sequence number {seq}: the database is at {visible}"
            )));
        }
        // The cursor never passes what is durable: after a power loss that took unsynced
        // batches, the database reuses their sequence numbers, and a cursor past them would
        // make its reader skip the new batches. (Sealed logs were synced whole.)
        self.health.poison_on_error(self.writes.sync_written())?;
        {
            let mut versions = self.versions.lock();
            if versions.change_cursors().get(name) == Some(&seq) {
                return Ok(());
            }
            let edit = VersionEdit {
                change_cursors: vec![(name.to_owned(), seq)],
                ..VersionEdit::default()
            };
            versions.log_edit(edit, &self.health)?;
        }
        self.delete_obsolete_logs()
    }

    /// Removes change cursor `name`; false if there was none.
    pub(crate) fn remove_change_cursor(&self, name: &str) -> Result<bool> {
        self.health.check_writable()?;
        {
            let mut versions = self.versions.lock();
            if !versions.change_cursors().contains_key(name) {
                return Ok(false);
            }
            let edit = VersionEdit {
                cursors_removed: vec![name.to_owned()],
                ..VersionEdit::default()
            };
            versions.log_edit(edit, &self.health)?;
        }
        self.delete_obsolete_logs()?;
        Ok(true)
    }

    /// Obsolete logs go now (not waiting for the next flush), under the maintenance lock
    /// like every deletion of files.
    fn delete_obsolete_logs(&self) -> Result<()> {
        let mut work = self.maintenance.lock();
        self.delete_obsolete_files(&mut work)
    }
}
