//! Writes a table from entries added in table order (key ascending, seq descending).

use std::cmp::Ordering;

use super::block_builder::BlockBuilder;
use super::bloom;
use super::format::{
    put_varint, BlockHandle, Footer, KIND_RANGE_TOMBSTONE, KIND_VALUE, MAX_SEQ,
    TABLE_FORMAT_VERSION, TABLE_FORMAT_VERSION_V1,
};
use super::properties::Properties;
use crate::key::{compare_internal, RangeTombstone, ValueKind};
use crate::recordio::{Compression, Writer, WriterOptions};
use crate::sorting::sort_by;
use crate::storage::FileHandle;
use crate::{Error, Result};

/// Largest key plus value accepted in one entry (keeps in-block offsets within `u32`).
pub const MAX_ENTRY_SIZE: usize = 1 << 30;

/// How a table is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    /// A data block is cut once its encoded size reaches this many bytes (default 4 KiB).
    pub block_size: usize,
    /// Entries between restart points in data blocks (default 16).
    pub restart_interval: usize,
    /// Compression of data blocks: `None` or `Snappy` (default `None`). A block is stored
    /// compressed only when that saves at least 12.5%.
    pub compression: Compression,
    /// Bloom filter bits per distinct user key; 0 writes no filter (default 10, ~1% false
    /// positives).
    pub bloom_bits_per_key: u32,
    /// Whether [`TableBuilder::finish`] syncs the file (default true).
    pub sync_on_finish: bool,
    /// Bytes the RecordIO writer buffers before writing to the storage (default 1 MiB).
    pub write_buffer_size: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            restart_interval: 16,
            compression: Compression::None,
            bloom_bits_per_key: 10,
            sync_on_finish: true,
            write_buffer_size: 1 << 20,
        }
    }
}

/// What [`TableBuilder::finish`] wrote.
#[derive(Debug, Clone)]
pub struct TableSummary {
    /// Size of the table file in bytes.
    pub file_size: u64,
    /// The properties record's content.
    pub properties: Properties,
}

/// Builds one table. Entries are assembled into reused buffers; nothing is allocated per entry.
#[derive(Debug)]
pub struct TableBuilder {
    writer: Writer,
    file_name: String,
    options: TableOptions,
    block: BlockBuilder,
    index: BlockBuilder,
    /// The last finished data block, waiting for the next key to choose its separator.
    pending: Option<BlockHandle>,
    last_key: Vec<u8>,
    last_seq: u64,
    hashes: Vec<u64>,
    props: Properties,
    scratch: Vec<u8>,
    handle_buf: Vec<u8>,
    /// Range tombstones, kept apart from the data blocks and written as one record by `finish`.
    range_tombstones: Vec<RangeTombstone>,
    failed: bool,
}

impl TableBuilder {
    /// Starts a table in `file`, which must be empty.
    pub fn new(file: FileHandle, options: TableOptions) -> Result<TableBuilder> {
        match options.compression {
            Compression::None | Compression::Snappy => {}
            other => {
                return Err(Error::InvalidArgument(format!(
                    "table blocks support no or snappy compression, not {}",
                    other.name()
                )))
            }
        }
        let file_name = file.name().to_owned();
        let writer = Writer::new(
            file,
            WriterOptions {
                buffer_size: options.write_buffer_size,
                min_saving_divisor: 8,
                ..WriterOptions::default()
            },
        )?;
        let block_cap = options.block_size.saturating_add(1024).min(1 << 20);
        Ok(TableBuilder {
            writer,
            file_name,
            block: BlockBuilder::new(options.restart_interval, block_cap),
            index: BlockBuilder::new(1, 4096),
            options,
            pending: None,
            last_key: Vec::new(),
            last_seq: 0,
            hashes: Vec::new(),
            props: Properties {
                format_version: TABLE_FORMAT_VERSION_V1,
                ..Properties::default()
            },
            scratch: Vec::new(),
            handle_buf: Vec::new(),
            range_tombstones: Vec::new(),
            failed: false,
        })
    }

    /// Adds an entry. Requires (`key`, `seq`) to come strictly after the previous entry in table
    /// order and `seq <= MAX_SEQ`; otherwise [`Error::InvalidArgument`] and nothing is added.
    /// A tombstone's `value` is stored as given (normally empty).
    ///
    /// A [`ValueKind::RangeTombstone`] (`key` = start, `value` = exclusive end) goes to
    /// [`TableBuilder::add_range_tombstone`] instead: it takes no part in the order of point
    /// entries.
    #[inline]
    pub fn add(&mut self, key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) -> Result<()> {
        self.check_usable()?;
        if seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!(
                "sequence number {seq} is above the maximum {MAX_SEQ}"
            )));
        }
        if kind == ValueKind::RangeTombstone {
            return self.add_range_tombstone(key, value, seq);
        }
        if key.len().saturating_add(value.len()) > MAX_ENTRY_SIZE {
            return Err(Error::InvalidArgument(format!(
                "entry of {} bytes is over the table limit of {MAX_ENTRY_SIZE}",
                key.len().saturating_add(value.len())
            )));
        }
        let first = self.props.entries == 0;
        let same_key = !first && self.last_key == key;
        if !first {
            match compare_internal(&self.last_key, self.last_seq, key, seq) {
                Ordering::Less => {}
                Ordering::Equal => {
                    return Err(Error::InvalidArgument(format!(
                        "{}: key {:?} with sequence number {seq} added twice",
                        self.file_name,
                        String::from_utf8_lossy(key)
                    )))
                }
                Ordering::Greater => {
                    return Err(Error::InvalidArgument(format!(
                        "{}: entries out of order: key {:?} seq {seq} after key {:?} seq {}",
                        self.file_name,
                        String::from_utf8_lossy(key),
                        String::from_utf8_lossy(&self.last_key),
                        self.last_seq
                    )))
                }
            }
        }
        if let Some(handle) = self.pending.take() {
            self.add_index_entry(handle, Some(key));
        }
        if !same_key && self.options.bloom_bits_per_key > 0 {
            self.hashes.push(bloom::key_hash(key));
        }
        self.block
            .add(key, seq << 8 | u64::from(kind.code()), value);

        let p = &mut self.props;
        if first {
            p.smallest_key.clear();
            p.smallest_key.extend_from_slice(key);
            p.min_seq = seq;
            p.max_seq = seq;
        } else {
            p.min_seq = p.min_seq.min(seq);
            p.max_seq = p.max_seq.max(seq);
        }
        p.entries += 1;
        p.raw_key_bytes += key.len() as u64;
        p.raw_value_bytes += value.len() as u64;
        if kind == ValueKind::Tombstone {
            p.tombstones += 1;
        }
        if !same_key {
            self.last_key.clear();
            self.last_key.extend_from_slice(key);
        }
        self.last_seq = seq;

        if self.block.estimated_size() >= self.options.block_size {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Adds a range tombstone deleting `[start, end)` at `seq`, in any order relative to other
    /// entries. The table is then written in format version 2 with a range-del record. An empty
    /// range (`start >= end`) deletes nothing and is not stored.
    /// Errors: `seq > MAX_SEQ` → [`Error::InvalidArgument`].
    pub fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seq: u64) -> Result<()> {
        self.check_usable()?;
        if start >= end {
            return Ok(());
        }
        if seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!(
                "{}: range tombstone [{:?}, {:?}) at seq {seq} is above the maximum sequence",
                self.file_name,
                String::from_utf8_lossy(start),
                String::from_utf8_lossy(end)
            )));
        }
        if start.len().saturating_add(end.len()) > MAX_ENTRY_SIZE {
            return Err(Error::InvalidArgument(
                "range tombstone bounds over the table entry limit".into(),
            ));
        }
        self.range_tombstones.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        });
        Ok(())
    }

    /// Number of range tombstones added so far.
    pub fn range_tombstones(&self) -> u64 {
        self.range_tombstones.len() as u64
    }

    /// Number of entries added so far.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Bytes written to the file so far (buffered ones included), without the open block.
    pub fn file_size(&self) -> u64 {
        self.writer.offset()
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::Closed(format!(
                "table builder for {} failed earlier",
                self.file_name
            )));
        }
        Ok(())
    }

    /// Writes the open data block as one record; its index entry waits for the next key.
    fn flush_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let raw = self.block.finish();
        let result = self.writer.write_with(Some(raw), self.options.compression);
        let offset = match result {
            Ok(o) => o,
            Err(e) => {
                self.failed = true;
                return Err(e);
            }
        };
        let handle = BlockHandle {
            offset,
            len: self.writer.offset() - offset,
        };
        self.pending = Some(handle);
        self.props.data_blocks += 1;
        self.block.reset();
        Ok(())
    }

    /// Adds the index entry of the block at `handle`, whose last entry is `last_key` /
    /// `last_seq`; `next_key` is the first key of the following block, if any.
    fn add_index_entry(&mut self, handle: BlockHandle, next_key: Option<&[u8]>) {
        let mut sep_seq = self.last_seq;
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.last_key);
        if let Some(next) = next_key {
            if shorten_separator(&mut self.scratch, next) {
                sep_seq = MAX_SEQ;
            }
        }
        self.handle_buf.clear();
        put_varint(&mut self.handle_buf, handle.offset);
        put_varint(&mut self.handle_buf, handle.len);
        self.index.add(
            &self.scratch,
            sep_seq << 8 | u64::from(KIND_VALUE),
            &self.handle_buf,
        );
    }

    /// Writes the last block, the filter, the index, the properties and the footer; syncs if
    /// `sync_on_finish`. The builder cannot be used afterwards.
    pub fn finish(mut self) -> Result<TableSummary> {
        self.check_usable()?;
        self.flush_block()?;
        if let Some(handle) = self.pending.take() {
            self.add_index_entry(handle, None);
        }
        let data_end = self.writer.offset();
        self.props.data_size = data_end.saturating_sub(self.header_len());
        self.props.largest_key = std::mem::take(&mut self.last_key);
        if !self.range_tombstones.is_empty() {
            self.write_range_del_record()?;
        }

        let filter = if self.options.bloom_bits_per_key > 0 && !self.hashes.is_empty() {
            bloom::build(
                &self.hashes,
                self.options.bloom_bits_per_key,
                &mut self.scratch,
            );
            self.write_meta_record_from_scratch()?
        } else {
            BlockHandle::default()
        };
        let index_raw = self.index.finish();
        let offset = self.writer.write_with(Some(index_raw), Compression::None)?;
        let index = BlockHandle {
            offset,
            len: self.writer.offset() - offset,
        };
        self.scratch.clear();
        self.props.encode(&mut self.scratch);
        let properties = self.write_meta_record_from_scratch()?;

        let footer = Footer {
            index,
            filter,
            properties,
            data_end,
            version: self.props.format_version,
        };
        let (file, size) = self.writer.finish()?;
        file.write_at(size, &footer.encode())?;
        if self.options.sync_on_finish {
            file.sync()?;
        }
        Ok(TableSummary {
            file_size: size + super::format::FOOTER_LEN as u64,
            properties: self.props,
        })
    }

    /// Writes the range tombstones, sorted by start (then seq descending), as one record in the
    /// data block format; records it in the properties and moves the table to version 2.
    fn write_range_del_record(&mut self) -> Result<()> {
        let mut rts = std::mem::take(&mut self.range_tombstones);
        sort_by(&mut rts, |a, b| {
            compare_internal(&a.start, a.seq, &b.start, b.seq).then_with(|| a.end.cmp(&b.end))
        });
        let mut block = BlockBuilder::new(16, 4096);
        for t in &rts {
            block.add(
                &t.start,
                t.seq << 8 | u64::from(KIND_RANGE_TOMBSTONE),
                &t.end,
            );
        }
        let offset = self
            .writer
            .write_with(Some(block.finish()), Compression::None)?;
        let p = &mut self.props;
        p.range_del = BlockHandle {
            offset,
            len: self.writer.offset() - offset,
        };
        p.range_tombstones = rts.len() as u64;
        p.format_version = TABLE_FORMAT_VERSION;
        for (i, t) in rts.iter().enumerate() {
            if i == 0 && p.entries == 0 {
                p.min_seq = t.seq;
                p.max_seq = t.seq;
            }
            p.min_seq = p.min_seq.min(t.seq);
            p.max_seq = p.max_seq.max(t.seq);
        }
        self.range_tombstones = rts;
        Ok(())
    }

    fn header_len(&self) -> u64 {
        // The RecordIO file header precedes the first record.
        8
    }

    fn write_meta_record_from_scratch(&mut self) -> Result<BlockHandle> {
        let offset = self
            .writer
            .write_with(Some(&self.scratch), Compression::None)?;
        Ok(BlockHandle {
            offset,
            len: self.writer.offset() - offset,
        })
    }
}

/// Shortens `start` (the last key of a block) to a key `s` with `start < s < limit` where
/// possible, LevelDB's `FindShortestSeparator`. Returns whether it changed `start`.
fn shorten_separator(start: &mut Vec<u8>, limit: &[u8]) -> bool {
    let common = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if common >= start.len().min(limit.len()) {
        return false; // one is a prefix of the other
    }
    let (Some(&s), Some(&l)) = (start.get(common), limit.get(common)) else {
        return false;
    };
    if s < 0xff && s + 1 < l {
        start.truncate(common + 1);
        if let Some(last) = start.last_mut() {
            *last = s + 1;
        }
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_sit_between_blocks() {
        let mut s = b"abcd".to_vec();
        assert!(shorten_separator(&mut s, b"abzz"));
        assert_eq!(s, b"abd");
        let mut s = b"abc".to_vec();
        assert!(!shorten_separator(&mut s, b"abcd"));
        let mut s = b"abc".to_vec();
        assert!(!shorten_separator(&mut s, b"abd"));
        assert_eq!(s, b"abc");
    }
}
