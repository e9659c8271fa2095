//! One file per subcommand; [`run`] dispatches.

mod checkpoint;
mod compact;
mod export;
mod get;
mod import;
mod info;
mod load;
mod put;
mod queue;
mod recordio;
mod scan;
mod sst;
mod stored_key;
mod topic;
mod verify;
mod wal;

use crate::cli::{Command, RecordioCommand, SstCommand, WalCommand};
use crate::error::Result;

/// Runs `command`; returns the exit code (0, or 1 for a "no" answer).
pub fn run(command: Command) -> Result<u8> {
    match command {
        Command::Info { dir, json } => info::run(&dir, json),
        Command::Get {
            dir,
            key,
            keyspace,
            encodings,
            json,
        } => get::run(&dir, &keyspace.keyspace, &key, encodings, json),
        Command::Scan {
            dir,
            keyspace,
            prefix,
            start,
            end,
            limit,
            reverse,
            encodings,
        } => scan::run_scan(
            &dir,
            &keyspace.keyspace,
            &scan::Range {
                prefix,
                start,
                end,
                limit,
                reverse,
            },
            encodings,
        ),
        Command::Dump {
            dir,
            include_reserved,
            encodings,
        } => scan::run_dump(&dir, include_reserved, encodings),
        Command::Put {
            dir,
            key,
            value,
            keyspace,
            encodings,
        } => put::run_put(&dir, &keyspace.keyspace, &key, &value, encodings),
        Command::Delete {
            dir,
            key,
            keyspace,
            encodings,
        } => put::run_delete(&dir, &keyspace.keyspace, &key, encodings),
        Command::Load {
            dir,
            file,
            keyspace,
            batch,
            encodings,
        } => load::run(&dir, file.as_deref(), &keyspace.keyspace, batch, encodings),
        Command::Verify { dir, json } => verify::run(&dir, json),
        Command::Compact { dir } => compact::run(&dir),
        Command::Checkpoint { dir, dest } => checkpoint::run(&dir, &dest),
        Command::Export { dir, file } => export::run(&dir, &file),
        Command::Import { file, dir } => import::run(&file, &dir),
        Command::Recordio {
            command:
                RecordioCommand::Dump {
                    file,
                    value_encoding,
                },
        } => recordio::run(&file, value_encoding),
        Command::Sst {
            command:
                SstCommand::Dump {
                    file,
                    properties_only,
                    encodings,
                },
        } => sst::run(&file, properties_only, encodings),
        Command::Wal {
            command: WalCommand::Dump { file, encodings },
        } => wal::run(&file, encodings),
        Command::Queue {
            dir,
            name,
            encodings,
        } => queue::run(&dir, name.as_deref(), encodings),
        Command::Topic {
            dir,
            name,
            from,
            limit,
            encodings,
        } => topic::run(&dir, name.as_deref(), from, limit, encodings),
    }
}
