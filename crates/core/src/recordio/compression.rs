//! Per-record compression codecs: none, Snappy (block format), gzip (pure-Rust backend), and
//! go-sstables' LZW (decode only).

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
}
