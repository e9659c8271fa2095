//! The memtables that wait for flush, each with the first WAL holding its writes, and the WAL
//! the live memtable's writes go to: which logs recovery still needs.

use std::sync::Arc;

use crate::memtable::MemTable;

/// An immutable memtable waiting for flush, and the first WAL holding its writes.
#[derive(Debug)]
struct Immutable {
    mem: Arc<MemTable>,
    wal: u64,
}

/// The immutable memtables (oldest first) and the live memtable's WAL.
#[derive(Debug)]
pub(crate) struct Memtables {
    imms: Vec<Immutable>,
    live_wal: u64,
}

impl Memtables {
    /// No memtable waits; the live one writes to WAL `live_wal`.
    pub(crate) fn new(live_wal: u64) -> Memtables {
        Memtables {
            imms: Vec::new(),
            live_wal,
        }
    }

    /// The number of the WAL the live memtable's writes go to.
    pub(crate) fn live_wal(&self) -> u64 {
        self.live_wal
    }

    /// The oldest memtable waiting for flush (the next one to flush).
    pub(crate) fn oldest(&self) -> Option<&Arc<MemTable>> {
        self.imms.first().map(|i| &i.mem)
    }

    /// The WAL holding the writes of the oldest memtable waiting for flush.
    pub(crate) fn oldest_wal(&self) -> Option<u64> {
        self.imms.first().map(|i| i.wal)
    }

    /// The log number once the oldest memtable is flushed: the WAL of the next one waiting,
    /// or the live WAL. Every older WAL is then obsolete.
    pub(crate) fn log_number_after_oldest(&self) -> u64 {
        self.imms.get(1).map_or(self.live_wal, |i| i.wal)
    }

    /// `mem`, whose writes went to the live WAL, now waits for flush, and WAL `next_wal` takes
    /// the next writes. Returns the WAL `mem` wrote to.
    pub(crate) fn seal(&mut self, mem: Arc<MemTable>, next_wal: u64) -> u64 {
        let wal = std::mem::replace(&mut self.live_wal, next_wal);
        self.imms.push(Immutable { mem, wal });
        wal
    }

    /// The oldest memtable was flushed: it waits no more.
    pub(crate) fn drop_oldest(&mut self) {
        if !self.imms.is_empty() {
            self.imms.remove(0);
        }
    }

    /// The waiting memtables newest first, as a view lists them.
    pub(crate) fn newest_first(&self) -> Vec<Arc<MemTable>> {
        self.imms.iter().rev().map(|i| i.mem.clone()).collect()
    }
}
