//! Repeating a failure to later callers: a log that failed once fails every later write or sync
//! with a copy of the first error.

use std::io;

use crate::Error;

/// Copies `e` for a later caller: the same variant for I/O errors (same operation, file and
/// `io::ErrorKind`), [`Error::Closed`] for anything else, with `context` and the original
/// message.
pub fn repeat_error(e: &Error, context: &str) -> Error {
    match e {
        Error::Io { op, file, source } => Error::Io {
            op,
            file: file.clone(),
            source: io::Error::new(source.kind(), format!("{context}; first failure: {source}")),
        },
        other => Error::Closed(format!("{context}; first failure: {other}")),
    }
}
