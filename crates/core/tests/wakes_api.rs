//! The log of woken queues and topics (`Db::record_wakes`, `Db::take_wakes`): what the
//! WebAssembly bindings' waiters are woken by — the same notification as the core's own
//! condition-variable waits — so JavaScript never has to guess which writes wake whom.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use shaledb::queue::{PushOptions, QueueOptions, ReserveOptions};
use shaledb::topic::{AppendOptions, NewRecord, TopicOptions};
use shaledb::{Batch, Db, Options, WriteOptions};

fn sorted(mut wakes: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    wakes.sort();
    wakes
}

#[test]
fn pushes_releases_dead_letter_moves_appends_and_deletions_log_their_object_once() {
    let db = Db::open_in_memory(Options::default()).unwrap();
    let opts = QueueOptions {
        max_deliveries: Some(1),
        ..QueueOptions::default()
    };
    let q = db.queue("jobs", opts).unwrap();
    let t = db.topic("events", TopicOptions::default()).unwrap();
    // Off by default: nothing is logged.
    q.push(b"a", PushOptions::default()).unwrap();
    assert!(db.take_wakes().is_empty());

    db.record_wakes(true);
    q.push(b"b", PushOptions::default()).unwrap();
    q.push(b"c", PushOptions::default()).unwrap();
    t.append(NewRecord::value(b"e".to_vec()), &AppendOptions::default())
        .unwrap();
    assert_eq!(
        sorted(db.take_wakes()),
        vec![("queue", "jobs".into()), ("topic", "events".into())],
        "once each until taken"
    );
    assert!(db.take_wakes().is_empty());

    // A release wakes its queue; a delivery past max_deliveries wakes the dead-letter queue.
    let item = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    q.release(item.lease(), None).unwrap();
    assert_eq!(db.take_wakes(), vec![("queue", "jobs".into())]);
    let again = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_ne!(
        again.id, item.id,
        "the released one went to the dead-letter queue"
    );
    assert_eq!(db.take_wakes(), vec![("queue", "jobs.dead".into())]);

    // Through a batch, and a deletion (its waiters must learn it is gone).
    let mut batch = Batch::new();
    batch.push(&q, b"d", PushOptions::default()).unwrap();
    db.write(&batch, WriteOptions::default()).unwrap();
    assert_eq!(db.take_wakes(), vec![("queue", "jobs".into())]);
    assert!(db.delete_topic("events").unwrap());
    assert_eq!(db.take_wakes(), vec![("topic", "events".into())]);

    db.record_wakes(false);
    q.push(b"e", PushOptions::default()).unwrap();
    assert!(db.take_wakes().is_empty());
}
