//! The change feed: every committed batch, in commit order, with its sequence numbers, read
//! back from the write-ahead logs ([`crate::Db::changes`]); durable named cursors that hold
//! logs until their reader is done ([`crate::Db::ack_changes`]); and a follower's side, which
//! applies a leader's changes with the leader's sequence numbers ([`crate::Db::apply_change`]).
//! docs/SCALING.md tells how replication is built on it.
//!
//! Logs are kept past their flush while a cursor or [`crate::db::ChangeRetention`] needs them
//! (`retention.rs`); a batch's annotation carries its commit time and the writer's meta
//! (`crate::write::batch`).

mod apply;
mod change;
mod feed;
mod logs;
mod retention;
mod signal;

use std::sync::Mutex;

pub use change::{Change, ChangeOp};
pub use feed::Changes;
pub(crate) use logs::LogIndex;

use crate::db::catalog::validate_name;
use crate::db::core::DbInner;
use crate::version::edit::VersionEdit;
use crate::Result;

/// The change feed's shared state in a database.
#[derive(Debug, Default)]
pub(crate) struct ChangeState {
    pub(crate) logs: logs::LogIndex,
    pub(crate) signal: signal::CommitSignal,
    /// Held by a follower's apply.
    pub(crate) apply: Mutex<()>,
}

/// What [`crate::Db::apply_change`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The change was written; the follower now holds everything up to `last_seq`.
    Applied {
        /// The follower's sequence number now (the change's last).
        last_seq: u64,
    },
    /// The change was applied before (its last sequence number is at or below the
    /// follower's): nothing was written.
    AlreadyApplied {
        /// The follower's sequence number.
        last_seq: u64,
    },
}

impl DbInner {
    /// Sets change cursor `name` to `seq` (its reader is done with every batch up to it): syncs
    /// the live log, then one manifest edit; then removes logs no longer needed.
    pub(crate) fn ack_changes(&self, name: &str, seq: u64) -> Result<()> {
        self.check_writable()?;
        validate_name("change cursor", name, false)?;
        let visible = self.commit.visible_seq();
        if seq > visible {
            return Err(crate::Error::InvalidArgument(format!(
                "cannot acknowledge sequence number {seq}: the database is at {visible}"
            )));
        }
        // The cursor never passes what is durable: after a power loss that took unsynced
        // batches, the database reuses their sequence numbers, and a cursor past them would
        // make its reader skip the new batches. (Sealed logs were synced whole.)
        self.poison_on_error(self.commit.exclusive(|wal, _| wal.sync()))?;
        {
            let mut st = self.state();
            if st.versions.change_cursors().get(name) == Some(&seq) {
                return Ok(());
            }
            let edit = VersionEdit {
                change_cursors: vec![(name.to_owned(), seq)],
                ..VersionEdit::default()
            };
            self.log_edit(&mut st, edit)?;
        }
        self.delete_obsolete_logs()
    }

    /// Removes change cursor `name`; false if there was none.
    pub(crate) fn remove_change_cursor(&self, name: &str) -> Result<bool> {
        self.check_writable()?;
        {
            let mut st = self.state();
            if !st.versions.change_cursors().contains_key(name) {
                return Ok(false);
            }
            let edit = VersionEdit {
                cursors_removed: vec![name.to_owned()],
                ..VersionEdit::default()
            };
            self.log_edit(&mut st, edit)?;
        }
        self.delete_obsolete_logs()?;
        Ok(true)
    }

    /// Obsolete logs go now (not waiting for the next flush), under the maintenance lock
    /// like every deletion of files.
    fn delete_obsolete_logs(&self) -> Result<()> {
        let _maintenance = self
            .maintenance
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.delete_obsolete_files()
    }
}
