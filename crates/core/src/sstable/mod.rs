//! Sorted string tables on RecordIO.
//!
//! A table is one RecordIO file (ShaleDB format, so every block is covered by CRC-32C):
//! data-block records, then a Bloom filter record, an index record and a properties record,
//! then a fixed 72-byte footer outside the record stream, found from the file size. The byte
//! layout is in `docs/FORMAT.md` (section "SSTable") (and in [`format`](mod@format), [`block_builder`], [`bloom`],
//! [`properties`]).
//!
//! Entries are (user key, sequence number, kind, value), ordered by key ascending (bytewise),
//! then sequence number descending, so one table may hold several versions of a key.
//!
//! - [`TableBuilder`] writes a table from entries added in order.
//! - [`TableReader`] opens one: [`TableReader::get`] (Bloom filter → in-memory index → block
//!   cache or one read → restart-point binary search), [`TableReader::iter`] (a cursor moving
//!   both ways, across blocks), [`TableReader::scan`] (a sequential full-table read).
//! - [`BlockCache`] is shared by all open tables.

pub mod block;
pub mod block_builder;
pub mod bloom;
pub mod cache;
pub mod format;
mod internal_iter;
pub mod iter;
mod open_table;
pub mod properties;
mod readahead;
pub mod scan;
pub mod table_builder;
pub mod table_reader;

pub use cache::BlockCache;
pub use format::TABLE_FORMAT_VERSION;
pub use iter::TableIter;
pub use properties::Properties;
pub use scan::{ScanEntry, TableScan};
pub use table_builder::{TableBuilder, TableOptions, TableSummary};
pub use table_reader::{TableReadOptions, TableReader};

pub use crate::key::{compare_internal, Entry, RangeTombstone, ValueKind, MAX_SEQ};

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #[test]
    fn readers_and_the_cache_are_shareable_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::TableReader>();
        shareable::<super::BlockCache>();
        fn sendable<T: Send>() {}
        sendable::<super::TableIter>();
        sendable::<super::TableScan>();
        sendable::<super::TableBuilder>();
    }
}
