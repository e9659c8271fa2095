//! The keys and records of a queue inside its keyspace (byte layouts in `docs/FORMAT.md`,
//! "Queues"). All integers in values are little-endian; ids in keys are big-endian so keys sort
//! by id. Decoding is total: damaged records give [`Error::Corruption`].

use std::time::Duration;

use crate::named::layout::{u64_record, NumberedKeys};
use crate::queue::options::{QueueOptions, WhenFull};
use crate::queue::unwritten::Unwritten;
use crate::{Error, Result};

/// Format version of every queue record but the counters.
const VERSION: u8 = 1;

/// Format version of the counters record written now: the layout of version 1, whose next
/// id may lag the items (pushes since it was written are counted at open: `counters.rs`).
/// Version 1 records (written on every operation) read the same way.
const COUNTERS_VERSION: u8 = 2;

/// The counters of the queue.
pub(crate) const STATS_KEY: &[u8] = b"s";
/// First key after every item key.
pub(crate) const ITEMS_END: &[u8] = b"j";

/// Item keys: `"i"` + id (u64 BE).
pub(crate) const ITEMS: NumberedKeys = NumberedKeys(b'i');

/// Key of consumer group `group`: `"g"` + name.
pub(crate) fn group_key(group: &str) -> Vec<u8> {
    [b"g", group.as_bytes()].concat()
}

/// Every group key starts with this.
pub(crate) const GROUP_PREFIX: &[u8] = b"g";

/// Key of a pending entry (reserved, released or delayed item) of `group`: `"p"` + u8 name
/// length + name + id (u64 BE).
pub(crate) fn pending_key(group: &str, id: u64) -> Vec<u8> {
    let mut k = pending_prefix(group);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Every pending key of `group` starts with this.
pub(crate) fn pending_prefix(group: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + group.len() + 8);
    k.push(b'p');
    k.push(u8::try_from(group.len()).unwrap_or(u8::MAX));
    k.extend_from_slice(group.as_bytes());
    k
}

/// Every pending key starts with this.
pub(crate) const PENDING_PREFIX: &[u8] = b"p";

/// `(group, id)` of a pending key.
pub(crate) fn parse_pending_key(key: &[u8]) -> Option<(String, u64)> {
    let [b'p', len, rest @ ..] = key else {
        return None;
    };
    let len = usize::from(*len);
    let name = rest.get(..len)?;
    let id = rest.get(len..)?;
    Some((
        String::from_utf8(name.to_vec()).ok()?,
        u64::from_be_bytes(id.try_into().ok()?),
    ))
}

/// The queue's counters (`STATS_KEY`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// The id the next push gets (ids start at 1).
    pub next_id: u64,
    /// Items stored.
    pub items: u64,
    /// Bytes of the stored items' values.
    pub bytes: u64,
    /// Items moved to the dead-letter queue, ever.
    pub dead_lettered: u64,
    /// Every item below this id is deleted (covered by a range tombstone).
    pub swept: u64,
    /// Pushes the stored record does not count yet (in memory only, see `counters.rs`).
    pub unwritten: Unwritten,
}

impl Counters {
    pub(crate) fn new() -> Counters {
        Counters {
            next_id: 1,
            swept: 1,
            ..Counters::default()
        }
    }

    pub(crate) fn encode(&self) -> [u8; 41] {
        let fields = [
            self.next_id,
            self.items,
            self.bytes,
            self.dead_lettered,
            self.swept,
        ];
        u64_record(COUNTERS_VERSION, &fields)
    }

    pub(crate) fn decode(data: &[u8], queue: &str) -> Result<Counters> {
        let mut r = Reader::with_versions(data, queue, "counters", &[VERSION, COUNTERS_VERSION])?;
        Ok(Counters {
            next_id: r.u64()?,
            items: r.u64()?,
            bytes: r.u64()?,
            dead_lettered: r.u64()?,
            swept: r.u64()?,
            unwritten: Unwritten::default(),
        })
    }
}

/// The header of an item record; the value follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ItemHeader {
    pub pushed_at: u64,
    /// Consumers see the item from this time on.
    pub visible_at: u64,
    /// The item expires at this time (`u64::MAX`: never).
    pub expires_at: u64,
}

/// Bytes of an encoded [`ItemHeader`].
pub(crate) const ITEM_HEADER_LEN: usize = 25;

impl ItemHeader {
    pub(crate) fn encode_with(&self, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(ITEM_HEADER_LEN + value.len());
        out.push(VERSION);
        out.extend_from_slice(&self.pushed_at.to_le_bytes());
        out.extend_from_slice(&self.visible_at.to_le_bytes());
        out.extend_from_slice(&self.expires_at.to_le_bytes());
        out.extend_from_slice(value);
        out
    }

    /// The header and the value of an item record.
    pub(crate) fn decode<'a>(data: &'a [u8], queue: &str) -> Result<(ItemHeader, &'a [u8])> {
        let mut r = Reader::new(data, queue, "item")?;
        let header = ItemHeader {
            pushed_at: r.u64()?,
            visible_at: r.u64()?,
            expires_at: r.u64()?,
        };
        Ok((header, r.rest()))
    }
}

/// Where a pending entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PendingState {
    /// Reserved by a consumer until this time.
    Leased(u64),
    /// Waiting to be delivered (again) from this time on: released, delayed, or its lease ran
    /// out.
    Ready(u64),
}

/// An item of a group that is reserved, or waits off the stream (released, delayed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pending {
    pub deliveries: u32,
    pub state: PendingState,
    /// Bytes of the item's value (for the counters when it goes).
    pub size: u32,
    /// The last delivery ended by its holder's release (so that delivery's reservation is
    /// finished, not expired); only with [`PendingState::Ready`].
    pub released: bool,
}

impl Pending {
    pub(crate) fn encode(&self) -> [u8; 18] {
        let mut out = [0; 18];
        out[0] = VERSION;
        out[1..5].copy_from_slice(&self.deliveries.to_le_bytes());
        let (tag, time) = match self.state {
            PendingState::Leased(t) => (0, t),
            PendingState::Ready(t) if self.released => (2, t),
            PendingState::Ready(t) => (1, t),
        };
        out[5] = tag;
        out[6..14].copy_from_slice(&time.to_le_bytes());
        out[14..18].copy_from_slice(&self.size.to_le_bytes());
        out
    }

    pub(crate) fn decode(data: &[u8], queue: &str) -> Result<Pending> {
        let mut r = Reader::new(data, queue, "pending entry")?;
        let deliveries = r.u32()?;
        let tag = r.u8()?;
        let time = r.u64()?;
        let state = match tag {
            0 => PendingState::Leased(time),
            1 | 2 => PendingState::Ready(time),
            t => return Err(r.damaged(format!("unknown state {t}"))),
        };
        Ok(Pending {
            deliveries,
            state,
            size: r.u32()?,
            released: tag == 2,
        })
    }
}

/// A group record: where the group reads the stream next.
pub(crate) fn encode_group(next: u64) -> [u8; 9] {
    let mut out = [0; 9];
    out[0] = VERSION;
    out[1..].copy_from_slice(&next.to_le_bytes());
    out
}

/// See [`encode_group`].
pub(crate) fn decode_group(data: &[u8], queue: &str) -> Result<u64> {
    Reader::new(data, queue, "group")?.u64()
}

const HAS_MAX_ITEMS: u8 = 1;
const HAS_MAX_BYTES: u8 = 2;
const HAS_MAX_DELIVERIES: u8 = 4;
const HAS_DEAD_LETTER: u8 = 8;
const HAS_TTL: u8 = 16;
const DISCARD_OLDEST: u8 = 32;

/// The catalog record of a queue: its options.
pub(crate) fn encode_options(o: &QueueOptions) -> Vec<u8> {
    let mut flags = 0;
    for (set, bit) in [
        (o.max_items.is_some(), HAS_MAX_ITEMS),
        (o.max_bytes.is_some(), HAS_MAX_BYTES),
        (o.max_deliveries.is_some(), HAS_MAX_DELIVERIES),
        (o.dead_letter.is_some(), HAS_DEAD_LETTER),
        (o.default_ttl.is_some(), HAS_TTL),
        (o.when_full == WhenFull::DiscardOldest, DISCARD_OLDEST),
    ] {
        if set {
            flags |= bit;
        }
    }
    let mut out = vec![VERSION, flags];
    out.extend_from_slice(&o.max_items.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&o.max_bytes.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&o.max_deliveries.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&super::options::millis(o.default_lease).to_le_bytes());
    let ttl = o.default_ttl.map_or(0, super::options::millis);
    out.extend_from_slice(&ttl.to_le_bytes());
    out.extend_from_slice(o.dead_letter.as_deref().unwrap_or("").as_bytes());
    out
}

/// See [`encode_options`].
pub(crate) fn decode_options(data: &[u8], queue: &str) -> Result<QueueOptions> {
    let mut r = Reader::new(data, queue, "options")?;
    let flags = r.u8()?;
    let max_items = r.u64()?;
    let max_bytes = r.u64()?;
    let max_deliveries = r.u32()?;
    let lease = r.u64()?;
    let ttl = r.u64()?;
    let dead_letter = String::from_utf8(r.rest().to_vec())
        .map_err(|_| r.damaged("dead-letter name is not UTF-8"))?;
    let has = |bit| flags & bit != 0;
    Ok(QueueOptions {
        max_items: has(HAS_MAX_ITEMS).then_some(max_items),
        max_bytes: has(HAS_MAX_BYTES).then_some(max_bytes),
        when_full: if has(DISCARD_OLDEST) {
            WhenFull::DiscardOldest
        } else {
            WhenFull::Reject
        },
        max_deliveries: has(HAS_MAX_DELIVERIES).then_some(max_deliveries),
        dead_letter: has(HAS_DEAD_LETTER).then_some(dead_letter),
        default_lease: Duration::from_millis(lease),
        default_ttl: has(HAS_TTL).then(|| Duration::from_millis(ttl)),
    })
}

/// Reads a record's fields after checking its version.
struct Reader<'a, 'q> {
    data: &'a [u8],
    queue: &'q str,
    what: &'static str,
}

impl<'a, 'q> Reader<'a, 'q> {
    fn new(data: &'a [u8], queue: &'q str, what: &'static str) -> Result<Reader<'a, 'q>> {
        Reader::with_versions(data, queue, what, &[VERSION])
    }

    /// A reader of a record in one of `versions`.
    fn with_versions(
        data: &'a [u8],
        queue: &'q str,
        what: &'static str,
        versions: &[u8],
    ) -> Result<Reader<'a, 'q>> {
        let mut r = Reader { data, queue, what };
        match r.u8()? {
            v if versions.contains(&v) => Ok(r),
            v => Err(r.damaged(format!("unknown version {v}"))),
        }
    }

    fn damaged(&self, reason: impl std::fmt::Display) -> Error {
        Error::corruption(
            format!("queue {:?}", self.queue),
            0,
            format!("{} record: {reason}", self.what),
        )
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (head, rest) = self
            .data
            .split_first_chunk::<N>()
            .ok_or_else(|| self.damaged("truncated"))?;
        self.data = rest;
        Ok(*head)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    fn rest(&self) -> &'a [u8] {
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damaged_ones_are_corruption() {
        let c = Counters {
            next_id: 7,
            items: 3,
            bytes: 99,
            dead_lettered: 1,
            swept: 2,
            unwritten: Unwritten::default(),
        };
        assert_eq!(Counters::decode(&c.encode(), "q").unwrap(), c);
        let p = Pending {
            deliveries: 2,
            state: PendingState::Leased(123),
            size: 5,
            released: false,
        };
        assert_eq!(Pending::decode(&p.encode(), "q").unwrap(), p);
        let released = Pending {
            state: PendingState::Ready(456),
            released: true,
            ..p
        };
        assert_eq!(released.encode()[5], 2);
        assert_eq!(Pending::decode(&released.encode(), "q").unwrap(), released);
        let h = ItemHeader {
            pushed_at: 1,
            visible_at: 2,
            expires_at: u64::MAX,
        };
        let rec = h.encode_with(b"hello");
        assert_eq!(ItemHeader::decode(&rec, "q").unwrap(), (h, &b"hello"[..]));
        let o = QueueOptions {
            max_items: Some(5),
            max_deliveries: Some(3),
            dead_letter: Some("dl".into()),
            default_ttl: Some(Duration::from_secs(9)),
            when_full: WhenFull::DiscardOldest,
            ..QueueOptions::default()
        };
        assert_eq!(decode_options(&encode_options(&o), "q").unwrap(), o);
        let mut v1 = c.encode();
        v1[0] = 1;
        assert_eq!(Counters::decode(&v1, "q").unwrap(), c);
        for bad in [&[][..], &[3; 41][..], &c.encode()[..40]] {
            assert!(Counters::decode(bad, "q").is_err());
        }
        for bad in [&[][..], &[2; 18][..], &p.encode()[..17]] {
            assert!(Pending::decode(bad, "q").is_err());
        }
        let mut unknown_state = p.encode();
        unknown_state[5] = 9;
        assert!(Pending::decode(&unknown_state, "q").is_err());
        assert!(ItemHeader::decode(&rec[..10], "q").is_err());
        assert!(decode_options(&[1, 0, 0], "q").is_err());
        assert_eq!(
            parse_pending_key(&pending_key("grp", 42)),
            Some(("grp".into(), 42))
        );
        assert_eq!(ITEMS.number(&ITEMS.key(9)), Some(9));
        assert_eq!(parse_pending_key(b"p\x09ab"), None);
    }
}
