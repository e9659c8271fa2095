//! The databases JavaScript has open, by handle number, with the handles it opened on each
//! (keyspaces, queues, topics, change feeds) and the debt of writes that makes a write do one
//! bounded maintenance step itself.

use std::cell::{Cell, RefCell};

use shaledb::db::Budget;
#[cfg(feature = "full")]
use shaledb::queue::Queue;
#[cfg(feature = "full")]
use shaledb::topic::Topic;
#[cfg(feature = "full")]
use shaledb::Changes;
use shaledb::{Db, Error, Keyspace};

use crate::handles::{with, Table};

/// Bytes of writes after which a write does one bounded maintenance step itself (the debt
/// bound): a tight loop of synchronous writes gives the idle-time scheduler no chance to run.
const INLINE_STEP_EVERY: u64 = 256 << 10;
/// The budget of such an inline step (bytes of table data merged).
const INLINE_STEP_BUDGET: u64 = 1 << 20;

/// An open database and the keyspaces JavaScript has opened on it.
pub struct DbEntry {
    pub db: Db,
    pub keyspaces: Vec<Keyspace>,
    /// The queue handles JavaScript opened, by number (`None`: its queue was deleted).
    #[cfg(feature = "full")]
    pub queues: Vec<Option<Queue>>,
    /// The topic handles JavaScript opened, by number (`None`: its topic was deleted).
    #[cfg(feature = "full")]
    pub topics: Vec<Option<Topic>>,
    /// Change feeds kept open for the next read to continue from (`crate::changes`).
    #[cfg(feature = "full")]
    pub feeds: RefCell<Vec<Changes>>,
    /// Bytes written since the last inline maintenance step.
    debt: Cell<u64>,
    /// Maintenance runs as jobs elsewhere ([`crate::jobs`]): writes do no inline step.
    pub jobs: Cell<bool>,
}

impl DbEntry {
    /// `db`, with its default keyspace as keyspace number 0 and nothing else opened yet.
    pub fn new(db: Db) -> DbEntry {
        let default = db.default_keyspace();
        DbEntry {
            db,
            keyspaces: vec![default],
            #[cfg(feature = "full")]
            queues: Vec::new(),
            #[cfg(feature = "full")]
            topics: Vec::new(),
            #[cfg(feature = "full")]
            feeds: RefCell::new(Vec::new()),
            debt: Cell::new(0),
            jobs: Cell::new(false),
        }
    }

    /// Queue handle number `index` of this database.
    #[cfg(feature = "full")]
    pub fn queue(&self, index: u32) -> Result<&Queue, Error> {
        match self.queues.get(index as usize) {
            Some(Some(queue)) => Ok(queue),
            Some(None) => Err(Error::InvalidArgument(format!(
                "queue handle {index} belongs to a deleted queue"
            ))),
            None => Err(Error::InvalidArgument(format!("no queue number {index}"))),
        }
    }

    /// Topic handle number `index` of this database.
    #[cfg(feature = "full")]
    pub fn topic(&self, index: u32) -> Result<&Topic, Error> {
        match self.topics.get(index as usize) {
            Some(Some(topic)) => Ok(topic),
            Some(None) => Err(Error::InvalidArgument(format!(
                "topic handle {index} belongs to a deleted topic"
            ))),
            None => Err(Error::InvalidArgument(format!("no topic number {index}"))),
        }
    }

    pub fn keyspace(&self, index: u32) -> Result<&Keyspace, Error> {
        self.keyspaces
            .get(index as usize)
            .ok_or_else(|| Error::InvalidArgument(format!("no keyspace number {index}")))
    }

    /// After a committed write of `bytes`: adds them to the debt and, past the bound, does one
    /// bounded maintenance step (none when maintenance runs as jobs: a writer that finds too
    /// many memtables waiting still flushes one, in the core). Never fails: the write is
    /// committed, so its result is the commit's. A failed step has poisoned the database (the
    /// core does that), and the next write reports the cause.
    pub fn after_write(&self, bytes: usize) {
        if self.jobs.get() {
            return;
        }
        let debt = self.debt.get() + bytes as u64;
        if debt < INLINE_STEP_EVERY {
            self.debt.set(debt);
            return;
        }
        self.debt.set(0);
        let _ = self.db.maintain(Budget {
            bytes: INLINE_STEP_BUDGET,
        });
    }
}

thread_local! {
    pub static DATABASES: RefCell<Table<DbEntry>> = RefCell::new(Table::new("database"));
}

/// Runs `f` on database `db`.
pub fn with_db<R>(db: u32, f: impl FnOnce(&DbEntry) -> Result<R, Error>) -> Result<R, Error> {
    with(&DATABASES, |t| f(t.get(db)?))
}

/// Marks the handles that `named` picks as belonging to a deleted queue or topic.
#[cfg(feature = "full")]
pub fn forget_handles<T>(handles: &mut [Option<T>], named: impl Fn(&T) -> bool) {
    for slot in handles {
        if slot.as_ref().is_some_and(&named) {
            *slot = None;
        }
    }
}

/// Puts `handle` into `handles` in place of one that `same` says is of the same queue (group) or
/// topic, or at the end; returns its number.
#[cfg(feature = "full")]
pub fn insert_handle<T>(
    handles: &mut Vec<Option<T>>,
    handle: T,
    same: impl Fn(&T, &T) -> bool,
) -> u32 {
    let at = handles
        .iter()
        .position(|h| h.as_ref().is_some_and(|h| same(h, &handle)));
    match at.and_then(|i| handles.get_mut(i).map(|slot| (i, slot))) {
        Some((i, slot)) => {
            *slot = Some(handle);
            i as u32
        }
        None => {
            handles.push(Some(handle));
            (handles.len() - 1) as u32
        }
    }
}
