//! The manifest: a RecordIO file `MANIFEST-{number:06}` of [`VersionEdit`]s, and `CURRENT`,
//! which names the live manifest.
//!
//! # Files and the atomic switch
//!
//! - A manifest starts with a *snapshot edit* recreating the whole state (with the manifest
//!   format version, [`MANIFEST_FORMAT_VERSION`]); every later record is one edit, appended and
//!   synced before the change it describes takes effect ([`ManifestWriter::log_and_apply`]).
//! - `CURRENT` holds `MANIFEST-{number:06}\n`. It is switched by writing `CURRENT.tmp`, syncing
//!   it, renaming it over `CURRENT` and syncing the directory, and only after the new manifest
//!   itself was synced. A crash at any point leaves `CURRENT` naming either the old or the new
//!   manifest, both complete.
//! - Once a manifest grows past [`ManifestOptions::max_size`] the writer rolls to a new one
//!   (snapshot first, then the switch) and removes the old one.
//!
//! # Recovery ([`recover`])
//!
//! `CURRENT` absent: a new database (`Ok(None)`). Otherwise the named manifest is replayed.
//! A torn tail (the file ends inside a record) is tolerated: that edit's sync never returned, so
//! the change was never acknowledged. Damage followed by intact data, an undecodable edit, or an
//! edit that does not apply is an error naming the manifest and the record's offset. A format
//! version above [`MANIFEST_FORMAT_VERSION`] is [`Error::VersionUnsupported`].

use std::sync::Arc;

use crate::file_names::{manifest_file_name, parse_file_name, FileKind, CURRENT, CURRENT_TMP};
use crate::recordio::{Reader, ReaderOptions, Writer, WriterOptions};
use crate::storage::{OpenMode, Storage};
use crate::version::edit::VersionEdit;
pub use crate::version::edit::MANIFEST_FORMAT_VERSION;
use crate::version::set::VersionSet;
use crate::{Error, Result};

/// Largest `CURRENT` file accepted.
const MAX_CURRENT_SIZE: u64 = 256;

/// Options for [`ManifestWriter`].
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    /// Roll to a new manifest once the current one is larger than this (default 4 MiB).
    pub max_size: u64,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            max_size: 4 * 1024 * 1024,
        }
    }
}

/// Appends edits to the live manifest.
#[derive(Debug)]
pub struct ManifestWriter {
    storage: Arc<dyn Storage>,
    writer: Writer,
    number: u64,
    options: ManifestOptions,
    poisoned: bool,
}

impl ManifestWriter {
    /// Starts a new manifest (number from `vs`) holding a snapshot of `vs`, syncs it, and
    /// switches `CURRENT` to it. Used to create a database and at every open after
    /// [`recover`] (so a torn tail is never appended to); the previous manifest, if any, is
    /// then obsolete (see [`obsolete_manifests`]).
    pub fn create(
        storage: Arc<dyn Storage>,
        vs: &mut VersionSet,
        options: ManifestOptions,
    ) -> Result<ManifestWriter> {
        let number = vs.new_file_number();
        let name = manifest_file_name(number);
        // A leftover file with this number was never named by CURRENT (its number was not
        // persisted), so it is garbage: truncate it.
        let file = storage.open(&name, OpenMode::Create)?;
        let mut writer = Writer::new(
            file.clone(),
            WriterOptions {
                buffer_size: 64 * 1024,
                ..WriterOptions::default()
            },
        )?;
        writer.write(&vs.snapshot_edit().encoded())?;
        writer.flush()?;
        file.sync()?;
        set_current(&*storage, number)?;
        Ok(ManifestWriter {
            storage,
            writer,
            number,
            options,
            poisoned: false,
        })
    }

    /// The live manifest's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The live manifest's size in bytes.
    pub fn size(&self) -> u64 {
        self.writer.offset()
    }

    /// Logs `edit` durably, then applies it to `vs`. Fills in `next_file_number` and
    /// `last_sequence` from `vs` when the edit leaves them out. Rolls to a new manifest when
    /// the current one has grown past the limit.
    ///
    /// Errors: an edit that does not apply → [`Error::InvalidArgument`], nothing changed. A
    /// storage failure → that error, and the writer is poisoned (every later call fails with
    /// [`Error::Closed`]): whether the edit reached the disk is unknown, so the caller must stop
    /// writing (poison the database) and recover by reopening.
    pub fn log_and_apply(&mut self, vs: &mut VersionSet, mut edit: VersionEdit) -> Result<()> {
        if self.poisoned {
            return Err(Error::Closed(format!(
                "manifest {} failed earlier",
                manifest_file_name(self.number)
            )));
        }
        edit.format_version = None;
        if edit.next_file_number.is_none() {
            edit.next_file_number = Some(vs.next_file_number());
        }
        if edit.last_sequence.is_none() {
            edit.last_sequence = Some(vs.last_sequence());
        }
        let version = vs.prepare(&edit).map_err(Error::InvalidArgument)?;
        let result = self.append(&edit);
        if let Err(e) = result {
            self.poisoned = true;
            return Err(e);
        }
        vs.install(&edit, version);
        if self.size() > self.options.max_size {
            if let Err(e) = self.roll(vs) {
                self.poisoned = true;
                return Err(e);
            }
        }
        Ok(())
    }

    fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        self.writer.write(&edit.encoded())?;
        self.writer.sync()
    }

    /// Switches to a new manifest holding a snapshot of `vs` and removes the old one.
    fn roll(&mut self, vs: &mut VersionSet) -> Result<()> {
        let old = self.number;
        let new = ManifestWriter::create(self.storage.clone(), vs, self.options.clone())?;
        *self = new;
        // The old manifest is garbage now; a failed removal leaves it for the next sweep.
        let _ = self.storage.remove(&manifest_file_name(old));
        Ok(())
    }
}

/// Writes `CURRENT` to name manifest `number`: temp file, sync, directory sync (so that every
/// file created before — the manifest, the tables and the log it names — has a durable entry
/// before `CURRENT` can name them), rename, directory sync.
pub fn set_current(storage: &dyn Storage, number: u64) -> Result<()> {
    let tmp = storage.open(CURRENT_TMP, OpenMode::Create)?;
    tmp.write_at(0, format!("{}\n", manifest_file_name(number)).as_bytes())?;
    tmp.sync()?;
    drop(tmp);
    storage.sync_dir()?;
    storage.rename(CURRENT_TMP, CURRENT)?;
    storage.sync_dir()
}

/// What [`recover`] found.
#[derive(Debug)]
pub struct Recovered {
    /// The state after replaying every complete edit.
    pub versions: VersionSet,
    /// The number of the manifest `CURRENT` names.
    pub manifest_number: u64,
    /// The manifest's format version (from its first edit).
    pub format_version: u32,
    /// Number of edits replayed.
    pub edits: u64,
    /// Where valid data ends if the manifest had a torn tail (tolerated), else `None`.
    pub torn_tail_at: Option<u64>,
}

/// Reads `CURRENT` and replays the manifest it names. `Ok(None)` when there is no `CURRENT`
/// (a new database). See the module doc for what is tolerated and what is an error.
pub fn recover(storage: &dyn Storage) -> Result<Option<Recovered>> {
    if !storage.exists(CURRENT)? {
        return Ok(None);
    }
    replay(storage, read_current(storage)?).map(Some)
}

/// Replays manifest `number` (whether or not `CURRENT` names it); errors as [`recover`].
pub fn replay(storage: &dyn Storage, number: u64) -> Result<Recovered> {
    let name = manifest_file_name(number);
    let file = match storage.open(&name, OpenMode::Read) {
        Ok(f) => f,
        Err(Error::NotFound { .. }) => {
            return Err(Error::corruption(
                &name,
                0,
                "the manifest named by CURRENT is missing",
            ))
        }
        Err(e) => return Err(e),
    };
    let mut reader = Reader::open(file, ReaderOptions::default())?;
    let mut vs = VersionSet::new();
    let mut edits = 0u64;
    let mut torn_tail_at = None;
    let mut format_version = 0;
    loop {
        let rec = match reader.read_next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(Error::TornTail { valid_up_to, .. }) => {
                torn_tail_at = Some(valid_up_to);
                break;
            }
            Err(e) => return Err(e),
        };
        let offset = rec.offset;
        let data = rec
            .data
            .ok_or_else(|| Error::corruption(&name, offset, "nil record in a manifest"))?;
        let edit = VersionEdit::decode(data, &name, offset)?;
        match (edits, edit.format_version) {
            (_, Some(v)) if v == 0 || v > MANIFEST_FORMAT_VERSION => {
                return Err(Error::VersionUnsupported {
                    file: name,
                    version: v,
                })
            }
            (0, None) => {
                return Err(Error::corruption(
                    &name,
                    offset,
                    "the first edit carries no format version",
                ))
            }
            (0, Some(v)) => format_version = v,
            _ => {}
        }
        let version = vs
            .prepare(&edit)
            .map_err(|reason| Error::corruption(&name, offset, reason))?;
        vs.install(&edit, version);
        edits += 1;
    }
    if edits == 0 {
        return Err(Error::corruption(&name, 8, "the manifest holds no edit"));
    }
    vs.mark_file_number_used(number);
    Ok(Recovered {
        versions: vs,
        manifest_number: number,
        format_version,
        edits,
        torn_tail_at,
    })
}

/// The manifest number `CURRENT` names. Errors: missing → [`Error::NotFound`]; anything but
/// `MANIFEST-{digits}` and a newline → [`Error::Corruption`] naming `CURRENT`.
pub fn read_current(storage: &dyn Storage) -> Result<u64> {
    let file = storage.open(CURRENT, OpenMode::Read)?;
    let size = file.size()?;
    if size > MAX_CURRENT_SIZE {
        return Err(Error::corruption(
            CURRENT,
            0,
            format!("{size} bytes is too long"),
        ));
    }
    let mut buf = vec![0u8; size as usize];
    file.read_exact_at(0, &mut buf)?;
    let text = std::str::from_utf8(&buf)
        .ok()
        .and_then(|t| t.strip_suffix('\n'))
        .ok_or_else(|| Error::corruption(CURRENT, 0, "not a manifest name and a newline"))?;
    match parse_file_name(text) {
        Some(FileKind::Manifest(n)) => Ok(n),
        _ => Err(Error::corruption(
            CURRENT,
            0,
            format!("{text:?} is not a manifest name"),
        )),
    }
}

/// Names in `names` (a storage listing) that are manifests other than `live`, or a leftover
/// `CURRENT.tmp`: safe to remove once `live` is current.
pub fn obsolete_manifests(names: &[String], live: u64) -> Vec<String> {
    names
        .iter()
        .filter(|n| match parse_file_name(n) {
            Some(FileKind::Manifest(m)) => m != live,
            Some(FileKind::CurrentTmp) => true,
            _ => false,
        })
        .cloned()
        .collect()
}
