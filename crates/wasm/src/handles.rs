//! Tables of the objects JavaScript refers to by number: databases, iterators, snapshots and
//! transactions.
//!
//! Handles are plain numbers rather than wasm-bindgen classes so that, after a panic, a fresh
//! module can be instantiated without old JS wrappers (and their finalizers) reaching into it:
//! the TypeScript layer owns every handle's lifetime and never uses one of a dead module.

use std::cell::RefCell;
use std::collections::HashMap;

use shaledb::Error;

/// Live objects of one kind, by id. Ids start at 1 (0 means "none" across the boundary) and are
/// not reused while their object lives.
#[derive(Debug)]
pub struct Table<T> {
    next: u32,
    items: HashMap<u32, T>,
    kind: &'static str,
}

impl<T> Table<T> {
    pub fn new(kind: &'static str) -> Table<T> {
        Table {
            next: 1,
            items: HashMap::new(),
            kind,
        }
    }

    /// Stores `item` and returns its new id.
    pub fn insert(&mut self, item: T) -> u32 {
        loop {
            let id = self.next;
            self.next = self.next.checked_add(1).unwrap_or(1);
            if id != 0 && !self.items.contains_key(&id) {
                self.items.insert(id, item);
                return id;
            }
        }
    }

    pub fn get(&self, id: u32) -> Result<&T, Error> {
        self.items.get(&id).ok_or_else(|| self.closed(id))
    }

    pub fn get_mut(&mut self, id: u32) -> Result<&mut T, Error> {
        let kind = self.kind;
        self.items
            .get_mut(&id)
            .ok_or_else(|| Error::Closed(format!("{kind} {id} is closed")))
    }

    pub fn remove(&mut self, id: u32) -> Option<T> {
        self.items.remove(&id)
    }

    fn closed(&self, id: u32) -> Error {
        Error::Closed(format!("{} {id} is closed", self.kind))
    }
}

/// Runs `f` on the table in `cell` (a thread-local of this module; wasm32 has one thread).
pub fn with<T, R>(
    cell: &'static std::thread::LocalKey<RefCell<Table<T>>>,
    f: impl FnOnce(&mut Table<T>) -> R,
) -> R {
    cell.with_borrow_mut(f)
}
