//! Iteration over internal entries (key, sequence number, kind, value) from any source —
//! memtables, SSTables, merges of them — and the user-facing iterator built on top.
//!
//! Internal order: user key ascending (bytewise), then sequence number descending (newest
//! first), as [`crate::sstable::compare_internal`]. Several versions of one key may appear.
//!
//! - [`vec`]: [`VecIterator`], over an owned sorted vector (tests, small sources).
//! - [`merge`]: [`MergingIterator`], a k-way merge of sources, newest first, both directions.
//! - [`bounds`]: [`KeyBounds`], inclusive/exclusive/open ends and prefixes.
//! - [`user`]: [`DbIterator`], the user-facing iterator: snapshot visibility, shadowed
//!   versions, point and range tombstones, bounds, both directions.
//! - [`range_del`]: [`RangeTombstoneSet`], the range tombstones a read view must respect.

pub mod bounds;
mod internal;
pub mod merge;
pub mod range_del;
pub mod user;
pub mod vec;

pub use bounds::KeyBounds;
pub use internal::{BoxedInternalIterator, InternalIterator};
pub use merge::MergingIterator;
pub use range_del::{RangeTombstone, RangeTombstoneSet};
pub use user::DbIterator;
pub use vec::VecIterator;
