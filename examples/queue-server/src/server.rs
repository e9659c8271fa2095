//! The server: its queues, settings and counters, and the loop accepting connections.

use std::sync::Arc;

use tokio::net::TcpListener;

use crate::config::Config;
use crate::connection;
use crate::queues::Queues;
use crate::stats::Counters;

/// What `version` answers and `stats` reports.
pub const VERSION: &str = concat!("shaledb-queue-server-", env!("CARGO_PKG_VERSION"));

/// State shared by every connection.
pub struct Server {
    /// The queues served.
    pub queues: Queues,
    /// The command line's settings.
    pub config: Config,
    /// Counters for `stats`.
    pub counters: Counters,
}

impl Server {
    /// A server of `queues` with `config`.
    pub fn new(queues: Queues, config: Config) -> Server {
        Server {
            queues,
            config,
            counters: Counters::default(),
        }
    }
}

/// Accepts connections on `listener` and serves each on its own task, until `stop` resolves.
pub async fn accept_loop(
    listener: TcpListener,
    server: Arc<Server>,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection::serve(stream, server.clone()));
                }
                // Out of file descriptors and the like: wait a little instead of spinning.
                Err(e) => {
                    eprintln!("queue-server: accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
        }
    }
}
