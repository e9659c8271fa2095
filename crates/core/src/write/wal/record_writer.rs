//! The RecordIO writer every log is written with.

use std::sync::Arc;

use crate::recordio::{Writer, WriterOptions};
use crate::storage::FileHandle;
use crate::write::wal::log_file::LogFile;
use crate::write::wal::options::WalOptions;
use crate::Result;

/// In-memory buffer of the RecordIO writer: records of one append (or group) are gathered in it
/// and handed to the storage in one `write_at`; larger ones are written through.
const WRITE_BUFFER: usize = 1024 * 1024;

/// A RecordIO writer for a log in `log`, a new empty file: the file header is buffered.
pub(crate) fn record_writer(log: &Arc<LogFile>, options: &WalOptions) -> Result<Writer> {
    let file: FileHandle = log.clone();
    Writer::new(
        file,
        WriterOptions {
            compression: options.compression,
            buffer_size: WRITE_BUFFER,
            min_saving_divisor: 8,
            ..WriterOptions::default()
        },
    )
}
