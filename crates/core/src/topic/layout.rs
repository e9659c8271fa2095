//! The keys and non-record values of a topic in its keyspace (FORMAT.md, "Topics"). Integers
//! in values are little-endian; offsets in keys are big-endian so keys sort by offset.

use std::time::Duration;

use crate::named::layout::{u64_record, NumberedKeys};
use crate::topic::options::{millis, TopicOptions};
use crate::{Error, Result};

const VERSION: u8 = 1;

/// The topic's counters.
pub(crate) const STATS_KEY: &[u8] = b"s";
/// Every committed-offset key starts with this.
pub(crate) const GROUP_PREFIX: &[u8] = b"c";

/// Record keys: `"r"` + offset (u64 BE).
pub(crate) const RECORDS: NumberedKeys = NumberedKeys(b'r');

/// Key of consumer group `group`'s committed offset: `"c"` + name.
pub(crate) fn group_key(group: &str) -> Vec<u8> {
    [GROUP_PREFIX, group.as_bytes()].concat()
}

/// The topic's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// The offset the next record gets.
    pub next: u64,
    /// The first offset the topic holds (retention moved it up from 0).
    pub first: u64,
    /// Bytes of the held records as stored.
    pub bytes: u64,
    /// Append time of the last record (appends never go back in time).
    pub last_time: u64,
}

impl Counters {
    pub(crate) fn encode(&self) -> [u8; 33] {
        u64_record(
            VERSION,
            &[self.next, self.first, self.bytes, self.last_time],
        )
    }

    pub(crate) fn decode(data: &[u8], topic: &str) -> Result<Counters> {
        let f = fields::<4>(data, topic, "counters", 0)?;
        Ok(Counters {
            next: f[0],
            first: f[1],
            bytes: f[2],
            last_time: f[3],
        })
    }
}

/// A committed offset record.
pub(crate) fn encode_offset(offset: u64) -> [u8; 9] {
    let mut out = [VERSION; 9];
    out[1..].copy_from_slice(&offset.to_le_bytes());
    out
}

/// See [`encode_offset`].
pub(crate) fn decode_offset(data: &[u8], topic: &str) -> Result<u64> {
    Ok(fields::<1>(data, topic, "committed offset", 0)?[0])
}

const HAS_AGE: u8 = 1;
const HAS_BYTES: u8 = 2;
const HAS_RECORDS: u8 = 4;
const PASSES_GROUPS: u8 = 8;

/// The catalog record of a topic: its options.
pub(crate) fn encode_options(o: &TopicOptions) -> [u8; 26] {
    let mut flags = 0;
    for (set, bit) in [
        (o.max_age.is_some(), HAS_AGE),
        (o.max_bytes.is_some(), HAS_BYTES),
        (o.max_records.is_some(), HAS_RECORDS),
        (o.retention_passes_groups, PASSES_GROUPS),
    ] {
        if set {
            flags |= bit;
        }
    }
    let mut out = [0; 26];
    out[0] = VERSION;
    out[1] = flags;
    let vals = [
        o.max_age.map_or(0, millis),
        o.max_bytes.unwrap_or(0),
        o.max_records.unwrap_or(0),
    ];
    for (i, v) in vals.into_iter().enumerate() {
        out[2 + i * 8..10 + i * 8].copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// See [`encode_options`].
pub(crate) fn decode_options(data: &[u8], topic: &str) -> Result<TopicOptions> {
    let flags = *data
        .get(1)
        .ok_or_else(|| damaged(topic, "options", "truncated"))?;
    let f = fields::<3>(data, topic, "options", 1)?;
    let has = |bit| flags & bit != 0;
    Ok(TopicOptions {
        max_age: has(HAS_AGE).then(|| Duration::from_millis(f[0])),
        max_bytes: has(HAS_BYTES).then_some(f[1]),
        max_records: has(HAS_RECORDS).then_some(f[2]),
        retention_passes_groups: has(PASSES_GROUPS),
    })
}

/// `N` u64 fields after the version byte and `skip` more bytes.
fn fields<const N: usize>(data: &[u8], topic: &str, what: &str, skip: usize) -> Result<[u64; N]> {
    match data.first() {
        Some(&VERSION) => {}
        _ => return Err(damaged(topic, what, "unknown version")),
    }
    let body = data
        .get(1 + skip..1 + skip + N * 8)
        .ok_or_else(|| damaged(topic, what, "truncated"))?;
    let mut out = [0; N];
    for (i, chunk) in body.chunks_exact(8).enumerate() {
        let mut a = [0; 8];
        a.copy_from_slice(chunk);
        out[i] = u64::from_le_bytes(a);
    }
    Ok(out)
}

fn damaged(topic: &str, what: &str, reason: &str) -> Error {
    Error::corruption(
        format!("topic {topic:?}"),
        0,
        format!("{what} record: {reason}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_records_round_trip_and_damaged_ones_are_corruption() {
        let c = Counters {
            next: 9,
            first: 2,
            bytes: 100,
            last_time: 5,
        };
        assert_eq!(Counters::decode(&c.encode(), "t").unwrap(), c);
        let o = TopicOptions {
            max_age: Some(Duration::from_secs(60)),
            max_records: Some(10),
            ..TopicOptions::default()
        };
        assert_eq!(decode_options(&encode_options(&o), "t").unwrap(), o);
        assert_eq!(decode_offset(&encode_offset(77), "t").unwrap(), 77);
        assert!(Counters::decode(&c.encode()[..20], "t").is_err());
        assert!(decode_offset(&[2; 9], "t").is_err());
        assert_eq!(RECORDS.number(&RECORDS.key(12)), Some(12));
    }
}
