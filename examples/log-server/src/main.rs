//! `log-server`: ShaleDB topic logs served over minikafka's wire protocol, so that minikafka's
//! own benchmark client can drive it. See the README ("Log server") for the protocol.
//!
//! `log-server --data DIR [--publish ADDR] [--subscribe ADDR] [--sync]`

mod args;
mod frame;
mod handshake;
mod publish;
mod subscribe;
mod topics;

use std::sync::Arc;

use shaledb::{Db, Options};
use tokio::net::TcpListener;

use crate::topics::Topics;

fn main() -> std::process::ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("log-server: {e}\n{}", args::USAGE);
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("log-server: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("log-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Opens the database, listens on both ports and serves until SIGINT or SIGTERM.
async fn run(args: args::Args) -> Result<(), String> {
    let db = Db::open(&args.data, Options::default())
        .map_err(|e| format!("opening {}: {e}", args.data.display()))?;
    let topics = Arc::new(Topics::new(db, args.sync));
    let publish = TcpListener::bind(&args.publish)
        .await
        .map_err(|e| format!("listening on {}: {e}", args.publish))?;
    let subscribe = TcpListener::bind(&args.subscribe)
        .await
        .map_err(|e| format!("listening on {}: {e}", args.subscribe))?;
    let addr = |l: &TcpListener| {
        l.local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string())
    };
    eprintln!(
        "log-server: publish on {}, subscribe on {}, data in {}",
        addr(&publish),
        addr(&subscribe),
        args.data.display()
    );
    let max = frame::DEFAULT_MAX_PAYLOAD;
    tokio::spawn(publish::serve(publish, topics.clone(), max));
    tokio::spawn(subscribe::serve(subscribe, topics, max));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    eprintln!("log-server: stopping");
    Ok(())
}
