//! Compaction, in bounded steps: [`picker`] chooses what to compact (leveled: an L0 trigger and a
//! size ratio per level), [`job`] merges the chosen tables with the overlapping ones of the next
//! level, dropping what no snapshot can see, and [`output`] writes the resulting tables (and the
//! level-0 table of a flush).

pub mod job;
pub mod output;
pub mod picker;

pub use job::{CompactionJob, CompactionStats, StepOutcome};
pub use output::{flush, OutputTable};
pub use picker::{plan_for_range, CompactionOptions, CompactionPicker, CompactionPlan};
