//! [`Change`]: one committed batch of the change feed, and its portable encoding (FORMAT.md,
//! "Changes"), which a follower's [`crate::Db::apply_change`] takes.
//!
//! # Portable encoding (version 1)
//!
//! | field | size | meaning |
//! |-------|------|---------|
//! | magic | 4 | `SHLC` |
//! | version | u8 | 1 |
//! | keyspaces | uvarint n, then n × (uvarint id, uvarint len, name) | the leader's ids of the keyspaces the batch writes, with their names |
//! | batch | the rest but 4 bytes | the batch as in the WAL (`crate::write::batch`): first sequence number, count, operations; keys carry the leader's keyspace prefixes |
//! | crc | u32 LE | CRC-32C of every byte before it |
//!
//! Decoding is total: anything malformed is [`Error::Corruption`] (file `"change"`).

use crate::sorting::sort;
use crate::varint::{get_uvarint, put_uvarint_vec};
use crate::write::batch::{BatchOp, WriteBatch};
use crate::{Error, Result};

const MAGIC: &[u8; 4] = b"SHLC";
const VERSION: u8 = 1;

/// One committed batch, as the change feed yields it ([`crate::Db::changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub(crate) seq: u64,
    /// The batch, keys with the writer's keyspace prefixes.
    pub(crate) batch: WriteBatch,
    /// The writer's ids and names of the keyspaces the batch writes, sorted by id.
    pub(crate) keyspaces: Vec<(u32, String)>,
}

/// One write of a [`Change`], in a keyspace named by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOp<'a> {
    /// `key` was set to `value`.
    Put {
        /// The keyspace's name (ShaleDB's own start with a NUL character).
        keyspace: &'a str,
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// `key` was deleted.
    Delete {
        /// The keyspace's name.
        keyspace: &'a str,
        /// The key.
        key: &'a [u8],
    },
    /// Every key in `start..end` was deleted.
    DeleteRange {
        /// The keyspace's name.
        keyspace: &'a str,
        /// First key deleted.
        start: &'a [u8],
        /// First key after the range; empty for a range to the keyspace's end.
        end: &'a [u8],
    },
}

impl Change {
    /// The sequence number of the batch's first operation. Batches are dense: the next one
    /// starts at [`Change::last_seq`] + 1.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The sequence number of the batch's last operation (its annotation included).
    pub fn last_seq(&self) -> u64 {
        self.seq + (self.batch.len() as u64).saturating_sub(1)
    }

    /// When the batch was committed (milliseconds since the Unix epoch), if the writer's
    /// database stamps its batches ([`crate::Options::change_retention`]).
    pub fn time(&self) -> Option<u64> {
        self.annotation().and_then(|(time, _)| time)
    }

    /// The meta its writer attached ([`crate::Batch::set_meta`]).
    pub fn meta(&self) -> Option<&[u8]> {
        self.annotation().and_then(|(_, meta)| meta)
    }

    /// The writes, in order.
    pub fn ops(&self) -> impl Iterator<Item = ChangeOp<'_>> + '_ {
        self.batch.iter().filter_map(|op| match op {
            BatchOp::Put { key, value } => {
                let (keyspace, key) = self.split(key)?;
                Some(ChangeOp::Put {
                    keyspace,
                    key,
                    value,
                })
            }
            BatchOp::Delete { key } => {
                let (keyspace, key) = self.split(key)?;
                Some(ChangeOp::Delete { keyspace, key })
            }
            BatchOp::DeleteRange { start, end } => {
                let (keyspace, start) = self.split(start)?;
                let (_, end) = self.split_in(keyspace, end);
                Some(ChangeOp::DeleteRange {
                    keyspace,
                    start,
                    end,
                })
            }
            BatchOp::Annotation { .. } => None,
        })
    }

    /// The portable encoding (module doc).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.batch.approximate_size() + 64);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        put_uvarint_vec(&mut out, self.keyspaces.len() as u64);
        for (id, name) in &self.keyspaces {
            put_uvarint_vec(&mut out, u64::from(*id));
            put_uvarint_vec(&mut out, name.len() as u64);
            out.extend_from_slice(name.as_bytes());
        }
        let start = out.len();
        out.extend_from_slice(self.batch.as_bytes());
        if let Some(header) = out.get_mut(start..start + 8) {
            header.copy_from_slice(&self.seq.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes [`Change::to_bytes`]'s output. Errors: [`Error::Corruption`] for anything but a
    /// whole, intact encoding whose keys all belong to keyspaces it names.
    pub fn from_bytes(bytes: &[u8]) -> Result<Change> {
        let bad = |why: &str| Error::corruption("change", 0, why.to_owned());
        let (body, crc) = bytes
            .split_last_chunk::<4>()
            .ok_or_else(|| bad("shorter than a change"))?;
        if body.get(..4) != Some(&MAGIC[..]) {
            return Err(bad("not a change (no SHLC magic)"));
        }
        if crc32c::crc32c(body) != u32::from_le_bytes(*crc) {
            return Err(bad("checksum mismatch"));
        }
        if body.get(4) != Some(&VERSION) {
            return Err(Error::VersionUnsupported {
                file: "change".into(),
                version: u32::from(body.get(4).copied().unwrap_or(0)),
            });
        }
        let mut pos = 5;
        let n = get_uvarint(body, &mut pos).map_err(|_| bad("bad keyspace count"))?;
        let mut keyspaces: Vec<(u32, String)> = Vec::new();
        for _ in 0..n {
            let id = get_uvarint(body, &mut pos)
                .ok()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(|| bad("bad keyspace id"))?;
            let len = get_uvarint(body, &mut pos).map_err(|_| bad("bad name length"))?;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= body.len() && len <= 255)
                .ok_or_else(|| bad("a keyspace name past the end"))?;
            let name = std::str::from_utf8(body.get(pos..end).unwrap_or_default())
                .map_err(|_| bad("a keyspace name is not UTF-8"))?;
            if name.is_empty() || keyspaces.iter().any(|(i, _)| *i >= id) {
                return Err(bad("keyspaces must be named and sorted by id"));
            }
            keyspaces.push((id, name.to_owned()));
            pos = end;
        }
        let (seq, batch) = WriteBatch::decode(body.get(pos..).unwrap_or_default(), "change", 0)?;
        let change = Change {
            seq,
            batch,
            keyspaces,
        };
        for op in change.batch.iter() {
            // A range's end may be the next keyspace's prefix (a range to the keyspace's end).
            let key = match op {
                BatchOp::Put { key, .. } | BatchOp::Delete { key } => Some(key),
                BatchOp::DeleteRange { start, .. } => Some(start),
                BatchOp::Annotation { .. } => None,
            };
            if key.is_some_and(|k| change.split(k).is_none()) {
                return Err(bad("a key of a keyspace the change does not name"));
            }
        }
        if change.batch.is_empty() {
            return Err(bad("a change without operations"));
        }
        Ok(change)
    }

    /// The annotation's time and meta, if the batch has one.
    fn annotation(&self) -> Option<(Option<u64>, Option<&[u8]>)> {
        match self.batch.iter().last()? {
            BatchOp::Annotation { time, meta } => Some((time, meta)),
            _ => None,
        }
    }

    /// The keyspace name and user key of a stored key.
    pub(crate) fn split<'a>(&'a self, stored: &'a [u8]) -> Option<(&'a str, &'a [u8])> {
        let mut pos = 0;
        let id = u32::try_from(get_uvarint(stored, &mut pos).ok()?).ok()?;
        let at = self.keyspaces.binary_search_by_key(&id, |(i, _)| *i).ok()?;
        let name = self.keyspaces.get(at)?.1.as_str();
        Some((name, stored.get(pos..)?))
    }

    /// The user key of `stored` in `keyspace` (a range's end: in the same keyspace, or empty
    /// for an end past it: a range to the keyspace's end).
    pub(crate) fn split_in<'a>(
        &'a self,
        keyspace: &'a str,
        stored: &'a [u8],
    ) -> (&'a str, &'a [u8]) {
        match self.split(stored) {
            Some((name, key)) if name == keyspace => (name, key),
            _ => (keyspace, &[]),
        }
    }

    /// The ids of keyspaces that `batch`'s keys use with their names from `names`: the table
    /// a change carries. `None` if `names` lacks one of them.
    pub(crate) fn keyspaces_of(
        batch: &WriteBatch,
        names: &std::collections::BTreeMap<u32, String>,
    ) -> Option<Vec<(u32, String)>> {
        let mut ids: Vec<u32> = Vec::new();
        let mut note = |stored: &[u8]| {
            let mut pos = 0;
            if let Some(id) = get_uvarint(stored, &mut pos)
                .ok()
                .and_then(|id| u32::try_from(id).ok())
            {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        };
        for op in batch.iter() {
            match op {
                BatchOp::Put { key, .. } | BatchOp::Delete { key } => note(key),
                BatchOp::DeleteRange { start, .. } => note(start),
                BatchOp::Annotation { .. } => {}
            }
        }
        sort(&mut ids);
        ids.into_iter()
            .map(|id| names.get(&id).map(|n| (id, n.clone())))
            .collect()
    }
}
