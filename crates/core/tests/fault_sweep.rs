//! The fault sweep: every operation that touches files — open (recovery), writes across memtable
//! switches, flush, compaction, maintenance jobs (run by a runner over the same directory, then
//! installed or abandoned), checkpoint, keyspace creation, close — is run failing its 1st,
//! 2nd, 3rd, ... I/O call (each call through the storage, reads included), until it completes
//! without reaching the fault; once with the call failing (an I/O error, or a full disk for
//! writes; a failed sync loses the dirty pages, as on Linux) and once with the process dying
//! there (that call and every later one fail). Then the database is reopened on a healthy
//! storage after a process restart, after a power loss that keeps nothing unsynced, and after
//! one that keeps a random part of it (pages in any order, directory entries each on its own),
//! and checked against the model (`sweep_support`): it opens, holds every write promised to
//! survive, and is the state of a prefix of the attempted writes (nothing deleted back), and
//! holds no table file that its manifest does not name (no orphan). Its recovered state must
//! itself survive another power loss.
//!
//! `SHALEDB_SWEEP_SEEDS=n` checks `n` random power losses per fault instead of one (a longer
//! campaign). The counts are printed (`cargo test --test fault_sweep -- --nocapture`).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod fault_driver;
mod sweep_support;

use fault_driver::After;

use std::sync::Arc;

use shaledb::db::Budget;
use shaledb::file_names::{parse_file_name, FileKind};
use shaledb::jobs::{run_job, JobWork, MaintenanceJob};
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Db, WriteOptions};
use sweep_support::{key, scan, value, Model};

use fault_driver::options;

/// What a scenario works on.
struct Ctx {
    storage: FaultyStorage,
    db: Option<Db>,
    model: Model,
    /// A checkpoint's destination, and whether the checkpoint returned `Ok`.
    dest: Option<(FaultyStorage, bool)>,
    /// A maintenance job handed out in the setup.
    job: Option<MaintenanceJob>,
}

impl Ctx {
    fn open(&mut self) {
        self.db = Some(Db::open_storage(Arc::new(self.storage.clone()), options()).unwrap());
    }

    fn db(&self) -> &Db {
        self.db.as_ref().unwrap()
    }

    /// Writes batches `from..to`: a put of key `i` (value version `v`), every 7th a delete of an
    /// earlier key with it, every 5th synced.
    fn write(&mut self, from: u32, to: u32, v: u32, len: usize) {
        for i in from..to {
            let mut ops = vec![(key(i), Some(value(i, v, len)))];
            if i % 7 == 3 {
                ops.push((key(i / 2), None));
            }
            let db = self.db.clone().unwrap();
            self.model.write(&db, ops, i % 5 == 0);
        }
    }

    /// Hands out the next job, which must be a flush (`true`) or a compaction.
    fn issue_job(&mut self, flush: bool) {
        let job = self.db().next_job().unwrap().unwrap();
        assert_eq!(matches!(job.work, JobWork::Flush(_)), flush, "{job:?}");
        self.job = Some(job);
    }

    /// Runs the job as a runner would (over the same directory, through bytes), then installs
    /// its output, or abandons it if the runner failed. An installed flush made every
    /// acknowledged write durable.
    fn run_job(&mut self) {
        let job = MaintenanceJob::decode(&self.job.take().unwrap().encode()).unwrap();
        match run_job(Arc::new(self.storage.clone()), &job) {
            Ok(output) => {
                let installed = self.db().install_job(&output);
                if matches!(job.work, JobWork::Flush(_)) && matches!(installed, Ok(true)) {
                    self.model.all_acked_durable();
                }
            }
            Err(_) => {
                let _ = self.db().abandon_job(job.id);
            }
        }
    }

    /// The process dies now: nothing more reaches the storage, the database is dropped.
    fn kill(&mut self) {
        self.storage.arm(1, Fault::Crash);
        self.db = None;
        self.storage.reset_faults();
    }
}

/// An operation swept under faults: `setup` runs on a healthy storage; `run` is faulted.
struct Scenario {
    name: &'static str,
    setup: fn(&mut Ctx),
    run: fn(&mut Ctx),
    /// The faults go to the checkpoint's destination instead of the database's storage.
    faults_in_dest: bool,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "open (recovery of logs and tables)",
            setup: |c| {
                c.open();
                c.write(0, 30, 0, 900);
                c.db().flush().unwrap();
                c.model.all_acked_durable();
                c.write(30, 60, 1, 900);
                c.db().seal_memtable().unwrap();
                c.write(60, 75, 2, 900);
                c.kill();
            },
            run: |c| {
                c.db = Db::open_storage(Arc::new(c.storage.clone()), options()).ok();
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "writes across memtable switches",
            setup: |c| c.open(),
            run: |c| c.write(0, 110, 0, 1500),
            faults_in_dest: false,
        },
        Scenario {
            name: "flush",
            setup: |c| {
                c.open();
                c.write(0, 40, 0, 700);
            },
            run: |c| {
                if c.db().flush().is_ok() {
                    c.model.all_acked_durable();
                }
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "compaction",
            setup: |c| {
                c.open();
                for round in 0..3 {
                    c.write(round * 20, round * 20 + 30, round, 800);
                    c.db().flush().unwrap();
                }
                c.model.all_acked_durable();
            },
            run: |c| {
                while let Ok(outcome) = c.db().maintain(Budget { bytes: 16 << 10 }) {
                    if !outcome.more {
                        break;
                    }
                }
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "flush job (runner and install)",
            setup: |c| {
                c.open();
                c.write(0, 40, 0, 700);
                c.db().seal_memtable().unwrap();
                c.issue_job(true);
            },
            run: |c| c.run_job(),
            faults_in_dest: false,
        },
        Scenario {
            name: "sync-log job (creation, runner, install, the switch that starts its log)",
            setup: |c| {
                c.open();
                // Over half of the 64 KiB memtable: a sync-log job is due.
                c.write(0, 60, 0, 700);
            },
            run: |c| {
                if let Ok(Some(job)) = c.db().next_log_job() {
                    c.job = Some(job);
                    c.run_job();
                }
                let _ = c.db().seal_memtable();
                c.write(60, 80, 1, 700);
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "compaction job (runner and install)",
            setup: |c| {
                c.open();
                for round in 0..2 {
                    c.write(round * 20, round * 20 + 30, round, 800);
                    c.db().flush().unwrap();
                }
                c.model.all_acked_durable();
                c.issue_job(false);
            },
            run: |c| c.run_job(),
            faults_in_dest: false,
        },
        Scenario {
            name:
                "compaction requested as jobs, deletion jobs (request, passes, installs, removals)",
            setup: |c| {
                c.open();
                c.db().hand_out_deletions(true);
                for round in 0..3 {
                    c.write(round * 20, round * 20 + 30, round, 800);
                    c.db().flush().unwrap();
                }
                c.model.all_acked_durable();
            },
            run: |c| {
                if c.db().request_compaction(None, None).is_err() {
                    return;
                }
                // Every job due (flush, passes, deletions), run and installed, until none is.
                for _ in 0..16 {
                    match c.db().next_job() {
                        Ok(Some(job)) => {
                            c.job = Some(job);
                            c.run_job();
                        }
                        _ => break,
                    }
                }
                c.write(90, 100, 3, 800);
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "checkpoint (faults in the destination)",
            setup: |c| {
                c.open();
                c.write(0, 30, 0, 800);
                c.db().flush().unwrap();
                c.write(30, 45, 1, 800);
                c.dest = Some((FaultyStorage::new(Arc::new(MemoryStorage::new())), false));
            },
            run: |c| {
                let (dest, _) = c.dest.clone().unwrap();
                let ok = c.db().checkpoint_to(Arc::new(dest.clone())).is_ok();
                c.dest = Some((dest, ok));
            },
            faults_in_dest: true,
        },
        Scenario {
            name: "keyspace creation",
            setup: |c| {
                c.open();
                c.write(0, 20, 0, 500);
            },
            run: |c| {
                if let Ok(ks) = c.db().keyspace("events") {
                    let _ = ks.put_opt(b"e1", b"signup", WriteOptions::SYNC);
                }
                c.write(20, 25, 0, 500);
            },
            faults_in_dest: false,
        },
        Scenario {
            name: "close",
            setup: |c| {
                c.open();
                c.write(0, 30, 0, 600);
            },
            run: |c| {
                if let Some(db) = c.db.take() {
                    if db.close().is_ok() {
                        c.model.all_acked_durable();
                    }
                }
            },
            faults_in_dest: false,
        },
    ]
}

#[derive(Default)]
struct Counts {
    faults: u64,
    checked: u64,
}

/// Runs `scenario` with `fault` at I/O call `nth`, then `after`, and checks the recovery.
/// Returns whether the fault was reached.
fn run_one(scenario: &Scenario, fault: Fault, nth: u64, after: After) -> Result<bool, String> {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let mut c = Ctx {
        storage: storage.clone(),
        db: None,
        model: Model::default(),
        dest: None,
        job: None,
    };
    (scenario.setup)(&mut c);
    let target = match (&c.dest, scenario.faults_in_dest) {
        (Some((dest, _)), true) => dest.clone(),
        _ => storage.clone(),
    };
    target.arm(nth, fault);
    (scenario.run)(&mut c);
    let fired = target.fault_fired();
    // With an error the process goes on and closes; after a crash nothing more gets through.
    c.db = None;
    target.reset_faults();
    after.apply(&storage);
    let must = match after {
        After::Restart => c.model.acked_upto,
        _ => c.model.durable_upto,
    };
    let what = |e: &dyn std::fmt::Display| format!("{e}");
    let db = Db::open_storage(Arc::new(storage.clone()), options())
        .map_err(|e| format!("the database does not open: {}", what(&e)))?;
    let got = scan(&db);
    c.model.check(&got, must)?;
    check_no_orphan(&storage, &db)?;
    // The recovered state is durable: it survives another power loss as it is.
    db.close()
        .map_err(|e| format!("close after recovery: {e}"))?;
    storage.crash().unwrap();
    let db = Db::open_storage(Arc::new(storage.clone()), options())
        .map_err(|e| format!("the recovered database does not reopen: {e}"))?;
    if scan(&db) != got {
        return Err("a power loss after recovery changed the recovered state".into());
    }
    drop(db);
    if let Some((dest, ok)) = c.dest {
        after.apply(&dest);
        check_checkpoint(&dest, ok, &c.model)?;
    }
    Ok(fired)
}

/// Every table file in `storage` is one the open `db` names.
fn check_no_orphan(storage: &FaultyStorage, db: &Db) -> Result<(), String> {
    let tables = storage
        .list()
        .unwrap()
        .iter()
        .filter(|n| matches!(parse_file_name(n), Some(FileKind::Table(_))))
        .count();
    let live: usize = db.stats().level_files.iter().sum();
    if tables != live {
        return Err(format!(
            "{tables} table files after open, {live} live: orphans were left"
        ));
    }
    Ok(())
}

/// A checkpoint that returned `Ok` opens with every write acknowledged before it; one that
/// failed either does not open (a typed error) or opens whole — never with wrong data.
fn check_checkpoint(dest: &FaultyStorage, ok: bool, model: &Model) -> Result<(), String> {
    let mut existing = options();
    existing.create_if_missing = false;
    match Db::open_storage(Arc::new(dest.clone()), existing) {
        Ok(db) => {
            let got = scan(&db);
            if got != model.state_after(model.acked_upto) {
                return Err(format!(
                    "the checkpoint (which returned {}) opens with other data",
                    if ok { "Ok" } else { "an error" }
                ));
            }
            Ok(())
        }
        Err(e) if ok => Err(format!("a completed checkpoint does not open: {e}")),
        Err(_) if dest.list().unwrap().iter().any(|n| n == "CURRENT") => {
            Err("a failed checkpoint left a CURRENT that does not open".into())
        }
        Err(_) => Ok(()),
    }
}

fn seeds() -> u64 {
    std::env::var("SHALEDB_SWEEP_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Sweeps one scenario under `fault`; returns the counts.
fn sweep(scenario: &Scenario, fault: Fault) -> Counts {
    let mut counts = Counts::default();
    for nth in 1..20_000 {
        let mut afters = vec![After::Restart, After::PowerLoss];
        afters.extend((0..seeds()).map(|s| After::TornPowerLoss(nth * 1000 + s)));
        let mut fired = false;
        for after in afters {
            match run_one(scenario, fault, nth, after) {
                Ok(f) => fired = f,
                Err(e) => panic!(
                    "{}: {fault:?} at I/O call {nth}, then {after:?}: {e}",
                    scenario.name
                ),
            }
            counts.checked += 1;
        }
        if !fired {
            break;
        }
        counts.faults += 1;
    }
    counts
}

/// Sweeps every scenario under `fault` (one test per fault kind: the harness runs them in parallel).
fn sweep_scenarios(fault: Fault) {
    let mut total = Counts::default();
    for scenario in scenarios() {
        let c = sweep(&scenario, fault);
        eprintln!(
            "fault sweep ({fault:?}): {:<40} {:>5} faults injected, {:>5} recoveries checked",
            scenario.name, c.faults, c.checked
        );
        assert!(c.faults > 0, "{}: no fault was reached", scenario.name);
        total.faults += c.faults;
        total.checked += c.checked;
    }
    eprintln!(
        "fault sweep ({fault:?}): {} faults injected, {} recoveries checked",
        total.faults, total.checked
    );
}

#[test]
fn every_io_error_at_every_io_call_loses_no_promised_write_and_leaves_an_openable_database() {
    sweep_scenarios(Fault::Error);
}

#[test]
fn every_crash_at_every_io_call_loses_no_promised_write_and_leaves_an_openable_database() {
    sweep_scenarios(Fault::Crash);
}
