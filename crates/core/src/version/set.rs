//! [`VersionSet`]: the current [`Version`] and the counters (file numbers, sequence number, log
//! number, keyspaces) that [`VersionEdit`]s change, and the versions still held by readers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};

use crate::version::edit::VersionEdit;
use crate::version::file_meta::{FileMeta, NUM_LEVELS};
use crate::version::levels::Version;
use crate::{Error, Result};

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
    /// Change cursors: name to the last sequence number its reader is done with.
    change_cursors: BTreeMap<String, u64>,
    /// Metadata of live keyspaces, by id (none is an empty record).
    keyspace_metadata: BTreeMap<u32, Vec<u8>>,
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
            change_cursors: BTreeMap::new(),
            keyspace_metadata: BTreeMap::new(),
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

    /// Change cursors: name to the last sequence number its reader is done with.
    pub fn change_cursors(&self) -> &BTreeMap<String, u64> {
        &self.change_cursors
    }

    /// Live keyspaces by id.
    pub fn keyspaces(&self) -> &BTreeMap<u32, String> {
        &self.keyspaces
    }

    /// The metadata of live keyspaces, by id (a keyspace without any is absent).
    pub fn keyspace_metadata(&self) -> &BTreeMap<u32, Vec<u8>> {
        &self.keyspace_metadata
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
        for (id, _) in &edit.keyspace_metadata {
            let created_here = edit.keyspaces_created.iter().any(|(i, _)| i == id);
            if !self.keyspaces.contains_key(id) && !created_here {
                return Err(format!("metadata of keyspace {id}, which does not exist"));
            }
        }
        self.current.apply(edit)
    }

    /// Installs `version` (from [`VersionSet::prepare`] of the same `edit`) and the edit's
    /// counters and keyspace changes. Counters only move forward. Keyspaces: drops are applied
    /// after creations and metadata, so an edit may not create and drop the same id; a dropped
    /// keyspace's metadata goes with it.
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
        for (id, metadata) in &edit.keyspace_metadata {
            if metadata.is_empty() {
                self.keyspace_metadata.remove(id);
            } else {
                self.keyspace_metadata.insert(*id, metadata.clone());
            }
        }
        for id in &edit.keyspaces_dropped {
            self.keyspaces.remove(id);
            self.keyspace_metadata.remove(id);
        }
        for (name, seq) in &edit.change_cursors {
            self.change_cursors.insert(name.clone(), *seq);
        }
        for name in &edit.cursors_removed {
            self.change_cursors.remove(name);
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
            format_version: Some(crate::version::edit::MANIFEST_FORMAT_VERSION),
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
        e.keyspace_metadata = self
            .keyspace_metadata
            .iter()
            .map(|(id, m)| (*id, m.clone()))
            .collect();
        e.change_cursors = self
            .change_cursors
            .iter()
            .map(|(n, s)| (n.clone(), *s))
            .collect();
        for level in 0..NUM_LEVELS {
            for f in self.current.files(level) {
                e.files_added.push((level as u8, FileMeta::clone(f)));
            }
        }
        e
    }

    /// Takes over `previous`'s versions as older ones (for [`VersionSet::live_files`]): a
    /// read-only open replaces its whole set when it catches up, while readers may still hold
    /// versions of the old one.
    pub fn inherit_readers(&mut self, previous: &VersionSet) {
        self.older.push(Arc::downgrade(&previous.current));
        self.older.extend(
            previous
                .older
                .iter()
                .filter(|w| w.strong_count() > 0)
                .cloned(),
        );
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
