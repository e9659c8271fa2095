//! What a layer tells the shared skeleton about its objects: the in-memory state of one object
//! ([`NamedState`]) and its part in an operation ([`Part`]).

use crate::db::Keyspace;
use crate::write::batch::WriteBatch;
use crate::Result;

/// The in-memory state of one named object (a queue, a topic), behind its lock.
pub(crate) trait NamedState: Send + 'static {
    /// What an object is (`"queue"`, `"topic"`), for errors.
    const KIND: &'static str;

    /// The object's part in one operation.
    type Part<'a>: Part;

    /// Begins an operation at time `now` on object `name` (of keyspace `ks`), this state
    /// being locked.
    fn begin<'a>(&'a mut self, name: &'a str, ks: &'a Keyspace, now: u64) -> Self::Part<'a>;

    /// The object was deleted (its state is locked, marked deleted, and its waiters on the
    /// registry are about to be woken): wake any waiters of its own.
    fn deleted(&mut self) {}
}

/// An object's part in an operation ([`crate::named::locked::run`]): made once its state is
/// locked, it keeps what undoing the operation's changes to the state takes.
pub(crate) trait Part {
    /// The object's name.
    fn name(&self) -> &str;

    /// Adds the writes the operation made to this object to the operation's batch (before the
    /// commit; writes an operation put into the batch itself are there already).
    fn write_into(&mut self, batch: &mut WriteBatch) -> Result<()>;

    /// Puts the state back as it was when the part began (the commit failed).
    fn undo(&mut self);

    /// The commit succeeded: whether waiters on the object must be woken (the part may note
    /// it in the state first; the lock is still held).
    fn committed(&mut self) -> bool;
}
