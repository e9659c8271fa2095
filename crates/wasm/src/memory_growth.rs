//! Memory grown ahead of need, in steps that grow with it.
//!
//! The allocator grows WebAssembly memory by as little as each allocation needs (64 KiB pages),
//! and every growth detaches the memory's `ArrayBuffer`: JavaScript's next look at the memory
//! creates a new one spanning all of it. Measured in Node 20 (`--trace-gc`): with the memory
//! past about 32 MiB, V8 then runs a minor GC ("external memory pressure") before the next
//! `ArrayBuffer` JavaScript allocates (a values' slab), so growing page by page cost a GC per
//! growth; gets right after a load took 2.9 µs instead of 2.0. (V8 weighs a new buffer as young
//! external memory, and forces a minor GC once that passes twice its young-space limit.)
//!
//! [`memory_reserve_ahead`], called by JavaScript whenever it sees the memory has grown, leaves
//! the allocator free space of an eighth of the memory (at least 1 MiB) by allocating that much
//! and freeing it: the allocator grows the memory once (merged into its free top chunk, which it
//! never gives back on wasm32) and serves the following allocations from it. The reserve costs
//! address space until used: only its chunk's header is written (the engines commit pages as
//! they are touched).

use std::hint::black_box;

use wasm_bindgen::prelude::*;

const PAGE: usize = 64 * 1024;
/// The smallest step reserved ahead.
const MIN_AHEAD: usize = 1 << 20;

/// Makes the allocator hold at least `max(memory / 8, 1 MiB)` bytes free past its last use,
/// growing the memory once if it does not (no-op otherwise; it never shrinks anything).
#[wasm_bindgen(js_name = memoryReserveAhead)]
pub fn memory_reserve_ahead() {
    let memory = core::arch::wasm32::memory_size::<0>().saturating_mul(PAGE);
    let ahead = (memory / 8).max(MIN_AHEAD);
    // Allocated and freed at once: kept opaque so the pair is not optimised away.
    let reserve: Vec<u8> = Vec::with_capacity(ahead);
    black_box(reserve.as_ptr());
    drop(reserve);
}
