//! The catalog of a layer built on the engine (queues, topics): named objects, each with its
//! options in the reserved keyspace `"\0<kind>s"` and its data in the reserved keyspace
//! `"\0<kind>:<name>"` (FORMAT.md, "Queues" and "Topics").

use crate::db::names::validate_name;
use crate::db::{Db, IterOptions, Keyspace};
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// The catalog of objects of one kind (`"queue"`, `"topic"`) in a database.
pub(crate) struct Catalog<'a> {
    db: &'a Db,
    kind: &'static str,
}

impl<'a> Catalog<'a> {
    /// The catalog of the objects of `kind` in `db`.
    pub(crate) fn of(db: &'a Db, kind: &'static str) -> Catalog<'a> {
        Catalog { db, kind }
    }

    /// `InvalidArgument` unless `name` is a valid name of an object of this kind: 1 to
    /// [`crate::db::names::MAX_NAME_LEN`] bytes, no NUL.
    pub(crate) fn validate(&self, name: &str) -> Result<()> {
        validate_name(self.kind, name, false)
    }

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

/// `InvalidArgument` unless `name` is a valid name of a consumer group: 0 to
/// [`crate::db::names::MAX_NAME_LEN`] bytes (`""` is the default group), no NUL.
pub(crate) fn validate_group(name: &str) -> Result<()> {
    validate_name("group", name, true)
}
