//! Compactions of key ranges asked for while maintenance runs as jobs
//! ([`crate::Db::request_compaction`]): the queue of requests, each carried out as one
//! compaction job per level, and the tickets of those done. Kept under the maintenance lock.
//!
//! Invariants: requests finish in the order they were made (tickets are consecutive, so
//! "done up to ticket t" says it all); the first request is the only one in progress, and at
//! most one job of it is out.

use std::collections::VecDeque;

/// One requested compaction of `[start, end]` (`None`: unbounded; internal keys).
#[derive(Debug)]
pub(crate) struct RangeCompaction {
    pub(crate) ticket: u64,
    pub(crate) start: Option<Vec<u8>>,
    pub(crate) end: Option<Vec<u8>>,
    /// The memtables of every log numbered below this are flushed before its first pass (the
    /// live log when it was asked for: what was written before the request).
    pub(crate) flush_below: u64,
    /// The level its next pass compacts from.
    pub(crate) level: usize,
    /// The id of its job out, if one is.
    pub(crate) job: Option<u64>,
}

/// The requests not yet done and the last ticket done.
#[derive(Debug, Default)]
pub(crate) struct RangeCompactions {
    queue: VecDeque<RangeCompaction>,
    next_ticket: u64,
    done: u64,
}

impl RangeCompactions {
    /// Queues a compaction of `[start, end]` once the logs below `flush_below` are flushed;
    /// returns its ticket.
    pub(crate) fn request(
        &mut self,
        start: Option<Vec<u8>>,
        end: Option<Vec<u8>>,
        flush_below: u64,
    ) -> u64 {
        self.next_ticket += 1;
        self.queue.push_back(RangeCompaction {
            ticket: self.next_ticket,
            start,
            end,
            flush_below,
            level: 0,
            job: None,
        });
        self.next_ticket
    }

    /// The request in progress, if any.
    pub(crate) fn current(&mut self) -> Option<&mut RangeCompaction> {
        self.queue.front_mut()
    }

    /// Ends the request in progress: its ticket is done.
    pub(crate) fn finish_current(&mut self) {
        if let Some(done) = self.queue.pop_front() {
            self.done = done.ticket;
        }
    }

    /// The last ticket done (0 before any): every request up to it is done.
    pub(crate) fn done(&self) -> u64 {
        self.done
    }

    /// Job `id` carries out the next pass of the request in progress.
    pub(crate) fn job_issued(&mut self, id: u64) {
        if let Some(current) = self.queue.front_mut() {
            current.job = Some(id);
        }
    }

    /// Job `id` ended: installed (`true`: its request goes on to the next level) or refused or
    /// abandoned (`false`: the same level is planned again). No-op for another job.
    pub(crate) fn job_ended(&mut self, id: u64, installed: bool) {
        if let Some(current) = self.queue.front_mut() {
            if current.job == Some(id) {
                current.job = None;
                if installed {
                    current.level += 1;
                }
            }
        }
    }
}
