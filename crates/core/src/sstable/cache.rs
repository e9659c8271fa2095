//! A block cache shared by all tables: a byte budget, keyed by (table id, block offset),
//! thread-safe (sharded CLOCK-Pro from the `quick_cache` crate; it builds for wasm32, where the
//! locks are never contended).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::block::Block;

#[derive(Debug, Clone, Copy)]
struct BlockWeighter;

impl Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        block.size() as u64
    }
}

/// Caches decoded data blocks of many tables within a byte budget.
pub struct BlockCache {
    cache: Cache<(u64, u64), Arc<Block>, BlockWeighter>,
    next_table_id: AtomicU64,
    capacity: u64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
            .field("used", &self.cache.weight())
            .field("blocks", &self.cache.len())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding about `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: u64) -> BlockCache {
        // Estimated item count only sizes the internal tables: assume 4 KiB blocks.
        let items = (capacity_bytes / 4096).clamp(16, 1 << 24) as usize;
        BlockCache {
            cache: Cache::with_weighter(items, capacity_bytes.max(1), BlockWeighter),
            next_table_id: AtomicU64::new(1),
            capacity: capacity_bytes,
        }
    }

    /// A table id not handed out before by this cache (for tables opened without one).
    pub fn new_table_id(&self) -> u64 {
        // High bit set: never collides with the file numbers an engine passes in.
        self.next_table_id.fetch_add(1, Ordering::Relaxed) | (1 << 63)
    }

    /// The block of `table` at `offset`, if cached.
    #[inline]
    pub fn get(&self, table: u64, offset: u64) -> Option<Arc<Block>> {
        self.cache.get(&(table, offset))
    }

    /// Caches `block` as the block of `table` at `offset`.
    pub fn insert(&self, table: u64, offset: u64, block: Arc<Block>) {
        self.cache.insert((table, offset), block);
    }

    /// Bytes currently cached.
    pub fn used_bytes(&self) -> u64 {
        self.cache.weight()
    }

    /// The byte budget.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: usize) -> Arc<Block> {
        let mut data = vec![0u8; n];
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&1u32.to_le_bytes());
        Arc::new(Block::new(data, "t".into(), 0).unwrap())
    }

    #[test]
    fn stays_within_budget_and_separates_tables() {
        let c = BlockCache::new(64 * 1024);
        c.insert(1, 0, block(100));
        assert!(c.get(1, 0).is_some());
        assert!(c.get(2, 0).is_none());
        for i in 0..100 {
            c.insert(3, i, block(4000));
        }
        assert!(c.used_bytes() <= 64 * 1024);
        assert_ne!(c.new_table_id(), c.new_table_id());
    }
}
