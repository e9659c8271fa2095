//! The server's queues: the database, the options every queue gets, one shared handle per name.

use std::collections::HashMap;
use std::sync::RwLock;

use shaledb::queue::{Queue, QueueOptions};
use shaledb::{Db, Error, Result};

/// Every queue of the database, opened on first use with the server's [`QueueOptions`].
pub struct Queues {
    db: Db,
    options: QueueOptions,
    handles: RwLock<HashMap<String, Queue>>,
}

impl Queues {
    /// Serves the queues of `db`; each is opened (created if missing) with `options`.
    pub fn new(db: Db, options: QueueOptions) -> Queues {
        Queues {
            db,
            options,
            handles: RwLock::new(HashMap::new()),
        }
    }

    /// The queue `name`, created durably if missing (Kestrel creates a queue on first use).
    pub fn get(&self, name: &str) -> Result<Queue> {
        if let Some(q) = self.handles.read().map_err(poisoned)?.get(name) {
            return Ok(q.clone());
        }
        let mut handles = self.handles.write().map_err(poisoned)?;
        if let Some(q) = handles.get(name) {
            return Ok(q.clone());
        }
        let q = self.db.queue(name, self.options.clone())?;
        handles.insert(name.to_owned(), q.clone());
        Ok(q)
    }

    /// The names of every queue in the database, sorted.
    pub fn names(&self) -> Result<Vec<String>> {
        self.db.queues()
    }

    /// Deletes the queue `name` with its items; `false` if there was none.
    pub fn delete(&self, name: &str) -> Result<bool> {
        let mut handles = self.handles.write().map_err(poisoned)?;
        handles.remove(name);
        self.db.delete_queue(name)
    }

    /// Drops every handle and closes the database (a clean stop).
    pub fn close(self) -> Result<()> {
        drop(self.handles);
        self.db.close()
    }
}

fn poisoned<T>(_: T) -> Error {
    Error::InvalidArgument("the queue server's handle table is poisoned".into())
}
