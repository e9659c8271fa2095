//! The set of live tables: [`FileMeta`], the immutable [`Version`] (files per level), and the
//! [`VersionSet`] that turns [`VersionEdit`]s into new versions.
//!
//! Shape of a version (leveled LSM, one tree shared by all keyspaces — the engine encodes the
//! keyspace into the keys it writes):
//! - Level 0 holds flushed memtables. Its files may overlap; they are ordered **newest first**
//!   (largest `max_seq` first, then larger file number), the order a point read consults them.
//! - Levels 1 to [`NUM_LEVELS`]` - 1` are sorted by smallest key and do not overlap: each file's
//!   largest internal key is below the next file's smallest in internal order (key ascending,
//!   sequence descending). A file whose range tombstone was cut at a boundary `K` ends at the
//!   sentinel `(K, MAX_SEQ)`, which sorts before every real entry of `K`, so the next file may
//!   start at `K`.
//!
//! A `Version` never changes once built; readers hold an `Arc<Version>` while they read, and
//! [`VersionSet::live_files`] keeps every table of every version still held alive.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};

use crate::sstable::{compare_internal, MAX_SEQ};
use crate::version_edit::VersionEdit;
use crate::{Error, Result};

/// Number of levels, L0 to L6.
pub const NUM_LEVELS: usize = 7;

/// The sequence number of a range-tombstone sentinel: a largest key `(K, RANGE_SENTINEL_SEQ)`
/// means "up to, not including, `K`".
pub const RANGE_SENTINEL_SEQ: u64 = MAX_SEQ;

/// A user key with a sequence number, compared in internal order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct InternalKey {
    /// The user key.
    pub key: Vec<u8>,
    /// The sequence number.
    pub seq: u64,
}

impl InternalKey {
    /// Builds an internal key.
    pub fn new(key: impl Into<Vec<u8>>, seq: u64) -> InternalKey {
        InternalKey {
            key: key.into(),
            seq,
        }
    }

    /// Internal order: key ascending, then sequence number descending.
    pub fn cmp_internal(&self, other: &InternalKey) -> Ordering {
        compare_internal(&self.key, self.seq, &other.key, other.seq)
    }
}

/// What the manifest records about one table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// The file number (the table is `file_names::table_file_name(number)`).
    pub number: u64,
    /// Size of the file in bytes.
    pub size: u64,
    /// Smallest internal key, range tombstone starts included.
    pub smallest: InternalKey,
    /// Largest internal key; `(end, RANGE_SENTINEL_SEQ)` when a range tombstone ending at the
    /// exclusive `end` reaches past the last point entry.
    pub largest: InternalKey,
    /// Smallest sequence number of any entry.
    pub min_seq: u64,
    /// Largest sequence number of any entry.
    pub max_seq: u64,
    /// Number of entries (point entries and range tombstones).
    pub entries: u64,
    /// Whether the table holds range tombstones.
    pub has_range_tombstones: bool,
}

impl FileMeta {
    /// Whether user `key` may lie in this file's range (inclusive on both ends; a sentinel end
    /// counts as inclusive, which is conservative).
    pub fn may_contain_key(&self, key: &[u8]) -> bool {
        self.smallest.key.as_slice() <= key && key <= self.largest.key.as_slice()
    }

    /// Whether the file's user-key range meets `[start, end]` (`None` = unbounded), inclusive.
    pub fn overlaps(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> bool {
        start.is_none_or(|s| s <= self.largest.key.as_slice())
            && end.is_none_or(|e| self.smallest.key.as_slice() <= e)
    }
}

/// An immutable set of table files per level. Cheap to share (`Arc<Version>`).
#[derive(Debug, Clone, Default)]
pub struct Version {
    levels: [Vec<Arc<FileMeta>>; NUM_LEVELS],
}

impl Version {
    /// The files of `level` (L0 newest first; L1+ sorted by key). Empty past the last level.
    pub fn files(&self, level: usize) -> &[Arc<FileMeta>] {
        self.levels.get(level).map_or(&[], |v| v.as_slice())
    }

    /// Total number of files.
    pub fn file_count(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Sum of the file sizes of `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.files(level).iter().map(|f| f.size).sum()
    }

    /// The deepest level holding any file, if any.
    pub fn deepest_nonempty_level(&self) -> Option<usize> {
        (0..NUM_LEVELS).rev().find(|&l| !self.files(l).is_empty())
    }

    /// Files of `level` whose range may hold user `key`, in the order a point read consults
    /// them (L0: newest first; L1+: at most two, which can only happen when they touch at a
    /// range-tombstone sentinel). Binary search on L1+.
    pub fn files_for_key(&self, level: usize, key: &[u8]) -> Vec<Arc<FileMeta>> {
        let files = self.files(level);
        if level == 0 {
            return files
                .iter()
                .filter(|f| f.may_contain_key(key))
                .cloned()
                .collect();
        }
        let first = files.partition_point(|f| f.largest.key.as_slice() < key);
        files
            .get(first..)
            .unwrap_or_default()
            .iter()
            .take_while(|f| f.smallest.key.as_slice() <= key)
            .cloned()
            .collect()
    }

    /// Files of `level` whose user-key range meets `[start, end]` (inclusive, `None` =
    /// unbounded), in level order. Binary search on L1+.
    pub fn overlapping(
        &self,
        level: usize,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<Arc<FileMeta>> {
        let files = self.files(level);
        if level == 0 {
            return files
                .iter()
                .filter(|f| f.overlaps(start, end))
                .cloned()
                .collect();
        }
        let first = match start {
            Some(s) => files.partition_point(|f| f.largest.key.as_slice() < s),
            None => 0,
        };
        files
            .get(first..)
            .unwrap_or_default()
            .iter()
            .take_while(|f| end.is_none_or(|e| f.smallest.key.as_slice() <= e))
            .cloned()
            .collect()
    }

    /// Whether any file below `level` may hold user keys in `[start, end]` — i.e. whether
    /// `level` is *not* the bottommost level for that range.
    pub fn has_data_below(&self, level: usize, start: &[u8], end: &[u8]) -> bool {
        (level + 1..NUM_LEVELS).any(|l| !self.overlapping(l, Some(start), Some(end)).is_empty())
    }

    /// The numbers of all files in this version.
    pub fn file_numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.levels.iter().flatten().map(|f| f.number)
    }

    /// The version that results from applying `edit`'s file changes (deletions first, then
    /// additions). Errors (as a reason) when a deleted file is missing from its level, an added
    /// number is already present, a level is out of range, or L1+ files would overlap.
    pub fn apply(&self, edit: &VersionEdit) -> std::result::Result<Version, String> {
        let mut levels = self.levels.clone();
        for &(level, number) in &edit.files_deleted {
            let files = levels
                .get_mut(usize::from(level))
                .ok_or_else(|| format!("level {level} out of range"))?;
            let before = files.len();
            files.retain(|f| f.number != number);
            if files.len() == before {
                return Err(format!("deleted file {number} is not in level {level}"));
            }
        }
        let mut present: BTreeSet<u64> = levels.iter().flatten().map(|f| f.number).collect();
        for (level, meta) in &edit.files_added {
            if !present.insert(meta.number) {
                return Err(format!("added file {} is already live", meta.number));
            }
            if meta.smallest.cmp_internal(&meta.largest) == Ordering::Greater {
                return Err(format!(
                    "file {} has its smallest key after its largest",
                    meta.number
                ));
            }
            levels
                .get_mut(usize::from(*level))
                .ok_or_else(|| format!("level {level} out of range"))?
                .push(Arc::new(meta.clone()));
        }
        for (i, files) in levels.iter_mut().enumerate() {
            if i == 0 {
                files.sort_by(|a, b| b.max_seq.cmp(&a.max_seq).then(b.number.cmp(&a.number)));
                continue;
            }
            files.sort_by(|a, b| a.smallest.cmp_internal(&b.smallest));
            for pair in files.windows(2) {
                if let [a, b] = pair {
                    if a.largest.cmp_internal(&b.smallest) != Ordering::Less {
                        return Err(format!(
                            "files {} and {} overlap in level {i}",
                            a.number, b.number
                        ));
                    }
                }
            }
        }
        Ok(Version { levels })
    }
}

/// The current version plus the counters the manifest persists. Not thread-safe by itself;
/// the engine keeps it under its lock.
#[derive(Debug)]
pub struct VersionSet {
    current: Arc<Version>,
    /// Versions handed out earlier that may still be in use by readers.
    older: Vec<Weak<Version>>,
    next_file_number: u64,
    last_sequence: u64,
    log_number: u64,
    keyspaces: BTreeMap<u32, String>,
}

impl Default for VersionSet {
    fn default() -> Self {
        VersionSet::new()
    }
}

impl VersionSet {
    /// An empty set: no files, next file number 1, last sequence 0, log number 0, no keyspaces.
    pub fn new() -> VersionSet {
        VersionSet {
            current: Arc::new(Version::default()),
            older: Vec::new(),
            next_file_number: 1,
            last_sequence: 0,
            log_number: 0,
            keyspaces: BTreeMap::new(),
        }
    }

    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        self.current.clone()
    }

    /// Allocates a fresh file number (tables, WALs and manifests share one counter).
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// The next number [`VersionSet::new_file_number`] would return.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number
    }

    /// Makes sure no number `<= n` is allocated again (e.g. for a WAL found on disk).
    pub fn mark_file_number_used(&mut self, n: u64) {
        self.next_file_number = self.next_file_number.max(n.saturating_add(1));
    }

    /// The last sequence number recorded (persisted through edits).
    pub fn last_sequence(&self) -> u64 {
        self.last_sequence
    }

    /// Raises the last sequence number (never lowers it).
    pub fn set_last_sequence(&mut self, seq: u64) {
        self.last_sequence = self.last_sequence.max(seq);
    }

    /// WALs with numbers below this are obsolete: their contents are in tables.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    /// Live keyspaces by id.
    pub fn keyspaces(&self) -> &BTreeMap<u32, String> {
        &self.keyspaces
    }

    /// Checks `edit` against the current state and returns the version it produces, without
    /// changing anything. The error is a reason string (the caller decides whose fault it is).
    pub fn prepare(&self, edit: &VersionEdit) -> std::result::Result<Version, String> {
        for (id, name) in &edit.keyspaces_created {
            if self.keyspaces.contains_key(id) && !edit.keyspaces_dropped.contains(id) {
                return Err(format!("keyspace {id} ({name:?}) created twice"));
            }
        }
        for id in &edit.keyspaces_dropped {
            let created_here = edit.keyspaces_created.iter().any(|(i, _)| i == id);
            if !self.keyspaces.contains_key(id) && !created_here {
                return Err(format!("dropped keyspace {id} does not exist"));
            }
        }
        self.current.apply(edit)
    }

    /// Installs `version` (from [`VersionSet::prepare`] of the same `edit`) and the edit's
    /// counters and keyspace changes. Counters only move forward. Keyspaces: drops are applied
    /// after creations, so an edit may not create and drop the same id.
    pub fn install(&mut self, edit: &VersionEdit, version: Version) {
        if let Some(n) = edit.next_file_number {
            self.next_file_number = self.next_file_number.max(n);
        }
        for f in &edit.files_added {
            self.mark_file_number_used(f.1.number);
        }
        if let Some(s) = edit.last_sequence {
            self.set_last_sequence(s);
        }
        if let Some(l) = edit.log_number {
            self.log_number = self.log_number.max(l);
        }
        for (id, name) in &edit.keyspaces_created {
            self.keyspaces.insert(*id, name.clone());
        }
        for id in &edit.keyspaces_dropped {
            self.keyspaces.remove(id);
        }
        let old = std::mem::replace(&mut self.current, Arc::new(version));
        self.older.retain(|w| w.strong_count() > 0);
        self.older.push(Arc::downgrade(&old));
    }

    /// [`VersionSet::prepare`] then [`VersionSet::install`]; an invalid edit is
    /// [`Error::InvalidArgument`] and changes nothing.
    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let v = self.prepare(edit).map_err(Error::InvalidArgument)?;
        self.install(edit, v);
        Ok(())
    }

    /// An edit that recreates the whole state from nothing (the first record of a new
    /// manifest), with the format version set.
    pub fn snapshot_edit(&self) -> VersionEdit {
        let mut e = VersionEdit {
            format_version: Some(crate::version_edit::MANIFEST_FORMAT_VERSION),
            log_number: Some(self.log_number),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.last_sequence),
            ..VersionEdit::default()
        };
        e.keyspaces_created = self
            .keyspaces
            .iter()
            .map(|(id, n)| (*id, n.clone()))
            .collect();
        for level in 0..NUM_LEVELS {
            for f in self.current.files(level) {
                e.files_added.push((level as u8, FileMeta::clone(f)));
            }
        }
        e
    }

    /// Numbers of every table in the current version and in every older version still held by
    /// a reader. A table file whose number is not in this set (and is not being written by a
    /// running flush or compaction) is obsolete and may be removed.
    pub fn live_files(&mut self) -> BTreeSet<u64> {
        self.older.retain(|w| w.strong_count() > 0);
        let mut live: BTreeSet<u64> = self.current.file_numbers().collect();
        for v in self.older.iter().filter_map(Weak::upgrade) {
            live.extend(v.file_numbers());
        }
        live
    }
}
