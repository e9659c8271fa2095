//! The scratch buffer: a block of WebAssembly memory that JavaScript writes keys and values into
//! directly, so the hottest calls (get, put, delete) cross the boundary without an allocation.
//!
//! Protocol: JavaScript asks [`scratch_reserve`] for at least as many bytes as it needs and gets
//! the buffer's address (stable until the next `scratch_reserve` that grows it); it writes the
//! key (and value) there and passes their lengths. Results come back the same way: a value is
//! left in an output buffer whose address is returned, its length in the first 4 bytes of the
//! scratch buffer (u32 LE).

use std::cell::RefCell;

use shaledb::Error;
use wasm_bindgen::prelude::*;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; 1024]);
    /// The last value returned by address; kept alive until the next such call.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Makes the scratch buffer at least `capacity` bytes long; returns its address.
#[wasm_bindgen(js_name = scratchReserve)]
pub fn scratch_reserve(capacity: u32) -> u32 {
    SCRATCH.with_borrow_mut(|s| {
        if s.len() < capacity as usize {
            s.resize((capacity as usize).next_power_of_two(), 0);
        }
        s.as_ptr() as usize as u32
    })
}

/// Runs `f` on the first `len` bytes of the scratch buffer.
pub fn with_input<R>(len: u32, f: impl FnOnce(&[u8]) -> Result<R, Error>) -> Result<R, Error> {
    SCRATCH.with_borrow(|s| {
        let input = s.get(..len as usize).ok_or_else(|| {
            Error::InvalidArgument(format!("scratch input of {len} bytes overruns the buffer"))
        })?;
        f(input)
    })
}

/// Output buffers larger than this are not kept for the next call (a huge value or batch must not
/// pin its memory until the next read).
const KEEP_OUTPUT_CAPACITY: usize = 1 << 20;

/// Hands JavaScript the bytes `fill` appends to the (emptied) output buffer: stores their length
/// in the scratch buffer's first 4 bytes and returns their address. The buffer's memory is
/// reused from call to call (no allocation per call once it is large enough).
pub fn output_with(fill: impl FnOnce(&mut Vec<u8>) -> Result<(), Error>) -> Result<u32, Error> {
    OUTPUT.with_borrow_mut(|o| {
        if o.capacity() > KEEP_OUTPUT_CAPACITY {
            *o = Vec::new();
        }
        o.clear();
        fill(o)?;
        let len = u32::try_from(o.len())
            .map_err(|_| Error::InvalidArgument("output too large to return".into()))?;
        set_output_len(len);
        Ok(o.as_ptr() as usize as u32)
    })
}

fn set_output_len(len: u32) {
    SCRATCH.with_borrow_mut(|s| {
        if let Some(head) = s.get_mut(..4) {
            head.copy_from_slice(&len.to_le_bytes());
        }
    });
}

/// Hands `value` to JavaScript: keeps it in the output buffer, stores its length in the scratch
/// buffer's first 4 bytes and returns its address; 0 for `None`.
pub fn output(value: Option<Vec<u8>>) -> Result<u32, Error> {
    let Some(value) = value else { return Ok(0) };
    let len = u32::try_from(value.len())
        .map_err(|_| Error::InvalidArgument("value too large to return".into()))?;
    set_output_len(len);
    Ok(OUTPUT.with_borrow_mut(|o| {
        *o = value;
        // A non-empty or empty Vec never has address 0 (an empty one is dangling but aligned).
        o.as_ptr() as usize as u32
    }))
}
