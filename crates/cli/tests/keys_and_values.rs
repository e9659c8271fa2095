//! info, get, scan, put, delete, load and dump, driven as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::{ok, s, sample_db, shaledb, shaledb_with_input};
use serde_json::json;

#[test]
fn load_then_dump_prints_every_key_of_every_keyspace_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    let lines = ok(&["dump", s(&db)]).json_lines();
    assert_eq!(
        lines,
        vec![
            json!({"keyspace": "default", "key": "user:1", "value": "ada"}),
            json!({"keyspace": "default", "key": "user:2", "value": "grace"}),
            json!({"keyspace": "default", "key": "user:3", "value": "barbara"}),
            json!({"keyspace": "default", "key": {"base64": "/wA="}, "value": {"base64": "AP8="}}),
            json!({"keyspace": "events", "key": "0001", "value": "signup"}),
        ]
    );
}

#[test]
fn a_dump_loads_into_a_new_database_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    sample_db(&a);
    let dump = ok(&["dump", s(&a)]).stdout;
    let run = shaledb_with_input(&["load", s(&b), "-", "--batch", "2"], dump.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(ok(&["dump", s(&b)]).stdout, dump);
}

#[test]
fn get_prints_the_value_and_exits_1_for_a_missing_key() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    assert_eq!(ok(&["get", s(&db), "user:2"]).stdout, "grace\n");
    assert_eq!(
        ok(&["get", s(&db), "0001", "--keyspace", "events", "--json"]).json_lines(),
        vec![json!({"keyspace": "events", "key": "0001", "value": "signup"})]
    );
    assert_eq!(
        ok(&[
            "get",
            s(&db),
            "ff00",
            "--key-encoding",
            "hex",
            "--value-encoding",
            "hex"
        ])
        .stdout,
        "00ff\n"
    );
    let missing = shaledb(&["get", s(&db), "user:9"]);
    assert_eq!(missing.code, Some(1));
    assert!(missing.stderr.contains("no key"), "{}", missing.stderr);
}

#[test]
fn scan_honours_prefix_range_limit_and_reverse() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    let keys = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["scan", s(&db)];
        all.extend_from_slice(args);
        ok(&all)
            .json_lines()
            .iter()
            .map(|l| l["key"].to_string())
            .collect()
    };
    assert_eq!(keys(&["--prefix", "user:"]).len(), 3);
    assert_eq!(
        keys(&["--start", "user:2", "--end", "user:3"]),
        vec!["\"user:2\""]
    );
    assert_eq!(
        keys(&["--prefix", "user:", "--reverse", "--limit", "2"]),
        vec!["\"user:3\"", "\"user:2\""]
    );
    assert_eq!(keys(&["--keyspace", "events"]), vec!["\"0001\""]);
}

#[test]
fn put_and_delete_change_what_get_and_scan_see() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["put", s(&db), "user:4", "katherine"]);
    ok(&[
        "put",
        s(&db),
        "k",
        r#"{"a":1}"#,
        "--keyspace",
        "new",
        "--value-encoding",
        "json",
    ]);
    ok(&["delete", s(&db), "user:1"]);
    assert_eq!(ok(&["get", s(&db), "user:4"]).stdout, "katherine\n");
    assert_eq!(shaledb(&["get", s(&db), "user:1"]).code, Some(1));
    assert_eq!(
        ok(&["scan", s(&db), "-k", "new", "--value-encoding", "json"]).json_lines(),
        vec![json!({"keyspace": "new", "key": "k", "value": {"a": 1}})]
    );
}

#[test]
fn info_shows_levels_files_keyspaces_and_format_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    ok(&["compact", s(&db)]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", s(&db), "--json"]).stdout).unwrap();
    assert!(info["manifest"]["format_version"].as_u64().unwrap() >= 2);
    assert_eq!(info["table_formats"], json!([1]));
    assert!(info["sequence"].as_u64().unwrap() >= 5);
    let names: Vec<&str> = info["keyspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"events"), "{names:?}");
    let tables: u64 = info["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["files"].as_u64().unwrap())
        .sum();
    assert!(tables >= 1);
    let text = ok(&["info", s(&db)]).stdout;
    assert!(
        text.contains("keyspaces") && text.contains("events"),
        "{text}"
    );
}

#[test]
fn a_bad_load_line_is_reported_with_its_line_number() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let input = "{\"key\":\"a\",\"value\":\"1\"}\n{\"key\": oops}\n";
    let run = shaledb_with_input(&["load", s(&db)], input.as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("line 2"), "{}", run.stderr);
    let run = shaledb_with_input(&["load", s(&db)], b"[1,2]\n");
    assert!(run.stderr.contains("line 1"), "{}", run.stderr);
}

#[test]
fn a_missing_database_is_not_found_and_nothing_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("nope");
    for cmd in ["info", "dump", "verify", "compact"] {
        let run = shaledb(&[cmd, s(&db)]);
        assert_eq!(run.code, Some(2), "{cmd}");
        assert!(run.stderr.contains("NOT_FOUND"), "{cmd}: {}", run.stderr);
    }
    assert_eq!(shaledb(&["get", s(&db), "k"]).code, Some(2));
    assert!(!db.exists());
}

#[test]
fn bad_arguments_exit_2_with_usage() {
    assert_eq!(shaledb(&["frobnicate"]).code, Some(2));
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    sample_db(&db);
    let run = shaledb(&["get", s(&db), "zz", "--key-encoding", "hex"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("USAGE"), "{}", run.stderr);
    let run = shaledb(&["scan", s(&db), "--keyspace", "nosuch"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("NOT_FOUND"), "{}", run.stderr);
}

#[test]
fn a_reader_that_stops_early_ends_a_dump_quietly_with_exit_0() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let input: String = (0..5000)
        .map(|i| format!("{{\"key\":\"k{i:05}\",\"value\":\"{}\"}}\n", "v".repeat(40)))
        .collect();
    assert_eq!(
        shaledb_with_input(&["load", s(&db)], input.as_bytes()).code,
        Some(0)
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_shaledb"))
        .args(["dump", s(&db)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap(); // then the pipe closes, as `shaledb dump db | head -1` does
    let out = child.wait_with_output().unwrap();
    assert!(first.contains("k00000"), "{first}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
