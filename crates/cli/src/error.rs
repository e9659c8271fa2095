//! The tool's errors and exit codes.

use std::fmt;

/// Exit code: the answer is "no" (`verify` found problems, `get` found no such key, `wal dump`
/// found corruption, `import` extracted a damaged database).
pub const EXIT_NO: u8 = 1;
/// Exit code: a usage, I/O or database error.
pub const EXIT_ERROR: u8 = 2;

/// What went wrong, with enough context to act on it. Exits with [`EXIT_ERROR`] (but see
/// [`CliError::exit_code`]).
#[derive(Debug)]
pub enum CliError {
    /// Bad arguments or input (the message says which, with the line number for input files).
    Usage(String),
    /// Something named on the command line does not exist (a keyspace, queue or topic):
    /// code `NOT_FOUND`.
    Missing(String),
    /// A database error, with what the tool was doing.
    Db {
        /// What the tool was doing, e.g. "opening /tmp/db".
        context: String,
        /// The typed error.
        error: shaledb::Error,
    },
    /// An I/O error outside the database (an input or output file, standard output).
    Io {
        /// What the tool was doing.
        context: String,
        /// The error.
        error: std::io::Error,
    },
}

/// The tool's result type.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// The process exit code for this error: 0 for a closed standard output (the reader,
    /// e.g. `head`, has what it wanted), else [`EXIT_ERROR`].
    pub fn exit_code(&self) -> u8 {
        if self.is_broken_pipe() {
            0
        } else {
            EXIT_ERROR
        }
    }

    /// Whether this is a closed standard output (`shaledb dump db | head`): not worth a
    /// message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io { error, .. } if error.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// A usage error.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => write!(f, "error [USAGE]: {m}"),
            CliError::Missing(m) => write!(f, "error [NOT_FOUND]: {m}"),
            CliError::Db { context, error } => {
                write!(f, "error [{}]: {context}: {error}", error.code())?;
                if error.code() == "LOCKED" {
                    write!(
                        f,
                        "\n  another process holds this database open: reading commands (info, \
                         get, scan, dump, topic, verify) work while it does; this one needs it \
                         closed there"
                    )?;
                }
                Ok(())
            }
            CliError::Io { context, error } => write!(f, "error [IO]: {context}: {error}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Adds context to database results.
pub trait DbContext<T> {
    /// Wraps a database error with what the tool was doing.
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> DbContext<T> for shaledb::Result<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|error| CliError::Db {
            context: context(),
            error,
        })
    }
}

/// Adds context to I/O results.
pub trait IoContext<T> {
    /// Wraps an I/O error with what the tool was doing.
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|error| CliError::Io {
            context: context(),
            error,
        })
    }
}
