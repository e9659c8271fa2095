//! The CPU priority of the background maintenance thread ([`MaintenancePriority`]), set by the
//! thread on itself when it starts.

/// How the background thread's flushes and compactions compete for the CPU with the
/// application's threads (Linux; elsewhere every choice runs at normal priority).
///
/// On a machine whose cores are all busy, a flush or compaction at normal priority takes its
/// share of a core from the threads that write and read, which then wait for the scheduler for
/// milliseconds (a topic subscriber, a request thread). At a lower priority the application's
/// threads run first and maintenance uses the idle time; if the application keeps every core
/// busy for long, maintenance falls behind and writers wait for it at the memtable limit (the
/// database's own back-pressure), as they would for a slow disk. RocksDB's
/// `Env::LowerThreadPoolCPUPriority` offers the same choices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaintenancePriority {
    /// The priority of the thread that opened the database.
    Normal,
    /// The lowest `nice` value (19): about 1.5% of a busy core against a normal thread, and
    /// the whole core when nothing else wants it. The default.
    #[default]
    Low,
    /// `SCHED_IDLE`: runs only when a core would otherwise idle; any normal thread preempts it
    /// at once.
    Idle,
}

impl MaintenancePriority {
    /// Gives the calling thread this priority. Best effort: a refusal by the system leaves the
    /// thread as it was (lowering a thread's own priority needs no privilege on Linux).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn apply_to_current_thread(self) {
        #[cfg(target_os = "linux")]
        match self {
            MaintenancePriority::Normal => {}
            MaintenancePriority::Low => linux::set_nice(19),
            MaintenancePriority::Idle => linux::set_idle(),
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    /// Sets the calling thread's nice value (on Linux `PRIO_PROCESS` with id 0 is the calling
    /// thread, not the whole process).
    #[expect(
        unsafe_code,
        reason = "setpriority(2) takes numbers only and touches no memory of the caller"
    )]
    pub(super) fn set_nice(nice: libc::c_int) {
        // SAFETY: see the `expect` reason. The result is ignored on purpose (best effort).
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    }

    /// Moves the calling thread to the `SCHED_IDLE` policy.
    #[expect(
        unsafe_code,
        reason = "sched_setscheduler(2) reads the parameter struct it is given, which lives on \
                  this stack frame for the whole call"
    )]
    pub(super) fn set_idle() {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: see the `expect` reason; pid 0 is the calling thread. Best effort.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The scheduling policy of a new thread that applied `Idle`.
    fn policy_after_idle() -> libc::c_int {
        std::thread::spawn(|| {
            MaintenancePriority::Idle.apply_to_current_thread();
            own_policy()
        })
        .join()
        .unwrap_or(-1)
    }

    #[expect(unsafe_code, reason = "sched_getscheduler(2) takes a number only")]
    fn own_policy() -> libc::c_int {
        // SAFETY: see the `expect` reason.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[expect(unsafe_code, reason = "getpriority(2) takes numbers only")]
    fn own_nice() -> libc::c_int {
        // SAFETY: see the `expect` reason.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[test]
    fn each_priority_applies_to_the_calling_thread_only() {
        let before = (own_policy(), own_nice());
        let low = std::thread::spawn(|| {
            MaintenancePriority::Low.apply_to_current_thread();
            own_nice()
        })
        .join()
        .unwrap_or(-1);
        assert_eq!(low, 19);
        assert_eq!(policy_after_idle(), libc::SCHED_IDLE);
        assert_eq!(
            (own_policy(), own_nice()),
            before,
            "this thread is unchanged"
        );
    }
}
