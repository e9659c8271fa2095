//! The subscribe port: a subscriber names its topic and then receives every record of it from
//! the start of the log, as frames, then each new one as it is committed (minikafka's
//! semantics). Bytes the subscriber sends afterwards (minikafka's client sends a heartbeat byte
//! each second) are read and ignored; its closing the connection ends the subscription.
//!
//! A blocking thread per subscriber follows the log with a [`Subscription`] (woken by commits,
//! no polling) and hands chunks of frames through a small bounded channel to the task that
//! writes the socket: a slow reader holds that thread back, nothing buffers unboundedly.

use std::time::Duration;

use bytes::BytesMut;
use shaledb::topic::{From, Subscription};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::frame;
use crate::handshake::read_topic;
use crate::topics::{blocking, SharedTopics};

/// Chunks of frames in flight between a subscription's thread and its socket.
const CHUNKS_IN_FLIGHT: usize = 4;
/// A chunk is sent once it holds this many bytes, or when the log has nothing more now.
const CHUNK_BYTES: usize = 64 << 10;
/// How often a waiting subscription checks that its connection is still there.
const CLOSED_CHECK: Duration = Duration::from_millis(250);

/// Accepts subscribers forever, one task each.
pub async fn serve(listener: TcpListener, topics: SharedTopics, max_payload: usize) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let topics = topics.clone();
                tokio::spawn(async move {
                    if let Err(e) = handle(stream, topics, max_payload).await {
                        eprintln!("log-server: subscriber {peer}: {e}");
                    }
                });
            }
            Err(e) => eprintln!("log-server: accepting a subscriber: {e}"),
        }
    }
}

/// Serves one subscriber until it closes or the log fails.
async fn handle(stream: TcpStream, topics: SharedTopics, max: usize) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let mut buf = BytesMut::with_capacity(256);
    let name = read_topic(&mut reader, &mut buf, max).await?;
    let subscription = blocking(move || {
        topics
            .open(&name)?
            .subscribe(&From::Earliest)
            .map_err(|e| format!("subscribing to {name:?}: {e}"))
    })
    .await?;
    let (tx, mut chunks) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let follower = tokio::task::spawn_blocking(move || follow(subscription, &tx));
    let mut closed = tokio::spawn(async move {
        let mut scratch = [0u8; 64];
        while matches!(reader.read(&mut scratch).await, Ok(n) if n > 0) {}
    });
    let result = loop {
        tokio::select! {
            chunk = chunks.recv() => match chunk {
                Some(chunk) => {
                    if let Err(e) = writer.write_all(&chunk).await {
                        break Err(format!("sending: {e}"));
                    }
                }
                None => break Ok(()),
            },
            _ = &mut closed => break Ok(()),
        }
    };
    closed.abort();
    drop(chunks);
    let followed = follower
        .await
        .map_err(|e| format!("subscription thread failed: {e}"))?;
    result.and(followed)
}

/// Sends the log from the subscription's position on as chunks of frames, waiting for new
/// records when caught up, until `tx`'s receiver is gone or the log fails.
fn follow(mut subscription: Subscription, tx: &mpsc::Sender<Vec<u8>>) -> Result<(), String> {
    let failed = |e: shaledb::Error| format!("reading the log: {e}");
    loop {
        if tx.is_closed() {
            return Ok(());
        }
        let Some(first) = subscription.next_timeout(CLOSED_CHECK).map_err(failed)? else {
            continue;
        };
        let mut chunk = Vec::with_capacity(CHUNK_BYTES.min(first.value.len() + 4096));
        frame::encode_into(&mut chunk, &first.value).map_err(|e| e.to_string())?;
        while chunk.len() < CHUNK_BYTES {
            match subscription.try_next().map_err(failed)? {
                Some(r) => frame::encode_into(&mut chunk, &r.value).map_err(|e| e.to_string())?,
                None => break,
            }
        }
        if tx.blocking_send(chunk).is_err() {
            return Ok(());
        }
    }
}
