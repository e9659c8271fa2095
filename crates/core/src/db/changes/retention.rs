//! Which write-ahead logs the change feed keeps after their flush: while a change cursor has
//! not passed them, or while [`crate::db::ChangeRetention`]'s age or size limit holds them.
//! Kept logs are always the newest obsolete ones (no gap): the first log no rule holds ends
//! the retained stretch, and every older one goes.

use std::collections::BTreeSet;

use crate::db::core::DbInner;
use crate::storage::OpenMode;
use crate::write::wal::wal_file_name;
use crate::Result;

impl DbInner {
    /// Of the obsolete logs `obsolete` (numbers below the log number), those to keep;
    /// `all` is every log number in the storage, ascending.
    pub(crate) fn logs_to_keep(&self, obsolete: &[u64], all: &[u64]) -> Result<BTreeSet<u64>> {
        let mut keep = BTreeSet::new();
        let oldest_cursor = self
            .versions
            .lock()
            .change_cursors()
            .values()
            .copied()
            .min();
        let retention = self.options.change_retention;
        if oldest_cursor.is_none() && retention.is_none() {
            return Ok(keep);
        }
        let retention = retention.unwrap_or_default();
        let now = self.options.clock.now_ms();
        let storage = &*self.storage;
        let logs = self.changes.logs();
        let mut bytes = 0u64;
        for &n in obsolete.iter().rev() {
            // The log's batches end where the next log's begin.
            let next_first = match all.iter().find(|&&m| m > n) {
                Some(&m) => logs.first_seq(storage, m)?,
                None => None,
            };
            let needed_by_cursor = match (oldest_cursor, next_first) {
                (Some(c), Some(first)) => first.saturating_sub(1) > c,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let young = retention
                .age_ms
                .is_some_and(|age| now.saturating_sub(logs.sealed_at(n, now)) < age);
            bytes += storage.open(&wal_file_name(n), OpenMode::Read)?.size()?;
            let small = retention.bytes.is_some_and(|limit| bytes <= limit);
            if !(needed_by_cursor || young || small) {
                break;
            }
            keep.insert(n);
        }
        Ok(keep)
    }
}
