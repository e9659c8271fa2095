//! The Quick start demo: writes a RecordIO log and an SSTable with the ShaleDB core, reads
//! them back, then runs the database itself (writes, keyspaces, a snapshot, iteration, a
//! transaction, reopening), and prints what it did.
//!
//! Run it with `npm run demo` (or `cargo run --release -p shaledb-examples --bin demo`).
//! It writes into `./demo-data` (or the directory given as the first argument).

use std::sync::Arc;
use std::time::Instant;

use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterFormat, WriterOptions};
use shaledb::sstable::{
    BlockCache, TableBuilder, TableOptions, TableReadOptions, TableReader, ValueKind,
};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::{Batch, Db, IterOptions, Options, WriteOptions};

fn main() {
    if let Err(e) = run() {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> shaledb::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "demo-data".into());
    let storage = StdFsStorage::open(&dir)?;
    println!("ShaleDB demo, writing into {}/", storage.root().display());
    recordio_log(&storage)?;
    sorted_table(&storage)?;
    database(&storage.root().join("db"))?;
    println!("\nDone. The files are in {dir}/; run `npm test` to run every test.");
    Ok(())
}

/// An event log in RecordIO: JSON events, every third one gzip'd and every third Snappy'd
/// (compression is chosen per record), read back sequentially and at an offset.
fn recordio_log(storage: &StdFsStorage) -> shaledb::Result<()> {
    println!("\n== RecordIO: an event log (events.rio)");
    let file = storage.open("events.rio", OpenMode::Create)?;
    let mut log = Writer::new(file, WriterOptions::default())?;
    let started = Instant::now();
    let mut offsets = Vec::new();
    for i in 0..10_000u32 {
        let event = format!(
            r#"{{"seq":{i},"type":"{}","user":"user-{}","amount":{}}}"#,
            ["login", "purchase", "logout"][i as usize % 3],
            i % 97,
            (i * 37) % 1000
        );
        let compression =
            [Compression::None, Compression::Snappy, Compression::Gzip][i as usize % 3];
        offsets.push(log.write_with(Some(event.as_bytes()), compression)?);
    }
    log.write_nil()?; // a nil record marks the end of a session, distinct from an empty one
    log.sync()?;
    let (_, size) = log.finish()?;
    println!(
        "wrote 10,000 events + 1 nil record, {size} bytes, synced, in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    let mut reader = Reader::open(
        storage.open("events.rio", OpenMode::Read)?,
        ReaderOptions::default(),
    )?;
    let (mut events, mut nils, mut purchases) = (0, 0, 0);
    while let Some(record) = reader.read_next()? {
        match record.data {
            Some(bytes) => {
                events += 1;
                purchases += usize::from(bytes.windows(8).any(|w| w == b"purchase"));
            }
            None => nils += 1,
        }
    }
    println!("read back sequentially: {events} events ({purchases} purchases), {nils} nil record");
    let at = offsets.get(4242).copied().unwrap_or(8);
    if let Some(record) = reader.read_at(at)? {
        let text = String::from_utf8_lossy(record.data.as_deref().unwrap_or_default()).into_owned();
        println!("read at offset {at}: {text}");
    }

    let file = storage.open("interchange-go-v4.rio", OpenMode::Create)?;
    let options = WriterOptions {
        format: WriterFormat::GoV4(Compression::Snappy),
        ..WriterOptions::default()
    };
    let mut go = Writer::new(file, options)?;
    for word in ["a", "bb", "ccc"] {
        go.write(word.as_bytes())?;
    }
    let (_, size) = go.finish()?;
    println!("wrote interchange-go-v4.rio ({size} bytes), readable by go-sstables v1.7.0");
    Ok(())
}

/// A sorted table of 100,000 users with a second version of every tenth and a tombstone for
/// every hundredth, then point reads at two snapshots, a range, a reverse walk and a full scan.
fn sorted_table(storage: &StdFsStorage) -> shaledb::Result<()> {
    println!("\n== SSTable: users (000001.sst)");
    let file = storage.open("000001.sst", OpenMode::Create)?;
    let options = TableOptions {
        compression: Compression::Snappy, // per block, kept only where it saves >= 12.5%
        ..TableOptions::default()
    };
    let mut table = TableBuilder::new(file, options)?;
    let started = Instant::now();
    for i in 0..100_000u32 {
        let key = format!("user:{i:06}");
        // Newer versions first: seq 2 (update or delete), then seq 1 (the original).
        if i % 100 == 0 {
            table.add(key.as_bytes(), 2, ValueKind::Tombstone, b"")?;
        } else if i % 10 == 0 {
            table.add(
                key.as_bytes(),
                2,
                ValueKind::Value,
                format!("{{\"name\":\"User {i}\",\"plan\":\"pro\"}}").as_bytes(),
            )?;
        }
        table.add(
            key.as_bytes(),
            1,
            ValueKind::Value,
            format!("{{\"name\":\"User {i}\",\"plan\":\"free\"}}").as_bytes(),
        )?;
    }
    let summary = table.finish()?;
    let props = &summary.properties;
    println!(
        "built {} entries ({} tombstones) into {} bytes in {:.1} ms",
        props.entries,
        props.tombstones,
        summary.file_size,
        started.elapsed().as_secs_f64() * 1e3
    );

    let cache = Arc::new(BlockCache::new(8 << 20));
    let options = TableReadOptions {
        cache: Some(cache.clone()),
        ..TableReadOptions::default()
    };
    let reader = TableReader::open(storage.open("000001.sst", OpenMode::Read)?, options)?;
    for (key, snapshot) in [
        ("user:000010", 2),
        ("user:000010", 1),
        ("user:000100", 2),
        ("user:999999", 2),
    ] {
        let shown = match reader.get(key.as_bytes(), snapshot)? {
            Some(e) if e.kind == ValueKind::Tombstone => format!("deleted at seq {}", e.seq),
            Some(e) => format!("{} (seq {})", String::from_utf8_lossy(&e.value), e.seq),
            None => "not found".into(),
        };
        println!("get {key} at snapshot {snapshot}: {shown}");
    }

    let mut it = reader.iter();
    it.seek(b"user:050000")?;
    let mut range = Vec::new();
    while it.valid() && range.len() < 3 {
        range.push(format!(
            "{}@{}",
            String::from_utf8_lossy(it.key()),
            it.seq()
        ));
        it.next()?;
    }
    println!("range from user:050000: {}", range.join(", "));
    it.seek_to_last()?;
    let mut last = Vec::new();
    while it.valid() && last.len() < 3 {
        last.push(String::from_utf8_lossy(it.key()).into_owned());
        it.prev()?;
    }
    println!("reverse from the end: {}", last.join(", "));

    let started = Instant::now();
    let mut scan = reader.scan()?;
    let (mut entries, mut bytes) = (0u64, 0u64);
    while let Some(e) = scan.next_entry()? {
        entries += 1;
        bytes += (e.key.len() + e.value.len()) as u64;
    }
    println!(
        "full scan: {entries} entries, {bytes} key+value bytes in {:.1} ms; block cache holds {} KiB",
        started.elapsed().as_secs_f64() * 1e3,
        cache.used_bytes() / 1024
    );
    Ok(())
}

/// The database: an order book in two keyspaces, written atomically, read through a snapshot,
/// a prefix scan and a transaction, then closed and reopened.
fn database(dir: &std::path::Path) -> shaledb::Result<()> {
    println!("\n== Db: an order book ({})", dir.display());
    if dir.exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
    let db = Db::open(dir, Options::default())?;
    let orders = db.keyspace("orders")?;
    let stock = db.keyspace("stock")?;
    let started = Instant::now();
    for i in 0..20_000u32 {
        let mut batch = Batch::new(); // both keyspaces change together, or not at all
        batch.put(
            &orders,
            format!("order:{i:06}").as_bytes(),
            format!("sku-{}", i % 50).as_bytes(),
        )?;
        batch.put(
            &stock,
            format!("sku-{}", i % 50).as_bytes(),
            (1000 - i / 50).to_string().as_bytes(),
        )?;
        db.write(&batch, WriteOptions::default())?;
    }
    println!(
        "20,000 atomic two-keyspace batches in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let snapshot = db.snapshot();
    orders.delete_range(b"order:000000", b"order:010000")?; // one range tombstone
    let remaining = orders
        .iter(IterOptions::prefix(b"order:".to_vec()))?
        .count();
    let before = snapshot
        .iter(&orders, IterOptions::prefix(b"order:".to_vec()))?
        .count();
    println!(
        "after delete_range: {remaining} orders (the snapshot taken before still sees {before})"
    );
    drop(snapshot);

    let mut tx = db.transaction(); // optimistic: a concurrent change to sku-7 would be a Conflict
    let left: u32 = String::from_utf8_lossy(&tx.get(&stock, b"sku-7")?.unwrap_or_default())
        .parse()
        .unwrap_or(0);
    tx.put(
        &stock,
        b"sku-7",
        (left.saturating_sub(1)).to_string().as_bytes(),
    )?;
    tx.commit(WriteOptions::SYNC)?;
    let last = orders
        .iter(IterOptions::default().reversed())?
        .next()
        .transpose()?
        .map(|(k, _)| String::from_utf8_lossy(&k).into_owned());
    println!(
        "sku-7 stock {left} -> {}; newest order {}",
        left.saturating_sub(1),
        last.unwrap_or_default()
    );
    db.close()?;

    let db = Db::open(dir, Options::default())?;
    let stats = db.stats();
    println!(
        "reopened from its WAL: {} orders, {} stock rows; {} entries in {} table file(s), {} bytes",
        db.keyspace("orders")?.iter(IterOptions::default())?.count(),
        db.keyspace("stock")?.iter(IterOptions::default())?.count(),
        stats.entries,
        stats.level_files.iter().sum::<usize>(),
        stats.table_bytes
    );
    db.close()
}
