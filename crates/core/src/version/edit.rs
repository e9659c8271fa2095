//! A version edit: one change to the set of live tables and the counters, one manifest record.
//!
//! # Encoding (manifest format version 1)
//!
//! A sequence of tagged fields, each `uvarint tag` followed by its payload; a field may repeat
//! where it is a list. `bytes` is `uvarint length` + that many bytes; every integer is a uvarint.
//!
//! ```text
//! tag  field              payload
//!   1  format version     u32 (uvarint). First field of the first edit of every manifest.
//!   2  log number         WALs with a smaller number are obsolete
//!   3  next file number
//!   4  last sequence
//!   5  keyspace created   id (u32), name (bytes, UTF-8)
//!   6  keyspace dropped   id (u32)
//!   7  file added         level, number, size, smallest key (bytes), smallest seq,
//!                         largest key (bytes), largest seq, min seq, max seq, entries,
//!                         flags (bit 0: has range tombstones; other bits must be 0)
//!   8  file deleted       level, number
//!   9  change cursor      name (bytes, UTF-8), sequence number (format 3)
//!  10  cursor removed     name (bytes, UTF-8) (format 3)
//!  11  keyspace metadata  id (u32), metadata (bytes, 0 to 65,536; empty: removed) (format 3)
//! ```
//!
//! Levels are below [`crate::version::NUM_LEVELS`]. An unknown tag, a truncated field, an
//! out-of-range number or trailing garbage is a [`Error::Corruption`] naming the file and the
//! record's offset: a newer writer that adds fields raises the format version, which older
//! readers refuse with [`Error::VersionUnsupported`] before they see the new tags.

use crate::key::InternalKey;
use crate::varint::{get_uvarint, put_uvarint_vec};
use crate::version::file_meta::{FileMeta, NUM_LEVELS};
use crate::{Error, Result};

/// The manifest format version this code writes and the newest it reads.
///
/// - 1: the first release.
/// - 2: the same edits; the database's logs are WAL format 2, chained by their sealed records,
///   and the log the log number names always exists (recovery checks both). Version 1
///   databases are read with the older rules; the first open rewrites them as version 2.
/// - 3: adds change cursors (tags 9, 10) and keyspace metadata (tag 11), so that a release
///   that knows only version 2 refuses such a manifest ([`Error::VersionUnsupported`]) rather
///   than calling its new tags corruption. Version 2 manifests written before the bump may
///   hold tags 9 and 10: they are read.
pub const MANIFEST_FORMAT_VERSION: u32 = 3;

/// Largest keyspace metadata record ([`VersionEdit::keyspace_metadata`]), in bytes.
pub const MAX_KEYSPACE_METADATA: usize = 64 * 1024;

const TAG_FORMAT_VERSION: u64 = 1;
const TAG_LOG_NUMBER: u64 = 2;
const TAG_NEXT_FILE_NUMBER: u64 = 3;
const TAG_LAST_SEQUENCE: u64 = 4;
const TAG_KEYSPACE_CREATED: u64 = 5;
const TAG_KEYSPACE_DROPPED: u64 = 6;
const TAG_FILE_ADDED: u64 = 7;
const TAG_FILE_DELETED: u64 = 8;
const TAG_CHANGE_CURSOR: u64 = 9;
const TAG_CURSOR_REMOVED: u64 = 10;
const TAG_KEYSPACE_METADATA: u64 = 11;

const FLAG_RANGE_TOMBSTONES: u64 = 1;

/// One change to the version set. Absent counters leave the current value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// The manifest format version (set in the first edit of every manifest).
    pub format_version: Option<u32>,
    /// WALs with a number below this are obsolete.
    pub log_number: Option<u64>,
    /// The next file number to allocate.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// Keyspaces created: (id, name).
    pub keyspaces_created: Vec<(u32, String)>,
    /// Keyspaces dropped, by id.
    pub keyspaces_dropped: Vec<u32>,
    /// Files added: (level, meta).
    pub files_added: Vec<(u8, FileMeta)>,
    /// Files deleted: (level, number).
    pub files_deleted: Vec<(u8, u64)>,
    /// Change cursors set: (name, the last sequence number its reader is done with).
    pub change_cursors: Vec<(String, u64)>,
    /// Change cursors removed, by name (applied after those set).
    pub cursors_removed: Vec<String>,
    /// Keyspace metadata set: (keyspace id, metadata); empty metadata removes the record.
    /// Applied after the keyspaces created and before those dropped.
    pub keyspace_metadata: Vec<(u32, Vec<u8>)>,
}

impl VersionEdit {
    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, v: u64| put_uvarint_vec(out, v);
        let put_bytes = |out: &mut Vec<u8>, b: &[u8]| {
            put_uvarint_vec(out, b.len() as u64);
            out.extend_from_slice(b);
        };
        if let Some(v) = self.format_version {
            put(out, TAG_FORMAT_VERSION);
            put(out, u64::from(v));
        }
        for (tag, v) in [
            (TAG_LOG_NUMBER, self.log_number),
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
        ] {
            if let Some(v) = v {
                put(out, tag);
                put(out, v);
            }
        }
        for (id, name) in &self.keyspaces_created {
            put(out, TAG_KEYSPACE_CREATED);
            put(out, u64::from(*id));
            put_bytes(out, name.as_bytes());
        }
        for id in &self.keyspaces_dropped {
            put(out, TAG_KEYSPACE_DROPPED);
            put(out, u64::from(*id));
        }
        for (level, f) in &self.files_added {
            put(out, TAG_FILE_ADDED);
            put(out, u64::from(*level));
            put(out, f.number);
            put(out, f.size);
            put_bytes(out, &f.smallest.key);
            put(out, f.smallest.seq);
            put_bytes(out, &f.largest.key);
            put(out, f.largest.seq);
            put(out, f.min_seq);
            put(out, f.max_seq);
            put(out, f.entries);
            put(
                out,
                if f.has_range_tombstones {
                    FLAG_RANGE_TOMBSTONES
                } else {
                    0
                },
            );
        }
        for (level, number) in &self.files_deleted {
            put(out, TAG_FILE_DELETED);
            put(out, u64::from(*level));
            put(out, *number);
        }
        for (name, seq) in &self.change_cursors {
            put(out, TAG_CHANGE_CURSOR);
            put_bytes(out, name.as_bytes());
            put(out, *seq);
        }
        for name in &self.cursors_removed {
            put(out, TAG_CURSOR_REMOVED);
            put_bytes(out, name.as_bytes());
        }
        for (id, metadata) in &self.keyspace_metadata {
            put(out, TAG_KEYSPACE_METADATA);
            put(out, u64::from(*id));
            put_bytes(out, metadata);
        }
    }

    /// The encoding as a new vector.
    pub fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Decodes an edit read from the record at `offset` of `file`. Total: malformed input is
    /// [`Error::Corruption`] naming `file` and `offset`, never a panic.
    pub fn decode(b: &[u8], file: &str, offset: u64) -> Result<VersionEdit> {
        let mut d = Decoder {
            b,
            pos: 0,
            file,
            offset,
        };
        let mut e = VersionEdit::default();
        while d.pos < b.len() {
            let tag = d.uvarint("tag")?;
            match tag {
                TAG_FORMAT_VERSION => {
                    let v = d.u32("format version")?;
                    // Checked at once: a newer writer's edit may carry tags this code lacks.
                    if v == 0 || v > MANIFEST_FORMAT_VERSION {
                        return Err(Error::VersionUnsupported {
                            file: file.to_owned(),
                            version: v,
                        });
                    }
                    e.format_version = Some(v);
                }
                TAG_LOG_NUMBER => e.log_number = Some(d.uvarint("log number")?),
                TAG_NEXT_FILE_NUMBER => e.next_file_number = Some(d.uvarint("next file number")?),
                TAG_LAST_SEQUENCE => e.last_sequence = Some(d.uvarint("last sequence")?),
                TAG_KEYSPACE_CREATED => {
                    let id = d.u32("keyspace id")?;
                    let name = String::from_utf8(d.bytes("keyspace name")?.to_vec())
                        .map_err(|_| d.err("keyspace name is not UTF-8"))?;
                    e.keyspaces_created.push((id, name));
                }
                TAG_KEYSPACE_DROPPED => e.keyspaces_dropped.push(d.u32("keyspace id")?),
                TAG_CHANGE_CURSOR => {
                    let name = String::from_utf8(d.bytes("cursor name")?.to_vec())
                        .map_err(|_| d.err("a change cursor's name is not UTF-8"))?;
                    e.change_cursors.push((name, d.uvarint("cursor sequence")?));
                }
                TAG_CURSOR_REMOVED => e.cursors_removed.push(
                    String::from_utf8(d.bytes("cursor name")?.to_vec())
                        .map_err(|_| d.err("a change cursor's name is not UTF-8"))?,
                ),
                TAG_KEYSPACE_METADATA => {
                    let id = d.u32("keyspace id")?;
                    let metadata = d.bytes("keyspace metadata")?;
                    if metadata.len() > MAX_KEYSPACE_METADATA {
                        return Err(d.err(format!(
                            "keyspace metadata of {} bytes is over {MAX_KEYSPACE_METADATA}",
                            metadata.len()
                        )));
                    }
                    e.keyspace_metadata.push((id, metadata.to_vec()));
                }
                TAG_FILE_ADDED => {
                    let level = d.level()?;
                    let number = d.uvarint("file number")?;
                    let size = d.uvarint("file size")?;
                    let smallest = InternalKey::new(d.bytes("smallest key")?, d.uvarint("seq")?);
                    let largest = InternalKey::new(d.bytes("largest key")?, d.uvarint("seq")?);
                    let min_seq = d.uvarint("min seq")?;
                    let max_seq = d.uvarint("max seq")?;
                    let entries = d.uvarint("entries")?;
                    let flags = d.uvarint("flags")?;
                    if flags & !FLAG_RANGE_TOMBSTONES != 0 {
                        return Err(d.err(format!("unknown file flags {flags:#x}")));
                    }
                    e.files_added.push((
                        level,
                        FileMeta {
                            number,
                            size,
                            smallest,
                            largest,
                            min_seq,
                            max_seq,
                            entries,
                            has_range_tombstones: flags & FLAG_RANGE_TOMBSTONES != 0,
                        },
                    ));
                }
                TAG_FILE_DELETED => {
                    let level = d.level()?;
                    e.files_deleted.push((level, d.uvarint("file number")?));
                }
                other => return Err(d.err(format!("unknown version edit tag {other}"))),
            }
        }
        Ok(e)
    }
}

struct Decoder<'a> {
    b: &'a [u8],
    pos: usize,
    file: &'a str,
    offset: u64,
}

impl<'a> Decoder<'a> {
    fn err(&self, reason: impl std::fmt::Display) -> Error {
        Error::corruption(
            self.file,
            self.offset,
            format!("version edit, byte {}: {reason}", self.pos),
        )
    }

    fn uvarint(&mut self, what: &str) -> Result<u64> {
        get_uvarint(self.b, &mut self.pos).map_err(|e| self.err(format!("{what}: {e:?}")))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let v = self.uvarint(what)?;
        u32::try_from(v).map_err(|_| self.err(format!("{what} {v} is over u32")))
    }

    fn level(&mut self) -> Result<u8> {
        let v = self.uvarint("level")?;
        match u8::try_from(v) {
            Ok(l) if usize::from(l) < NUM_LEVELS => Ok(l),
            _ => Err(self.err(format!("level {v} out of range"))),
        }
    }

    fn bytes(&mut self, what: &str) -> Result<&'a [u8]> {
        let len = self.uvarint(what)?;
        let b = self.b;
        let slice = usize::try_from(len)
            .ok()
            .and_then(|l| b.get(self.pos..self.pos.checked_add(l)?))
            .ok_or_else(|| self.err(format!("{what}: length {len} runs past the record")))?;
        self.pos += slice.len();
        Ok(slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> VersionEdit {
        VersionEdit {
            format_version: Some(MANIFEST_FORMAT_VERSION),
            log_number: Some(7),
            next_file_number: Some(42),
            last_sequence: Some(1 << 40),
            keyspaces_created: vec![(0, "default".into()), (3, "queue".into())],
            keyspaces_dropped: vec![2],
            files_added: vec![(
                1,
                FileMeta {
                    number: 12,
                    size: 4096,
                    smallest: InternalKey::new(b"a".to_vec(), 9),
                    largest: InternalKey::new(b"zz".to_vec(), 1),
                    min_seq: 1,
                    max_seq: 9,
                    entries: 100,
                    has_range_tombstones: true,
                },
            )],
            files_deleted: vec![(0, 5), (0, 6)],
            change_cursors: vec![("nats".into(), 1 << 33), ("search".into(), 0)],
            cursors_removed: vec!["old".into()],
            keyspace_metadata: vec![
                (3, b"{\"valueEncoding\":\"json\"}".to_vec()),
                (0, Vec::new()),
            ],
        }
    }

    #[test]
    fn round_trips_and_every_truncation_is_an_error_or_a_prefix() {
        let e = sample();
        let b = e.encoded();
        assert_eq!(VersionEdit::decode(&b, "M", 8).ok(), Some(e));
        for n in 0..b.len() {
            // A cut may fall between fields (a valid, smaller edit) but must never panic.
            let _ = VersionEdit::decode(&b[..n], "M", 8);
        }
    }

    #[test]
    fn unknown_tags_and_bad_levels_are_corruption() {
        let err = VersionEdit::decode(&[99, 0], "MANIFEST-000001", 8).unwrap_err();
        assert!(
            matches!(err, Error::Corruption { ref file, offset: 8, .. } if file == "MANIFEST-000001")
        );
        let err = VersionEdit::decode(&[8, 9, 1], "M", 8).unwrap_err();
        assert!(err.to_string().contains("level 9"));
    }
}
