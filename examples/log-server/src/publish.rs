//! The publish port: a publisher names its topic, then sends frames; each frame is answered
//! with one `K` byte once its record is appended (the append returned: the record reached the
//! OS, or the disk with `--sync`). Frames that arrive together form a burst, appended with one
//! `append_many` (one commit); acknowledgements go out in order.
//!
//! Without `--sync` a burst is appended right in the connection's task: the append takes
//! microseconds, less than handing it to another thread and back (measured with minikafka's
//! Publish1Topic: 26-28 µs/op inline, 31-36 µs/op through a per-topic thread). With `--sync`
//! every commit waits for the disk, so the bursts of all connections go to the topic's appender
//! thread ([`crate::topics`]), which shares one commit, and one fsync, among them.

use bytes::{Buf, BytesMut};
use shaledb::topic::{NewRecord, Topic};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::frame;
use crate::handshake::read_topic;
use crate::topics::{blocking, Burst, SharedTopics};

/// Most frames in one burst.
const BURST_FRAMES: usize = 1024;
/// Most payload bytes in one burst.
const BURST_BYTES: usize = 1 << 20;
/// Bursts of one connection awaiting their acknowledgement before it stops reading (`--sync`).
const UNACKED_BURSTS: usize = 64;

/// Accepts publishers forever, one task each.
pub async fn serve(listener: TcpListener, topics: SharedTopics, max_payload: usize) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let topics = topics.clone();
                tokio::spawn(async move {
                    if let Err(e) = handle(stream, topics, max_payload).await {
                        eprintln!("log-server: publisher {peer}: {e}");
                    }
                });
            }
            Err(e) => eprintln!("log-server: accepting a publisher: {e}"),
        }
    }
}

/// A connection's frames not yet appended, and where more come from.
struct Incoming {
    reader: OwnedReadHalf,
    buf: BytesMut,
    max: usize,
}

impl Incoming {
    /// The payloads of the next burst (at least one frame), or `None` when the publisher has
    /// closed the connection. A frame cut short by the close is dropped, never appended.
    async fn next_burst(&mut self) -> Result<Option<Vec<Vec<u8>>>, String> {
        loop {
            let (frames, used) = frame::parse_burst(&self.buf, self.max, BURST_FRAMES, BURST_BYTES)
                .map_err(|e| e.to_string())?;
            if !frames.is_empty() {
                let values = frames
                    .into_iter()
                    .map(|r| self.buf.get(r).map(<[u8]>::to_vec).unwrap_or_default())
                    .collect();
                self.buf.advance(used);
                return Ok(Some(values));
            }
            match self.reader.read_buf(&mut self.buf).await {
                Ok(0) => return Ok(None),
                Ok(_) => {}
                Err(e) => return Err(format!("reading: {e}")),
            }
        }
    }
}

/// Serves one publisher until it closes, sends a malformed frame, or an append fails.
async fn handle(stream: TcpStream, topics: SharedTopics, max: usize) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let (mut reader, writer) = stream.into_split();
    let mut buf = BytesMut::with_capacity(64 << 10);
    let name = read_topic(&mut reader, &mut buf, max).await?;
    let incoming = Incoming { reader, buf, max };
    if topics.append_options().sync {
        let topics = topics.clone();
        let appender = blocking(move || topics.appender(&name)).await?;
        grouped(incoming, writer, appender).await
    } else {
        let opened = topics.clone();
        let topic = blocking(move || opened.open(&name)).await?;
        inline(incoming, writer, &topic, &topics).await
    }
}

/// Appends each burst in this task, then acknowledges it.
async fn inline(
    mut incoming: Incoming,
    mut writer: OwnedWriteHalf,
    topic: &Topic,
    topics: &SharedTopics,
) -> Result<(), String> {
    let options = topics.append_options();
    let mut ks = Vec::new();
    while let Some(values) = incoming.next_burst().await? {
        let records: Vec<NewRecord> = values.into_iter().map(NewRecord::value).collect();
        // Blocks this worker for the append's few microseconds (no fsync without `--sync`).
        topic
            .append_many(&records, &options)
            .map_err(|e| format!("append to {:?} failed: {e}", topic.name()))?;
        ks.clear();
        ks.resize(records.len(), b'K');
        writer
            .write_all(&ks)
            .await
            .map_err(|e| format!("acknowledging: {e}"))?;
    }
    Ok(())
}

/// Hands each burst to the topic's appender thread (which shares commits among connections)
/// while a second task acknowledges the appended bursts in order.
async fn grouped(
    mut incoming: Incoming,
    writer: OwnedWriteHalf,
    appender: mpsc::Sender<Burst>,
) -> Result<(), String> {
    let (acks, pending) = mpsc::channel(UNACKED_BURSTS);
    let acker = tokio::spawn(acknowledge(writer, pending));
    let read = async {
        while let Some(values) = incoming.next_burst().await? {
            let count = values.len();
            let (done, appended) = oneshot::channel();
            appender
                .send(Burst { values, done })
                .await
                .map_err(|_| "the topic's appender stopped".to_owned())?;
            // Waits while UNACKED_BURSTS are outstanding: a publisher cannot outrun the log.
            if acks.send((count, appended)).await.is_err() {
                return Err("the connection's acknowledgements stopped".to_owned());
            }
        }
        Ok(())
    };
    let read_result: Result<(), String> = read.await;
    drop(acks);
    let ack_result = acker
        .await
        .map_err(|e| format!("acknowledging task failed: {e}"))?;
    read_result.and(ack_result)
}

type Pending = (usize, oneshot::Receiver<Result<(), String>>);

/// Writes one `K` per appended frame, burst by burst in order; stops at the first failed append.
async fn acknowledge(
    mut writer: OwnedWriteHalf,
    mut pending: mpsc::Receiver<Pending>,
) -> Result<(), String> {
    let mut ks = Vec::new();
    while let Some((count, appended)) = pending.recv().await {
        match appended.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err("the append was dropped".into()),
        }
        ks.clear();
        ks.resize(count, b'K');
        writer
            .write_all(&ks)
            .await
            .map_err(|e| format!("acknowledging: {e}"))?;
    }
    Ok(())
}
