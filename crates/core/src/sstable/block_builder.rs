//! Builds one block: prefix-compressed entries with restart points (LevelDB style).
//!
//! ```text
//! entry   := varint shared | varint unshared | varint value_len
//!            | key[shared..] (unshared bytes) | varint (seq << 8 | kind) | value
//! block   := entry* | restart offsets (u32 LE each) | restart count (u32 LE)
//! ```
//! At a restart point `shared` is 0. The same format serves data blocks and the index block.

use super::format::put_varint;

/// Accumulates entries into a reused buffer. Entries must be added in table order; the caller
/// (the table builder) checks that.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
    finished: bool,
}

impl BlockBuilder {
    /// A builder placing a restart point every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize, capacity: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::with_capacity(capacity),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            last_key: Vec::new(),
            entries: 0,
            finished: false,
        }
    }

    /// Forgets everything added, keeping the allocations.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
        self.finished = false;
    }

    /// Appends one entry. `trailer` is `seq << 8 | kind`.
    #[inline]
    pub fn add(&mut self, key: &[u8], trailer: u64, value: &[u8]) {
        debug_assert!(!self.finished);
        let shared = if self.counter < self.restart_interval {
            common_prefix(&self.last_key, key)
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        let suffix = key.get(shared..).unwrap_or_default();
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, suffix.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(suffix);
        put_varint(&mut self.buf, trailer);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(suffix);
        self.counter += 1;
        self.entries += 1;
    }

    /// The size the block will have once finished.
    #[inline]
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + self.restarts.len() * 4 + 4
    }

    /// Whether no entry was added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array and returns the finished block (valid until `reset`).
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for r in &self.restarts {
                self.buf.extend_from_slice(&r.to_le_bytes());
            }
            self.buf
                .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
            self.finished = true;
        }
        &self.buf
    }
}

#[inline]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
