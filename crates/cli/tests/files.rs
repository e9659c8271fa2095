//! verify, sst dump, wal dump and recordio dump, driven as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};

use common::{go_vectors, ok, s, sample_db, shaledb};

fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn verify_passes_an_intact_database_with_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["compact", s(&db)]);
    let run = ok(&["verify", s(&db)]);
    assert!(run.stdout.contains("OK:"), "{}", run.stdout);
    let report: serde_json::Value =
        serde_json::from_str(&ok(&["verify", s(&db), "--json"]).stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert!(report["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["role"] == "table"));
}

#[test]
fn verify_finds_a_flipped_byte_in_a_table_and_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["compact", s(&db)]);
    let table = files_ending(&db, ".sst").pop().expect("a table");
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[20] ^= 0x40; // inside the first data block
    std::fs::write(&table, bytes).unwrap();
    let run = shaledb(&["verify", s(&db)]);
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("PROBLEM") && run.stdout.contains("CORRUPTION"),
        "{}",
        run.stdout
    );
    let name = table.file_name().unwrap().to_str().unwrap();
    assert!(run.stdout.contains(name), "{}", run.stdout);
}

#[test]
fn sst_dump_prints_properties_blocks_and_entries_of_a_fresh_table() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["compact", s(&db)]);
    let table = files_ending(&db, ".sst").pop().expect("a table");
    let lines = ok(&["sst", "dump", s(&table)]).json_lines();
    assert_eq!(lines[0]["properties"]["entries"], 5);
    assert_eq!(lines[0]["footer"]["table_format_version"], 1);
    let index = lines[1]["index"].as_array().unwrap();
    assert!(!index.is_empty());
    assert_eq!(index[0]["block_offset"], 8);
    assert!(index[0]["block_len"].as_u64().unwrap() > 0);
    let entries: Vec<_> = lines.iter().filter(|l| l.get("seq").is_some()).collect();
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[0]["keyspace"], "default");
    assert_eq!(entries[0]["key"], "user:1");
    assert_eq!(entries[0]["kind"], "value");
    assert_eq!(entries[0]["value"], "ada");
}

#[test]
fn wal_dump_prints_the_header_and_batches_with_sequence_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["put", s(&db), "k", "v"]);
    ok(&["delete", s(&db), "user:1"]);
    let mut batches = Vec::new();
    for wal in files_ending(&db, ".log") {
        let lines = ok(&["wal", "dump", s(&wal)]).json_lines();
        assert_eq!(lines[1]["record"], "header", "{lines:?}");
        assert_ne!(lines.last().unwrap()["end"], "corruption");
        batches.extend(lines.into_iter().filter(|l| l["record"] == "batch"));
    }
    let ops: Vec<_> = batches
        .iter()
        .flat_map(|b| b["ops"].as_array().unwrap().clone())
        .collect();
    assert!(
        ops.iter()
            .any(|o| o["op"] == "delete" && o["key"] == "user:1" && o["seq"].as_u64().is_some()),
        "{ops:?}"
    );
}

#[test]
fn recordio_dump_reads_go_sstables_files_of_every_version() {
    for version in ["v1", "v2", "v3", "v4"] {
        let dir = go_vectors().join(version);
        let single = dir.join("recordio_UncompressedSingleRecord");
        let lines = ok(&["recordio", "dump", s(&single), "--value-encoding", "hex"]).json_lines();
        assert_eq!(lines[0]["format"], "go-sstables");
        assert_eq!(lines[0]["version"], version[1..].parse::<u32>().unwrap());
        assert_eq!(lines[1]["data"], "000102030405060708090a0b0c");
        let multi = dir.join("recordio_SnappyWriterMultiRecord_asc");
        let lines = ok(&["recordio", "dump", s(&multi)]).json_lines();
        assert_eq!(lines.last().unwrap()["records"], 255, "{version}");
        assert_eq!(lines[0]["compression"], "snappy");
    }
    let nil = go_vectors().join("v4/recordio_UncompressedNilAndEmptyRecord");
    let lines = ok(&["recordio", "dump", s(&nil)]).json_lines();
    assert_eq!(lines[1]["data"], serde_json::Value::Null);
    assert_eq!(lines[2]["data"], "");
}

#[test]
fn damaged_or_foreign_files_are_typed_errors_not_panics() {
    let crc = go_vectors().join("v4/recordio_UncompressedCrcFailure");
    let run = shaledb(&["recordio", "dump", s(&crc)]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("CORRUPTION"), "{}", run.stderr);
    let v256 = go_vectors().join("v4/recordio_UncompressedSingleRecord_v256");
    assert!(shaledb(&["recordio", "dump", s(&v256)])
        .stderr
        .contains("VERSION_UNSUPPORTED"));
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("junk.sst");
    std::fs::write(&junk, vec![7u8; 300]).unwrap();
    for cmd in [["sst", "dump"], ["wal", "dump"], ["recordio", "dump"]] {
        let run = shaledb(&[cmd[0], cmd[1], s(&junk)]);
        assert_eq!(run.code, Some(2), "{cmd:?}: {}", run.stderr);
        assert!(run.stderr.contains("error ["), "{cmd:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    let run = shaledb(&["sst", "dump", s(&tmp.path().join("missing.sst"))]);
    assert!(run.stderr.contains("NOT_FOUND"), "{}", run.stderr);
}
