//! The native side of the JavaScript package's interoperability tests
//! (`packages/js/test/interop.test.ts`): native ShaleDB and the WebAssembly build must read each
//! other's files.
//!
//! Usage:
//! - `interop write <dir> <n>`: creates the database in `<dir>` and writes the data set of size
//!   `n` (below) into it, calling `flush()` where the data set says so, so that the directory
//!   ends up with flushed tables *and* a WAL tail; then closes it and prints `ok`.
//! - `interop verify <dir> <n>`: opens the existing database in `<dir>` and checks that every
//!   keyspace holds exactly what the data set of size `n` leaves behind (full forward and
//!   reverse iteration, and a point read of every key the data set ever touched); prints `ok`,
//!   or the first difference on standard error and exits with 1.
//!
//! Exit status 2: bad usage. Other errors (I/O, corruption) are returned from `main` (status 1).
//!
//! # The data set
//!
//! `packages/js/test/fixtures/dataset.ts` builds the same operations, step for step; change
//! both together. With `m = n / 2`, `hi = n / 2 + n / 10`:
//!
//! - Keyspace `default`, binary keys `kd(i) = [b'u', i >> 8, i & 0xff, 0x00, 0xff] ++
//!   "x" * (i % 11)` (not UTF-8; ordered by `i`), values `vd(i, gen)`: length
//!   `4097 + (i * 37) % 8000` when `i % 17 == 3` (larger than a table block), else
//!   `(i * 13) % 300` (so `vd(0, _)` is empty); even `i`: `b"abcdefghij"[(j + i + gen) % 10]`
//!   (compressible), odd `i`: the low bytes of xorshift32 seeded with
//!   `i * 0x9E3779B1 + gen * 0x85EBCA6B + 1` (wrapping u32; not compressible).
//! - Keyspace `events` (its metadata: the JavaScript package's record of utf8 keys and json
//!   values), UTF-8 keys `ke(i) = format!("ev:{i:06}")` plus `"/é😀"` when
//!   `i % 50 == 0`, JSON values `ve(i, gen) = {"i":i,"gen":gen,"tag":"t<i % 7>"}` (exactly the
//!   bytes of JavaScript's `JSON.stringify`), and the keys `zz:\u{FFFD}` and `zz:\u{1F600}`
//!   whose byte order differs from JavaScript's string order.
//!
//! 1. Put `kd((j * 7919) % n)` = `vd(_, 0)` for `j` in `0..n` (a shuffled order); put `ke(i)` =
//!    `ve(i, 0)` for `i` from `m - 1` down to 0; put `zz:\u{FFFD}` = `ve(1000001, 0)` and
//!    `zz:\u{1F600}` = `ve(1000002, 0)`. **Flush.**
//! 2. (The WAL tail.) Overwrite `kd(i)` with `vd(i, 1)` where `i % 5 == 0`; delete `kd(i)`
//!    where `i % 7 == 3`; delete the range `[kd(n / 2), kd(hi))`; put `kd(i)` = `vd(i, 2)` for
//!    `i` in `n / 2..hi` with `i % 3 == 0`; delete `kd(n + 5)` (never written).
//!    In `events`: delete `ke(i)` where `i % 4 == 1`; overwrite `ke(i)` with `ve(i, 1)` where
//!    `i % 6 == 0`; delete the range `[ke(m / 4), ke(m / 4 + 10))`.
//! 3. One atomic batch across both keyspaces: put `kd(i)` = `vd(i, 3)` for `i` in `1, 98, 195,
//!    ...` (< n); delete `ke(i)` for `i` in `2, 15, 28, ...` (< m); delete the range
//!    `[kd(n - 20), kd(n - 10))`; put `ke(i)` = `ve(i, 3)` for `i` in `3, 32, 61, ...` (< m).
//!
//! `n` must be in `100..=60000` and not a multiple of 7919.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use shaledb::{Batch, Db, IterOptions, Keyspace, Options, WriteOptions};

type BoxError = Box<dyn std::error::Error>;

/// The contents of one keyspace.
type Map = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ks {
    Default,
    Events,
}

#[derive(Debug, Clone)]
enum Op {
    Put(Ks, Vec<u8>, Vec<u8>),
    Delete(Ks, Vec<u8>),
    DeleteRange(Ks, Vec<u8>, Vec<u8>),
    Batch(Vec<Op>),
    Flush,
}

fn kd(i: u32) -> Vec<u8> {
    let mut k = vec![b'u', (i >> 8) as u8, i as u8, 0x00, 0xff];
    k.extend(std::iter::repeat_n(b'x', (i % 11) as usize));
    k
}

fn vd(i: u32, generation: u32) -> Vec<u8> {
    let len = if i % 17 == 3 {
        4097 + (i * 37) % 8000
    } else {
        (i * 13) % 300
    };
    if i.is_multiple_of(2) {
        let pattern = b"abcdefghij";
        (0..len)
            .map(|j| pattern[((j + i + generation) % 10) as usize])
            .collect()
    } else {
        let mut x = i
            .wrapping_mul(0x9E37_79B1)
            .wrapping_add(generation.wrapping_mul(0x85EB_CA6B))
            .wrapping_add(1);
        if x == 0 {
            x = 1;
        }
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }
}

fn ke(i: u32) -> Vec<u8> {
    let mut k = format!("ev:{i:06}");
    if i.is_multiple_of(50) {
        k.push_str("/é😀");
    }
    k.into_bytes()
}

fn ve(i: u32, generation: u32) -> Vec<u8> {
    format!(r#"{{"i":{i},"gen":{generation},"tag":"t{}"}}"#, i % 7).into_bytes()
}

/// The operations of the data set of size `n` (see the module documentation).
fn dataset(n: u32) -> Vec<Op> {
    use Ks::{Default as D, Events as E};
    let m = n / 2;
    let hi = n / 2 + n / 10;
    let mut ops = Vec::new();
    // 1. Into the tables.
    for j in 0..n {
        let i = (j * 7919) % n;
        ops.push(Op::Put(D, kd(i), vd(i, 0)));
    }
    for i in (0..m).rev() {
        ops.push(Op::Put(E, ke(i), ve(i, 0)));
    }
    ops.push(Op::Put(E, "zz:\u{FFFD}".into(), ve(1_000_001, 0)));
    ops.push(Op::Put(E, "zz:\u{1F600}".into(), ve(1_000_002, 0)));
    ops.push(Op::Flush);
    // 2. The WAL tail.
    for i in (0..n).filter(|i| i % 5 == 0) {
        ops.push(Op::Put(D, kd(i), vd(i, 1)));
    }
    for i in (0..n).filter(|i| i % 7 == 3) {
        ops.push(Op::Delete(D, kd(i)));
    }
    ops.push(Op::DeleteRange(D, kd(n / 2), kd(hi)));
    for i in (n / 2..hi).filter(|i| i % 3 == 0) {
        ops.push(Op::Put(D, kd(i), vd(i, 2)));
    }
    ops.push(Op::Delete(D, kd(n + 5)));
    for i in (0..m).filter(|i| i % 4 == 1) {
        ops.push(Op::Delete(E, ke(i)));
    }
    for i in (0..m).filter(|i| i % 6 == 0) {
        ops.push(Op::Put(E, ke(i), ve(i, 1)));
    }
    ops.push(Op::DeleteRange(E, ke(m / 4), ke(m / 4 + 10)));
    // 3. One atomic batch across keyspaces.
    let mut batch = Vec::new();
    for i in (1..n).step_by(97) {
        batch.push(Op::Put(D, kd(i), vd(i, 3)));
    }
    for i in (2..m).step_by(13) {
        batch.push(Op::Delete(E, ke(i)));
    }
    batch.push(Op::DeleteRange(D, kd(n - 20), kd(n - 10)));
    for i in (3..m).step_by(29) {
        batch.push(Op::Put(E, ke(i), ve(i, 3)));
    }
    ops.push(Op::Batch(batch));
    ops
}

/// What the data set leaves in each keyspace, and every key it touched.
#[derive(Default)]
struct Model {
    default: Map,
    events: Map,
    touched_default: Vec<Vec<u8>>,
    touched_events: Vec<Vec<u8>>,
}

impl Model {
    fn of(ops: &[Op]) -> Model {
        let mut model = Model::default();
        model.apply_all(ops);
        model
    }

    fn apply_all(&mut self, ops: &[Op]) {
        for op in ops {
            self.apply(op);
        }
    }

    fn map(&mut self, ks: Ks) -> (&mut Map, &mut Vec<Vec<u8>>) {
        match ks {
            Ks::Default => (&mut self.default, &mut self.touched_default),
            Ks::Events => (&mut self.events, &mut self.touched_events),
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Put(ks, k, v) => {
                let (map, touched) = self.map(*ks);
                map.insert(k.clone(), v.clone());
                touched.push(k.clone());
            }
            Op::Delete(ks, k) => {
                let (map, touched) = self.map(*ks);
                map.remove(k);
                touched.push(k.clone());
            }
            Op::DeleteRange(ks, start, end) => {
                let (map, _) = self.map(*ks);
                map.retain(|k, _| k < start || k >= end);
            }
            Op::Batch(ops) => self.apply_all(ops),
            Op::Flush => {}
        }
    }
}

fn options() -> Options {
    let mut options = Options::default();
    // The JavaScript package's default, so both sides flush at the same points.
    options.memtable_size = 4 << 20;
    // No background thread: it prepares the next log ahead of need whenever it runs, taking
    // a file number at a moment of its own, where the JavaScript package takes none; without
    // it both sides number their files alike.
    options.background_thread = false;
    options
}

fn write(dir: &str, n: u32) -> Result<(), BoxError> {
    let mut opts = options();
    opts.error_if_exists = true;
    let db = Db::open(dir, opts)?;
    let events = db.keyspace("events")?;
    // The encodings the JavaScript package records when it opens `events` empty as utf8 keys
    // and json values (FORMAT.md, "Keyspace metadata"), so both sides write the same manifest.
    events.set_metadata(br#"{"keyEncoding":"utf8","valueEncoding":"json"}"#)?;
    let default = db.default_keyspace();
    let pick = |ks: Ks| match ks {
        Ks::Default => &default,
        Ks::Events => &events,
    };
    for op in dataset(n) {
        match op {
            Op::Put(ks, k, v) => pick(ks).put(&k, &v)?,
            Op::Delete(ks, k) => pick(ks).delete(&k)?,
            Op::DeleteRange(ks, start, end) => pick(ks).delete_range(&start, &end)?,
            Op::Flush => db.flush()?,
            Op::Batch(ops) => {
                let mut batch = Batch::new();
                for op in ops {
                    match op {
                        Op::Put(ks, k, v) => batch.put(pick(ks), &k, &v)?,
                        Op::Delete(ks, k) => batch.delete(pick(ks), &k)?,
                        Op::DeleteRange(ks, start, end) => {
                            batch.delete_range(pick(ks), &start, &end)?
                        }
                        Op::Batch(_) | Op::Flush => {
                            return Err("the data set nests no batches or flushes".into())
                        }
                    };
                }
                db.write(&batch, WriteOptions::default())?;
            }
        }
    }
    db.close()?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes.iter().take(48) {
        let _ = write!(s, "{b:02x}");
    }
    if bytes.len() > 48 {
        let _ = write!(s, "... ({} bytes)", bytes.len());
    }
    s
}

/// Compares keyspace `ks` with `want`; the first difference, if any.
fn check_keyspace(
    name: &str,
    ks: &Keyspace,
    want: &Map,
    touched: &[Vec<u8>],
) -> Result<Option<String>, BoxError> {
    let forward: Vec<(Vec<u8>, Vec<u8>)> = ks
        .iter(IterOptions::default())?
        .collect::<shaledb::Result<_>>()?;
    let expected: Vec<(&Vec<u8>, &Vec<u8>)> = want.iter().collect();
    if forward.len() != expected.len() {
        return Ok(Some(format!(
            "{name}: iteration gave {} entries, expected {}",
            forward.len(),
            expected.len()
        )));
    }
    for (index, ((k, v), (wk, wv))) in forward.iter().zip(&expected).enumerate() {
        if k != *wk || v != *wv {
            return Ok(Some(format!(
                "{name}: entry {index} is {} = {}, expected {} = {}",
                hex(k),
                hex(v),
                hex(wk),
                hex(wv)
            )));
        }
    }
    let backward: Vec<(Vec<u8>, Vec<u8>)> = ks
        .iter(IterOptions::default().reversed())?
        .collect::<shaledb::Result<_>>()?;
    if !backward.iter().rev().eq(forward.iter()) {
        return Ok(Some(format!(
            "{name}: reverse iteration is not forward iteration reversed"
        )));
    }
    for key in touched {
        let got = ks.get(key)?;
        if got.as_ref() != want.get(key) {
            return Ok(Some(format!(
                "{name}: get({}) = {:?}, expected {:?}",
                hex(key),
                got.as_deref().map(hex),
                want.get(key).map(|v| hex(v))
            )));
        }
    }
    Ok(None)
}

fn verify(dir: &str, n: u32) -> Result<Option<String>, BoxError> {
    let mut opts = options();
    opts.create_if_missing = false;
    let db = Db::open(dir, opts)?;
    let model = Model::of(&dataset(n));
    let events = db.keyspace("events")?;
    let mut problem = check_keyspace(
        "default",
        &db.default_keyspace(),
        &model.default,
        &model.touched_default,
    )?;
    if problem.is_none() {
        problem = check_keyspace("events", &events, &model.events, &model.touched_events)?;
    }
    db.close()?;
    Ok(problem)
}

fn usage() -> ExitCode {
    eprintln!("usage: interop write|verify <database directory> <n (100..=60000)>");
    ExitCode::from(2)
}

fn main() -> Result<ExitCode, BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, dir, n] = args.as_slice() else {
        return Ok(usage());
    };
    let Ok(n) = n.parse::<u32>() else {
        return Ok(usage());
    };
    if !(100..=60_000).contains(&n) || n % 7919 == 0 {
        return Ok(usage());
    }
    match command.as_str() {
        "write" => {
            write(dir, n)?;
            println!("ok");
            Ok(ExitCode::SUCCESS)
        }
        "verify" => match verify(dir, n)? {
            None => {
                println!("ok");
                Ok(ExitCode::SUCCESS)
            }
            Some(problem) => {
                eprintln!("interop verify: {problem}");
                Ok(ExitCode::FAILURE)
            }
        },
        _ => Ok(usage()),
    }
}
