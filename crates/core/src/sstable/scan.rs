//! A full-table scan: reads the data section sequentially through [`crate::recordio::Reader`]
//! (limited to the data section) and decodes each block in place.

use super::format::{get_varint, get_varint32};
use super::open_table::Inner;
use crate::key::ValueKind;
use crate::recordio::Reader;
use crate::{Error, Result};

/// One entry yielded by [`TableScan::next_entry`], borrowed from the scan's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanEntry<'a> {
    /// The user key.
    pub key: &'a [u8],
    /// The sequence number.
    pub seq: u64,
    /// Value or tombstone.
    pub kind: ValueKind,
    /// The value.
    pub value: &'a [u8],
}

/// Sequential reader of every entry of a table, in table order.
#[derive(Debug)]
pub struct TableScan {
    reader: Reader,
    file_name: std::sync::Arc<str>,
    block: Vec<u8>,
    block_offset: u64,
    pos: usize,
    limit: usize,
    key: Vec<u8>,
    done: bool,
}

impl TableScan {
    pub(crate) fn new(table: &Inner) -> Result<TableScan> {
        let mut reader = Reader::open(table.file.clone(), table.reader_options.clone())?;
        reader.set_limit(table.footer.data_end);
        Ok(TableScan {
            reader,
            file_name: table.file_name.clone(),
            block: Vec::new(),
            block_offset: 0,
            pos: 0,
            limit: 0,
            key: Vec::new(),
            done: false,
        })
    }

    fn corrupt(&self, why: &str) -> Error {
        Error::corruption(
            &*self.file_name,
            self.block_offset,
            format!("bad block: {why}"),
        )
    }

    /// Reads the next block into the buffer; `false` at the end of the data section.
    fn load_block(&mut self) -> Result<bool> {
        let Some(rec) = self.reader.read_next()? else {
            return Ok(false);
        };
        self.block_offset = rec.offset;
        let Some(data) = rec.data else {
            return Err(self.corrupt("nil record in the data section"));
        };
        self.block.clear();
        self.block.extend_from_slice(data);
        let n = self.block.len();
        let count = n
            .checked_sub(4)
            .and_then(|at| self.block.get(at..))
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| self.corrupt("shorter than its restart count"))?;
        self.limit = (count as usize)
            .checked_mul(4)
            .and_then(|r| n.checked_sub(4 + r))
            .filter(|_| count > 0)
            .ok_or_else(|| self.corrupt("restart count out of range"))?;
        self.pos = 0;
        self.key.clear();
        Ok(true)
    }

    /// The next entry, or `None` after the last. An error ends the scan.
    pub fn next_entry(&mut self) -> Result<Option<ScanEntry<'_>>> {
        if self.done {
            return Ok(None);
        }
        while self.pos >= self.limit {
            match self.load_block() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(None);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        let data = self.block.get(..self.limit).unwrap_or_default();
        let mut pos = self.pos;
        let parsed = (|| {
            let shared = get_varint32(data, &mut pos)?;
            let unshared = get_varint32(data, &mut pos)?;
            let vlen = get_varint32(data, &mut pos)?;
            let suffix = data.get(pos..pos.checked_add(unshared)?)?;
            pos += unshared;
            let trailer = get_varint(data, &mut pos)?;
            let kind = ValueKind::from_code((trailer & 0xff) as u8)?;
            let vstart = pos;
            let vend = pos.checked_add(vlen).filter(|&e| e <= data.len())?;
            Some((shared, suffix, trailer >> 8, kind, vstart, vend))
        })();
        let Some((shared, suffix, seq, kind, vstart, vend)) = parsed else {
            self.done = true;
            return Err(self.corrupt("malformed entry"));
        };
        if shared > self.key.len() {
            self.done = true;
            return Err(self.corrupt("malformed entry"));
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(suffix);
        self.pos = vend;
        Ok(Some(ScanEntry {
            key: &self.key,
            seq,
            kind,
            value: self.block.get(vstart..vend).unwrap_or_default(),
        }))
    }
}
