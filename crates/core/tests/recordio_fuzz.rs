//! Arbitrary and damaged input never panics the RecordIO reader, and claimed lengths never
//! drive allocations beyond the file (run with no record-size cap: a huge claimed length would
//! abort the test process on allocation).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterFormat, WriterOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage};

fn file_with(bytes: &[u8]) -> FileHandle {
    let f = MemoryStorage::new().open("fuzz", OpenMode::Create).unwrap();
    f.write_at(0, bytes).unwrap();
    f
}

fn uncapped() -> ReaderOptions {
    ReaderOptions {
        max_record_size: u64::MAX,
        ..ReaderOptions::default()
    }
}

/// Reads `bytes` sequentially to the end and at every offset; must not panic.
fn exercise(bytes: &[u8]) {
    for opts in [uncapped(), ReaderOptions::default()] {
        let Ok(mut r) = Reader::open(file_with(bytes), opts) else {
            return;
        };
        let mut prev = 0;
        for _ in 0..=bytes.len() {
            match r.read_next() {
                Ok(Some(rec)) => {
                    assert!(rec.next_offset > rec.offset && rec.offset >= prev);
                    assert!(rec.next_offset <= bytes.len() as u64);
                    prev = rec.next_offset;
                }
                _ => break,
            }
        }
        for offset in 0..=bytes.len() as u64 + 1 {
            if let Ok(Some(rec)) = r.read_at(offset) {
                let again = r.read_at_sized(offset, rec.next_offset - offset).unwrap();
                assert_eq!(again, rec);
            }
        }
    }
}

fn headers() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (1u32..=4, 0u32..=3).prop_map(|(v, c)| {
            let mut h = v.to_le_bytes().to_vec();
            h.extend_from_slice(&c.to_le_bytes());
            h
        }),
        Just(vec![0x01, 0x00, 0x48, 0x53, 0, 0, 0, 0]),
    ]
}

fn valid_file(format: WriterFormat, records: &[Option<Vec<u8>>], comps: &[u8]) -> Vec<u8> {
    let f = MemoryStorage::new().open("v", OpenMode::Create).unwrap();
    let opts = WriterOptions {
        format,
        buffer_size: 64,
        ..WriterOptions::default()
    };
    let mut w = Writer::new(f, opts).unwrap();
    for (i, r) in records.iter().enumerate() {
        let c = match format {
            WriterFormat::GoV4(c) => c,
            WriterFormat::Shale => [Compression::None, Compression::Snappy, Compression::Gzip]
                [usize::from(comps.get(i).copied().unwrap_or(0) % 3)],
        };
        w.write_with(r.as_deref(), c).unwrap();
    }
    let (f, size) = w.finish().unwrap();
    let mut out = vec![0u8; size as usize];
    f.read_exact_at(0, &mut out).unwrap();
    out
}

fn formats() -> impl Strategy<Value = WriterFormat> {
    prop_oneof![
        Just(WriterFormat::Shale),
        Just(WriterFormat::GoV4(Compression::None)),
        Just(WriterFormat::GoV4(Compression::Snappy)),
        Just(WriterFormat::GoV4(Compression::Gzip)),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Zero(usize, usize),
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(
        prop_oneof![
            (any::<usize>(), 1u8..).prop_map(|(p, x)| Mutation::Flip(p, x)),
            any::<usize>().prop_map(Mutation::Truncate),
            (any::<usize>(), any::<u8>()).prop_map(|(p, x)| Mutation::Insert(p, x)),
            (any::<usize>(), 0usize..64).prop_map(|(p, n)| Mutation::Zero(p, n)),
        ],
        1..4,
    )
}

fn apply(bytes: &mut Vec<u8>, m: &[Mutation]) {
    for m in m {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Flip(p, x) => {
                if let Some(b) = bytes.get_mut(p % len) {
                    *b ^= x;
                }
            }
            Mutation::Truncate(p) => bytes.truncate(p % len),
            Mutation::Insert(p, x) => bytes.insert((p % len).min(bytes.len()), x),
            Mutation::Zero(p, n) => {
                for b in bytes.iter_mut().skip(p % len).take(n) {
                    *b = 0;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_after_any_file_header(header in headers(), body in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut bytes = header;
        bytes.extend_from_slice(&body);
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_and_truncated_valid_files(
        format in formats(),
        records in prop::collection::vec(prop::option::weighted(0.9, prop::collection::vec(0u8..4, 0..300)), 0..6),
        comps in prop::collection::vec(any::<u8>(), 6),
        muts in mutations(),
    ) {
        let mut bytes = valid_file(format, &records, &comps);
        // The unmutated file reads back exactly.
        let mut r = Reader::open(file_with(&bytes), ReaderOptions::default()).unwrap();
        for rec in &records {
            let got = r.read_next().unwrap().unwrap().data.map(<[u8]>::to_vec);
            prop_assert_eq!(&got, rec);
        }
        prop_assert!(r.read_next().unwrap().is_none());
        apply(&mut bytes, &muts);
        exercise(&bytes);
    }
}
