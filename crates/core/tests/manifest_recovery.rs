//! The manifest: edits survive a reopen, the CURRENT switch is atomic under a crash at every
//! step, a torn tail is tolerated, damage in the middle is reported with the file's name, and a
//! newer format version is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use shaledb::file_names::{manifest_file_name, CURRENT};
use shaledb::key::InternalKey;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use shaledb::version::edit::{VersionEdit, MANIFEST_FORMAT_VERSION};
use shaledb::version::manifest::{
    obsolete_manifests, read_current, recover, ManifestOptions, ManifestWriter,
};
use shaledb::version::{FileMeta, VersionSet};
use shaledb::{Error, Result};

fn meta(number: u64, lo: &str, hi: &str, seq: u64) -> FileMeta {
    FileMeta {
        number,
        size: 1000 + number,
        smallest: InternalKey::new(lo.as_bytes().to_vec(), seq),
        largest: InternalKey::new(hi.as_bytes().to_vec(), seq),
        min_seq: seq,
        max_seq: seq,
        entries: 10,
        has_range_tombstones: false,
    }
}

fn add(level: u8, f: FileMeta, seq: u64) -> VersionEdit {
    VersionEdit {
        files_added: vec![(level, f)],
        last_sequence: Some(seq),
        ..VersionEdit::default()
    }
}

/// What must survive: files per level, counters, keyspaces.
fn signature(vs: &VersionSet) -> String {
    let v = vs.current();
    let levels: Vec<Vec<u64>> = (0..7)
        .map(|l| v.files(l).iter().map(|f| f.number).collect())
        .collect();
    format!(
        "{levels:?} seq={} log={} ks={:?}",
        vs.last_sequence(),
        vs.log_number(),
        vs.keyspaces()
    )
}

/// A database with a manifest holding a few edits; returns its state's signature.
fn populate(storage: Arc<dyn Storage>) -> (VersionSet, ManifestWriter) {
    let mut vs = VersionSet::new();
    let mut w = ManifestWriter::create(storage, &mut vs, ManifestOptions::default()).unwrap();
    let ks = VersionEdit {
        keyspaces_created: vec![(0, "default".into()), (1, "queue".into())],
        log_number: Some(3),
        ..VersionEdit::default()
    };
    w.log_and_apply(&mut vs, ks).unwrap();
    let n = vs.new_file_number();
    w.log_and_apply(&mut vs, add(0, meta(n, "a", "m", 5), 5))
        .unwrap();
    let n = vs.new_file_number();
    w.log_and_apply(&mut vs, add(1, meta(n, "b", "c", 2), 6))
        .unwrap();
    (vs, w)
}

#[test]
fn edits_survive_reopen_and_roll_over() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let (vs, w) = populate(storage.clone());
    let first = w.number();
    drop(w);
    let r = recover(&*storage).unwrap().unwrap();
    assert_eq!(signature(&r.versions), signature(&vs));
    assert_eq!(r.manifest_number, first);
    assert!(r.versions.next_file_number() >= vs.next_file_number());
    assert_eq!(r.torn_tail_at, None);

    // Reopen: a new manifest with a snapshot; tiny size limit forces rolls on every edit.
    let mut vs2 = r.versions;
    let mut w = ManifestWriter::create(storage.clone(), &mut vs2, ManifestOptions { max_size: 64 })
        .unwrap();
    assert_ne!(w.number(), first);
    assert_eq!(read_current(&*storage).unwrap(), w.number());
    let stale = obsolete_manifests(&storage.list().unwrap(), w.number());
    assert_eq!(stale, vec![manifest_file_name(first)]);
    for i in 0..5u64 {
        let n = vs2.new_file_number();
        let k = format!("k{i}");
        w.log_and_apply(&mut vs2, add(0, meta(n, &k, &k, 10 + i), 10 + i))
            .unwrap();
        let del = VersionEdit {
            files_deleted: vec![(0, n)],
            ..VersionEdit::default()
        };
        if i % 2 == 0 {
            w.log_and_apply(&mut vs2, del).unwrap();
        }
    }
    let manifests = storage
        .list()
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with("MANIFEST-"))
        .count();
    assert_eq!(
        manifests, 2,
        "rolled manifests are removed (the first awaits the sweep)"
    );
    drop(w);
    let r = recover(&*storage).unwrap().unwrap();
    assert_eq!(signature(&r.versions), signature(&vs2));
    assert_eq!(r.versions.current().files(0).len(), 3);
}

#[test]
fn a_new_database_has_no_current() {
    let storage = MemoryStorage::new();
    assert!(recover(&storage).unwrap().is_none());
}

#[test]
fn invalid_edits_are_refused_before_logging() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let (mut vs, mut w) = populate(storage.clone());
    let before = signature(&vs);
    let bad = VersionEdit {
        files_deleted: vec![(3, 999)],
        ..VersionEdit::default()
    };
    assert!(matches!(
        w.log_and_apply(&mut vs, bad),
        Err(Error::InvalidArgument(_))
    ));
    // L1 files may not overlap.
    let n = vs.new_file_number();
    assert!(w
        .log_and_apply(&mut vs, add(1, meta(n, "a", "bb", 1), 7))
        .is_err());
    assert_eq!(signature(&vs), before);
    drop(w);
    assert_eq!(
        signature(&recover(&*storage).unwrap().unwrap().versions),
        before
    );
}

#[test]
fn a_torn_manifest_tail_is_tolerated() {
    let mem = Arc::new(MemoryStorage::new());
    let (vs, w) = populate(mem.clone());
    let name = manifest_file_name(w.number());
    drop(w);
    let full_state = signature(&vs);
    let f = mem.open(&name, OpenMode::ReadWrite).unwrap();
    let full = f.size().unwrap();
    // Offsets of the records; the last one is the last edit.
    let mut r = shaledb::recordio::Reader::open(f.clone(), Default::default()).unwrap();
    let mut last = 0;
    while let Some(rec) = r.read_next().unwrap() {
        last = rec.offset;
    }
    let mut bytes = vec![0u8; full as usize];
    f.read_exact_at(0, &mut bytes).unwrap();
    let mut states = std::collections::BTreeSet::new();
    for cut in last + 1..full {
        f.truncate(cut).unwrap();
        let r = recover(&*mem).unwrap().expect("torn tail tolerated");
        assert_eq!(r.torn_tail_at, Some(last), "cut at {cut}");
        states.insert(signature(&r.versions));
    }
    assert_eq!(
        states.len(),
        1,
        "every cut gives the state before the last edit"
    );
    assert!(!states.contains(&full_state));
    f.truncate(0).unwrap();
    f.write_at(0, &bytes).unwrap();
    assert_eq!(
        signature(&recover(&*mem).unwrap().unwrap().versions),
        full_state
    );
}

#[test]
fn corruption_in_the_middle_is_reported_with_the_file_name() {
    let mem = Arc::new(MemoryStorage::new());
    let (_, w) = populate(mem.clone());
    let name = manifest_file_name(w.number());
    drop(w);
    let f = mem.open(&name, OpenMode::ReadWrite).unwrap();
    let size = f.size().unwrap();
    let mut bytes = vec![0u8; size as usize];
    f.read_exact_at(0, &mut bytes).unwrap();
    let mut reported = 0;
    // Flip one bit in each byte of the first half (records followed by intact data).
    for i in 8..(size as usize / 2) {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        f.truncate(0).unwrap();
        f.write_at(0, &b).unwrap();
        match recover(&*mem) {
            Err(e) => {
                assert!(e.to_string().contains(&name), "{e} names {name}");
                reported += 1;
            }
            Ok(r) => panic!("flip at {i} went unnoticed: {:?}", r.map(|r| r.edits)),
        }
    }
    assert!(reported > 0);
}

#[test]
fn a_newer_manifest_format_is_refused() {
    let mem = Arc::new(MemoryStorage::new());
    let mut vs = VersionSet::new();
    let n = vs.new_file_number();
    let name = manifest_file_name(n);
    let file = mem.open(&name, OpenMode::Create).unwrap();
    let mut w = shaledb::recordio::Writer::new(file, Default::default()).unwrap();
    let mut e = vs.snapshot_edit();
    e.format_version = Some(MANIFEST_FORMAT_VERSION + 1);
    // Also carry a tag this version does not know: the version check must come first.
    let mut bytes = e.encoded();
    bytes.extend_from_slice(&[60, 1]);
    w.write(&bytes).unwrap();
    w.sync().unwrap();
    shaledb::version::manifest::set_current(&*mem, n).unwrap();
    match recover(&*mem) {
        Err(Error::VersionUnsupported { file, version }) => {
            assert_eq!(file, name);
            assert_eq!(version, MANIFEST_FORMAT_VERSION + 1);
        }
        other => panic!("expected VersionUnsupported, got {other:?}"),
    }
    // A garbled CURRENT is corruption naming CURRENT.
    let c = mem.open(CURRENT, OpenMode::Create).unwrap();
    c.write_at(0, b"MANIFEST-x\n").unwrap();
    let err = recover(&*mem).unwrap_err();
    assert!(matches!(err, Error::Corruption { ref file, .. } if file == CURRENT));
}

// ---- crash at every step of the switch ----

/// Fails every mutating call after `limit` of them have succeeded (a crash in mid-sequence).
#[derive(Debug)]
struct StepLimited {
    inner: Arc<FaultyStorage>,
    ops: Arc<AtomicU64>,
    limit: u64,
}

#[derive(Debug)]
struct LimitedFile {
    inner: FileHandle,
    ops: Arc<AtomicU64>,
    limit: u64,
}

fn step(ops: &AtomicU64, limit: u64) -> Result<()> {
    if ops.fetch_add(1, Ordering::SeqCst) >= limit {
        return Err(Error::io(
            "step",
            "",
            std::io::Error::other("simulated crash point"),
        ));
    }
    Ok(())
}

impl Storage for StepLimited {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        if matches!(mode, OpenMode::Create | OpenMode::CreateNew) {
            step(&self.ops, self.limit)?;
        }
        Ok(Arc::new(LimitedFile {
            inner: self.inner.open(name, mode)?,
            ops: self.ops.clone(),
            limit: self.limit,
        }))
    }
    fn exists(&self, name: &str) -> Result<bool> {
        self.inner.exists(name)
    }
    fn remove(&self, name: &str) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.rename(from, to)
    }
    fn list(&self) -> Result<Vec<String>> {
        self.inner.list()
    }
    fn sync_dir(&self) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.sync_dir()
    }
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        self.inner.lock(name)
    }
}

impl StorageFile for LimitedFile {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.write_at(offset, data)
    }
    fn sync(&self) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.sync()
    }
    fn size(&self) -> Result<u64> {
        self.inner.size()
    }
    fn truncate(&self, len: u64) -> Result<()> {
        step(&self.ops, self.limit)?;
        self.inner.truncate(len)
    }
}

/// Reopen (new manifest + CURRENT switch) then one more edit, stopped after `limit` mutating
/// calls and followed by a power loss. Returns (state before, state after, recovered state).
fn crash_during_switch(limit: u64, torn_seed: Option<u64>) -> (String, String, String, u64) {
    let faulty = Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new())));
    let (vs, w) = populate(faulty.clone());
    drop(w);
    let before = signature(&vs);
    let mut vs = recover(&*faulty).unwrap().unwrap().versions;
    let ops = Arc::new(AtomicU64::new(0));
    let limited: Arc<dyn Storage> = Arc::new(StepLimited {
        inner: faulty.clone(),
        ops: ops.clone(),
        limit,
    });
    let n = vs.new_file_number();
    let mut expected_after = None;
    if let Ok(mut w) = ManifestWriter::create(limited, &mut vs, ManifestOptions::default()) {
        if w.log_and_apply(&mut vs, add(2, meta(n, "x", "y", 1), 9))
            .is_ok()
        {
            expected_after = Some(signature(&vs));
        }
    }
    let after = signature(&vs);
    let used = ops.load(Ordering::SeqCst);
    match torn_seed {
        Some(s) => faulty.crash_torn(s).unwrap(),
        None => faulty.crash().unwrap(),
    }
    let recovered = recover(&*faulty)
        .unwrap_or_else(|e| panic!("limit {limit}: recovery failed: {e}"))
        .unwrap_or_else(|| panic!("limit {limit}: CURRENT vanished"));
    let got = signature(&recovered.versions);
    if let Some(a) = expected_after {
        assert_eq!(got, a, "limit {limit}: an acknowledged edit was lost");
    }
    (before, after, got, used)
}

#[test]
fn current_switch_is_atomic_under_a_crash_at_every_step() {
    let (_, _, _, total) = crash_during_switch(u64::MAX, None);
    assert!(total >= 8, "the switch takes several steps ({total})");
    for limit in 0..=total {
        for seed in [None, Some(limit), Some(limit + 1000)] {
            let (before, after, got, _) = crash_during_switch(limit, seed);
            // The state before the reopen or after the one extra edit — never neither.
            assert!(
                got == before || got == after,
                "limit {limit} seed {seed:?}: recovered {got}, expected {before} or {after}"
            );
        }
    }
}
