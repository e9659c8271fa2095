//! The server's topics: one [`Topic`] per name, and (for `--sync`) per topic one appender
//! thread that groups the bursts of every publisher connection into one `append_many` (one
//! commit, one fsync), then answers each burst once that append has returned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use shaledb::topic::{AppendOptions, NewRecord, Topic, TopicOptions};
use shaledb::Db;
use tokio::sync::{mpsc, oneshot};

/// Bursts a topic's appender holds queued before publishers wait (backpressure).
const QUEUED_BURSTS: usize = 256;
/// Most records one commit takes from the queue.
const GROUP_RECORDS: usize = 4096;

/// One publisher burst: its payloads and where to say whether they were appended.
pub struct Burst {
    /// The payloads, in the order the publisher sent them.
    pub values: Vec<Vec<u8>>,
    /// Gets `Ok(())` once the records are appended (handed to the OS, or on disk with `sync`).
    pub done: oneshot::Sender<Result<(), String>>,
}

/// The database and its topics' appenders.
pub struct Topics {
    db: Db,
    append: AppendOptions,
    appenders: Mutex<HashMap<String, mpsc::Sender<Burst>>>,
}

impl Topics {
    /// Topics in `db`, appended with `sync` (fsync before each acknowledgement) or not.
    pub fn new(db: Db, sync: bool) -> Topics {
        Topics {
            db,
            append: AppendOptions { sync },
            appenders: Mutex::new(HashMap::new()),
        }
    }

    /// The append options of every publish.
    pub fn append_options(&self) -> AppendOptions {
        self.append.clone()
    }

    /// The topic `name`, created if missing (minikafka creates a topic on first mention).
    /// Blocking (it may write the topic's catalog entry).
    pub fn open(&self, name: &str) -> Result<Topic, String> {
        self.db
            .topic(name, TopicOptions::default())
            .map_err(|e| format!("topic {name:?}: {e}"))
    }

    /// Where to send bursts for topic `name`; starts its appender thread on first use.
    /// Blocking (see [`Topics::open`]).
    pub fn appender(&self, name: &str) -> Result<mpsc::Sender<Burst>, String> {
        let mut appenders = self
            .appenders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(tx) = appenders.get(name).filter(|tx| !tx.is_closed()) {
            return Ok(tx.clone());
        }
        let topic = self.open(name)?;
        let (tx, rx) = mpsc::channel(QUEUED_BURSTS);
        let options = self.append.clone();
        std::thread::Builder::new()
            .name(format!("append {name}"))
            .spawn(move || run_appender(&topic, rx, &options))
            .map_err(|e| format!("cannot start the appender of {name:?}: {e}"))?;
        appenders.insert(name.to_owned(), tx.clone());
        Ok(tx)
    }
}

/// Appends queued bursts, as many as are waiting (up to [`GROUP_RECORDS`] records) per commit,
/// until every sender is gone. A failed append fails every burst of its group, and the
/// appender stops (the publishers see their connections closed without an acknowledgement).
fn run_appender(topic: &Topic, mut rx: mpsc::Receiver<Burst>, options: &AppendOptions) {
    let mut records = Vec::new();
    let mut waiting = Vec::new();
    while let Some(first) = rx.blocking_recv() {
        let mut take = |b: Burst, records: &mut Vec<NewRecord>| {
            records.extend(b.values.into_iter().map(NewRecord::value));
            waiting.push(b.done);
        };
        take(first, &mut records);
        while records.len() < GROUP_RECORDS {
            match rx.try_recv() {
                Ok(b) => take(b, &mut records),
                Err(_) => break,
            }
        }
        let result = topic
            .append_many(&records, options)
            .map(|_| ())
            .map_err(|e| format!("append to {:?} failed: {e}", topic.name()));
        records.clear();
        for done in waiting.drain(..) {
            let _ = done.send(result.clone());
        }
        if let Err(e) = result {
            eprintln!("log-server: {e}");
            return;
        }
    }
}

/// Runs blocking `f` on tokio's blocking pool, turning a lost task into an error.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("blocking task failed: {e}"))?
}

/// Shared handle to the topics.
pub type SharedTopics = Arc<Topics>;
