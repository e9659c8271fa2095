//! `shaledb`: the command-line tool of ShaleDB, like the sqlite3 shell, RocksDB's `ldb` and
//! `sst_dump` and LMDB's `mdb_*` tools. One subcommand per file in [`commands`]; opening a
//! database ([`open`]), key and value encodings ([`encoding`]), errors and exit codes
//! ([`error`]) and progress bars ([`progress`]) are shared.
//!
//! Exit codes ([`error`]): 0 success; 1 the answer is "no" (`verify` found problems, `get`
//! found no key); 2 a usage, I/O or database error (its message names the error code, e.g.
//! `LOCKED`).

mod cli;
mod commands;
mod encoding;
mod error;
mod open;
mod output;
mod progress;
mod recorded;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout (exit 0) and usage errors to stderr.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(error::EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match commands::run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if !e.is_broken_pipe() {
                eprintln!("shaledb: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}
