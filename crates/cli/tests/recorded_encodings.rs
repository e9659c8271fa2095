//! The encodings the JavaScript package records for each keyspace are the tool's defaults:
//! get, scan, dump, put and load use them when no --key-encoding/--value-encoding is given, and
//! info shows them.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::path::Path;

use common::{ok, s, shaledb_with_input};
use serde_json::json;
use shaledb::{Db, Options};

/// A database with keyspace "users" recorded as utf8 keys and json values (as the JavaScript
/// package records `db.keyspace("users", { valueEncoding: "json" })`), and an unrecorded "raw".
fn recorded_db(dir: &Path) {
    let db = Db::open(dir, Options::default()).unwrap();
    let users = db.keyspace("users").unwrap();
    users
        .set_metadata(br#"{"keyEncoding":"utf8","valueEncoding":"json"}"#)
        .unwrap();
    users.put(b"ada", br#"{"born":1815}"#).unwrap();
    db.keyspace("raw")
        .unwrap()
        .put(b"k", br#"{"a":1}"#)
        .unwrap();
    db.close().unwrap();
}

#[test]
fn get_scan_and_dump_read_a_keyspace_with_its_recorded_encodings_unless_told_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    recorded_db(&db);
    let got = ok(&["get", s(&db), "ada", "-k", "users", "--json"]).json_lines();
    assert_eq!(
        got,
        vec![json!({"keyspace": "users", "key": "ada", "value": {"born": 1815}})]
    );
    let scanned = ok(&["scan", s(&db), "-k", "users"]).json_lines();
    assert_eq!(scanned[0]["value"], json!({"born": 1815}));
    // An unrecorded keyspace stays auto (a string); a flag given wins over the record.
    let dumped = ok(&["dump", s(&db)]).json_lines();
    assert!(dumped.contains(&json!({"keyspace": "raw", "key": "k", "value": "{\"a\":1}"})));
    assert!(dumped.contains(&json!({"keyspace": "users", "key": "ada", "value": {"born": 1815}})));
    let as_text = ok(&[
        "get",
        s(&db),
        "ada",
        "-k",
        "users",
        "--value-encoding",
        "auto",
    ]);
    assert_eq!(as_text.stdout.trim(), r#"{"born":1815}"#);
}

#[test]
fn put_and_load_write_a_keyspace_with_its_recorded_encodings() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    recorded_db(&db);
    // json: the argument is parsed as JSON and stored as its JSON text.
    ok(&["put", s(&db), "grace", "-k", "users", "[1, 2]"]);
    let run = shaledb_with_input(
        &["load", s(&db), "-k", "users"],
        br#"{"key":"linus","value":{"x": true}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let opened = Db::open(&db, Options::default()).unwrap();
    let users = opened.keyspace("users").unwrap();
    assert_eq!(users.get(b"grace").unwrap().as_deref(), Some(&b"[1,2]"[..]));
    assert_eq!(
        users.get(b"linus").unwrap().as_deref(),
        Some(&br#"{"x":true}"#[..])
    );
}

#[test]
fn info_shows_each_keyspaces_recorded_encodings() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    recorded_db(&db);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", s(&db), "--json"]).stdout).unwrap();
    let keyspaces = info["keyspaces"].as_array().unwrap();
    let users = keyspaces.iter().find(|k| k["name"] == "users").unwrap();
    assert_eq!(
        users["encodings"],
        json!({"keyEncoding": "utf8", "valueEncoding": "json"})
    );
    let raw = keyspaces.iter().find(|k| k["name"] == "raw").unwrap();
    assert_eq!(raw["encodings"], json!(null));
    let text = ok(&["info", s(&db)]).stdout;
    assert!(text.contains("users  keys utf8, values json"), "{text}");
}
