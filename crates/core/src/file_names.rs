//! Names of the files of a database directory, in one place: tables, WALs, manifests, `CURRENT`
//! and `LOCK`.
//!
//! Tables are `{number:06}.sst`, WALs `wal-{number:06}.log`, manifests `MANIFEST-{number:06}`;
//! numbers come from one counter ([`crate::version::VersionSet::new_file_number`]) and may grow
//! past six digits.

use crate::sorting::sort;

/// The file naming the live manifest.
pub const CURRENT: &str = "CURRENT";

/// The lock file of a database directory (docs/FORMAT.md, "LOCK file").
pub const LOCK: &str = "LOCK";

/// The temporary file `CURRENT` is written as before it is renamed over `CURRENT`.
pub const CURRENT_TMP: &str = "CURRENT.tmp";

/// The table file with `number`: `000123.sst`.
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// The manifest file with `number`: `MANIFEST-000002`.
pub fn manifest_file_name(number: u64) -> String {
    format!("MANIFEST-{number:06}")
}

/// The file name of log `number`: `wal-000007.log`.
pub fn wal_file_name(number: u64) -> String {
    format!("wal-{number:06}.log")
}

/// The log number in a WAL file name, if `name` is one (`wal-<digits>.log`).
pub fn parse_wal_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A file this module names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `{n}.sst`
    Table(u64),
    /// `wal-{n}.log`
    Wal(u64),
    /// `MANIFEST-{n}`
    Manifest(u64),
    /// `CURRENT`
    Current,
    /// `CURRENT.tmp`, left by an interrupted switch.
    CurrentTmp,
}

/// Parses a name made by this module; `None` for anything else.
pub fn parse_file_name(name: &str) -> Option<FileKind> {
    let number = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    if name == CURRENT {
        return Some(FileKind::Current);
    }
    if name == CURRENT_TMP {
        return Some(FileKind::CurrentTmp);
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return number(n).map(FileKind::Manifest);
    }
    if let Some(n) = name.strip_suffix(".sst") {
        return number(n).map(FileKind::Table);
    }
    parse_wal_file_name(name).map(FileKind::Wal)
}

/// The numbers of the write-ahead logs among `names` (a listing of a storage), ascending.
pub fn wal_numbers(names: &[String]) -> Vec<u64> {
    let mut out: Vec<u64> = names
        .iter()
        .filter_map(|n| match parse_file_name(n) {
            Some(FileKind::Wal(n)) => Some(n),
            _ => None,
        })
        .collect();
    sort(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(table_file_name(123), "000123.sst");
        assert_eq!(manifest_file_name(2), "MANIFEST-000002");
        assert_eq!(parse_file_name("000123.sst"), Some(FileKind::Table(123)));
        assert_eq!(
            parse_file_name("MANIFEST-1234567"),
            Some(FileKind::Manifest(1_234_567))
        );
        assert_eq!(parse_file_name("CURRENT"), Some(FileKind::Current));
        assert_eq!(parse_file_name("MANIFEST-"), None);
        assert_eq!(parse_file_name("+1.sst"), None);
        assert_eq!(parse_file_name("LOCK"), None);
    }
}
