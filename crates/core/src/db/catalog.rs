//! The catalog of a layer built on the engine (queues, topics): named objects, each with its
//! options in the reserved keyspace `"\0<kind>s"` and its data in the reserved keyspace
//! `"\0<kind>:<name>"` (FORMAT.md, "Queues" and "Topics").

use std::sync::MutexGuard;

use crate::db::{Db, IterOptions, Keyspace};
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

pub(crate) use crate::db::names::validate_name;
pub use crate::db::names::MAX_NAME_LEN;

/// The catalog of objects of one kind (`"queue"`, `"topic"`) in a database.
pub(crate) struct Catalog<'a> {
    pub db: &'a Db,
    pub kind: &'static str,
}

impl Catalog<'_> {
    /// The keyspace of names and options.
    pub(crate) fn entries(&self) -> Result<Keyspace> {
        self.db.reserved_keyspace(&format!("\0{}s", self.kind))
    }

    /// The keyspace of object `name`.
    pub(crate) fn keyspace(&self, name: &str) -> Result<Keyspace> {
        self.db
            .reserved_keyspace(&format!("\0{}:{name}", self.kind))
    }

    /// The names, sorted.
    pub(crate) fn names(&self) -> Result<Vec<String>> {
        self.entries()?
            .iter(IterOptions::default())?
            .map(|e| {
                let (k, _) = e?;
                String::from_utf8(k).map_err(|_| {
                    Error::corruption(format!("{} catalog", self.kind), 0, "a name is not UTF-8")
                })
            })
            .collect()
    }

    /// Deletes object `name`: its catalog entry and everything in its keyspace (one range
    /// tombstone), in one write. Returns false if there is no such object.
    pub(crate) fn delete(&self, name: &str) -> Result<bool> {
        let entries = self.entries()?;
        if entries.get(name.as_bytes())?.is_none() {
            return Ok(false);
        }
        let ks = self.keyspace(name)?;
        let mut batch = WriteBatch::new();
        batch.delete_prefixed(&entries.prefix, name.as_bytes())?;
        batch.delete_range(
            &[&ks.prefix[..], b"\x00"].concat(),
            &[&ks.prefix[..], b"\xff"].concat(),
        )?;
        self.db.write_encoded(batch, false)?;
        Ok(true)
    }
}

/// Locks the state of each distinct object of `objects` (by name, first occurrence kept) in
/// name order, so that two operations on several objects never lock them in opposite orders.
/// Returns the distinct objects, in the order given, and their guards, aligned.
pub(crate) fn lock_by_name<'a, H, T>(
    objects: &[&'a H],
    name: impl Fn(&H) -> &str,
    lock: impl Fn(&'a H) -> MutexGuard<'a, T>,
) -> (Vec<&'a H>, Vec<MutexGuard<'a, T>>) {
    let mut unique: Vec<&'a H> = Vec::with_capacity(objects.len());
    for &o in objects {
        if !unique.iter().any(|u| name(u) == name(o)) {
            unique.push(o);
        }
    }
    let mut order: Vec<usize> = (0..unique.len()).collect();
    order.sort_by(|&a, &b| name(unique[a]).cmp(name(unique[b])));
    let mut slots: Vec<Option<MutexGuard<'a, T>>> = unique.iter().map(|_| None).collect();
    for i in order {
        slots[i] = Some(lock(unique[i]));
    }
    (unique, slots.into_iter().flatten().collect())
}
