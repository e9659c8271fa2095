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
mod cursors;
mod feed;
pub(crate) mod logs;
mod resume;
mod retention;
mod signal;
pub(crate) mod state;

pub use apply::Applied;
pub use change::{Change, ChangeOp};
pub use feed::Changes;
