//! What the fault sweeps share: small engine options (so that a short run flushes, compacts and
//! grows its logs many times), what happens after the faulted run (a restart, a power loss, a
//! torn power loss) and the loop over faults and I/O calls.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]
#![allow(dead_code, reason = "fault_sweep.rs uses only options and After")]

use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::Options;

/// Options with tiny memtables, tables and levels, no background thread (every I/O call is the
/// sweep's), and logs that grow through several preallocation steps per memtable.
pub fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.max_immutable_memtables = 2;
    o.l0_compaction_trigger = 2;
    o.target_file_size = 32 * 1024;
    o.base_level_size = 64 * 1024;
    o.block_size = 1024;
    o.background_thread = false;
    o.wal_preallocation = 16 * 1024;
    o
}

/// What happens after the faulted run, before the check.
#[derive(Debug, Clone, Copy)]
pub enum After {
    /// The process is restarted; the OS kept everything written.
    Restart,
    /// Power loss: nothing unsynced survives.
    PowerLoss,
    /// Power loss keeping a random part of what was not synced.
    TornPowerLoss(u64),
}

impl After {
    /// Does it to `storage` (whose faults were reset).
    pub fn apply(self, storage: &FaultyStorage) {
        match self {
            After::Restart => {}
            After::PowerLoss => storage.crash().unwrap(),
            After::TornPowerLoss(seed) => storage.crash_torn(seed).unwrap(),
        }
    }
}

/// Runs `one(fault, nth, after)` — the scenario with `fault` at I/O call `nth`, then `after`,
/// then its check, returning whether the fault was reached — for `fault` at every `step`-th I/O
/// call from the first, each followed by a restart, a power loss and a torn power loss, until
/// the fault is no longer reached. Panics with the first failed check. Returns how many faults
/// were injected. Each sweep is called once per fault kind from its own test, so that the test
/// harness runs the two kinds in parallel.
pub fn sweep(
    step: usize,
    fault: Fault,
    mut one: impl FnMut(Fault, u64, After) -> Result<bool, String>,
) -> u64 {
    let mut faults = 0;
    for nth in (1..20_000).step_by(step) {
        let mut fired = false;
        for after in [After::Restart, After::PowerLoss, After::TornPowerLoss(nth)] {
            match one(fault, nth, after) {
                Ok(f) => fired = f,
                Err(e) => panic!("{fault:?} at I/O call {nth}, then {after:?}: {e}"),
            }
        }
        if !fired {
            break;
        }
        faults += 1;
    }
    faults
}
