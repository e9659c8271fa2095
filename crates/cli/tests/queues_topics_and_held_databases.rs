//! queue and topic inspection, and the tool on a database another process holds open (this
//! test process holds it; the tool is a child process).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::{ok, s, sample_db, shaledb};
use shaledb::queue::{PushOptions, QueueOptions};
use shaledb::topic::{AppendOptions, NewRecord, TopicOptions};
use shaledb::{Db, Options};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).unwrap()
}

#[test]
fn queue_and_topic_show_figures_and_peek_without_consuming() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = open(&dir);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    q.push(b"first", PushOptions::default()).unwrap();
    q.push(b"second", PushOptions::default()).unwrap();
    let t = db.topic("events", TopicOptions::default()).unwrap();
    for v in ["a", "b", "c"] {
        t.append(NewRecord::value(v), &AppendOptions::default())
            .unwrap();
    }
    t.commit("readers", 1).unwrap();
    drop((q, t));
    db.close().unwrap();

    let queues = ok(&["queue", s(&dir)]).json_lines();
    assert_eq!(queues[0]["queue"], "jobs");
    assert_eq!(queues[0]["items"], 2);
    for _ in 0..2 {
        let one = ok(&["queue", s(&dir), "jobs"]).json_lines();
        assert_eq!(one[0]["next"]["value"], "first");
    }
    let topics = ok(&["topic", s(&dir)]).json_lines();
    assert_eq!(
        (topics[0]["topic"].as_str(), topics[0]["next"].as_u64()),
        (Some("events"), Some(3))
    );
    let records = ok(&["topic", s(&dir), "events", "--from", "1", "--limit", "5"]).json_lines();
    let values: Vec<_> = records
        .iter()
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["b", "c"]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", s(&dir), "--json"]).stdout).unwrap();
    assert_eq!(info["queues"][0]["name"], "jobs");
    assert_eq!(info["topics"][0]["name"], "events");
    let reserved: Vec<_> = info["keyspaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["reserved"] == true)
        .map(|k| k["display"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        reserved.iter().all(|n| n.starts_with("\\0")),
        "{reserved:?}"
    );
    let text = ok(&["info", s(&dir)]).stdout;
    assert!(
        text.contains("(reserved)") && text.contains("jobs"),
        "{text}"
    );
}

#[test]
fn on_a_database_held_open_elsewhere_verify_works_and_writes_and_checkpoints_say_locked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    sample_db(&dir);
    let holder = open(&dir);
    holder.put(b"held", b"yes").unwrap();

    assert_eq!(ok(&["verify", s(&dir)]).code, Some(0));
    // The live log (preallocated: zeros after its data) dumps with the holder's write in it;
    // every log dumps without corruption (the newest may be the next log, prepared ahead of
    // need by the holder's background thread: a file header and zeros).
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let dumps: Vec<_> = logs
        .iter()
        .map(|log| ok(&["wal", "dump", s(log)]).json_lines())
        .collect();
    assert!(
        dumps
            .iter()
            .flatten()
            .any(|l| l["record"] == "batch" && l["ops"][0]["key"] == "held"),
        "{dumps:?}"
    );
    for dump in &dumps {
        assert_ne!(dump.last().unwrap()["end"], "corruption", "{dump:?}");
    }
    let info = ok(&["info", s(&dir)]).stdout;
    assert!(info.contains("keyspaces"), "{info}");
    for args in [
        vec!["put", s(&dir), "k", "v"],
        vec!["delete", s(&dir), "k"],
        vec!["compact", s(&dir)],
        vec!["checkpoint", s(&dir), s(&tmp.path().join("cp"))],
    ] {
        let run = shaledb(&args);
        assert_eq!(run.code, Some(2), "{args:?}");
        assert!(run.stderr.contains("[LOCKED]"), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("another process"), "{}", run.stderr);
    }
    holder.close().unwrap();
}

#[test]
fn on_a_database_held_open_elsewhere_reads_succeed_and_see_its_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    sample_db(&dir);
    let holder = open(&dir);
    holder.put(b"held", b"yes").unwrap();
    let q = holder.queue("jobs", QueueOptions::default()).unwrap();
    q.push(b"work", PushOptions::default()).unwrap();
    let t = holder.topic("events", TopicOptions::default()).unwrap();
    t.append(NewRecord::value("e1"), &AppendOptions::default())
        .unwrap();

    assert_eq!(ok(&["get", s(&dir), "held"]).stdout, "yes\n");
    assert_eq!(
        ok(&["scan", s(&dir), "--prefix", "user:"])
            .json_lines()
            .len(),
        3
    );
    assert_eq!(ok(&["dump", s(&dir)]).json_lines().len(), 6);
    assert_eq!(
        ok(&["topic", s(&dir), "events"]).json_lines()[0]["value"],
        "e1"
    );
    let queue = ok(&["queue", s(&dir), "jobs"]).json_lines();
    assert_eq!(queue[0]["items"], 1, "{queue:?}");
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", s(&dir), "--json"]).stdout).unwrap();
    assert_eq!(info["open_error"], serde_json::Value::Null);
    assert_eq!(info["sequence"], holder.sequence());
    // The holder still owns it: its writes go on.
    holder.put(b"after", b"1").unwrap();
    drop((q, t));
    holder.close().unwrap();
}

#[test]
fn inspecting_missing_queues_and_topics_says_not_found_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    sample_db(&dir);
    assert_eq!(ok(&["queue", s(&dir)]).stdout, "");
    assert_eq!(ok(&["topic", s(&dir)]).stdout, "");
    for args in [["queue", s(&dir), "jobs"], ["topic", s(&dir), "events"]] {
        let run = shaledb(&args);
        assert_eq!(run.code, Some(2), "{args:?}");
        assert!(
            run.stderr.contains("[NOT_FOUND]"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let db = open(&dir);
    db.queue("other", QueueOptions::default()).unwrap();
    db.close().unwrap();
    assert!(shaledb(&["queue", s(&dir), "jobs"])
        .stderr
        .contains("[NOT_FOUND]"));
    let db = open(&dir);
    assert_eq!(db.queues().unwrap(), ["other"]);
    assert!(db.topics().unwrap().is_empty());
    db.close().unwrap();
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["info", s(&dir), "--json"]).stdout).unwrap();
    assert_eq!(info["topics"], serde_json::json!([]));
}
