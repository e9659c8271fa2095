//! Executing a compaction as bounded steps.
//!
//! A [`CompactionJob`] merges the input tables of a [`CompactionPlan`] (point entries and range
//! tombstones of every input, in internal order) and writes output tables at the output level,
//! cut at key boundaries once they reach the target size. [`CompactionJob::step`] does a bounded
//! amount of that work; [`CompactionJob::finish`] returns the [`VersionEdit`] (inputs deleted,
//! outputs added) for the caller to log with
//! [`crate::version::manifest::ManifestWriter::log_and_apply`].
//!
//! # What is dropped
//!
//! Let `S` be the sorted live snapshot sequence numbers plus "now". A version with sequence
//! number `s` is visible to the snapshots `t >= s`; its *stripe* is the smallest element of `S`
//! that is `>= s`. Two versions of a key with the same stripe are seen by exactly the same
//! snapshots, the newer hiding the older.
//! 1. **Shadowed versions**: a version is dropped when a newer version of the same key (a value,
//!    a point tombstone, or one the job dropped itself) lies in the same stripe.
//! 2. **Covered versions**: a point version `(k, s)` is dropped when an input range tombstone
//!    `[a, b)` at `r` with `a <= k < b`, `s < r`, lies in the same stripe as `s`.
//! 3. **Point tombstones** are dropped only when the job is `bottommost` (no level below the
//!    output level holds data in the job's key range, so no older version can lie below) and no
//!    snapshot is older than the tombstone (its stripe is the first). Then every older version
//!    in the job falls under rule 1 as well.
//! 4. **Range tombstones** are carried to the output (cut at output-file boundaries) unless the
//!    same bottommost-and-no-older-snapshot condition holds, in which case everything they
//!    cover is dropped under rule 2 and they go too.
//!
//! Everything else is copied. With no snapshots and `bottommost = false` the output is the
//! newest version of each key plus the tombstones, range tombstones included.

use std::sync::Arc;

use crate::compaction::output::OutputTable;
use crate::compaction::picker::{CompactionOptions, CompactionPlan};
use crate::iter::{BoxedInternalIterator, InternalIterator, MergingIterator};
use crate::key::{RangeTombstone, ValueKind};
use crate::sorting::sort;
use crate::sstable::TableReader;
use crate::storage::Storage;
use crate::version::edit::VersionEdit;
use crate::version::FileMeta;
use crate::{Error, Result};

/// What a [`CompactionJob::step`] left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// The budget ran out; call `step` again.
    Pending,
    /// All input is merged and every output finished; call [`CompactionJob::finish`].
    Done,
}

/// Counters of a job so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionStats {
    /// Entries read from the inputs (range tombstones included).
    pub entries_read: u64,
    /// Key and value bytes read from the inputs.
    pub bytes_read: u64,
    /// Entries written (range tombstones included, counting each piece of a cut one).
    pub entries_written: u64,
    /// Entries dropped by the rules in the module doc.
    pub entries_dropped: u64,
    /// Bytes of finished output tables.
    pub bytes_written: u64,
}

/// One compaction in progress. Not `Clone`; abandoning it (drop) leaves any output tables
/// written so far as orphans ([`CompactionJob::pending_outputs`]) for the caller to remove.
pub struct CompactionJob {
    storage: Arc<dyn Storage>,
    plan: CompactionPlan,
    options: CompactionOptions,
    snapshots: Vec<u64>,
    bottommost: bool,
    merge: MergingIterator<'static>,
    started: bool,
    done: bool,
    failed: bool,
    /// Range tombstones read so far whose end lies after the current key.
    active: Vec<RangeTombstone>,
    /// Range tombstones of the open output (cut when it is finished).
    out_rts: Vec<RangeTombstone>,
    /// The key of the previous entry and the stripe of its newest version seen.
    cur_key: Vec<u8>,
    cur_stripe: Option<usize>,
    output: Option<OutputTable>,
    outputs: Vec<FileMeta>,
    pending_numbers: Vec<u64>,
    stats: CompactionStats,
}

impl std::fmt::Debug for CompactionJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactionJob")
            .field("level", &self.plan.level)
            .field("output_level", &self.plan.output_level)
            .field("stats", &self.stats)
            .field("done", &self.done)
            .finish()
    }
}

impl CompactionJob {
    /// Prepares a job for `plan`. `tables` are the open input tables in the order of
    /// [`CompactionPlan::all_inputs`]; `snapshots` the sequence numbers of live snapshots (any
    /// order); `bottommost` whether no level below the output level holds data in the plan's
    /// key range ([`CompactionPlan::is_bottommost`]). A trivial move (one input, nothing to
    /// merge, no snapshot) writes nothing and is done at once.
    pub fn new(
        storage: Arc<dyn Storage>,
        plan: CompactionPlan,
        tables: Vec<TableReader>,
        mut snapshots: Vec<u64>,
        bottommost: bool,
        options: CompactionOptions,
    ) -> Result<CompactionJob> {
        let expected = plan.inputs.len() + plan.next_inputs.len();
        if tables.len() != expected {
            return Err(Error::InvalidArgument(format!(
                "compaction plan has {expected} inputs but {} tables were given",
                tables.len()
            )));
        }
        sort(&mut snapshots);
        snapshots.dedup();
        let trivial = plan.is_trivial_move();
        let mut children: Vec<BoxedInternalIterator<'static>> = Vec::new();
        if !trivial {
            for t in &tables {
                children.push(Box::new(t.iter()));
                if !t.range_tombstones().is_empty() {
                    children.push(Box::new(t.range_tombstone_iter()));
                }
            }
        }
        Ok(CompactionJob {
            storage,
            plan,
            options,
            snapshots,
            bottommost,
            merge: MergingIterator::new(children),
            started: false,
            done: trivial,
            failed: false,
            active: Vec::new(),
            out_rts: Vec::new(),
            cur_key: Vec::new(),
            cur_stripe: None,
            output: None,
            outputs: Vec::new(),
            pending_numbers: Vec::new(),
            stats: CompactionStats::default(),
        })
    }

    /// The plan being executed.
    pub fn plan(&self) -> &CompactionPlan {
        &self.plan
    }

    /// Counters so far.
    pub fn stats(&self) -> CompactionStats {
        self.stats
    }

    /// Numbers of the output tables created so far (finished or not). They are in no version
    /// until the edit from [`CompactionJob::finish`] is applied: the caller must not delete
    /// them as obsolete meanwhile, and must remove them if it abandons the job.
    pub fn pending_outputs(&self) -> &[u64] {
        &self.pending_numbers
    }

    /// Merges and writes until about `budget_bytes` of input (keys and values) are processed
    /// or all input is done. File numbers for outputs come from `new_file_number` (normally
    /// [`crate::version::VersionSet::new_file_number`]; an error from it fails the step).
    /// Outputs are created exclusively: a file of that name is an error, never truncated.
    /// After an error the job is dead: every
    /// later call fails with [`Error::Closed`].
    pub fn step(
        &mut self,
        budget_bytes: u64,
        new_file_number: &mut dyn FnMut() -> Result<u64>,
    ) -> Result<StepOutcome> {
        if self.failed {
            return Err(Error::Closed("compaction job failed earlier".into()));
        }
        let r = self.step_inner(budget_bytes, new_file_number);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn step_inner(
        &mut self,
        budget_bytes: u64,
        new_file_number: &mut dyn FnMut() -> Result<u64>,
    ) -> Result<StepOutcome> {
        if self.done {
            return Ok(StepOutcome::Done);
        }
        if !self.started {
            self.merge.seek_to_first()?;
            self.started = true;
        }
        let start = self.stats.bytes_read;
        let (mut key, mut value) = (Vec::new(), Vec::new());
        while self.merge.valid() {
            if self.stats.bytes_read - start >= budget_bytes.max(1) {
                return Ok(StepOutcome::Pending);
            }
            key.clear();
            key.extend_from_slice(self.merge.key());
            value.clear();
            value.extend_from_slice(self.merge.value());
            let (seq, kind) = (self.merge.seq(), self.merge.kind());
            self.stats.entries_read += 1;
            self.stats.bytes_read += (key.len() + value.len()) as u64;
            self.process(&key, seq, kind, &value, new_file_number)?;
            self.merge.next()?;
        }
        if !self.out_rts.is_empty() {
            self.ensure_output(new_file_number)?;
        }
        self.finish_output(None)?;
        self.done = true;
        Ok(StepOutcome::Done)
    }

    /// The stripe of `seq`: index of the first snapshot `>= seq`, or the number of snapshots
    /// ("now").
    fn stripe(&self, seq: u64) -> usize {
        self.snapshots.partition_point(|&t| t < seq)
    }

    fn process(
        &mut self,
        key: &[u8],
        seq: u64,
        kind: ValueKind,
        value: &[u8],
        new_file_number: &mut dyn FnMut() -> Result<u64>,
    ) -> Result<()> {
        let stripe = self.stripe(seq);
        let may_drop_tombstone = self.bottommost && stripe == 0;
        let new_key = self.cur_stripe.is_none() || self.cur_key.as_slice() != key;
        if new_key {
            // Cut the output only between user keys, once it is big enough.
            let full = self
                .output
                .as_ref()
                .is_some_and(|o| o.file_size() >= self.options.target_file_size);
            if full {
                self.finish_output(Some(key))?;
                if !self.out_rts.is_empty() {
                    self.ensure_output(new_file_number)?;
                }
            }
            self.active.retain(|t| t.end.as_slice() > key);
        }
        if kind == ValueKind::RangeTombstone {
            let t = RangeTombstone {
                start: key.to_vec(),
                end: value.to_vec(),
                seq,
            };
            if t.start >= t.end {
                return Err(Error::corruption(
                    "compaction input",
                    0,
                    "empty range tombstone",
                ));
            }
            self.active.push(t.clone());
            if may_drop_tombstone {
                self.stats.entries_dropped += 1;
            } else {
                self.ensure_output(new_file_number)?;
                self.out_rts.push(t);
            }
            return Ok(());
        }
        let shadowed = !new_key && self.cur_stripe == Some(stripe);
        if new_key {
            self.cur_key.clear();
            self.cur_key.extend_from_slice(key);
        }
        self.cur_stripe = Some(stripe);
        let covered = self
            .active
            .iter()
            .any(|t| covers(t, key, seq) && self.stripe(t.seq) == stripe);
        let drop_tombstone = kind == ValueKind::Tombstone && may_drop_tombstone;
        if shadowed || covered || drop_tombstone {
            self.stats.entries_dropped += 1;
            return Ok(());
        }
        self.ensure_output(new_file_number)?;
        if let Some(o) = &mut self.output {
            o.add(key, seq, kind, value)?;
            self.stats.entries_written += 1;
        }
        Ok(())
    }

    fn ensure_output(&mut self, new_file_number: &mut dyn FnMut() -> Result<u64>) -> Result<()> {
        if self.output.is_none() {
            let number = new_file_number()?;
            self.pending_numbers.push(number);
            self.output = Some(OutputTable::create(
                &*self.storage,
                number,
                &self.options.table,
            )?);
        }
        Ok(())
    }

    /// Finishes the open output. With `Some(next)`, range tombstones reaching past `next` are
    /// cut there and their remainder starts the next output.
    fn finish_output(&mut self, next: Option<&[u8]>) -> Result<()> {
        let Some(mut out) = self.output.take() else {
            return Ok(());
        };
        let mut carry = Vec::new();
        for mut t in std::mem::take(&mut self.out_rts) {
            if let Some(k) = next {
                if t.end.as_slice() > k {
                    carry.push(RangeTombstone {
                        start: k.max(t.start.as_slice()).to_vec(),
                        end: t.end.clone(),
                        seq: t.seq,
                    });
                    t.end = k.to_vec();
                }
            }
            if t.start < t.end {
                out.add(&t.start, t.seq, ValueKind::RangeTombstone, &t.end)?;
                self.stats.entries_written += 1;
            }
        }
        if let Some(meta) = out.finish(&*self.storage)? {
            self.stats.bytes_written += meta.size;
            self.outputs.push(meta);
        }
        // The carried pieces open the next output (the caller creates it).
        self.out_rts = carry;
        Ok(())
    }

    /// The edit this job makes: every input deleted, every output added at the output level.
    /// Errors unless [`CompactionJob::step`] returned [`StepOutcome::Done`].
    pub fn finish(self) -> Result<VersionEdit> {
        if !self.done || self.failed {
            return Err(Error::InvalidArgument(
                "CompactionJob::finish before the job is done".into(),
            ));
        }
        let mut edit = VersionEdit::default();
        let out_level = self.plan.output_level as u8;
        for (level, f) in self.plan.all_inputs() {
            edit.files_deleted.push((level as u8, f.number));
        }
        if self.plan.is_trivial_move() {
            if let Some(f) = self.plan.inputs.first() {
                edit.files_added.push((out_level, FileMeta::clone(f)));
            }
        }
        for meta in self.outputs {
            edit.files_added.push((out_level, meta));
        }
        Ok(edit)
    }
}

/// Whether `t` deletes the version (`key`, `seq`): `start <= key < end` and `seq < t.seq`.
fn covers(t: &RangeTombstone, key: &[u8], seq: u64) -> bool {
    seq < t.seq && t.start.as_slice() <= key && key < t.end.as_slice()
}
