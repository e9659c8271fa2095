//! The seam between the engine workloads and the databases they measure: one small trait,
//! [`Engine`], implemented for ShaleDB, RocksDB and fjall beside it, and the
//! [`Settings`] every engine is opened with.
//!
//! Adapters panic on any engine error (a benchmark has nothing better to do with it); the
//! runner catches the panic per case, so one engine failing never stops the others.

use std::path::Path;

/// Settings every engine is opened with, identical across engines where the engine has them
/// (DESIGN.md, "Benchmarks": same memory and cache budget, compression, sync, Bloom filters).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Block cache budget in bytes (64 MiB).
    pub block_cache_bytes: u64,
    /// Memtable (write buffer) size in bytes before it is flushed to a table (64 MiB).
    pub memtable_bytes: u64,
    /// Bloom filter bits per key (10).
    pub bloom_bits_per_key: u32,
    /// Compress table blocks: Snappy, or LZ4 for fjall, which has no Snappy (on).
    pub compression: bool,
    /// Data block size in bytes (4 KiB, every engine's default).
    pub block_size: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            block_cache_bytes: 64 << 20,
            memtable_bytes: 64 << 20,
            bloom_bits_per_key: 10,
            compression: true,
            block_size: 4096,
        }
    }
}

/// One key-value engine as the workloads see it. The write-ahead log is always on; a write
/// reaches the operating system before it returns and is flushed to stable storage
/// (`fdatasync`) only when `sync` is true.
pub trait Engine: Send + Sync + Sized {
    /// Engine name in the results (`shaledb`, `rocksdb`, `fjall`).
    const NAME: &'static str;

    /// Opens the database in directory `dir`, creating it if there is none.
    fn open(dir: &Path, settings: &Settings) -> Self;

    /// Sets `key` to `value`.
    fn put(&self, key: &[u8], value: &[u8], sync: bool);

    /// Sets every `(key, value)` of `entries` in one atomic batch.
    fn write_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool);

    /// The value of `key`, copied out.
    fn get(&self, key: &[u8]) -> Option<Vec<u8>>;

    /// Deletes `key` (not synced).
    fn delete(&self, key: &[u8]);

    /// Reads every entry, key and value, from the first key forwards (or from the last key
    /// backwards); returns the number of entries.
    fn scan(&self, reverse: bool) -> u64;

    /// Creates an iterator, seeks to the first key `>= key` and reads up to `n` entries from
    /// there (key and value); returns how many it read.
    fn seek_read(&self, key: &[u8], n: usize) -> usize;

    /// Writes the memtable to a table and waits until that is done.
    fn flush(&self);

    /// Flushes, then compacts the whole key space as far down as the engine goes, and waits.
    fn compact_all(&self);

    /// The engine's own write amplification figure, where it reports one.
    fn write_amplification(&self) -> Option<f64> {
        None
    }

    /// Closes the database.
    fn close(self) {
        drop(self);
    }
}

/// Bytes of the files under `dir`, recursively: the same measure of disk size for every engine
/// (taken after the engine is closed, so that files it deletes lazily are gone). Each file
/// counts the smaller of its length and its allocated blocks, so neither preallocation style
/// counts space no data was written to: fjall's journal is a sparse 64 MiB file (`set_len`),
/// RocksDB's WAL gets blocks reserved beyond its length (`fallocate` with `KEEP_SIZE`).
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => file_bytes(&m),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(unix)]
fn file_bytes(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    m.len().min(m.blocks() * 512)
}

#[cfg(not(unix))]
fn file_bytes(m: &std::fs::Metadata) -> u64 {
    m.len()
}

/// Bytes this process has passed to `write`-family system calls so far (`wchar` of
/// `/proc/self/io`, all threads): WAL, tables, manifest and logs of whichever engine runs.
/// `None` where the kernel does not report it.
pub fn process_write_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}
