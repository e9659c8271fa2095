//! One client's requests against the queues: what each command does, and the client's open
//! reads (at most one per queue, as in Kestrel).
//!
//! Contracts:
//! - `set` answers `STORED` only after the push returned (the item reached the OS; with
//!   `/sync`, stable storage), `NOT_STORED` when the queue is full.
//! - A waiting read (`/t=`) runs on tokio's blocking pool, never on a runtime thread.
//! - A plain `get` that had to wait takes its item as a reservation and acknowledges it only
//!   once the reply was written ([`Session::after_write`]); if the client is gone by then the
//!   item goes back ([`Session::end`]), as Kestrel cancels the wait of a closed connection.
//! - [`Session::end`] (the client disconnected) gives every open read back to its queue.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use shaledb::queue::{Lease, PushOptions, Queue, QueueItem, ReserveOptions};
use shaledb::Error;

use crate::protocol::{ttl_secs, GetOptions, Request};
use crate::server::{Server, VERSION};
use crate::stats::{bump, render};

/// Whether the connection goes on after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next request.
    Continue,
    /// Close the connection (`quit`).
    Close,
}

/// How often a waiting `peek` looks again (the core has no blocking peek).
const PEEK_POLL: Duration = Duration::from_millis(5);

/// One client connection's state.
pub struct Session {
    server: Arc<Server>,
    /// Open reads by queue name, with the handle they were reserved through.
    open: HashMap<String, (Queue, Lease)>,
    /// Items of plain `get`s to acknowledge once their reply is written.
    unacked: Vec<(Queue, Lease)>,
}

impl Session {
    /// A new client of `server`.
    pub fn new(server: Arc<Server>) -> Session {
        Session {
            server,
            open: HashMap::new(),
            unacked: Vec::new(),
        }
    }

    /// Runs one request, appending its reply to `out`.
    pub async fn execute(&mut self, request: Request, out: &mut Vec<u8>) -> Flow {
        let result = match request {
            Request::Set {
                queue,
                sync,
                exptime,
                data,
            } => self.set(&queue, sync, exptime, data, out).await,
            Request::Get { queue, options } => self.get(&queue, options, out).await,
            Request::Delete { queue } => self.delete(&queue, out),
            Request::Flush { queue } => self.server.queues.get(&queue).and_then(|q| {
                q.clear()?;
                out.extend_from_slice(b"END\r\n");
                Ok(())
            }),
            Request::FlushAll => self.flush_all(out),
            Request::Stats => self.stats(out),
            Request::Version => {
                out.extend_from_slice(format!("VERSION {VERSION}\r\n").as_bytes());
                Ok(())
            }
            Request::Quit => return Flow::Close,
        };
        if let Err(e) = result {
            out.extend_from_slice(error_reply(&e).as_bytes());
        }
        Flow::Continue
    }

    /// Whether replies about to be written carry items of plain `get`s that waited (see
    /// [`Session::after_write`]).
    pub fn has_unacked(&self) -> bool {
        !self.unacked.is_empty()
    }

    /// The reply was written: acknowledges the items of plain `get`s that waited.
    pub fn after_write(&mut self) {
        for (q, lease) in self.unacked.drain(..) {
            if let Err(e) = q.ack(lease) {
                if !gone(&e) {
                    eprintln!("queue-server: ack after get on {}: {e}", q.name());
                }
            }
        }
    }

    /// The client is gone: its open reads, and the items of replies it may not have received,
    /// go back to the head of their queues.
    pub fn end(&mut self) {
        let leases = self
            .unacked
            .drain(..)
            .chain(self.open.drain().map(|(_, v)| v));
        for (q, lease) in leases {
            if let Err(e) = q.release(lease, None) {
                if !gone(&e) {
                    eprintln!("queue-server: release on disconnect, {}: {e}", q.name());
                }
            }
        }
    }

    async fn set(
        &self,
        name: &str,
        sync: bool,
        exptime: u64,
        data: Vec<u8>,
        out: &mut Vec<u8>,
    ) -> shaledb::Result<()> {
        bump(&self.server.counters.cmd_set);
        let queue = self.server.queues.get(name)?;
        let options = PushOptions {
            sync,
            ttl: ttl_secs(exptime, now_unix()).map(Duration::from_secs),
            ..PushOptions::default()
        };
        let pushed = if sync {
            blocking(move || queue.push(&data, options)).await
        } else {
            queue.push(&data, options)
        };
        match pushed {
            Ok(_) => {
                bump(&self.server.counters.total_items);
                out.extend_from_slice(b"STORED\r\n");
                Ok(())
            }
            Err(e) if e.code() == "QUEUE_FULL" => {
                out.extend_from_slice(b"NOT_STORED\r\n");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    async fn get(&mut self, name: &str, o: GetOptions, out: &mut Vec<u8>) -> shaledb::Result<()> {
        let counters = &self.server.counters;
        bump(if o.peek {
            &counters.cmd_peek
        } else {
            &counters.cmd_get
        });
        if o.close || o.abort {
            if let Some((q, lease)) = self.open.remove(name) {
                let done = if o.close {
                    q.ack(lease)
                } else {
                    q.release(lease, None)
                };
                // The lease ran out, or the queue was flushed or deleted: nothing to give back.
                if let Err(e) = done.map_err(|e| (gone(&e), e)) {
                    if !e.0 {
                        return Err(e.1);
                    }
                }
            }
            if !o.open {
                out.extend_from_slice(b"END\r\n");
                return Ok(());
            }
        }
        if o.open && self.open.contains_key(name) {
            out.extend_from_slice(b"CLIENT_ERROR close current item first\r\n");
            return Ok(());
        }
        let queue = self.server.queues.get(name)?;
        let wait = o.timeout_ms.filter(|&ms| ms > 0).map(Duration::from_millis);
        let item = if o.peek {
            peek(&queue, wait).await?
        } else if o.open {
            let item = self.reserve(&queue, wait).await?;
            if let Some(i) = &item {
                self.open
                    .insert(name.to_owned(), (queue.clone(), i.lease()));
            }
            item
        } else if let Some(item) = queue.take(None)? {
            Some(item)
        } else if wait.is_some() {
            let item = self.reserve(&queue, wait).await?;
            if let Some(i) = &item {
                self.unacked.push((queue.clone(), i.lease()));
            }
            item
        } else {
            None
        };
        match item {
            Some(item) => {
                bump(&counters.get_hits);
                // Straight into the reply buffer (no intermediate string).
                let _ = write!(out, "VALUE {name} 0 {}\r\n", item.value.len());
                out.extend_from_slice(&item.value);
                out.extend_from_slice(b"\r\nEND\r\n");
            }
            None => {
                bump(&counters.get_misses);
                out.extend_from_slice(b"END\r\n");
            }
        }
        Ok(())
    }

    /// Reserves the head item for the open-read lease, waiting up to `wait` on the blocking pool
    /// if the queue is empty.
    async fn reserve(
        &self,
        queue: &Queue,
        wait: Option<Duration>,
    ) -> shaledb::Result<Option<QueueItem>> {
        let mut options = ReserveOptions {
            lease: Some(self.server.config.open_timeout),
            wait: None,
        };
        if let Some(item) = queue.reserve(options)? {
            return Ok(Some(item));
        }
        if wait.is_none() {
            return Ok(None);
        }
        options.wait = wait;
        let queue = queue.clone();
        blocking(move || queue.reserve(options)).await
    }

    fn delete(&mut self, name: &str, out: &mut Vec<u8>) -> shaledb::Result<()> {
        self.open.remove(name);
        self.server.queues.delete(name)?;
        out.extend_from_slice(b"DELETED\r\n");
        Ok(())
    }

    fn flush_all(&mut self, out: &mut Vec<u8>) -> shaledb::Result<()> {
        for name in self.server.queues.names()? {
            self.server.queues.get(&name)?.clear()?;
        }
        out.extend_from_slice(b"Flushed all queues.\r\n");
        Ok(())
    }

    fn stats(&self, out: &mut Vec<u8>) -> shaledb::Result<()> {
        let mut queues = Vec::new();
        for name in self.server.queues.names()? {
            let s = self.server.queues.get(&name)?.stats()?;
            queues.push((name, s));
        }
        out.extend_from_slice(&render(&self.server.counters, now_unix(), &queues));
        Ok(())
    }
}

/// The head item without removing it; if there is none and `wait` is set, looks again every
/// [`PEEK_POLL`] until one arrives or the wait is over.
async fn peek(queue: &Queue, wait: Option<Duration>) -> shaledb::Result<Option<QueueItem>> {
    let deadline = wait.map(|w| Instant::now() + w);
    loop {
        if let Some(item) = queue.peek()? {
            return Ok(Some(item));
        }
        match deadline {
            Some(d) if Instant::now() < d => tokio::time::sleep(PEEK_POLL).await,
            _ => return Ok(None),
        }
    }
}

/// Runs a call that may block (a wait, an fsync) on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> shaledb::Result<T> + Send + 'static,
) -> shaledb::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(Error::InvalidArgument(format!("blocking task failed: {e}"))))
}

/// Whether an acknowledgement or release failed only because the reservation is no longer
/// there (its lease ran out, or its queue was flushed or deleted).
fn gone(e: &Error) -> bool {
    matches!(e.code(), "UNKNOWN_RESERVATION" | "LEASE_EXPIRED")
}

/// The reply line for an error of the core.
fn error_reply(e: &Error) -> String {
    let message = e.to_string().replace(['\r', '\n'], " ");
    match e.code() {
        "INVALID_ARGUMENT" => format!("CLIENT_ERROR {message}\r\n"),
        _ => format!("SERVER_ERROR {message}\r\n"),
    }
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
