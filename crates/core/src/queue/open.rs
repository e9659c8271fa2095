//! Loading a queue when it is first used in a process: its options from the catalog, its
//! state from its keyspace (or a new queue, created durably), registered once per database.

use crate::db::names::validate_name;
use crate::db::{Db, Keyspace};
use crate::named::catalog::Catalog;
use crate::named::handle::Handle;
use crate::named::registry::Registry;
use crate::named::state::NamedState;
use crate::queue::layout;
use crate::queue::options::QueueOptions;
use crate::queue::state::State;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// Opens queue `name` of `db`: with `Some(options)` creating it or replacing its options; with
/// `None` creating it with default options or keeping the stored ones.
pub(crate) fn open(db: &Db, name: &str, options: Option<QueueOptions>) -> Result<Handle<State>> {
    catalog(db).validate(name)?;
    let registry = Registry::<State>::of(db);
    let mut queues = registry.lock();
    let ks = catalog(db).keyspace(name)?;
    let catalog = catalog(db).entries()?;
    let shared = match queues.get(name) {
        Some(shared) => {
            if let Some(options) = options {
                let mut state = shared.lock();
                if state.options != options {
                    catalog.put(name.as_bytes(), &layout::encode_options(&options))?;
                    state.options = options;
                }
            }
            shared
        }
        None => {
            let stored = catalog
                .get(name.as_bytes())?
                .map(|v| layout::decode_options(&v, name))
                .transpose()?;
            let state = match stored {
                Some(stored) => {
                    let options = options.unwrap_or(stored.clone());
                    if options != stored {
                        catalog.put(name.as_bytes(), &layout::encode_options(&options))?;
                    }
                    let (state, returned) = State::load(&ks, name, options, registry.now())?;
                    // The reservations that came back are written as such, so that the
                    // state on disk is the state in memory.
                    let mut batch = WriteBatch::new();
                    for (group, id, entry) in returned {
                        batch.put_prefixed(
                            &ks.prefix,
                            &layout::pending_key(&group, id),
                            &entry.encode(),
                        )?;
                    }
                    db.write_encoded(batch, false)?;
                    state
                }
                None => create(db, &catalog, &ks, name, options.unwrap_or_default())?,
            };
            queues.insert(db, name, state)
        }
    };
    drop(queues);
    Ok(Handle {
        db: db.clone(),
        ks,
        shared,
        registry,
    })
}

/// Creates queue `name`: its catalog entry, counters and default group, in one write.
fn create(
    db: &Db,
    catalog: &Keyspace,
    ks: &Keyspace,
    name: &str,
    options: QueueOptions,
) -> Result<State> {
    let state = State::new(options);
    let mut batch = WriteBatch::new();
    batch.put_prefixed(
        &catalog.prefix,
        name.as_bytes(),
        &layout::encode_options(&state.options),
    )?;
    batch.put_prefixed(&ks.prefix, layout::STATS_KEY, &state.counters.encode())?;
    batch.put_prefixed(
        &ks.prefix,
        &layout::group_key(""),
        &layout::encode_group(state.counters.next_id),
    )?;
    db.write_encoded(batch, false)?;
    Ok(state)
}

/// The catalog of queues.
pub(crate) fn catalog(db: &Db) -> Catalog<'_> {
    Catalog::of(db, State::KIND)
}

/// The dead-letter queue of queue `name`.
pub(crate) fn dead_letter_name(name: &str, options: &QueueOptions) -> String {
    options
        .dead_letter
        .clone()
        .unwrap_or_else(|| format!("{name}.dead"))
}

/// `InvalidArgument` unless `o` are valid options of queue `name`.
pub(crate) fn validate_options(name: &str, o: &QueueOptions) -> Result<()> {
    if o.max_deliveries == Some(0) {
        return Err(Error::InvalidArgument(
            "max_deliveries must be at least 1".into(),
        ));
    }
    if o.default_lease.is_zero() {
        return Err(Error::InvalidArgument(
            "default_lease must be at least 1 ms".into(),
        ));
    }
    if o.max_deliveries.is_some() {
        let dead = dead_letter_name(name, o);
        validate_name("queue", &dead, false)?;
        if dead == name {
            return Err(Error::InvalidArgument(
                "a queue cannot be its own dead-letter queue".into(),
            ));
        }
    }
    Ok(())
}
