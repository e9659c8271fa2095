//! The subscribe port: a subscriber names its topic and then receives every record of it from
//! the start of the log, as frames, then each new one as it is committed (minikafka's
//! semantics). Bytes the subscriber sends afterwards (minikafka's client sends a heartbeat byte
//! each second) are read and ignored; its closing the connection ends the subscription.
//!
//! Once the topic is named, the connection moves to a blocking thread of its own that follows
//! the log with a [`Subscription`] (woken by commits, no polling) and writes chunks of frames
//! straight to the socket: a slow reader blocks that thread's writes (the socket's buffer is
//! the only buffer), so nothing accumulates for it. Writing from that thread, rather than
//! handing chunks to an async task, is the shorter path (no measurable difference).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream as StdStream;
use std::time::Duration;

use bytes::BytesMut;
use shaledb::topic::{From, Subscription};
use tokio::net::{TcpListener, TcpStream};

use crate::frame;
use crate::handshake::read_topic;
use crate::topics::{blocking, SharedTopics};

/// A chunk is written once it holds this many bytes, or when the log has nothing more now.
const CHUNK_BYTES: usize = 64 << 10;
/// How often a waiting subscription checks that its connection is still there.
const CLOSED_CHECK: Duration = Duration::from_millis(250);
/// A subscriber that accepts no byte for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

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
async fn handle(mut stream: TcpStream, topics: SharedTopics, max: usize) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let mut buf = BytesMut::with_capacity(256);
    let name = read_topic(&mut stream, &mut buf, max).await?;
    let socket = stream
        .into_std()
        .and_then(|s| s.set_nonblocking(false).map(|()| s))
        .and_then(|s| s.set_write_timeout(Some(WRITE_TIMEOUT)).map(|()| s))
        .map_err(|e| format!("preparing the socket: {e}"))?;
    blocking(move || {
        let subscription = topics
            .open(&name)?
            .subscribe(&From::Earliest)
            .map_err(|e| format!("subscribing to {name:?}: {e}"))?;
        follow(subscription, socket)
    })
    .await
}

/// Writes the log from the subscription's position on as chunks of frames, waiting for new
/// records when caught up, until the subscriber goes away or the log fails.
fn follow(mut subscription: Subscription, mut socket: StdStream) -> Result<(), String> {
    let failed = |e: shaledb::Error| format!("reading the log: {e}");
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    loop {
        let Some(first) = subscription.next_timeout(CLOSED_CHECK).map_err(failed)? else {
            if peer_closed(&mut socket) {
                return Ok(());
            }
            continue;
        };
        chunk.clear();
        frame::encode_into(&mut chunk, &first.value).map_err(|e| e.to_string())?;
        // Once caught up, give the writers one turn before writing: records committed meanwhile
        // join this chunk instead of costing a wake-up and a write each.
        let mut yielded = false;
        while chunk.len() < CHUNK_BYTES {
            match subscription.try_next().map_err(failed)? {
                Some(r) => frame::encode_into(&mut chunk, &r.value).map_err(|e| e.to_string())?,
                None if !yielded => {
                    yielded = true;
                    std::thread::yield_now();
                }
                None => break,
            }
        }
        if socket.write_all(&chunk).is_err() {
            return Ok(()); // gone (or stalled past WRITE_TIMEOUT): nothing more to send it
        }
    }
}

/// Whether the subscriber has closed its connection, reading (and ignoring) what it sent.
fn peer_closed(socket: &mut StdStream) -> bool {
    if socket.set_nonblocking(true).is_err() {
        return true;
    }
    let mut scratch = [0u8; 64];
    let closed = loop {
        match socket.read(&mut scratch) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break true,
        }
    };
    closed || socket.set_nonblocking(false).is_err()
}
