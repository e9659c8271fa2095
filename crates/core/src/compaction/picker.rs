//! Choosing what to compact (leveled compaction).
//!
//! Each level gets a score; the highest score of at least 1 is compacted:
//! - L0: number of files / [`CompactionOptions::l0_trigger`] (its files overlap, so each one
//!   costs a read);
//! - L1 to L5: level bytes / target, where L1's target is [`CompactionOptions::base_level_bytes`]
//!   and each deeper level's is [`CompactionOptions::level_size_ratio`] times the one above.
//!   The last level (L6) is never compacted further.
//!
//! A plan takes, from level `n`, all L0 files (they overlap each other) or one file chosen
//! round-robin by key (a per-level compaction pointer), plus every file of level `n + 1`
//! overlapping their key range, and writes level `n + 1`.

use std::sync::Arc;

use crate::sstable::TableOptions;
use crate::version::{FileMeta, Version, NUM_LEVELS};

/// Tuning for flush and compaction.
#[derive(Debug, Clone)]
pub struct CompactionOptions {
    /// L0 is compacted once it holds this many files (default 4).
    pub l0_trigger: usize,
    /// Target size of L1 in bytes (default 64 MiB).
    pub base_level_bytes: u64,
    /// Each level below L1 may be this many times larger than the one above (default 10).
    pub level_size_ratio: u64,
    /// An output table is cut at the next key boundary once it reaches this size (default
    /// 64 MiB).
    pub target_file_size: u64,
    /// How output tables are written.
    pub table: TableOptions,
}

impl Default for CompactionOptions {
    fn default() -> Self {
        CompactionOptions {
            l0_trigger: 4,
            base_level_bytes: 64 * 1024 * 1024,
            level_size_ratio: 10,
            target_file_size: 64 * 1024 * 1024,
            table: TableOptions::default(),
        }
    }
}

impl CompactionOptions {
    /// Target bytes of `level` (1 and deeper); `u64::MAX` for L0 and the last level.
    pub fn level_target_bytes(&self, level: usize) -> u64 {
        if level == 0 || level + 1 >= NUM_LEVELS {
            return u64::MAX;
        }
        let mut t = self.base_level_bytes.max(1);
        for _ in 1..level {
            t = t.saturating_mul(self.level_size_ratio.max(1));
        }
        t
    }
}

/// What one compaction reads and where it writes.
#[derive(Debug, Clone)]
pub struct CompactionPlan {
    /// The level compacted.
    pub level: usize,
    /// `level + 1`.
    pub output_level: usize,
    /// Inputs from `level` (L0: newest first).
    pub inputs: Vec<Arc<FileMeta>>,
    /// Overlapping inputs from `output_level`, in key order.
    pub next_inputs: Vec<Arc<FileMeta>>,
    /// The score that chose it (at least 1 for automatic picks).
    pub score: f64,
}

impl CompactionPlan {
    /// All input files, `level` first (newest data first).
    pub fn all_inputs(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.inputs
            .iter()
            .map(move |f| (self.level, f))
            .chain(self.next_inputs.iter().map(move |f| (self.output_level, f)))
    }

    /// The user-key range `[smallest, largest]` of all inputs (inclusive).
    pub fn key_range(&self) -> (Vec<u8>, Vec<u8>) {
        let mut lo: Option<&[u8]> = None;
        let mut hi: Option<&[u8]> = None;
        for (_, f) in self.all_inputs() {
            let (s, l) = (f.smallest.key.as_slice(), f.largest.key.as_slice());
            lo = Some(lo.map_or(s, |x| x.min(s)));
            hi = Some(hi.map_or(l, |x| x.max(l)));
        }
        (
            lo.unwrap_or_default().to_vec(),
            hi.unwrap_or_default().to_vec(),
        )
    }

    /// Whether no level below the output level holds data in the inputs' key range in
    /// `version` — the `bottommost` flag of [`crate::compaction::CompactionJob::new`].
    pub fn is_bottommost(&self, version: &Version) -> bool {
        let (lo, hi) = self.key_range();
        !version.has_data_below(self.output_level, &lo, &hi)
    }

    /// A single file with nothing to merge: it can move down by a manifest edit alone.
    pub fn is_trivial_move(&self) -> bool {
        self.inputs.len() == 1 && self.next_inputs.is_empty()
    }
}

/// Picks compactions; remembers, per level, where the last one ended so that successive
/// compactions walk the key space round-robin. Not persisted (a reopen starts at the left).
#[derive(Debug, Clone, Default)]
pub struct CompactionPicker {
    pointers: [Vec<u8>; NUM_LEVELS],
}

impl CompactionPicker {
    /// A picker starting at the left of every level.
    pub fn new() -> CompactionPicker {
        CompactionPicker::default()
    }

    /// The score of each level (index = level; the last level scores 0).
    pub fn scores(version: &Version, options: &CompactionOptions) -> [f64; NUM_LEVELS] {
        let mut s = [0.0; NUM_LEVELS];
        for (level, score) in s.iter_mut().enumerate().take(NUM_LEVELS - 1) {
            *score = if level == 0 {
                version.files(0).len() as f64 / options.l0_trigger.max(1) as f64
            } else {
                version.level_bytes(level) as f64 / options.level_target_bytes(level) as f64
            };
        }
        s
    }

    /// The compaction `version` needs most, if any level scores at least 1.
    pub fn pick(
        &mut self,
        version: &Version,
        options: &CompactionOptions,
    ) -> Option<CompactionPlan> {
        let scores = CompactionPicker::scores(version, options);
        let (level, score) = scores
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        if score < 1.0 {
            return None;
        }
        let mut plan = self.plan_level(version, level)?;
        plan.score = score;
        Some(plan)
    }

    /// A plan compacting `level` into `level + 1` regardless of scores (L0: all files; L1+:
    /// the next file after the compaction pointer). `None` for an empty or the last level.
    pub fn plan_level(&mut self, version: &Version, level: usize) -> Option<CompactionPlan> {
        if level + 1 >= NUM_LEVELS {
            return None;
        }
        let files = version.files(level);
        let inputs: Vec<Arc<FileMeta>> = if level == 0 {
            files.to_vec()
        } else {
            let pointer = self.pointers.get(level)?;
            let f = files
                .iter()
                .find(|f| pointer.is_empty() || f.smallest.key.as_slice() > pointer.as_slice())
                .or_else(|| files.first())?;
            vec![f.clone()]
        };
        let plan = plan_from_inputs(version, level, inputs)?;
        if level > 0 {
            if let (Some(p), Some(f)) = (self.pointers.get_mut(level), plan.inputs.last()) {
                p.clone_from(&f.largest.key);
            }
        }
        Some(plan)
    }
}

/// A plan compacting the files of `level` overlapping `[start, end]` (inclusive, `None` =
/// unbounded) into `level + 1`, for `compact_range`. L0 always takes every file.
pub fn plan_for_range(
    version: &Version,
    level: usize,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<CompactionPlan> {
    if level + 1 >= NUM_LEVELS {
        return None;
    }
    let inputs = if level == 0 {
        version.files(0).to_vec()
    } else {
        version.overlapping(level, start, end)
    };
    plan_from_inputs(version, level, inputs)
}

fn plan_from_inputs(
    version: &Version,
    level: usize,
    inputs: Vec<Arc<FileMeta>>,
) -> Option<CompactionPlan> {
    let lo = inputs.iter().map(|f| f.smallest.key.as_slice()).min()?;
    let hi = inputs.iter().map(|f| f.largest.key.as_slice()).max()?;
    let next_inputs = version.overlapping(level + 1, Some(lo), Some(hi));
    Some(CompactionPlan {
        level,
        output_level: level + 1,
        inputs,
        next_inputs,
        score: 0.0,
    })
}
