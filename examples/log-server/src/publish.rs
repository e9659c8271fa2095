//! The publish port: a publisher names its topic, then sends frames; each frame is answered
//! with one `K` byte once its record is appended (the append returned: the record reached the
//! OS, or the disk with `--sync`). Frames that arrive together form a burst, handed to the
//! topic's appender as one request; acknowledgements go out in order.

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::frame;
use crate::handshake::read_topic;
use crate::topics::{blocking, Burst, SharedTopics};

/// Most frames in one burst.
const BURST_FRAMES: usize = 1024;
/// Most payload bytes in one burst.
const BURST_BYTES: usize = 1 << 20;
/// Bursts of one connection awaiting their acknowledgement before it stops reading.
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

/// Serves one publisher until it closes, sends a malformed frame, or an append fails.
async fn handle(stream: TcpStream, topics: SharedTopics, max: usize) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let (mut reader, writer) = stream.into_split();
    let mut buf = BytesMut::with_capacity(64 << 10);
    let name = read_topic(&mut reader, &mut buf, max).await?;
    let appender = {
        let topics = topics.clone();
        blocking(move || topics.appender(&name)).await?
    };
    let (acks, pending) = mpsc::channel(UNACKED_BURSTS);
    let acker = tokio::spawn(acknowledge(writer, pending));
    let read = async {
        loop {
            let (frames, used) = frame::parse_burst(&buf, max, BURST_FRAMES, BURST_BYTES)
                .map_err(|e| e.to_string())?;
            if frames.is_empty() {
                match reader.read_buf(&mut buf).await {
                    Ok(0) => return Ok(()),
                    Ok(_) => continue,
                    Err(e) => return Err(format!("reading: {e}")),
                }
            }
            let values = frames
                .into_iter()
                .map(|r| buf.get(r).map(<[u8]>::to_vec).unwrap_or_default())
                .collect::<Vec<_>>();
            buf.advance(used);
            let count = values.len();
            let (done, appended) = oneshot::channel();
            appender
                .send(Burst { values, done })
                .await
                .map_err(|_| "the topic's appender stopped".to_owned())?;
            // Waits while UNACKED_BURSTS are outstanding: a publisher cannot outrun the log.
            if acks.send((count, appended)).await.is_err() {
                return Err("the connection's acknowledgements stopped".into());
            }
        }
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
