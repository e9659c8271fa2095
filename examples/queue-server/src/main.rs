//! `shaledb-queue-server`: ShaleDB's durable queues over Kestrel's memcache text protocol.
//!
//! ```text
//! shaledb-queue-server --listen 127.0.0.1:22133 --data ./data
//! ```
//! Prints `listening on <address>` on stdout once it accepts connections; SIGTERM or SIGINT
//! stop it cleanly (a crash loses nothing acknowledged either).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use shaledb::queue::WhenFull;
use shaledb::{Db, Options};
use shaledb_queue_server::config::{Config, NO_OPEN_TIMEOUT};
use shaledb_queue_server::queues::Queues;
use shaledb_queue_server::server::{accept_loop, Server};

/// A queue server on ShaleDB speaking Kestrel's memcache text protocol (set, get with
/// /open /close /abort /peek /t=ms, delete, flush, flush_all, stats, version, quit).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:22133")]
    listen: String,
    /// Directory of the database (created if missing).
    #[arg(long, default_value = "./data")]
    data: PathBuf,
    /// Most items a queue holds; a `set` beyond answers NOT_STORED.
    #[arg(long)]
    max_items: Option<u64>,
    /// Most bytes of values a queue holds; a `set` beyond answers NOT_STORED.
    #[arg(long)]
    max_bytes: Option<u64>,
    /// When a queue is full, drop its oldest items instead of refusing new ones.
    #[arg(long)]
    discard_old_when_full: bool,
    /// Largest item accepted, in bytes.
    #[arg(long, default_value_t = 16 << 20)]
    max_item_size: usize,
    /// Seconds an open read stays reserved while its client is connected (0: no limit).
    #[arg(long, default_value_t = 0)]
    open_timeout: u64,
    /// Bytes of writes the database collects in memory before writing a table (default 4 MiB,
    /// LevelDB's write buffer, which darner and siberite keep).
    #[arg(long, default_value_t = 4 << 20)]
    memtable_size: usize,
    /// Bytes of the database's block cache (default 8 MiB, LevelDB's, as darner and siberite).
    #[arg(long, default_value_t = 8 << 20)]
    cache_size: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shaledb-queue-server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = Config {
        max_item_size: args.max_item_size,
        ..Config::default()
    };
    if args.open_timeout > 0 {
        config.open_timeout = Duration::from_secs(args.open_timeout);
    } else {
        config.open_timeout = NO_OPEN_TIMEOUT;
    }
    let q = &mut config.queue_options;
    q.max_items = args.max_items;
    q.max_bytes = args.max_bytes;
    q.default_lease = config.open_timeout;
    if args.discard_old_when_full {
        q.when_full = WhenFull::DiscardOldest;
    }
    std::fs::create_dir_all(&args.data)?;
    let mut options = Options::default();
    options.memtable_size = args.memtable_size;
    options.block_cache_size = args.cache_size;
    let db = Db::open(&args.data, options)?;
    let server = Arc::new(Server::new(
        Queues::new(db, config.queue_options.clone()),
        config,
    ));

    // Waiting reads each hold a blocking-pool thread while they wait.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(4096)
        .build()?;
    let listener = runtime.block_on(listen(&args.listen))?;
    println!("listening on {}", listener.local_addr()?);
    runtime.block_on(accept_loop(listener, server.clone(), stop_signal()));
    runtime.shutdown_timeout(Duration::from_secs(2));
    match Arc::try_unwrap(server) {
        Ok(server) => server.queues.close()?,
        Err(_) => eprintln!("shaledb-queue-server: requests still running; stopping without close"),
    }
    Ok(())
}

/// A listener on `address` with a backlog of 4096 pending connections (tokio's default of 1024
/// drops connections when a thousand clients connect at once; Go's servers use the system's).
async fn listen(address: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(address).await? {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(addr).and_then(|()| socket.listen(4096)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| std::io::Error::other(format!("{address}: no address to listen on"))))
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
