//! Opens a table: footer, properties, index and filter are read once; data blocks are read on
//! demand (one `read_at_sized` each, or several at once for a cursor reading ahead) and shared
//! through the optional [`BlockCache`].

use std::sync::Arc;

use super::block::{Block, BlockCursor};
use super::bloom::BloomFilter;
use super::cache::BlockCache;
use super::format::{get_varint, BlockHandle, Footer, FOOTER_LEN};
use super::iter::TableIter;
use super::open_table::{key_prefix, IndexEntry, Inner};
use super::properties::Properties;
use super::scan::TableScan;
use crate::key::{compare_internal, Entry, RangeTombstone, ValueKind};
use crate::recordio::{Reader, ReaderOptions};
use crate::storage::FileHandle;
use crate::{Error, Result};

/// Bytes of the RecordIO file header that starts every table.
const RECORDIO_HEADER_LEN: u64 = 8;

/// How a table is read.
#[derive(Debug, Clone)]
pub struct TableReadOptions {
    /// The shared block cache; `None` reads every block from storage.
    pub cache: Option<Arc<BlockCache>>,
    /// The table's id in the cache (unique among tables sharing it, e.g. the file number);
    /// `None` takes a fresh id from the cache.
    pub table_id: Option<u64>,
    /// Verify block checksums (default true).
    pub verify_checksums: bool,
    /// Largest record (block) accepted, stored or decompressed.
    pub max_block_size: u64,
}

impl Default for TableReadOptions {
    fn default() -> Self {
        TableReadOptions {
            cache: None,
            table_id: None,
            verify_checksums: true,
            max_block_size: crate::recordio::DEFAULT_MAX_RECORD_SIZE,
        }
    }
}

/// An open table. Cloning is cheap (shared state); all reads take `&self`.
#[derive(Debug, Clone)]
pub struct TableReader {
    pub(crate) inner: Arc<Inner>,
}

impl TableReader {
    /// Opens the table in `file`: reads and checks the footer, properties, index and filter.
    ///
    /// Errors: a file too short or with a damaged footer or metadata → a corruption error
    /// naming the file and offset; a newer table format → [`Error::VersionUnsupported`].
    pub fn open(file: FileHandle, options: TableReadOptions) -> Result<TableReader> {
        let name: Arc<str> = Arc::from(file.name());
        let size = file.size()?;
        if size < RECORDIO_HEADER_LEN + FOOTER_LEN as u64 {
            return Err(Error::corruption(
                &*name,
                size,
                format!("{size} bytes is too short for a table"),
            ));
        }
        let footer_at = size - FOOTER_LEN as u64;
        let mut buf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_at, &mut buf)?;
        let footer = Footer::decode(&buf, &name, footer_at)?;
        let in_meta = |h: BlockHandle| {
            h.offset >= footer.data_end
                && h.len > 0
                && h.offset.checked_add(h.len).is_some_and(|e| e <= footer_at)
        };
        if footer.data_end < RECORDIO_HEADER_LEN
            || footer.data_end > footer_at
            || !in_meta(footer.index)
            || !in_meta(footer.properties)
            || (footer.filter.len != 0 && !in_meta(footer.filter))
        {
            return Err(Error::corruption(
                &*name,
                footer_at,
                "footer handles point outside the table",
            ));
        }
        let reader_options = ReaderOptions {
            max_record_size: options.max_block_size,
            verify_checksums: options.verify_checksums,
        };
        let reader = Reader::open(file.clone(), reader_options.clone())?;
        let read_meta = |h: BlockHandle, what: &str| -> Result<Vec<u8>> {
            reader
                .read_at_sized(h.offset, h.len)?
                .data
                .ok_or_else(|| Error::corruption(&*name, h.offset, format!("{what} record is nil")))
        };
        let properties = Properties::decode(
            &read_meta(footer.properties, "properties")?,
            &name,
            footer.properties.offset,
        )?;
        let filter = if footer.filter.len == 0 {
            None
        } else {
            let data = read_meta(footer.filter, "filter")?;
            Some(BloomFilter::decode(data).ok_or_else(|| {
                Error::corruption(&*name, footer.filter.offset, "malformed Bloom filter")
            })?)
        };
        let range_tombstones = if properties.range_tombstones == 0 {
            Arc::from(Vec::new())
        } else {
            let h = properties.range_del;
            if !in_meta(h) {
                return Err(Error::corruption(
                    &*name,
                    footer.properties.offset,
                    "range-del handle points outside the table",
                ));
            }
            let block = Block::new(read_meta(h, "range-del")?, name.clone(), h.offset)?;
            let list = decode_range_tombstones(block, &name, h.offset)?;
            if list.len() as u64 != properties.range_tombstones {
                return Err(Error::corruption(
                    &*name,
                    h.offset,
                    format!(
                        "range-del record holds {} tombstones, properties {}",
                        list.len(),
                        properties.range_tombstones
                    ),
                ));
            }
            Arc::from(list)
        };
        let index_block = Block::new(
            read_meta(footer.index, "index")?,
            name.clone(),
            footer.index.offset,
        )?;
        let (index_keys, index) = decode_index(index_block, &name, &footer)?;
        let index_hot = index
            .iter()
            .map(|e| {
                let k = index_keys.get(e.key.0..e.key.1).unwrap_or_default();
                (key_prefix(k), e.handle.offset)
            })
            .collect();
        if index.len() as u64 != properties.data_blocks {
            return Err(Error::corruption(
                &*name,
                footer.index.offset,
                format!(
                    "index lists {} blocks, properties {}",
                    index.len(),
                    properties.data_blocks
                ),
            ));
        }
        let table_id = match (options.table_id, &options.cache) {
            (Some(id), _) => id,
            (None, Some(c)) => c.new_table_id(),
            (None, None) => 0,
        };
        Ok(TableReader {
            inner: Arc::new(Inner {
                file,
                file_name: name,
                reader,
                reader_options,
                footer,
                properties,
                filter,
                index_keys,
                index_hot,
                index,
                range_tombstones,
                cache: options.cache,
                table_id,
            }),
        })
    }

    /// The table's properties.
    pub fn properties(&self) -> &Properties {
        &self.inner.properties
    }

    /// The file's name.
    pub fn file_name(&self) -> &str {
        &self.inner.file_name
    }

    /// Whether the Bloom filter admits `key` (true when the table has no filter).
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.inner
            .filter
            .as_ref()
            .is_none_or(|f| f.may_contain(key))
    }

    /// The table's range tombstones, sorted by start key, then sequence number descending
    /// (empty for format version 1). Loaded at open.
    pub fn range_tombstones(&self) -> &Arc<[RangeTombstone]> {
        &self.inner.range_tombstones
    }

    /// A cursor over [`TableReader::range_tombstones`] as internal entries (key = start, value =
    /// end, kind [`ValueKind::RangeTombstone`]), to merge beside [`TableReader::iter`].
    pub fn range_tombstone_iter(&self) -> crate::iter::VecIterator {
        crate::iter::VecIterator::new(
            self.inner
                .range_tombstones
                .iter()
                .map(|t| Entry {
                    key: t.start.clone(),
                    seq: t.seq,
                    kind: ValueKind::RangeTombstone,
                    value: t.end.clone(),
                })
                .collect(),
        )
    }

    /// Every entry of the table as one stream in internal order: the point entries
    /// ([`TableReader::iter`]) merged with the range tombstones
    /// ([`TableReader::range_tombstone_iter`]).
    pub fn full_iter(&self) -> crate::iter::MergingIterator<'static> {
        crate::iter::MergingIterator::new(vec![
            Box::new(self.iter()),
            Box::new(self.range_tombstone_iter()),
        ])
    }

    /// The newest point version of `key` with a sequence number `<= snapshot_seq`, tombstones
    /// included (so a caller can stop looking in older tables), or `None`. Range tombstones
    /// are not consulted: a caller checks [`TableReader::range_tombstones`] (of this and newer
    /// tables) for one covering the answer.
    pub fn get(&self, key: &[u8], snapshot_seq: u64) -> Result<Option<Entry>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        let i = self.inner.index_lower_bound(key, snapshot_seq);
        let Some(block) = self.inner.block(i)? else {
            return Ok(None);
        };
        let mut c = BlockCursor::new(block);
        c.seek(key, snapshot_seq)?;
        if c.valid() && c.key() == key {
            return Ok(Some(Entry {
                key: key.to_vec(),
                seq: c.seq(),
                kind: c.kind(),
                value: c.value().to_vec(),
            }));
        }
        Ok(None)
    }

    /// A cursor over the table, positioned nowhere (call a seek first).
    pub fn iter(&self) -> TableIter {
        TableIter::new(self.inner.clone())
    }

    /// A sequential read of every entry, block by block through RecordIO.
    pub fn scan(&self) -> Result<TableScan> {
        TableScan::new(&self.inner)
    }

    /// Number of data blocks.
    pub fn data_blocks(&self) -> usize {
        self.inner.index.len()
    }
}

/// Decodes the range-del record: entries of kind 2, start < end, in table order.
fn decode_range_tombstones(block: Block, name: &str, at: u64) -> Result<Vec<RangeTombstone>> {
    let mut out: Vec<RangeTombstone> = Vec::new();
    let mut c = BlockCursor::new(Arc::new(block));
    c.seek_to_first()?;
    while c.valid() {
        let ordered = out
            .last()
            .is_none_or(|p| compare_internal(&p.start, p.seq, c.key(), c.seq()).is_le());
        if c.kind() != ValueKind::RangeTombstone || c.key() >= c.value() || !ordered {
            return Err(Error::corruption(name, at, "malformed range-del record"));
        }
        out.push(RangeTombstone {
            start: c.key().to_vec(),
            end: c.value().to_vec(),
            seq: c.seq(),
        });
        c.next()?;
    }
    Ok(out)
}

type Index = (Vec<u8>, Vec<IndexEntry>);

/// Decodes the index block into a flat, binary-searchable list, checking that the handles lie
/// in the data section in increasing order.
fn decode_index(block: Block, name: &str, footer: &Footer) -> Result<Index> {
    let index_at = footer.index.offset;
    let mut keys = Vec::new();
    let mut entries: Vec<IndexEntry> = Vec::new();
    let mut c = BlockCursor::new(Arc::new(block));
    c.seek_to_first()?;
    let mut next_min = RECORDIO_HEADER_LEN;
    while c.valid() {
        let v = c.value();
        let mut pos = 0;
        let (Some(offset), Some(len)) = (get_varint(v, &mut pos), get_varint(v, &mut pos)) else {
            return Err(Error::corruption(name, index_at, "malformed index entry"));
        };
        let end = offset.checked_add(len);
        if offset < next_min || len == 0 || end.is_none_or(|e| e > footer.data_end) {
            return Err(Error::corruption(
                name,
                index_at,
                format!("index points at a block outside the data section ({offset}+{len})"),
            ));
        }
        next_min = end.unwrap_or(u64::MAX);
        let start = keys.len();
        keys.extend_from_slice(c.key());
        entries.push(IndexEntry {
            key: (start, keys.len()),
            seq: c.seq(),
            handle: BlockHandle { offset, len },
        });
        c.next()?;
    }
    Ok((keys, entries))
}
