//! The harness every ShaleDB benchmark program shares — the core's micro-benchmarks
//! (`cargo bench -p shaledb`) and the engine suites in `bench/native`: case filtering from the
//! command line, the JSON-line output format (README, "Benchmarks"), workload data.
//!
//! Each figure is printed to stdout and appended to `bench/results/<suite>.jsonl` (or the
//! directory `SHALEDB_BENCH_RESULTS` names), one line:
//! `{"suite":..,"case":..,"engine":..,"metric":..,"value":..,"run":..,"host":..}`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// One benchmark program's run: its suite name, run id and case filter.
pub struct Bench {
    suite: &'static str,
    run: String,
    host: String,
    filters: Vec<String>,
    out: PathBuf,
}

impl Bench {
    /// Reads the case filters from the command line (`cargo bench --bench X -- FILTER...`);
    /// flags cargo passes (`--bench`) are ignored. No filter runs every case.
    ///
    /// Results go to the repository's `bench/results`, or to the directory named by the
    /// `SHALEDB_BENCH_RESULTS` environment variable.
    pub fn from_args(suite: &'static str) -> Bench {
        let dir = std::env::var_os("SHALEDB_BENCH_RESULTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/results")
            });
        Bench::from_args_to(suite, dir)
    }

    /// As [`Bench::from_args`], appending to `<results_dir>/<suite>.jsonl` (for benchmark
    /// programs built outside `crates/core`, such as `bench/native`).
    pub fn from_args_to(suite: &'static str, results_dir: impl Into<PathBuf>) -> Bench {
        let filters = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with("--"))
            .collect();
        let out = results_dir.into().join(format!("{suite}.jsonl"));
        Bench {
            suite,
            run: run_id(),
            host: host(),
            filters,
            out,
        }
    }

    /// Whether `case` matches the filters (a substring match on any of them).
    pub fn enabled(&self, case: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| case.contains(f.as_str()))
    }

    /// Prints one figure and appends it to the suite's results file.
    pub fn emit(&self, case: &str, engine: &str, metric: &str, value: f64) {
        let line = format!(
            "{{\"suite\":\"{}\",\"case\":\"{}\",\"engine\":\"{}\",\"metric\":\"{}\",\"value\":{:.3},\"run\":\"{}\",\"host\":\"{}\"}}",
            self.suite, case, engine, metric, value, self.run, self.host
        );
        println!("{line}");
        if let Some(dir) = self.out.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        match OpenOptions::new().create(true).append(true).open(&self.out) {
            Ok(mut f) => {
                let _ = writeln!(f, "{line}");
            }
            Err(e) => eprintln!("cannot append to {}: {e}", self.out.display()),
        }
    }

    /// A fresh scratch directory on the same file system as go-sstables' runs (the system temp
    /// directory), removed when the returned guard drops.
    pub fn scratch(&self) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("shaledb-bench")
            .tempdir()
            .unwrap()
    }
}

/// `n` pseudo-random bytes with values 0..=254, as go-sstables' benchmarks use
/// (`rand.Intn(255)`). Deterministic for a given `seed`.
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 255) as u8
        })
        .collect()
}

/// Megabytes (10^6 bytes) per second, as go-sstables reports.
pub fn mb_per_s(bytes: u64, elapsed: std::time::Duration) -> f64 {
    bytes as f64 / elapsed.as_secs_f64() / 1e6
}

/// Writes back dirty pages and frees the OS page cache (Linux, as root; elsewhere it does
/// nothing), so that every engine of a run starts from the same memory state. Without it, an
/// engine that runs right after another has deleted its files finds free pages, while the first
/// one pays for reclaiming the page cache: a 1.7x difference in RecordIO write speed here.
pub fn drop_page_cache() {
    let _ = std::process::Command::new("sync").status();
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "1");
}

/// "1 MB" in go-sstables' sense: 1,024,000 bytes.
pub const GO_MB: usize = 1_024_000;

fn run_id() -> String {
    if let Ok(r) = std::env::var("SHALEDB_BENCH_RUN") {
        return r;
    }
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Civil date from days since the epoch (Howard Hinnant's algorithm), UTC.
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn host() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cores}x {cpu}").replace('"', "'")
}
