//! Per-record compression codecs: none, Snappy (block format), gzip (pure-Rust backend), and
//! go-sstables' LZW (decode only).
//!
//! gzip and LZW are optional (the crate features `gzip` and `lzw`, both default):
//! [`Compression::is_supported`] says whether this build has a codec, and the reader and writer
//! answer a record that needs a missing one with [`crate::Error::UnsupportedCompression`].
//!
//! Decoding contract: output never grows past the expected raw length plus one byte, so a
//! record's claimed or real expansion cannot drive memory use beyond the caller's cap.

#[cfg(feature = "gzip")]
use std::io::Read;

use crate::error::{Error, Result};

/// A record compression. The numeric codes differ between go-sstables' file header and
/// ShaleDB's record flags; see [`crate::recordio::format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Stored as is.
    #[default]
    None,
    /// Snappy block format (not framed), as golang/snappy `Encode`.
    Snappy,
    /// One RFC 1952 gzip member.
    Gzip,
    /// Go `compress/lzw`, LSB order, literal width 8. Read only.
    Lzw,
}

impl Compression {
    /// A short lower-case name (`"none"`, `"snappy"`, `"gzip"`, `"lzw"`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Snappy => "snappy",
            Compression::Gzip => "gzip",
            Compression::Lzw => "lzw",
        }
    }

    /// Whether this build has the codec: `None` and `Snappy` always, `Gzip` with the crate
    /// feature `gzip`, `Lzw` (decoding only) with the feature `lzw`.
    pub const fn is_supported(self) -> bool {
        match self {
            Compression::None | Compression::Snappy => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Lzw => cfg!(feature = "lzw"),
        }
    }

    /// `Ok` if this build has the codec, else [`Error::UnsupportedCompression`] for `file`.
    pub(crate) fn require_supported(self, file: &str) -> Result<()> {
        if self.is_supported() {
            Ok(())
        } else {
            Err(Error::UnsupportedCompression {
                file: file.to_owned(),
                compression: self.name(),
            })
        }
    }
}

/// The most a snappy block can expand: a 3-byte copy op yields at most 64 bytes (21.3x).
const SNAPPY_MAX_EXPANSION: u64 = 22;

/// gzip member header as Go's `compress/gzip` writes it (no name, no mtime, OS unknown).
#[cfg(feature = "gzip")]
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];

/// Reusable compression state (a snappy encoder and a deflate stream), so that compressing a
/// record allocates nothing once the output buffer has grown.
pub(crate) struct Compressor {
    snappy: snap::raw::Encoder,
    #[cfg(feature = "gzip")]
    deflate: Option<flate2::Compress>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compressor")
    }
}

impl Compressor {
    pub(crate) fn new() -> Compressor {
        Compressor {
            snappy: snap::raw::Encoder::new(),
            #[cfg(feature = "gzip")]
            deflate: None,
        }
    }

    /// Compresses `input` with `c` (Snappy or Gzip) into `out` (replacing its contents).
    /// `None` copies; `Lzw` is an error (write support is not offered), and so is `Gzip` when
    /// compiled out (callers check [`Compression::is_supported`] first, for a typed error).
    pub(crate) fn compress(
        &mut self,
        c: Compression,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        match c {
            Compression::None => {
                out.clear();
                out.extend_from_slice(input);
                Ok(())
            }
            Compression::Snappy => {
                let max = snap::raw::max_compress_len(input.len());
                if max == 0 {
                    return Err(format!(
                        "record of {} bytes too large for snappy",
                        input.len()
                    ));
                }
                if out.len() < max {
                    out.resize(max, 0);
                }
                let n = self
                    .snappy
                    .compress(input, out)
                    .map_err(|e| format!("snappy: {e}"))?;
                out.truncate(n);
                Ok(())
            }
            #[cfg(feature = "gzip")]
            Compression::Gzip => self.gzip(input, out),
            #[cfg(not(feature = "gzip"))]
            Compression::Gzip => Err(compiled_out(c)),
            Compression::Lzw => Err("writing LZW is not supported".into()),
        }
    }

    #[cfg(feature = "gzip")]
    fn gzip(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let deflate = self
            .deflate
            .get_or_insert_with(|| flate2::Compress::new(flate2::Compression::default(), false));
        deflate.reset();
        out.clear();
        out.reserve(input.len() + input.len() / 16 + 64);
        out.extend_from_slice(&GZIP_HEADER);
        let mut rest = input;
        loop {
            let before_in = deflate.total_in();
            let status = deflate
                .compress_vec(rest, out, flate2::FlushCompress::Finish)
                .map_err(|e| format!("deflate: {e}"))?;
            let used = usize::try_from(deflate.total_in() - before_in).unwrap_or(usize::MAX);
            rest = rest.get(used..).unwrap_or_default();
            if status == flate2::Status::StreamEnd {
                break;
            }
            out.reserve(rest.len() + 1024);
        }
        let mut crc = flate2::Crc::new();
        crc.update(input);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        Ok(())
    }
}

/// Decompresses `input` (compressed with `c`) into `out`, which must then hold exactly
/// `raw_len` bytes. The caller has checked `raw_len` against its record-size cap; decoding
/// stops as soon as the output would exceed `raw_len`. Errors are a description for a
/// corruption error. (A codec compiled out is an error too; callers check
/// [`Compression::is_supported`] first, for a typed error.)
pub(crate) fn decompress(
    c: Compression,
    input: &[u8],
    raw_len: u64,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.clear();
    match c {
        Compression::None => out.extend_from_slice(input),
        Compression::Snappy => {
            let n = snap::raw::decompress_len(input).map_err(|e| format!("snappy: {e}"))?;
            if n as u64 != raw_len {
                return Err(format!(
                    "snappy block holds {n} bytes, header says {raw_len}"
                ));
            }
            if raw_len > (input.len() as u64).saturating_mul(SNAPPY_MAX_EXPANSION) {
                return Err(format!(
                    "snappy block of {} bytes cannot expand to {raw_len}",
                    input.len()
                ));
            }
            out.resize(n, 0);
            let got = snap::raw::Decoder::new()
                .decompress(input, out)
                .map_err(|e| format!("snappy: {e}"))?;
            out.truncate(got);
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            flate2::read::GzDecoder::new(input)
                .take(raw_len.saturating_add(1))
                .read_to_end(out)
                .map_err(|e| format!("gzip: {e}"))?;
        }
        #[cfg(feature = "lzw")]
        Compression::Lzw => lzw_decode(input, raw_len, out)?,
        #[cfg(not(all(feature = "gzip", feature = "lzw")))]
        other => return Err(compiled_out(other)),
    }
    if out.len() as u64 != raw_len {
        return Err(format!(
            "record decompresses to {} bytes, header says {raw_len}",
            out.len()
        ));
    }
    Ok(())
}

/// The description of an error for a codec this build does not have.
#[cfg(not(all(feature = "gzip", feature = "lzw")))]
fn compiled_out(c: Compression) -> String {
    format!("{} support is not compiled into this build", c.name())
}

/// Go `compress/lzw` (LSB, literal width 8) through `weezl`, bounded to `raw_len + 1` bytes.
#[cfg(feature = "lzw")]
fn lzw_decode(mut input: &[u8], raw_len: u64, out: &mut Vec<u8>) -> Result<(), String> {
    let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, 8);
    let mut chunk = [0u8; 8192];
    loop {
        let r = decoder.decode_bytes(input, &mut chunk);
        input = input.get(r.consumed_in..).unwrap_or_default();
        out.extend_from_slice(chunk.get(..r.consumed_out).unwrap_or_default());
        if out.len() as u64 > raw_len {
            return Err("lzw output longer than the header says".into());
        }
        match r.status {
            Ok(weezl::LzwStatus::Done) => return Ok(()),
            Ok(weezl::LzwStatus::Ok) => {
                if r.consumed_in == 0 && r.consumed_out == 0 {
                    return Err("lzw: stream makes no progress".into());
                }
            }
            Ok(weezl::LzwStatus::NoProgress) => {
                return Err("lzw: stream ends without an end code".into())
            }
            Err(e) => return Err(format!("lzw: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_and_snappy_are_always_supported() {
        assert!(Compression::None.is_supported());
        assert!(Compression::Snappy.is_supported());
        assert_eq!(Compression::Gzip.is_supported(), cfg!(feature = "gzip"));
        assert_eq!(Compression::Lzw.is_supported(), cfg!(feature = "lzw"));
    }

    #[test]
    fn a_compiled_out_codec_is_a_typed_error() {
        for c in [Compression::Gzip, Compression::Lzw] {
            match c.require_supported("f.rio") {
                Ok(()) => assert!(c.is_supported()),
                Err(Error::UnsupportedCompression { file, compression }) => {
                    assert!(!c.is_supported());
                    assert_eq!((file.as_str(), compression), ("f.rio", c.name()));
                }
                Err(other) => panic!("{other}"),
            }
        }
    }

    #[test]
    #[cfg(not(feature = "gzip"))]
    fn without_the_gzip_feature_gzip_is_an_error_not_a_panic() {
        let mut c = Compressor::new();
        let mut out = Vec::new();
        assert!(c.compress(Compression::Gzip, b"abc", &mut out).is_err());
        assert!(decompress(Compression::Gzip, b"abc", 3, &mut out).is_err());
    }

    #[test]
    #[cfg(not(feature = "lzw"))]
    fn without_the_lzw_feature_lzw_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        assert!(decompress(Compression::Lzw, b"abc", 3, &mut out).is_err());
    }

    #[test]
    #[cfg(feature = "gzip")]
    fn snappy_and_gzip_round_trip() {
        let mut c = Compressor::new();
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        for comp in [Compression::None, Compression::Snappy, Compression::Gzip] {
            for input in [&data[..], b"", b"x"] {
                let mut packed = Vec::new();
                c.compress(comp, input, &mut packed).unwrap();
                let mut back = Vec::new();
                decompress(comp, &packed, input.len() as u64, &mut back).unwrap();
                assert_eq!(back, input);
                assert!(decompress(comp, &packed, input.len() as u64 + 1, &mut back).is_err());
            }
        }
    }

    #[test]
    #[cfg(feature = "gzip")]
    fn gzip_output_readable_by_gz_decoder() {
        let mut c = Compressor::new();
        let mut packed = Vec::new();
        c.compress(Compression::Gzip, b"hello hello hello", &mut packed)
            .unwrap();
        assert_eq!(&packed[..10], &GZIP_HEADER);
        let mut s = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "hello hello hello");
    }
}
