//! What a maintenance call may do and what it did: [`Budget`], [`MaintainOutcome`] and a
//! whole-range compaction's [`CompactProgress`].

/// How much work one [`Db::maintain`](crate::Db::maintain) call may do.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes of table data to merge (approximately). A memtable flush is one unit of work
    /// whatever the budget.
    pub bytes: u64,
}

/// What a [`Db::maintain`](crate::Db::maintain) call did and whether more is pending.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaintainOutcome {
    /// Bytes of table data written.
    pub bytes_written: u64,
    /// More flush or compaction work is pending.
    pub more: bool,
}

/// Work per background step (and per step a writer does itself when maintenance falls
/// behind): about 4 MiB of table data, so a step takes milliseconds.
pub(crate) const STEP_BUDGET: Budget = Budget { bytes: 4 << 20 };

/// How far a whole-range compaction got ([`crate::Db::compact_range_with_progress`]): it runs
/// level by level, each pass merging level `level` into `output_level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactProgress {
    /// The level compacted in this pass.
    pub level: usize,
    /// The level it is merged into.
    pub output_level: usize,
    /// Entries of this pass's input tables read so far.
    pub entries_done: u64,
    /// Entries of this pass's input tables.
    pub entries_total: u64,
}
