//! When a queue's counters record (`s`) is written, and how open completes it (FORMAT.md,
//! "Queues"). Every write that deletes an item or changes *dead-lettered* or *swept* writes it;
//! a push alone does not, until [`PUSHES_PER_WRITE`] items or [`BYTES_PER_WRITE`] bytes have
//! been pushed since it was last written. So the items pushed since then are exactly the stored
//! items from its next id on (none of them was deleted: a deletion would have written it), and
//! open counts them: a scan of at most that many items. When a push must write them:
//! [`super::unwritten`].

use std::ops::Bound;

use crate::db::{IterOptions, Keyspace};
use crate::queue::layout::{self, Counters, ItemHeader};
use crate::{Error, Result};

/// The counters as they stand, from the stored ones: the items from the stored next id on
/// were pushed after they were written, and are added in.
pub(crate) fn complete(ks: &Keyspace, queue: &str, stored: Counters) -> Result<Counters> {
    let mut c = stored;
    let items = ks.iter(IterOptions {
        lower: Bound::Included(layout::ITEMS.key(stored.next_id).to_vec()),
        upper: Bound::Excluded(layout::ITEMS_END.to_vec()),
        ..IterOptions::default()
    })?;
    for entry in items {
        let (key, record) = entry?;
        let id = layout::ITEMS.number(&key).ok_or_else(|| {
            Error::corruption(format!("queue {queue:?}"), 0, "malformed item key")
        })?;
        let (_, value) = ItemHeader::decode(&record, queue)?;
        c.next_id = id.saturating_add(1);
        c.items += 1;
        c.bytes += value.len() as u64;
        c.unwritten.pushes += 1;
        c.unwritten.bytes += value.len() as u64;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::queue::open::catalog;
    use crate::queue::{PushOptions, QueueOptions};
    use crate::storage::memory::MemoryStorage;
    use crate::storage::Storage;
    use crate::{Db, Options};

    fn open(storage: &Arc<MemoryStorage>) -> Db {
        let o = Options {
            background_thread: false,
            ..Options::default()
        };
        Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap()
    }

    #[test]
    fn counters_of_the_first_layout_written_on_every_operation_open_as_they_are() {
        let storage = Arc::new(MemoryStorage::new());
        let db = open(&storage);
        let q = db.queue("jobs", QueueOptions::default()).unwrap();
        for v in [&b"ab"[..], b"cde", b"f"] {
            q.push(v, PushOptions::default()).unwrap();
        }
        // What the first layout stored after these pushes: version 1, next id 4, 3 items, 6
        // bytes, 0 dead-lettered, swept 1.
        let mut v1 = vec![1u8];
        for n in [4u64, 3, 6, 0, 1] {
            v1.extend_from_slice(&n.to_le_bytes());
        }
        catalog(&db)
            .keyspace("jobs")
            .unwrap()
            .put(b"s", &v1)
            .unwrap();
        drop((q, db));
        let db = open(&storage);
        let q = db.open_queue("jobs").unwrap();
        let stats = q.stats().unwrap();
        assert_eq!((stats.items, stats.bytes), (3, 6));
        assert_eq!(q.push(b"g", PushOptions::default()).unwrap(), 4);
        assert_eq!(q.take(None).unwrap().unwrap().value, b"ab");
    }
}
