//! export and import (the archive browsers export), driven as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::path::Path;

use common::{ok, s, sample_db, shaledb};

/// One entry of a hand-made archive: name, type, data.
type Entry<'a> = (&'a str, tar::EntryType, &'a [u8]);

/// Builds a tar archive at `path` from `(name, type, bytes)` entries, as other tools might.
fn write_tar(path: &Path, entries: &[Entry]) {
    let mut b = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (name, kind, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        if kind.is_symlink() {
            h.set_link_name("CURRENT").unwrap();
        }
        // Bypasses the builder's own path checks, so that bad names reach the archive.
        let bytes = name.as_bytes();
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.finish().unwrap();
}

#[test]
fn export_then_import_gives_the_same_dump() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("notes");
    sample_db(&db);
    let archive = tmp.path().join("notes.tar");
    ok(&["export", s(&db), s(&archive)]);
    let copy = tmp.path().join("copy");
    let run = ok(&["import", s(&archive), s(&copy)]);
    assert!(run.stdout.contains("intact"), "{}", run.stdout);
    assert_eq!(ok(&["dump", s(&copy)]).stdout, ok(&["dump", s(&db)]).stdout);
    assert_eq!(ok(&["verify", s(&copy)]).code, Some(0));
}

#[test]
fn the_export_is_a_ustar_archive_of_one_directory_without_a_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("notes");
    sample_db(&db);
    let archive = tmp.path().join("notes.tar");
    ok(&["export", s(&db), s(&archive)]);
    let mut a = tar::Archive::new(std::fs::File::open(&archive).unwrap());
    let mut names = Vec::new();
    for e in a.entries().unwrap() {
        let e = e.unwrap();
        let h = e.header();
        assert!(h.as_ustar().is_some(), "a ustar header");
        assert_eq!(h.uid().unwrap(), 0);
        let mode = h.mode().unwrap();
        let path = e.path().unwrap().to_str().unwrap().to_owned();
        if h.entry_type().is_dir() {
            assert_eq!((path.as_str(), mode), ("notes/", 0o755));
        } else {
            assert_eq!(mode, 0o644);
            assert!(path.starts_with("notes/"), "{path}");
        }
        names.push(path);
    }
    assert_eq!(names[0], "notes/");
    assert!(names.contains(&"notes/CURRENT".to_owned()));
    assert!(!names.iter().any(|n| n.ends_with("LOCK")));
}

#[test]
fn import_accepts_an_archive_of_top_level_files_as_tar_makes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    let archive = tmp.path().join("flat.tar");
    let status = std::process::Command::new("tar")
        .arg("-cf")
        .arg(&archive)
        .arg("-C")
        .arg(&db)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    let copy = tmp.path().join("copy");
    ok(&["import", s(&archive), s(&copy)]);
    assert!(!copy.join("LOCK").exists());
    assert_eq!(ok(&["dump", s(&copy)]).stdout, ok(&["dump", s(&db)]).stdout);
}

#[test]
fn import_refuses_unsafe_or_malformed_archives_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[Entry], &str)] = &[
        (
            "dotdot",
            &[("../CURRENT", tar::EntryType::Regular, b"x")],
            "leaves the archive",
        ),
        (
            "absolute",
            &[("/etc/CURRENT", tar::EntryType::Regular, b"x")],
            "absolute",
        ),
        (
            "nested",
            &[("a/b/CURRENT", tar::EntryType::Regular, b"x")],
            "nested",
        ),
        (
            "link",
            &[("db/CURRENT", tar::EntryType::Symlink, b"")],
            "not allowed",
        ),
        (
            "twice",
            &[
                ("db/CURRENT", tar::EntryType::Regular, b"x"),
                ("db/CURRENT", tar::EntryType::Regular, b"y"),
            ],
            "twice",
        ),
        (
            "two-dirs",
            &[
                ("a/CURRENT", tar::EntryType::Regular, b"x"),
                ("b/MANIFEST", tar::EntryType::Regular, b"y"),
            ],
            "same directory",
        ),
        (
            "empty",
            &[("db/", tar::EntryType::Directory, b"")],
            "no files",
        ),
    ];
    for (name, entries, message) in cases {
        let archive = tmp.path().join(format!("{name}.tar"));
        write_tar(&archive, entries);
        let dest = tmp.path().join(format!("out-{name}"));
        let run = shaledb(&["import", s(&archive), s(&dest)]);
        assert_eq!(run.code, Some(2), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
        assert!(!dest.exists(), "{name}: wrote {}", dest.display());
    }
    let truncated = tmp.path().join("truncated.tar");
    let db = tmp.path().join("db");
    sample_db(&db);
    let good = tmp.path().join("good.tar");
    ok(&["export", s(&db), s(&good)]);
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..1100]).unwrap();
    let run = shaledb(&[
        "import",
        s(&truncated),
        s(&tmp.path().join("out-truncated")),
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let run = shaledb(&["import", s(&good), s(&db)]);
    assert!(run.stderr.contains("ALREADY_EXISTS"), "{}", run.stderr);
}
