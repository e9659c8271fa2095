//! The set of live tables: the immutable [`Version`] (files per level, each a [`FileMeta`]), and
//! the [`super::VersionSet`] that turns [`VersionEdit`]s into new versions.
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
//! [`super::VersionSet::live_files`] keeps every table of every version still held alive.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::sorting::sort_by;
use crate::version::edit::VersionEdit;
use crate::version::file_meta::{FileMeta, NUM_LEVELS};

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
                sort_by(files, |a, b| {
                    b.max_seq.cmp(&a.max_seq).then(b.number.cmp(&a.number))
                });
                continue;
            }
            sort_by(files, |a, b| a.smallest.cmp_internal(&b.smallest));
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
