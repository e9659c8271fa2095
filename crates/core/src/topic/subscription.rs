//! [`Subscription`]: a reader that yields a topic's records from a position on, then waits for
//! new ones without polling (woken by the commit of an append). The reader pulls: a slow
//! subscriber never makes a writer buffer anything.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::topic::handle::Topic;
use crate::topic::options::{From, ReadLimits};
use crate::topic::record::Record;
use crate::Result;

/// How many records a subscription reads ahead at most.
const READ_AHEAD: usize = 256;

/// A subscription to a topic ([`Topic::subscribe`]). As an [`Iterator`] it blocks until the next
/// record (natively; on wasm32, where nothing blocks, it ends when it has caught up).
#[derive(Debug)]
pub struct Subscription {
    topic: Topic,
    position: u64,
    buffer: VecDeque<Record>,
}

impl Topic {
    /// A subscription from `from`: yields what is there, then waits for new records.
    pub fn subscribe(&self, from: &From) -> Result<Subscription> {
        let position = self.resolve(from)?;
        Ok(Subscription::new(self.clone(), position))
    }
}

impl Subscription {
    fn new(topic: Topic, position: u64) -> Subscription {
        Subscription {
            topic,
            position,
            buffer: VecDeque::new(),
        }
    }

    /// The offset of the next record this subscription yields.
    pub fn position(&self) -> u64 {
        self.buffer.front().map_or(self.position, |r| r.offset)
    }

    /// The next record if one is there now. Errors: `OffsetOutOfRange` if retention dropped the
    /// records at the subscription's position.
    pub fn try_next(&mut self) -> Result<Option<Record>> {
        if self.buffer.is_empty() {
            let limits = ReadLimits {
                limit: READ_AHEAD,
                max_bytes: 1 << 20,
            };
            self.buffer
                .extend(self.topic.read_at(self.position, limits)?);
            if let Some(last) = self.buffer.back() {
                self.position = last.offset + 1;
            }
        }
        Ok(self.buffer.pop_front())
    }

    /// The next record, waiting up to `wait` for one to be appended.
    pub fn next_timeout(&mut self, wait: Duration) -> Result<Option<Record>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(r) = self.try_next()? {
                return Ok(Some(r));
            }
            if cfg!(target_arch = "wasm32") {
                return Ok(None);
            }
            let Some(left) = deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
            else {
                return Ok(None);
            };
            self.topic.handle.db.check_open()?;
            // Bounded, so that a closed database is noticed.
            let sleep = left.min(Duration::from_secs(1));
            self.topic.tail.wait_past(self.position, sleep);
        }
    }
}

impl Iterator for Subscription {
    type Item = Result<Record>;

    /// The next record, blocking until there is one (natively). Ends on wasm32 when caught up.
    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            match self.next_timeout(Duration::from_secs(3600)) {
                Ok(Some(r)) => return Some(Ok(r)),
                Ok(None) if cfg!(target_arch = "wasm32") => return None,
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
