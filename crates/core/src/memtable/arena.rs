//! The memtable's arena: memory handed out by bumping a pointer through a few large blocks,
//! freed all at once when the arena drops.
//!
//! A memtable of 64 MiB is then a few dozen allocations instead of millions: inserting costs
//! no `malloc` per entry, and dropping a flushed memtable frees a handful of blocks — no
//! allocator lock held for milliseconds by the thread that drops it while a writer waits on the
//! same lock.
//!
//! Contract: memory handed out stays at its address, uninitialized until written, until the
//! arena drops; [`Arena::alloc`] takes `&mut self` (one allocating thread at a time), while the
//! memory itself may be read by any thread that the caller hands pointers to.
#![expect(
    unsafe_code,
    reason = "raw blocks from the global allocator: their addresses must stay fixed while \
              other threads read through pointers into them, which no owned Rust container \
              guarantees under the aliasing rules once it is moved"
)]

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// Alignment of every allocation (enough for `u64` and pointers on every target).
pub const ALIGN: usize = 8;
/// Size of the first block; each next block doubles, up to [`MAX_BLOCK`], so a small memtable
/// stays small.
const FIRST_BLOCK: usize = 16 * 1024;
/// Largest regular block.
const MAX_BLOCK: usize = 1024 * 1024;

/// A bump allocator over blocks that never move.
pub struct Arena {
    /// Every block allocated, with its layout (freed on drop).
    blocks: Vec<(NonNull<u8>, Layout)>,
    /// Next free byte of the current block (dangling while there is none).
    next: NonNull<u8>,
    /// Bytes left in the current block after `next`.
    left: usize,
    /// Size of the next regular block.
    next_block: usize,
    /// Bytes handed out so far (rounded up to [`ALIGN`]).
    used: usize,
}

// SAFETY: the arena owns its blocks exclusively (nothing else frees them); the raw pointers are
// addresses of memory it owns, so moving or sharing the arena between threads is like moving
// or sharing a `Vec<Box<[u8]>>`. Its methods that write take `&mut self`.
unsafe impl Send for Arena {}
// SAFETY: no method taking `&self` reads or writes the blocks' contents.
unsafe impl Sync for Arena {}

impl Arena {
    /// An empty arena (allocates nothing until the first [`Arena::alloc`]).
    pub fn new() -> Arena {
        Arena {
            blocks: Vec::new(),
            next: NonNull::dangling(),
            left: 0,
            next_block: FIRST_BLOCK,
            used: 0,
        }
    }

    /// `size` uninitialized bytes aligned to [`ALIGN`] (not zeroed: that would be a memset of
    /// each new block on the inserting writer's path), at an address that stays valid until the
    /// arena drops. A request larger than a quarter of the next block gets a block of its own
    /// (so the current block's free space is not wasted). Aborts like `Vec` when memory runs
    /// out.
    pub fn alloc(&mut self, size: usize) -> NonNull<u8> {
        let size = size.max(1).next_multiple_of(ALIGN);
        self.used += size;
        if size > self.next_block / 4 {
            return self.new_block(size);
        }
        if size > self.left {
            self.next = self.new_block(self.next_block);
            self.left = self.next_block;
            self.next_block = (self.next_block * 2).min(MAX_BLOCK);
        }
        let at = self.next;
        // SAFETY: `size <= self.left`, so `at + size` is inside the current block or one past
        // its end, which `add` allows.
        self.next = unsafe { at.add(size) };
        self.left -= size;
        at
    }

    /// Bytes handed out by [`Arena::alloc`] (not counting the unused ends of blocks).
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used
    }

    /// Bytes of all blocks allocated.
    #[cfg(test)]
    pub fn allocated(&self) -> usize {
        self.blocks.iter().map(|(_, l)| l.size()).sum()
    }

    fn new_block(&mut self, size: usize) -> NonNull<u8> {
        let Ok(layout) = Layout::from_size_align(size, ALIGN) else {
            // Only for sizes near `isize::MAX`, which no entry reaches (values are limited
            // to `MAX_VALUE_SIZE`).
            handle_alloc_error(Layout::new::<u64>())
        };
        // SAFETY: `layout` has a non-zero size (`size >= ALIGN`).
        let block = unsafe { alloc(layout) };
        let Some(block) = NonNull::new(block) else {
            handle_alloc_error(layout)
        };
        self.blocks.push((block, layout));
        block
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for (block, layout) in self.blocks.drain(..) {
            // SAFETY: each block was allocated by `alloc` with exactly this layout and
            // is freed once (drained here).
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_writable_disjoint_and_counted() {
        let mut a = Arena::new();
        let mut seen = Vec::new();
        for size in [1usize, 7, 8, 13, 4096, MAX_BLOCK / 2, 3, MAX_BLOCK / 4, 100] {
            let p = a.alloc(size);
            assert_eq!(p.as_ptr() as usize % ALIGN, 0);
            // Under Miri (which checks the unsafe code), only the first 64 bytes of each.
            let checked = if cfg!(miri) { size.min(64) } else { size };
            // SAFETY: `p` points to `size` bytes owned by `a`, not handed out elsewhere.
            unsafe { std::ptr::write_bytes(p.as_ptr(), 0xAB, checked) };
            seen.push((p.as_ptr() as usize, size));
        }
        seen.sort_unstable();
        for w in seen.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
        }
        assert_eq!(
            a.used(),
            [8, 8, 8, 16, 4096, MAX_BLOCK / 2, 8, MAX_BLOCK / 4, 104]
                .iter()
                .sum::<usize>()
        );
        assert!(a.allocated() >= a.used());
    }

    #[test]
    fn blocks_double_up_to_the_largest_size_and_big_requests_get_their_own() {
        let mut a = Arena::new();
        a.alloc(8);
        assert_eq!(a.allocated(), FIRST_BLOCK);
        for _ in 0..5000 {
            a.alloc(1000);
        }
        let sizes: Vec<usize> = a.blocks.iter().map(|(_, l)| l.size()).collect();
        assert_eq!(sizes.first(), Some(&FIRST_BLOCK));
        assert!(sizes.windows(2).all(|w| w[1] == (w[0] * 2).min(MAX_BLOCK)));
        assert_eq!(sizes.last(), Some(&MAX_BLOCK));
        let before = a.allocated();
        a.alloc(MAX_BLOCK);
        assert_eq!(a.allocated(), before + MAX_BLOCK);
        // The current block still serves small requests.
        let left = a.left;
        a.alloc(8);
        assert_eq!(a.left, left - 8);
    }
}
