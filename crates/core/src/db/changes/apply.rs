//! A follower applies its leader's change feed ([`crate::Db::apply_change`]): each change is
//! written as one batch with the leader's sequence numbers, so the follower's own sequence
//! number says how far it got, and its own change feed continues the leader's.

use std::sync::Arc;

use crate::db::changes::change::Change;
use crate::db::core::DbInner;
use crate::db::keys;
use crate::db::keyspace::{Keyspace, RESERVED_KEYSPACE_PREFIX};
use crate::write::batch::{BatchOp, WriteBatch};
use crate::{Error, Result};

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
    /// Applies `change` (module doc). A change at or below the follower's sequence number was
    /// applied before: nothing is written. Anything but the next change is
    /// [`Error::ChangeGap`], as is a change that does not start at `expected_seq` when given.
    pub(crate) fn apply_change(
        self: &Arc<Self>,
        change: &Change,
        expected_seq: Option<u64>,
        sync: bool,
    ) -> Result<Applied> {
        self.health.check_open()?;
        if !self.options.follower {
            return Err(Error::InvalidArgument(
                "apply_change needs a database opened as a follower (Options::follower)".into(),
            ));
        }
        // One apply at a time: the check of the sequence number and the commit go together.
        let _one = self.changes.lock_apply();
        let have = self.writes.visible_seq();
        if let Some(expected) = expected_seq {
            if expected != change.seq() {
                return Err(Error::ChangeGap {
                    expected,
                    got: change.seq(),
                });
            }
        }
        if change.last_seq() <= have {
            return Ok(Applied::AlreadyApplied { last_seq: have });
        }
        if change.seq() != have + 1 {
            return Err(Error::ChangeGap {
                expected: have + 1,
                got: change.seq(),
            });
        }
        let batch = self.translate(change)?;
        let first = self.write_unchecked(batch, sync)?;
        if first != change.seq() {
            // Only possible if something else wrote to the follower meanwhile.
            return Err(Error::Corruption {
                file: "change".into(),
                offset: 0,
                reason: format!(
                    "change {} was written at sequence number {first}",
                    change.seq()
                ),
            });
        }
        Ok(Applied::Applied {
            last_seq: change.last_seq(),
        })
    }

    /// The change's batch with the follower's keyspace ids (keyspaces created as needed),
    /// operation for operation, so it takes as many sequence numbers as on the leader.
    fn translate(self: &Arc<Self>, change: &Change) -> Result<WriteBatch> {
        let mut ids: Vec<(String, u32)> = Vec::new();
        let mut id_of = |name: &str| -> Result<u32> {
            if let Some((_, id)) = ids.iter().find(|(n, _)| n == name) {
                return Ok(*id);
            }
            let reserved = name.starts_with(RESERVED_KEYSPACE_PREFIX);
            let id = Keyspace::open(self, name, reserved)?.id;
            ids.push((name.to_owned(), id));
            Ok(id)
        };
        let mut out = WriteBatch::with_capacity(change.batch.approximate_size());
        let bad = || Error::corruption("change", 0, "a key of a keyspace the change does not name");
        for op in change.batch.iter() {
            match op {
                BatchOp::Put { key, value } => {
                    let (ks, key) = change.split(key).ok_or_else(bad)?;
                    out.put(&keys::encode(id_of(ks)?, key), value)?;
                }
                BatchOp::Delete { key } => {
                    let (ks, key) = change.split(key).ok_or_else(bad)?;
                    out.delete(&keys::encode(id_of(ks)?, key))?;
                }
                BatchOp::DeleteRange { start, end } => {
                    let (ks, start) = change.split(start).ok_or_else(bad)?;
                    let (_, end_key) = change.split_in(ks, end);
                    let id = id_of(ks)?;
                    let end = if end_key.is_empty() {
                        keys::keyspace_end(id)
                    } else {
                        keys::encode(id, end_key)
                    };
                    out.delete_range(&keys::encode(id, start), &end)?;
                }
                BatchOp::Annotation { time, meta } => out.annotate(time, meta)?,
            }
        }
        Ok(out)
    }
}
