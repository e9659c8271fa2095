//! [`Queue`]: a handle on a named queue, bound to one consumer group.

use std::sync::Arc;
use std::time::Duration;

use crate::db::Db;
use crate::named::handle::{Handle, Named};
use crate::named::locked::run;
use crate::queue::consume::Candidate;
use crate::queue::item::{Lease, QueueItem};
use crate::queue::open::{dead_letter_name, open};
use crate::queue::options::{millis, PushOptions, QueueOptions, ReserveOptions};
use crate::queue::state::State;
use crate::queue::tx::Tx;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// A named queue of a database (see the [module documentation](crate::queue)). Cheap to clone;
/// natively `Send + Sync`. Every handle of one name shares one state. A handle reads for one
/// consumer group: [`Db::queue`] gives the default group `""`, [`Queue::group`] another; pushes
/// go to every group.
#[derive(Clone)]
pub struct Queue {
    pub(crate) handle: Handle<State>,
    pub(crate) group: Arc<str>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.name())
            .field("group", &self.group)
            .finish()
    }
}

impl Named for Queue {
    type State = State;
    fn handle(&self) -> &Handle<State> {
        &self.handle
    }
}

impl Queue {
    /// A handle on queue `name` of `db` for the default group (see [`open`] for `options`).
    pub(crate) fn open(db: &Db, name: &str, options: Option<QueueOptions>) -> Result<Queue> {
        Ok(Queue {
            handle: open(db, name, options)?,
            group: Arc::from(""),
        })
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        self.handle.name()
    }

    /// The consumer group this handle reads for (`""`: the default group).
    pub fn group_name(&self) -> &str {
        &self.group
    }

    /// The queue's options.
    pub fn options(&self) -> QueueOptions {
        self.handle.shared.lock().options.clone()
    }

    /// When (milliseconds on the queue clock) this handle's group next has an item come back by
    /// itself (a lease running out, a release delay or a push delay ending), if any is known:
    /// for waits done outside the core (the WebAssembly bindings, which cannot block).
    #[doc(hidden)]
    pub fn next_wake_ms(&self) -> Option<u64> {
        let state = self.handle.shared.lock();
        state.groups.get(&*self.group).and_then(|g| g.next_wake())
    }

    /// Pushes `value`; returns its id. When it returns the item has reached the OS (with
    /// `options.sync`, stable storage). Errors: `QueueFull` at a limit with the `Reject` policy,
    /// `InvalidArgument` for an oversize value.
    pub fn push(&self, value: &[u8], options: PushOptions) -> Result<u64> {
        self.handle.db.check_value(value)?;
        self.run(options.sync, false, |tx, _| tx.push(value, &options))
    }

    /// Pushes every value of `values` atomically, in order; returns their ids.
    pub fn push_many<V: AsRef<[u8]>>(
        &self,
        values: &[V],
        options: PushOptions,
    ) -> Result<Vec<u64>> {
        for v in values {
            self.handle.db.check_value(v.as_ref())?;
        }
        self.run(options.sync, false, |tx, _| {
            values
                .iter()
                .map(|v| tx.push(v.as_ref(), &options))
                .collect()
        })
    }

    /// Takes the next item for good (for this group), waiting up to `wait` for one to come.
    /// Destructive: an item taken and then lost by a crash of the taker is gone (use
    /// [`Queue::reserve`] for at-least-once delivery).
    pub fn take(&self, wait: Option<Duration>) -> Result<Option<QueueItem>> {
        Ok(self.take_many(1, wait)?.pop())
    }

    /// Takes up to `max` items in one write, waiting up to `wait` for the first.
    pub fn take_many(&self, max: usize, wait: Option<Duration>) -> Result<Vec<QueueItem>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let group = self.group.clone();
        self.waiting(wait, || {
            self.run(false, true, |tx, mut dead| {
                let mut items = Vec::new();
                while items.len() < max {
                    let Some(c) = next_live(tx, dead.as_deref_mut(), &group)? else {
                        break;
                    };
                    let deliveries = c.deliveries.saturating_add(1);
                    tx.finish(&group, c.id, c.value.len() as u64)?;
                    items.push(c.into_item(deliveries, None));
                }
                Ok(items)
            })
        })
    }

    /// The item [`Queue::take`] or [`Queue::reserve`] would deliver now, left in place.
    pub fn peek(&self) -> Result<Option<QueueItem>> {
        Ok(self.peek_many(1)?.pop())
    }

    /// The next `max` items (fewer if fewer are deliverable now), in the order
    /// [`Queue::take_many`] would deliver them, left in place: nothing is written or changed.
    pub fn peek_many(&self, max: usize) -> Result<Vec<QueueItem>> {
        let group = self.group.clone();
        self.inspect(|tx| {
            let mut items = Vec::new();
            while items.len() < max {
                let Some(c) = tx.candidate(&group)? else {
                    break;
                };
                let deliveries = c.deliveries;
                // Leased for the length of this look only (it is rolled back), so that the
                // next candidate is the item after it.
                let item = tx.lease(&group, c, u64::MAX)?;
                items.push(QueueItem {
                    deliveries,
                    lease_until_ms: None,
                    ..item
                });
            }
            Ok(items)
        })
    }

    /// Reserves the next item: nobody else (of this group) gets it until it is acked
    /// ([`Queue::ack`]), released ([`Queue::release`]) or its lease runs out; then it is
    /// delivered again, its delivery count one higher. Reservations open at a crash or close
    /// are delivered again after reopen. Waits up to `options.wait` for an item to come.
    pub fn reserve(&self, options: ReserveOptions) -> Result<Option<QueueItem>> {
        Ok(self.reserve_many(1, options)?.pop())
    }

    /// Reserves up to `max` items in one write, waiting up to `options.wait` for the first.
    pub fn reserve_many(&self, max: usize, options: ReserveOptions) -> Result<Vec<QueueItem>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let group = self.group.clone();
        let lease_ms = options
            .lease
            .map_or_else(|| millis(self.options().default_lease), millis);
        if lease_ms == 0 {
            return Err(Error::InvalidArgument(
                "a lease must be at least 1 ms".into(),
            ));
        }
        self.waiting(options.wait, || {
            self.run(false, true, |tx, mut dead| {
                let until = tx.now.saturating_add(lease_ms);
                let mut items = Vec::new();
                while items.len() < max {
                    let Some(c) = next_live(tx, dead.as_deref_mut(), &group)? else {
                        break;
                    };
                    items.push(tx.lease(&group, c, until)?);
                }
                Ok(items)
            })
        })
    }

    /// Acks a reservation: the item is done for this group (and deleted once every group is
    /// done with it). Errors: `UnknownReservation`, `LeaseExpired`.
    pub fn ack(&self, lease: Lease) -> Result<()> {
        self.ack_many(&[lease])
    }

    /// Acks every lease of `leases` in one write: all of them, or (on an error) none.
    pub fn ack_many(&self, leases: &[Lease]) -> Result<()> {
        let group = self.group.clone();
        self.run(false, false, |tx, _| {
            leases.iter().try_for_each(|&lease| tx.ack(&group, lease))
        })
    }

    /// Gives a reservation back: the item goes back at the head of this group, deliverable
    /// again after `delay`. Errors as [`Queue::ack`].
    pub fn release(&self, lease: Lease, delay: Option<Duration>) -> Result<()> {
        let group = self.group.clone();
        let delay_ms = delay.map_or(0, millis);
        self.run(false, false, |tx, _| tx.release(&group, lease, delay_ms))
    }

    /// Renews a reservation for `lease_for` from now; returns when the lease now ends
    /// (milliseconds since the Unix epoch). Errors as [`Queue::ack`].
    pub fn extend(&self, lease: Lease, lease_for: Duration) -> Result<u64> {
        let group = self.group.clone();
        let lease_ms = millis(lease_for).max(1);
        self.run(false, false, |tx, _| tx.extend(&group, lease, lease_ms))
    }

    /// Runs `op` on this queue (and, if `with_dead_letter` and the queue has a delivery limit,
    /// its dead-letter queue) and commits its writes.
    fn run<T>(
        &self,
        sync: bool,
        with_dead_letter: bool,
        op: impl FnOnce(&mut Tx<'_>, Option<&mut Tx<'_>>) -> Result<T>,
    ) -> Result<T> {
        let dead = match with_dead_letter {
            true => self.dead_letter_queue()?,
            false => None,
        };
        let queues = match &dead {
            Some(d) => [&self.handle, &d.handle],
            None => [&self.handle, &self.handle],
        };
        let queues = &queues[..if dead.is_some() { 2 } else { 1 }];
        let db = &self.handle.db;
        let mut commit = |b| db.write_encoded(b, sync);
        run(queues, WriteBatch::new(), &mut commit, |txs, _| match txs {
            [tx] => op(tx, None),
            [tx, dead] => op(tx, Some(dead)),
            _ => Err(Error::InvalidArgument("queue operation on no queue".into())),
        })
    }

    /// Runs `op` on this queue alone and undoes everything it changed (reads that move
    /// through the state, like a peek).
    fn inspect<T>(&self, op: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let mut guard = self.handle.shared.lock_live()?;
        let mut tx = Tx::new(self.name(), &self.handle.ks, &mut guard, self.handle.now());
        let result = op(&mut tx);
        tx.rollback();
        result
    }

    /// The dead-letter queue, if this queue has a delivery limit.
    fn dead_letter_queue(&self) -> Result<Option<Queue>> {
        let options = self.options();
        if options.max_deliveries.is_none() {
            return Ok(None);
        }
        let name = dead_letter_name(self.name(), &options);
        Queue::open(&self.handle.db, &name, None).map(Some)
    }

    /// Runs `attempt` until it yields an item or `wait` has passed, sleeping between attempts
    /// until a push, a release, a lease running out or a delay ending. On wasm32 (no blocking)
    /// it makes one attempt: the JavaScript layer waits.
    fn waiting(
        &self,
        wait: Option<Duration>,
        mut attempt: impl FnMut() -> Result<Vec<QueueItem>>,
    ) -> Result<Vec<QueueItem>> {
        let Some(wait) = wait.filter(|w| !w.is_zero()) else {
            return attempt();
        };
        if cfg!(target_arch = "wasm32") {
            return attempt();
        }
        let deadline = std::time::Instant::now() + wait;
        loop {
            let generation = self.handle.shared.lock().generation;
            let items = attempt()?;
            if !items.is_empty() {
                return Ok(items);
            }
            let now = std::time::Instant::now();
            let Some(left) = deadline
                .checked_duration_since(now)
                .filter(|d| !d.is_zero())
            else {
                return Ok(items);
            };
            self.handle.db.check_open()?;
            let guard = self.handle.shared.lock_live()?;
            if guard.generation != generation {
                continue;
            }
            let clock = self.handle.now();
            let timed = guard
                .groups
                .get(&*self.group)
                .and_then(|g| g.next_wake())
                .map(|t| Duration::from_millis(t.saturating_sub(clock).max(1)));
            // Bounded, so that a closed database is noticed.
            let sleep = timed
                .map_or(left, |t| t.min(left))
                .min(Duration::from_secs(1));
            drop(self.handle.shared.wait(guard, sleep));
        }
    }
}

/// The next item of `group` that is not due for the dead-letter queue; the ones that are go
/// there on the way (in the same write).
fn next_live(
    tx: &mut Tx<'_>,
    mut dead: Option<&mut Tx<'_>>,
    group: &str,
) -> Result<Option<Candidate>> {
    let limit = tx.state.options.max_deliveries;
    while let Some(c) = tx.candidate(group)? {
        let Some(dead) = dead
            .as_deref_mut()
            .filter(|_| limit.is_some_and(|m| c.deliveries >= m))
        else {
            return Ok(Some(c));
        };
        dead.push(&c.value, &PushOptions::default())?;
        tx.finish(group, c.id, c.value.len() as u64)?;
        tx.counters().dead_lettered += 1;
    }
    Ok(None)
}
