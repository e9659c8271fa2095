//! Standard output: buffered, with errors (a closed pipe included) as [`crate::error::CliError`]s.

use std::io::{BufWriter, StdoutLock, Write};

use serde::Serialize;

use crate::error::{IoContext, Result};

/// Buffered standard output. Call [`Out::finish`] to flush and see the last error.
pub struct Out {
    inner: BufWriter<StdoutLock<'static>>,
}

impl Out {
    /// Locks standard output.
    pub fn new() -> Out {
        Out {
            inner: BufWriter::new(std::io::stdout().lock()),
        }
    }

    /// Writes `value` as one line of compact JSON.
    pub fn json_line(&mut self, value: &impl Serialize) -> Result<()> {
        serde_json::to_writer(&mut self.inner, value)
            .map_err(std::io::Error::from)
            .io_context(|| "writing to standard output".to_owned())?;
        self.line("")
    }

    /// Writes `value` as pretty JSON.
    pub fn json_pretty(&mut self, value: &impl Serialize) -> Result<()> {
        serde_json::to_writer_pretty(&mut self.inner, value)
            .map_err(std::io::Error::from)
            .io_context(|| "writing to standard output".to_owned())?;
        self.line("")
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.inner, "{text}").io_context(|| "writing to standard output".to_owned())
    }

    /// Flushes.
    pub fn finish(mut self) -> Result<()> {
        self.inner
            .flush()
            .io_context(|| "writing to standard output".to_owned())
    }
}
