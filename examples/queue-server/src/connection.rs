//! One client connection: reads requests (several may arrive in one read: pipelining), runs
//! them in order, writes the replies of everything read so far in one write, and on disconnect
//! gives the client's open reads back ([`Session::end`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::protocol::{parse, Parsed};
use crate::server::Server;
use crate::session::{Flow, Session};
use crate::stats::bump;

/// Bytes read from the socket at a time (the buffer grows to hold a whole `set`).
const READ_CHUNK: usize = 16 << 10;

/// Largest buffer a connection keeps between requests.
const BUFFER_KEPT: usize = 1 << 20;

/// Serves one client until it disconnects, sends `quit`, or sends a request after which the
/// stream cannot be followed.
pub async fn serve(mut stream: TcpStream, server: Arc<Server>) {
    bump(&server.counters.total_connections);
    bump(&server.counters.curr_connections);
    let _ = stream.set_nodelay(true);
    let mut session = Session::new(server.clone());
    if let Err(e) = run(&mut stream, &mut session, &server).await {
        if e.kind() != std::io::ErrorKind::ConnectionReset {
            eprintln!("queue-server: connection: {e}");
        }
    }
    session.end();
    let _ = stream.shutdown().await;
    server
        .counters
        .curr_connections
        .fetch_sub(1, Ordering::Relaxed);
}

async fn run(
    stream: &mut TcpStream,
    session: &mut Session,
    server: &Server,
) -> std::io::Result<()> {
    let max_item = server.config.max_item_size;
    let mut input: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut out: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    loop {
        let mut start = 0;
        let mut close = false;
        while start < input.len() {
            match parse(input.get(start..).unwrap_or_default(), max_item) {
                Parsed::Incomplete => break,
                Parsed::Request(request, n) => {
                    start += n;
                    if session.execute(request, &mut out).await == Flow::Close {
                        close = true;
                        break;
                    }
                }
                Parsed::Error(e, n) => {
                    start += n;
                    out.extend_from_slice(&e.reply());
                }
                Parsed::Fatal(e) => {
                    out.extend_from_slice(&e.reply());
                    close = true;
                    break;
                }
            }
        }
        input.drain(..start.min(input.len()));
        // A client that left while it waited (`get q/t=...`) must not lose the item its wait
        // reserved: its closed connection reads as end of file before the reply is written
        // (a write to it would still succeed).
        let mut read_ahead = false;
        if session.has_unacked() {
            input.reserve(READ_CHUNK);
            match stream.try_read_buf(&mut input) {
                Ok(0) => return Ok(()),
                Ok(_) => read_ahead = true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
            session.after_write();
        }
        if close {
            return Ok(());
        }
        // After a large item, give its buffers back instead of keeping them while idle.
        if input.is_empty() && input.capacity() > BUFFER_KEPT {
            input = Vec::with_capacity(READ_CHUNK);
        }
        if out.capacity() > BUFFER_KEPT {
            out = Vec::with_capacity(READ_CHUNK);
        }
        if read_ahead {
            continue; // the next request may be complete already
        }
        input.reserve(READ_CHUNK);
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
    }
}
