//! TEMPORARY in-memory stand-in for `shaledb::queue` (same signatures as /work/notes/queue-api.md)
//! until the core's queue API lands on main; replaced by `pub use shaledb::queue::...`.
#![allow(dead_code, missing_docs)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use shaledb::{Db, Error, Result};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenFull {
    #[default]
    Reject,
    DiscardOldest,
}

#[derive(Debug, Clone)]
pub struct QueueOptions {
    pub max_items: Option<u64>,
    pub max_bytes: Option<u64>,
    pub when_full: WhenFull,
    pub max_deliveries: Option<u32>,
    pub dead_letter: Option<String>,
    pub default_lease: Duration,
    pub default_ttl: Option<Duration>,
}
impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions {
            max_items: None,
            max_bytes: None,
            when_full: WhenFull::Reject,
            max_deliveries: None,
            dead_letter: None,
            default_lease: Duration::from_secs(30),
            default_ttl: None,
        }
    }
}
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    pub sync: bool,
    pub delay: Option<Duration>,
    pub ttl: Option<Duration>,
}
#[derive(Debug, Clone, Default)]
pub struct ReserveOptions {
    pub lease: Option<Duration>,
    pub wait: Option<Duration>,
}
#[derive(Debug, Clone, Copy)]
pub struct Lease {
    pub id: u64,
    pub delivery: u32,
}
#[derive(Debug, Clone)]
pub struct QueueItem {
    pub id: u64,
    pub value: Vec<u8>,
    pub pushed_at_ms: u64,
    pub deliveries: u32,
    pub lease_until_ms: Option<u64>,
}
impl QueueItem {
    pub fn lease(&self) -> Lease {
        Lease {
            id: self.id,
            delivery: self.deliveries,
        }
    }
}
#[derive(Debug, Clone, Default)]
pub struct QueueStats {
    pub items: u64,
    pub bytes: u64,
    pub oldest_age_ms: Option<u64>,
    pub reserved: u64,
    pub dead_lettered: u64,
}

#[derive(Default)]
struct State {
    next: u64,
    items: VecDeque<(u64, Vec<u8>)>,
    reserved: HashMap<u64, Vec<u8>>,
    options: QueueOptions,
}
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Clone)]
pub struct Queue {
    name: String,
    shared: Arc<Shared>,
}

fn registry() -> &'static Mutex<HashMap<String, Arc<Shared>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<Shared>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}
fn poisoned<T>(_: T) -> Error {
    Error::InvalidArgument("poisoned".into())
}

pub trait DbQueues {
    fn queue(&self, name: &str, options: QueueOptions) -> Result<Queue>;
    fn queues(&self) -> Result<Vec<String>>;
    fn delete_queue(&self, name: &str) -> Result<bool>;
}
impl DbQueues for Db {
    fn queue(&self, name: &str, options: QueueOptions) -> Result<Queue> {
        let mut r = registry().lock().map_err(poisoned)?;
        let shared = r.entry(name.to_owned()).or_default().clone();
        shared.state.lock().map_err(poisoned)?.options = options;
        Ok(Queue {
            name: name.into(),
            shared,
        })
    }
    fn queues(&self) -> Result<Vec<String>> {
        let mut v: Vec<String> = registry()
            .lock()
            .map_err(poisoned)?
            .keys()
            .cloned()
            .collect();
        v.sort();
        Ok(v)
    }
    fn delete_queue(&self, name: &str) -> Result<bool> {
        Ok(registry().lock().map_err(poisoned)?.remove(name).is_some())
    }
}

impl Queue {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn push(&self, value: &[u8], _options: PushOptions) -> Result<u64> {
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        if s.options
            .max_items
            .is_some_and(|m| s.items.len() as u64 >= m)
        {
            return Err(Error::InvalidArgument("QUEUE_FULL".into()));
        }
        s.next += 1;
        let id = s.next;
        s.items.push_back((id, value.to_vec()));
        self.shared.cv.notify_all();
        Ok(id)
    }
    fn pop(&self, wait: Option<Duration>) -> Result<Option<(u64, Vec<u8>)>> {
        let deadline = wait.map(|w| Instant::now() + w);
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        loop {
            if let Some(x) = s.items.pop_front() {
                return Ok(Some(x));
            }
            let Some(d) = deadline else { return Ok(None) };
            let now = Instant::now();
            if now >= d {
                return Ok(None);
            }
            s = self.shared.cv.wait_timeout(s, d - now).map_err(poisoned)?.0;
        }
    }
    pub fn take(&self, wait: Option<Duration>) -> Result<Option<QueueItem>> {
        Ok(self.pop(wait)?.map(|(id, value)| item(id, value)))
    }
    pub fn peek(&self) -> Result<Option<QueueItem>> {
        let s = self.shared.state.lock().map_err(poisoned)?;
        Ok(s.items.front().map(|(id, v)| item(*id, v.clone())))
    }
    pub fn reserve(&self, options: ReserveOptions) -> Result<Option<QueueItem>> {
        let Some((id, value)) = self.pop(options.wait)? else {
            return Ok(None);
        };
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        s.reserved.insert(id, value.clone());
        Ok(Some(item(id, value)))
    }
    pub fn ack(&self, lease: Lease) -> Result<()> {
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        s.reserved
            .remove(&lease.id)
            .map(|_| ())
            .ok_or_else(|| Error::InvalidArgument("UNKNOWN_RESERVATION".into()))
    }
    pub fn release(&self, lease: Lease, _delay: Option<Duration>) -> Result<()> {
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        let v = s
            .reserved
            .remove(&lease.id)
            .ok_or_else(|| Error::InvalidArgument("UNKNOWN_RESERVATION".into()))?;
        s.items.push_front((lease.id, v));
        self.shared.cv.notify_all();
        Ok(())
    }
    pub fn stats(&self) -> Result<QueueStats> {
        let s = self.shared.state.lock().map_err(poisoned)?;
        Ok(QueueStats {
            items: s.items.len() as u64,
            bytes: s.items.iter().map(|(_, v)| v.len() as u64).sum(),
            oldest_age_ms: None,
            reserved: s.reserved.len() as u64,
            dead_lettered: 0,
        })
    }
    pub fn clear(&self) -> Result<()> {
        let mut s = self.shared.state.lock().map_err(poisoned)?;
        s.items.clear();
        s.reserved.clear();
        Ok(())
    }
}
fn item(id: u64, value: Vec<u8>) -> QueueItem {
    QueueItem {
        id,
        value,
        pushed_at_ms: 0,
        deliveries: 1,
        lease_until_ms: None,
    }
}
