//! A topic's record and its stored encoding (FORMAT.md, "Topics"). Decoding is total:
//! damaged records give [`Error::Corruption`].

use crate::{Error, Result};

const VERSION: u8 = 1;
/// Key length meaning "no key".
const NO_KEY: u32 = u32::MAX;

/// A record to append: a value with an optional key and headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRecord {
    /// The record's bytes.
    pub value: Vec<u8>,
    /// An optional key (for the application: compaction by key is not done).
    pub key: Option<Vec<u8>>,
    /// Optional named headers.
    pub headers: Vec<(String, Vec<u8>)>,
}

impl NewRecord {
    /// A record of `value` alone.
    pub fn value(value: impl Into<Vec<u8>>) -> NewRecord {
        NewRecord {
            value: value.into(),
            ..NewRecord::default()
        }
    }
}

/// A record as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its offset: dense, from 0, in commit order.
    pub offset: u64,
    /// When it was appended (milliseconds since the Unix epoch; never earlier than the record
    /// before it).
    pub time_ms: u64,
    /// Its key, if it has one.
    pub key: Option<Vec<u8>>,
    /// Its headers.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Its bytes.
    pub value: Vec<u8>,
}

impl NewRecord {
    /// The record as read back once committed at `offset` and `time`.
    pub(crate) fn committed(&self, offset: u64, time_ms: u64) -> Record {
        Record {
            offset,
            time_ms,
            key: self.key.clone(),
            headers: self.headers.clone(),
            value: self.value.clone(),
        }
    }
}

/// Encodes `r` appended at `time`.
pub(crate) fn encode(r: &NewRecord, time: u64) -> Result<Vec<u8>> {
    let too_big = |what: &str| Error::InvalidArgument(format!("a record's {what} is too large"));
    let mut out = Vec::with_capacity(16 + r.value.len() + r.key.as_ref().map_or(0, Vec::len));
    out.push(VERSION);
    out.extend_from_slice(&time.to_le_bytes());
    match &r.key {
        Some(k) => {
            let len = u32::try_from(k.len())
                .ok()
                .filter(|&l| l != NO_KEY)
                .ok_or_else(|| too_big("key"))?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(k);
        }
        None => out.extend_from_slice(&NO_KEY.to_le_bytes()),
    }
    let count = u16::try_from(r.headers.len()).map_err(|_| too_big("header list"))?;
    out.extend_from_slice(&count.to_le_bytes());
    for (name, value) in &r.headers {
        let n = u16::try_from(name.len()).map_err(|_| too_big("header name"))?;
        let v = u32::try_from(value.len()).map_err(|_| too_big("header value"))?;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&v.to_le_bytes());
        out.extend_from_slice(value);
    }
    out.extend_from_slice(&r.value);
    Ok(out)
}

/// The append time of an encoded record.
pub(crate) fn time_of(data: &[u8], topic: &str) -> Result<u64> {
    let mut r = Reader { data, topic };
    r.header()
}

/// Decodes the record at `offset`.
pub(crate) fn decode(data: &[u8], offset: u64, topic: &str) -> Result<Record> {
    let mut r = Reader { data, topic };
    let time_ms = r.header()?;
    let key_len = r.u32()?;
    let key = match key_len {
        NO_KEY => None,
        n => Some(r.bytes(n as usize)?.to_vec()),
    };
    let count = r.u16()?;
    let mut headers = Vec::with_capacity(usize::from(count).min(data.len()));
    for _ in 0..count {
        let n = r.u16()?;
        let name = String::from_utf8(r.bytes(usize::from(n))?.to_vec())
            .map_err(|_| r.damaged("a header name is not UTF-8"))?;
        let v = r.u32()?;
        headers.push((name, r.bytes(v as usize)?.to_vec()));
    }
    Ok(Record {
        offset,
        time_ms,
        key,
        headers,
        value: r.data.to_vec(),
    })
}

struct Reader<'a, 'q> {
    data: &'a [u8],
    topic: &'q str,
}

impl<'a> Reader<'a, '_> {
    fn damaged(&self, reason: &str) -> Error {
        Error::corruption(
            format!("topic {:?}", self.topic),
            0,
            format!("record: {reason}"),
        )
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.data.len() < n {
            return Err(self.damaged("truncated"));
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
    }

    fn header(&mut self) -> Result<u64> {
        match self.bytes(1)? {
            [VERSION] => {}
            _ => return Err(self.damaged("unknown version")),
        }
        self.u64()
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let mut a = [0; 4];
        a.copy_from_slice(self.bytes(4)?);
        Ok(u32::from_le_bytes(a))
    }

    fn u64(&mut self) -> Result<u64> {
        let mut a = [0; 8];
        a.copy_from_slice(self.bytes(8)?);
        Ok(u64::from_le_bytes(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damaged_ones_are_corruption() {
        let r = NewRecord {
            value: b"v".to_vec(),
            key: Some(b"k".to_vec()),
            headers: vec![("h".into(), b"x".to_vec())],
        };
        let enc = encode(&r, 42).unwrap();
        let d = decode(&enc, 7, "t").unwrap();
        assert_eq!(
            (d.offset, d.time_ms, d.key, d.headers, d.value),
            (7, 42, r.key, r.headers, r.value)
        );
        assert_eq!(time_of(&enc, "t").unwrap(), 42);
        for cut in 0..enc.len() - 1 {
            // Every prefix short of the value's start is damaged; longer ones just shorten it.
            if cut < enc.len() - 1 {
                let _ = decode(&enc[..cut], 0, "t");
            }
        }
        assert!(decode(&enc[..5], 0, "t").is_err());
        assert!(decode(&[2, 0, 0], 0, "t").is_err());
    }
}
