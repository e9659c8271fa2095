//! Whether a database can still be used: open or closed, and poisoned — with the first cause —
//! once a failure left its files in a state it must not write on from.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::{Error, Result};

/// Why a database stopped accepting writes.
#[derive(Debug, Clone)]
pub(crate) struct PoisonCause {
    message: String,
    storage_full: bool,
}

impl PoisonCause {
    /// The cause `e` gives.
    pub(crate) fn of(e: &Error) -> PoisonCause {
        PoisonCause {
            message: e.to_string(),
            storage_full: e.code() == "QUOTA",
        }
    }

    /// The error every later write gets.
    pub(crate) fn error(&self) -> Error {
        Error::Poisoned {
            cause: self.message.clone(),
            storage_full: self.storage_full,
        }
    }
}

/// A database's health. The checks read atomics only (the write path calls them); the cause is
/// behind a lock of its own that is never held while another lock is taken, so it may be
/// poisoned from under any other lock.
#[derive(Debug, Default)]
pub(crate) struct Health {
    closed: AtomicBool,
    /// Set once `cause` is, so the write path checks it without a lock.
    poisoned: AtomicBool,
    cause: Mutex<Option<PoisonCause>>,
}

impl Health {
    /// Fails with [`Error::Closed`] once the database is closed.
    #[inline]
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed("the database is closed".into()));
        }
        Ok(())
    }

    /// Fails if the database is closed, or poisoned (with the cause).
    #[inline]
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if self.poisoned.load(Ordering::Acquire) {
            return Err(self.lock().as_ref().map_or_else(
                || Error::Poisoned {
                    cause: String::new(),
                    storage_full: false,
                },
                PoisonCause::error,
            ));
        }
        // A poisoned group commit refuses the write itself, with its cause.
        Ok(())
    }

    /// Records that the database must not write any more because of `e`; the first cause
    /// recorded stays.
    pub(crate) fn poison(&self, e: &Error) {
        let mut cause = self.lock();
        if cause.is_none() {
            *cause = Some(PoisonCause::of(e));
        }
        self.poisoned.store(true, Ordering::Release);
    }

    /// Passes `result` through, poisoning the database if it is an error (other than the
    /// database being closed): for work whose failure leaves the files in an unknown state.
    pub(crate) fn poison_on_error<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if !matches!(e, Error::Closed(_)) {
                self.poison(e);
            }
        }
        result
    }

    /// Whether the database was poisoned.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Marks the database closed: every later check fails with [`Error::Closed`]. True for
    /// the call that closed it, false if it was closed already.
    pub(crate) fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<PoisonCause>> {
        self.cause.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
