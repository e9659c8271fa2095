//! Reliable reads over Kestrel's memcache protocol, as a load tool: `conns` connections each
//! send `get <queue>/close/open` (acknowledge the item it holds, open the next: one round trip
//! per item) until the queue is empty, then `get <queue>/close`. Prints the items read and
//! `Round trips per second: N`. The queue is filled beforehand (bench/queue/run.mjs uses
//! siberite-bench).
//!
//! ```text
//! reserve-ack --port 22133 [--host 127.0.0.1] [--queue db_bench] [--conns 1]
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

fn main() {
    let mut host = "127.0.0.1".to_owned();
    let mut port = 22133u16;
    let mut queue = "db_bench".to_owned();
    let mut conns = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        let ok = match flag.as_str() {
            "--host" => {
                host = value;
                true
            }
            "--port" => value.parse().map(|v| port = v).is_ok(),
            "--queue" => {
                queue = value;
                true
            }
            "--conns" => value.parse().map(|v| conns = v).is_ok(),
            _ => false,
        };
        if !ok {
            eprintln!("usage: reserve-ack --port P [--host H] [--queue Q] [--conns N]");
            std::process::exit(2);
        }
    }
    let start = Instant::now();
    let workers: Vec<_> = (0..conns.max(1))
        .map(|_| {
            let (host, queue) = (host.clone(), queue.clone());
            std::thread::spawn(move || drain(&host, port, &queue))
        })
        .collect();
    let mut items = 0u64;
    for w in workers {
        match w.join() {
            Ok(Ok(n)) => items += n,
            Ok(Err(e)) => {
                eprintln!("reserve-ack: {e}");
                std::process::exit(1);
            }
            Err(_) => std::process::exit(1),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("Connections: {conns}");
    println!("Items: {items}");
    println!("Time taken: {secs:.3} seconds");
    println!("Round trips per second: {:.0}", items as f64 / secs);
}

/// Reads the queue until it is empty with `get q/close/open`; returns the items received.
fn drain(host: &str, port: u16, queue: &str) -> std::io::Result<u64> {
    let stream = TcpStream::connect((host, port))?;
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let request = format!("get {queue}/close/open\r\n");
    let mut items = 0;
    loop {
        writer.write_all(request.as_bytes())?;
        if !read_reply(&mut reader)? {
            break;
        }
        items += 1;
    }
    writer.write_all(format!("get {queue}/close\r\n").as_bytes())?;
    read_reply(&mut reader)?;
    Ok(items)
}

/// Reads one `get` reply: `true` for an item, `false` for an empty `END`.
fn read_reply(reader: &mut BufReader<TcpStream>) -> std::io::Result<bool> {
    let bad = |line: &str| std::io::Error::other(format!("unexpected reply {line:?}"));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    if line == "END\r\n" {
        return Ok(false);
    }
    let len: usize = match line
        .strip_prefix("VALUE ")
        .map(|r| r.split_whitespace().nth(2))
    {
        Some(Some(n)) => n.parse().map_err(|_| bad(&line))?,
        _ => return Err(bad(&line)),
    };
    let mut data = vec![0; len + 2];
    reader.read_exact(&mut data)?;
    line.clear();
    reader.read_line(&mut line)?;
    if line != "END\r\n" {
        return Err(bad(&line));
    }
    Ok(true)
}
