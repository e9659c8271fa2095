//! The command line: every subcommand and its arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::encoding::Encoding;

/// shaledb: inspect, query, load, verify, compact, back up and dump ShaleDB databases and files.
///
/// Exit codes: 0 success; 1 "no" (verify or wal dump found damage, get found no key); 2 a
/// usage, I/O or database error (the message names the error code, e.g. LOCKED, CORRUPTION, NOT_FOUND).
#[derive(Debug, Parser)]
#[command(name = "shaledb", version, about, long_about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// `--key-encoding` and `--value-encoding` (`None`: not given; see [`crate::recorded`]).
#[derive(Debug, Clone, Copy, Args)]
pub struct Encodings {
    /// How keys are shown and read: auto (UTF-8 text, else {"base64": ...}), utf8, hex,
    /// base64, json. Default: the keyspace's recorded key encoding (`info` shows it), else auto.
    #[arg(long, value_enum)]
    pub key_encoding: Option<Encoding>,
    /// How values are shown and read (as --key-encoding). Default: the keyspace's recorded
    /// value encoding, else auto.
    #[arg(long, value_enum)]
    pub value_encoding: Option<Encoding>,
}

/// `--keyspace`.
#[derive(Debug, Clone, Args)]
pub struct KeyspaceArg {
    /// The keyspace (reserved ones start with a NUL character, e.g. $'\0queue:jobs').
    #[arg(long, short = 'k', default_value = "default")]
    pub keyspace: String,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Format versions, levels, files, keyspaces, queues, topics, change cursors, sequence.
    Info {
        /// The database directory.
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the value of one key (exit 1 if there is none).
    Get {
        /// The database directory.
        dir: PathBuf,
        /// The key (in --key-encoding).
        key: String,
        #[command(flatten)]
        keyspace: KeyspaceArg,
        #[command(flatten)]
        encodings: Encodings,
        /// Print a JSON line {"keyspace","key","value"} instead of the bare value.
        #[arg(long)]
        json: bool,
    },
    /// Print the keys of a keyspace in order, as JSON lines {"keyspace","key","value"}.
    Scan {
        /// The database directory.
        dir: PathBuf,
        #[command(flatten)]
        keyspace: KeyspaceArg,
        /// Only keys starting with this prefix.
        #[arg(long)]
        prefix: Option<String>,
        /// First key (inclusive).
        #[arg(long)]
        start: Option<String>,
        /// Last key (exclusive).
        #[arg(long)]
        end: Option<String>,
        /// At most this many keys.
        #[arg(long)]
        limit: Option<u64>,
        /// From the last key backwards.
        #[arg(long)]
        reverse: bool,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// Print every key of every keyspace as JSON lines {"keyspace","key","value"} (the input
    /// of `load`).
    Dump {
        /// The database directory.
        dir: PathBuf,
        /// Include ShaleDB's own keyspaces (queues, topics: names starting with NUL).
        #[arg(long)]
        include_reserved: bool,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// Set a key.
    Put {
        /// The database directory.
        dir: PathBuf,
        /// The key (in --key-encoding).
        key: String,
        /// The value (in --value-encoding).
        value: String,
        #[command(flatten)]
        keyspace: KeyspaceArg,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// Delete a key.
    Delete {
        /// The database directory.
        dir: PathBuf,
        /// The key (in --key-encoding).
        key: String,
        #[command(flatten)]
        keyspace: KeyspaceArg,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// Write JSON lines {"keyspace"?, "key", "value"} (the output of dump/scan) in atomic
    /// batches; a line with "delete": true (or no "value") deletes its key.
    Load {
        /// The database directory (created if missing).
        dir: PathBuf,
        /// The input file; standard input when absent or "-".
        file: Option<PathBuf>,
        /// The keyspace of lines that name none.
        #[command(flatten)]
        keyspace: KeyspaceArg,
        /// Lines per atomic batch.
        #[arg(long, default_value_t = 1000)]
        batch: usize,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// Check every checksum of every file without opening the database: exit 0 intact,
    /// 1 problems found, 2 not checkable (missing directory, I/O error).
    Verify {
        /// The database directory.
        dir: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Flush and compact the whole database down to the deepest level.
    Compact {
        /// The database directory.
        dir: PathBuf,
    },
    /// Write a consistent copy into a new directory; prints the sequence number it is
    /// consistent at.
    Checkpoint {
        /// The database directory.
        dir: PathBuf,
        /// The new directory (must be missing or empty).
        dest: PathBuf,
    },
    /// Write the database as a tar archive (the browser's export format).
    Export {
        /// The database directory.
        dir: PathBuf,
        /// The archive to write.
        file: PathBuf,
    },
    /// Extract an exported archive (from `export` or a browser) into a new directory.
    Import {
        /// The archive.
        file: PathBuf,
        /// The new database directory (must be missing or empty).
        dir: PathBuf,
    },
    /// RecordIO files (ShaleDB's and go-sstables' versions 1 to 4).
    Recordio {
        #[command(subcommand)]
        command: RecordioCommand,
    },
    /// Table files (*.sst).
    Sst {
        #[command(subcommand)]
        command: SstCommand,
    },
    /// Write-ahead log files (wal-*.log).
    Wal {
        #[command(subcommand)]
        command: WalCommand,
    },
    /// List queues with their figures, or show one queue and peek at its next item.
    Queue {
        /// The database directory.
        dir: PathBuf,
        /// The queue.
        name: Option<String>,
        #[command(flatten)]
        encodings: Encodings,
    },
    /// List topics with their figures, or read records of one topic (consumes nothing).
    Topic {
        /// The database directory.
        dir: PathBuf,
        /// The topic.
        name: Option<String>,
        /// First offset to read (default: the earliest record held).
        #[arg(long)]
        from: Option<u64>,
        /// At most this many records.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[command(flatten)]
        encodings: Encodings,
    },
}

/// `shaledb recordio ...`
#[derive(Debug, Subcommand)]
pub enum RecordioCommand {
    /// Print the file header, then one JSON line per record (offset, length, data; null data
    /// is a nil record).
    Dump {
        /// The file.
        file: PathBuf,
        /// How record data is shown.
        #[arg(long, value_enum, default_value_t = Encoding::Auto)]
        value_encoding: Encoding,
    },
}

/// `shaledb sst ...`
#[derive(Debug, Subcommand)]
pub enum SstCommand {
    /// Print a table's properties, its range tombstones, then one JSON line per entry
    /// (stored key, sequence number, kind, value).
    Dump {
        /// The file.
        file: PathBuf,
        /// Only the properties, no entries.
        #[arg(long)]
        properties_only: bool,
        #[command(flatten)]
        encodings: Encodings,
    },
}

/// `shaledb wal ...`
#[derive(Debug, Subcommand)]
pub enum WalCommand {
    /// Print a log's header, then one JSON line per record: batches (with their sequence
    /// numbers and operations), sealed and synced marks.
    Dump {
        /// The file.
        file: PathBuf,
        #[command(flatten)]
        encodings: Encodings,
    },
}
