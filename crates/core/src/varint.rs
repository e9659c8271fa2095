//! Unsigned LEB128 varints ("uvarint", as Go's `encoding/binary`), shared by every format.

/// Appends `v` as a uvarint to `out`.
#[inline]
pub fn put_uvarint_vec(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Writes `v` as a uvarint into `out` at `*n`, advancing `*n`; `out` must have 10 bytes free
/// from `*n` (bytes that do not fit are dropped, never a panic).
#[inline]
pub fn put_uvarint<const N: usize>(out: &mut [u8; N], n: &mut usize, mut v: u64) {
    while v >= 0x80 {
        if let Some(b) = out.get_mut(*n) {
            *b = (v as u8) | 0x80;
        }
        *n += 1;
        v >>= 7;
    }
    if let Some(b) = out.get_mut(*n) {
        *b = v as u8;
    }
    *n += 1;
}

/// Why a uvarint could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The bytes ran out before the last byte of the varint.
    Incomplete,
    /// More than 64 bits (Go's `binary.Uvarint` overflow rule).
    Overflow,
}

/// Decodes a uvarint from `b` at `*pos`, advancing `*pos`. Same acceptance as Go's
/// `binary.Uvarint`: at most 10 bytes, the 10th at most 1.
///
/// The one-byte case is inlined into every caller (in WebAssembly a call is not free, and block
/// lengths are one byte); longer varints (sequence numbers) take an out-of-line path.
#[inline(always)]
pub fn get_uvarint(b: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    match b.get(*pos) {
        Some(&byte) if byte < 0x80 => {
            *pos += 1;
            Ok(u64::from(byte))
        }
        None => Err(VarintError::Incomplete),
        Some(_) => get_uvarint_long(b, pos),
    }
}

/// [`get_uvarint`] of a varint of two bytes or more. With 10 bytes left it decodes from a
/// fixed-size window (no bounds check per byte); near the end of `b`, byte by byte.
#[inline(never)]
fn get_uvarint_long(b: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let window: Option<&[u8; 10]> = pos
        .checked_add(10)
        .and_then(|end| b.get(*pos..end))
        .and_then(|w| w.try_into().ok());
    let Some(window) = window else {
        return get_uvarint_tail(b, pos);
    };
    let mut x = 0u64;
    for (i, &byte) in window.iter().enumerate() {
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return Err(VarintError::Overflow);
            }
            *pos += i + 1;
            return Ok(x | (u64::from(byte) << (7 * i)));
        }
        x |= u64::from(byte & 0x7f) << (7 * i);
    }
    Err(VarintError::Overflow)
}

/// [`get_uvarint`] within the last 10 bytes of `b`.
fn get_uvarint_tail(b: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let mut x = 0u64;
    let mut shift = 0u32;
    for i in 0..10usize {
        let Some(&byte) = b.get(*pos + i) else {
            return Err(VarintError::Incomplete);
        };
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return Err(VarintError::Overflow);
            }
            *pos += i + 1;
            return Ok(x | (u64::from(byte) << shift));
        }
        x |= u64::from(byte & 0x7f) << shift;
        shift += 7;
    }
    Err(VarintError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go-sstables' record magic, 0x130691.
    const GO_MAGIC: u64 = 0x13_0691;

    #[test]
    fn uvarint_round_trip_and_limits() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            0x130691,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = [0u8; 16];
            let mut n = 0;
            put_uvarint(&mut out, &mut n, v);
            let mut pos = 0;
            assert_eq!(get_uvarint(&out[..n], &mut pos), Ok(v));
            assert_eq!(pos, n);
            let mut pos = 0;
            assert_eq!(
                get_uvarint(&out[..n - 1], &mut pos),
                Err(VarintError::Incomplete)
            );
        }
        let mut pos = 0;
        assert_eq!(
            get_uvarint(&[0xff; 10], &mut pos),
            Err(VarintError::Overflow)
        );
        let mut magic = [0u8; 16];
        let mut n = 0;
        put_uvarint(&mut magic, &mut n, GO_MAGIC);
        assert_eq!(&magic[..n], &[0x91, 0x8d, 0x4c]);
        let mut vec = Vec::new();
        put_uvarint_vec(&mut vec, u64::MAX);
        assert_eq!(vec.len(), 10);
        assert_eq!(get_uvarint(&vec, &mut 0), Ok(u64::MAX));
    }

    #[test]
    fn multi_byte_varints_decode_alike_with_and_without_ten_bytes_after_them() {
        for v in [
            128u64,
            300,
            0x130691,
            u64::from(u32::MAX),
            1 << 56,
            u64::MAX,
        ] {
            let mut padded = Vec::new();
            put_uvarint_vec(&mut padded, v);
            let n = padded.len();
            padded.extend_from_slice(&[0xff; 12]);
            let mut pos = 0;
            assert_eq!(get_uvarint(&padded, &mut pos), Ok(v));
            assert_eq!(pos, n);
            let mut pos = 0;
            assert_eq!(get_uvarint(&padded[..n], &mut pos), Ok(v));
            assert_eq!(pos, n);
        }
        let mut overflow = [0xffu8; 20];
        overflow[9] = 2;
        assert_eq!(get_uvarint(&overflow, &mut 0), Err(VarintError::Overflow));
        assert_eq!(get_uvarint(&[0xff; 20], &mut 0), Err(VarintError::Overflow));
    }
}
