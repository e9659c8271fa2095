//! Pushing items: ids, limits, discarding the oldest items.

use std::ops::Bound;

use crate::db::IterOptions;
use crate::queue::layout::{self, ItemHeader};
use crate::queue::options::{millis, PushOptions, WhenFull};
use crate::queue::tx::Tx;
use crate::{Error, Result};

impl Tx<'_> {
    /// Pushes `value`: checks the limits (rejecting, or discarding the oldest items), gives it
    /// the next id and writes it. Returns the id.
    pub(crate) fn push(&mut self, value: &[u8], options: &PushOptions) -> Result<u64> {
        let size = value.len() as u64;
        self.make_room(size)?;
        let ttl = options.ttl.or(self.state.options.default_ttl);
        let header = ItemHeader {
            pushed_at: self.now,
            visible_at: self.now.saturating_add(options.delay.map_or(0, millis)),
            expires_at: ttl.map_or(u64::MAX, |t| self.now.saturating_add(millis(t))),
        };
        let counters = self.counters_for_push();
        let id = counters.next_id;
        counters.next_id += 1;
        counters.items += 1;
        counters.bytes += size;
        counters.unwritten.pushes += 1;
        counters.unwritten.bytes += size;
        self.put(&layout::ITEMS.key(id), &header.encode_with(value))?;
        self.fresh.push_back((id, size));
        self.wakes = true;
        Ok(id)
    }

    /// Makes room for one more item of `size` bytes under the queue's limits.
    fn make_room(&mut self, size: u64) -> Result<()> {
        let o = &self.state.options;
        let (max_items, max_bytes, policy) = (o.max_items, o.max_bytes, o.when_full);
        let fits = |c: &layout::Counters| {
            max_items.is_none_or(|m| c.items < m)
                && max_bytes.is_none_or(|m| c.bytes.saturating_add(size) <= m)
        };
        if fits(&self.state.counters) {
            return Ok(());
        }
        let full = || Error::QueueFull {
            queue: self.name.to_owned(),
        };
        if policy == WhenFull::Reject || max_bytes.is_some_and(|m| size > m) || max_items == Some(0)
        {
            return Err(full());
        }
        while !fits(&self.state.counters) {
            if !self.discard_oldest()? {
                return Err(full());
            }
        }
        Ok(())
    }

    /// Drops the oldest item for every group: the oldest in the database, else the oldest this
    /// operation pushed. Returns false if there is none.
    fn discard_oldest(&mut self) -> Result<bool> {
        let from = self.state.floor().max(self.state.counters.swept);
        let upper = self
            .fresh
            .front()
            .map_or(layout::ITEMS_END.to_vec(), |&(id, _)| {
                layout::ITEMS.key(id).to_vec()
            });
        let first = self
            .ks
            .iter(IterOptions {
                lower: Bound::Included(layout::ITEMS.key(from).to_vec()),
                upper: Bound::Excluded(upper),
                ..IterOptions::default()
            })?
            .next()
            .transpose()?;
        let (id, size) = match first {
            Some((key, value)) => {
                let id = layout::ITEMS
                    .number(&key)
                    .ok_or_else(|| self.damaged("malformed item key"))?;
                let (_, v) = ItemHeader::decode(&value, self.name)?;
                (id, v.len() as u64)
            }
            None => match self.fresh.pop_front() {
                Some(fresh) => fresh,
                None => return Ok(false),
            },
        };
        // Every item older than `id` is gone (it was the oldest stored): groups that had not
        // read up to it skip it, and nothing below it stays pending.
        let groups: Vec<String> = self.state.groups.keys().cloned().collect();
        for g in &groups {
            self.set_pending(g, id, None)?;
            if self.state.groups.get(g).is_some_and(|gr| gr.next <= id) {
                self.set_next(g, id + 1)?;
            }
        }
        self.delete(&layout::ITEMS.key(id))?;
        let c = self.counters();
        c.items = c.items.saturating_sub(1);
        c.bytes = c.bytes.saturating_sub(size);
        Ok(true)
    }

    pub(crate) fn damaged(&self, reason: &str) -> Error {
        Error::corruption(format!("queue {:?}", self.name), 0, reason)
    }
}
