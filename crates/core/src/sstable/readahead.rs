//! Readahead of a table cursor moving forward (what RocksDB calls automatic readahead): once
//! a cursor has loaded two consecutive data blocks, a block it must read from storage is read
//! together with the blocks after it, in one storage call of a window that starts at
//! [`FIRST_WINDOW`] and doubles with each readahead up to [`MAX_WINDOW`]. Each block is still
//! decoded and checked on its own, and enters the block cache as a block read alone would.
//!
//! A scan of N blocks then costs about N × block size / window storage calls instead of N: what
//! matters where a call is dear (a browser's OPFS, a network disk). Point reads and cursors that
//! jump or move backward never read ahead, and the buffer is dropped as soon as they do.

/// The first readahead window (bytes).
pub(crate) const FIRST_WINDOW: u64 = 16 << 10;
/// The largest readahead window (bytes): also the most one cursor holds.
pub(crate) const MAX_WINDOW: u64 = 128 << 10;

/// One cursor's readahead state.
#[derive(Debug, Default)]
pub(crate) struct Readahead {
    /// The block index loaded last.
    last: Option<usize>,
    /// Whether the block loaded last followed the one before it.
    sequential: bool,
    /// The next window (bytes); 0 before the first readahead.
    window: u64,
    /// File offset of `buf[0]`.
    at: u64,
    /// Bytes of the file read ahead, from `at` on.
    buf: Vec<u8>,
}

impl Readahead {
    /// Notes that the cursor loads block `i`; returns whether it reads forward, block after
    /// block (then a block missing from the cache is worth reading ahead of).
    pub(crate) fn note(&mut self, i: usize) -> bool {
        if self.last != Some(i) {
            self.sequential = self.last.is_some_and(|last| last + 1 == i);
            self.last = Some(i);
            if !self.sequential {
                self.drop_buffer();
            }
        }
        self.sequential
    }

    /// The buffered bytes of the file from `offset` on, if `offset..offset + len` is in the
    /// buffer.
    pub(crate) fn held(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let from = usize::try_from(offset.checked_sub(self.at)?).ok()?;
        let to = from.checked_add(usize::try_from(len).ok()?)?;
        (to <= self.buf.len())
            .then(|| self.buf.get(from..to))
            .flatten()
    }

    /// The window for a readahead from a block of `len` bytes (at least the block), and grows
    /// the next one.
    pub(crate) fn next_window(&mut self, len: u64) -> u64 {
        let window = if self.window == 0 {
            FIRST_WINDOW
        } else {
            self.window
        };
        self.window = (window * 2).min(MAX_WINDOW);
        window.max(len)
    }

    /// Keeps `bytes`, the file's bytes from `at` on.
    pub(crate) fn fill(&mut self, at: u64, bytes: Vec<u8>) {
        self.at = at;
        self.buf = bytes;
    }

    fn drop_buffer(&mut self) {
        self.buf = Vec::new();
        self.window = 0;
    }
}
