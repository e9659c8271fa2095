//! Where change feeds stopped, so that a new feed from the same sequence number starts there
//! instead of reading its log from the start: readers that make a feed per read (the
//! WebAssembly bindings keep one feed per position, so a second reader at the same position
//! makes a new one) would otherwise read the whole live log again on every read.

use std::sync::{Mutex, PoisonError};

/// How many stopping points are kept (feeds at the tip share one).
const KEPT: usize = 8;

/// A point a feed stopped at: the next batch starts at or after `next`, and no batch starting
/// at or after `next` lies before record offset `offset` of log `log` (nor in earlier logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResumePoint {
    pub next: u64,
    pub log: u64,
    pub offset: u64,
}

/// The newest stopping points, newest last.
#[derive(Debug, Default)]
pub(crate) struct ResumePoints {
    points: Mutex<Vec<ResumePoint>>,
}

impl ResumePoints {
    /// Remembers `point` (replacing the one for the same `next`).
    pub(crate) fn record(&self, point: ResumePoint) {
        let mut points = self.points.lock().unwrap_or_else(PoisonError::into_inner);
        points.retain(|p| p.next != point.next);
        if points.len() == KEPT {
            points.remove(0);
        }
        points.push(point);
    }

    /// Where a feed from `next` may start, if a feed stopped there.
    pub(crate) fn find(&self, next: u64) -> Option<ResumePoint> {
        let points = self.points.lock().unwrap_or_else(PoisonError::into_inner);
        points.iter().rev().find(|p| p.next == next).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_point_per_sequence_number_and_at_most_eight() {
        let points = ResumePoints::default();
        for next in 1..=10 {
            points.record(ResumePoint {
                next,
                log: 1,
                offset: next * 10,
            });
        }
        assert_eq!(points.find(1), None);
        assert_eq!(points.find(2), None);
        assert_eq!(points.find(3).map(|p| p.offset), Some(30));
        let moved = ResumePoint {
            next: 3,
            log: 2,
            offset: 5,
        };
        points.record(moved);
        assert_eq!(points.find(3), Some(moved));
    }
}
