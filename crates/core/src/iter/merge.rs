//! [`MergingIterator`]: a k-way merge of [`InternalIterator`]s, in both directions.
//!
//! Sources are given newest first (memtable, immutable memtables, L0 newest to oldest, L1, …).
//! The merge yields every entry of every source in internal order. Entries with identical
//! (key, seq) in two sources cannot occur in a correct database; if they do, the merge orders
//! them by source index too, so the earlier (newer) source's entry comes first going forward
//! and last going backward — either way it is the one a reader that keeps the newest version
//! of a key settles on. Nothing panics.
//!
//! Cost: the current child is found by a linear scan over the children, O(n) key comparisons
//! for n children. n is small in an LSM (memtables + L0 files + one cursor per table of deeper
//! levels, typically under 20), where a scan over a contiguous array beats a heap's pointer
//! chasing. Going forward, the scan also finds the runner-up (the smallest other child); as
//! only the current child moves between scans, a step that leaves it at or before the
//! runner-up keeps it current after one comparison, with no scan: the common case of a run of
//! entries from one source (a table's key range, one table of a level after another).
//!
//! Direction switching follows LevelDB's `MergingIterator`: while moving forward every child
//! is positioned at its first entry after the current one; while moving backward, at its last
//! entry before it. Changing direction repositions all children except the current one around
//! the current entry (seek / seek_for_prev), then steps the current child.

use std::cmp::Ordering;

use super::internal::{BoxedInternalIterator, InternalIterator};

use crate::key::{compare_internal, ValueKind};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// Going forward: the smallest valid child other than the current one, as the last scan
/// found it (the other children have not moved since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunnerUp {
    /// Not known: the next step scans every child.
    Unknown,
    /// No other child is valid.
    NoOther,
    /// This child (ties with it are settled by index, as in the scan).
    Child(usize),
}

/// A merge of child cursors, itself an [`InternalIterator`].
pub struct MergingIterator<'a> {
    children: Vec<BoxedInternalIterator<'a>>,
    /// Index of the child holding the current entry, `None` when invalid.
    current: Option<usize>,
    runner_up: RunnerUp,
    direction: Direction,
}

impl std::fmt::Debug for MergingIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergingIterator")
            .field("children", &self.children.len())
            .field("current", &self.current)
            .field("direction", &self.direction)
            .finish()
    }
}

impl<'a> MergingIterator<'a> {
    /// A merge of `children`, newest source first. Invalid until positioned.
    pub fn new(children: Vec<BoxedInternalIterator<'a>>) -> MergingIterator<'a> {
        MergingIterator {
            children,
            current: None,
            runner_up: RunnerUp::Unknown,
            direction: Direction::Forward,
        }
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether there are no children.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Runs `r`; on an error the merge becomes invalid.
    fn guard(&mut self, r: Result<()>) -> Result<()> {
        if r.is_err() {
            self.current = None;
            self.runner_up = RunnerUp::Unknown;
        }
        r
    }

    /// Makes the smallest valid child current (ties: the lowest index, the newest source), and
    /// records the runner-up, the smallest of the others (same ties). Each child's key and
    /// sequence number are read once (calls through `dyn`, not free in WebAssembly); the best
    /// two so far are kept by value.
    fn find_smallest(&mut self) {
        let mut best: Option<(usize, &[u8], u64)> = None;
        let mut second: Option<(usize, &[u8], u64)> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            let (key, seq) = (c.key(), c.seq());
            // Equal (key, seq): the earlier child wins.
            let beats = |held: Option<(usize, &[u8], u64)>| {
                held.is_none_or(|(_, k, s)| compare_internal(k, s, key, seq) == Ordering::Greater)
            };
            if beats(best) {
                second = best;
                best = Some((i, key, seq));
            } else if beats(second) {
                second = Some((i, key, seq));
            }
        }
        self.current = best.map(|(i, _, _)| i);
        self.runner_up = match second {
            Some((i, _, _)) => RunnerUp::Child(i),
            None => RunnerUp::NoOther,
        };
    }

    /// After the current child `cur` stepped forward: whether it is still the smallest, told
    /// by the runner-up alone (`false`: unknown, scan).
    fn still_smallest(&self, cur: usize) -> bool {
        let Some(c) = self.children.get(cur).filter(|c| c.valid()) else {
            return false;
        };
        match self.runner_up {
            RunnerUp::Unknown => false,
            RunnerUp::NoOther => true,
            RunnerUp::Child(r) => {
                self.children.get(r).is_some_and(|other| {
                    match compare_internal(c.key(), c.seq(), other.key(), other.seq()) {
                        Ordering::Less => true,
                        Ordering::Equal => cur < r,
                        Ordering::Greater => false,
                    }
                })
            }
        }
    }

    /// Makes the largest valid child current (ties: the highest index), reading each child's
    /// key once as [`MergingIterator::find_smallest`] does.
    fn find_largest(&mut self) {
        let mut best: Option<(usize, &[u8], u64)> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            let (key, seq) = (c.key(), c.seq());
            match best {
                // Equal (key, seq): the later child wins.
                Some((_, bk, bs)) if compare_internal(bk, bs, key, seq) == Ordering::Greater => {}
                _ => best = Some((i, key, seq)),
            }
        }
        self.current = best.map(|(i, _, _)| i);
        self.runner_up = RunnerUp::Unknown;
    }

    fn seek_to_first_inner(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_first()?;
        }
        self.direction = Direction::Forward;
        self.find_smallest();
        Ok(())
    }

    fn seek_to_last_inner(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_last()?;
        }
        self.direction = Direction::Reverse;
        self.find_largest();
        Ok(())
    }

    fn seek_inner(&mut self, key: &[u8], seq: u64) -> Result<()> {
        for c in &mut self.children {
            c.seek(key, seq)?;
        }
        self.direction = Direction::Forward;
        self.find_smallest();
        Ok(())
    }

    fn seek_for_prev_inner(&mut self, key: &[u8], seq: u64) -> Result<()> {
        for c in &mut self.children {
            c.seek_for_prev(key, seq)?;
        }
        self.direction = Direction::Reverse;
        self.find_largest();
        Ok(())
    }

    fn next_inner(&mut self) -> Result<()> {
        let Some(cur) = self.current else {
            return Ok(());
        };
        if self.direction == Direction::Reverse {
            // Every other child sits at or before the current entry; move each to its first
            // entry after it in (key, seq, source) order.
            let (key, seq) = match self.children.get(cur) {
                Some(c) => (c.key().to_vec(), c.seq()),
                None => return Ok(()),
            };
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek(&key, seq)?;
                if i < cur && c.valid() && c.key() == key.as_slice() && c.seq() == seq {
                    c.next()?;
                }
            }
            self.direction = Direction::Forward;
            // The others moved: the step below scans them all.
            self.runner_up = RunnerUp::Unknown;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.next()?;
        }
        if !self.still_smallest(cur) {
            self.find_smallest();
        }
        Ok(())
    }

    fn prev_inner(&mut self) -> Result<()> {
        let Some(cur) = self.current else {
            return Ok(());
        };
        if self.direction == Direction::Forward {
            // Every other child sits after the current entry; move each to its last entry
            // before it in (key, seq, source) order.
            let (key, seq) = match self.children.get(cur) {
                Some(c) => (c.key().to_vec(), c.seq()),
                None => return Ok(()),
            };
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek_for_prev(&key, seq)?;
                if i > cur && c.valid() && c.key() == key.as_slice() && c.seq() == seq {
                    c.prev()?;
                }
            }
            self.direction = Direction::Reverse;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.prev()?;
        }
        self.find_largest();
        Ok(())
    }

    fn current_child(&self) -> Option<&BoxedInternalIterator<'a>> {
        self.current.and_then(|i| self.children.get(i))
    }
}

impl InternalIterator for MergingIterator<'_> {
    #[inline]
    fn valid(&self) -> bool {
        self.current_child().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        let r = self.seek_to_first_inner();
        self.guard(r)
    }

    fn seek_to_last(&mut self) -> Result<()> {
        let r = self.seek_to_last_inner();
        self.guard(r)
    }

    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        let r = self.seek_inner(key, seq);
        self.guard(r)
    }

    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        let r = self.seek_for_prev_inner(key, seq);
        self.guard(r)
    }

    fn next(&mut self) -> Result<()> {
        let r = self.next_inner();
        self.guard(r)
    }

    fn prev(&mut self) -> Result<()> {
        let r = self.prev_inner();
        self.guard(r)
    }

    #[inline]
    fn key(&self) -> &[u8] {
        self.current_child().map(|c| c.key()).unwrap_or_default()
    }

    #[inline]
    fn seq(&self) -> u64 {
        self.current_child().map_or(0, |c| c.seq())
    }

    #[inline]
    fn kind(&self) -> ValueKind {
        self.current_child().map_or(ValueKind::Value, |c| c.kind())
    }

    #[inline]
    fn value(&self) -> &[u8] {
        self.current_child().map(|c| c.value()).unwrap_or_default()
    }
}
