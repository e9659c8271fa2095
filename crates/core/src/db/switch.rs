//! The memtable switch: the live memtable becomes immutable, a new WAL takes over and the old
//! one is sealed (a record naming the new one appended, not synced: the new log's gate follows
//! it, so it is synced whole before any byte of the new log is), and flush work is signalled.
//! Writers wait meanwhile (it runs in the group commit's exclusive section), for no sync but
//! the new log's creation.

use crate::db::core::DbInner;
use crate::write::wal::WalWriter;
use crate::Result;

impl DbInner {
    /// Makes the live memtable immutable and starts a new WAL for the next one. With `force`
    /// false, does nothing unless the memtable is full (another writer may have switched it
    /// already); with `force` true, switches any non-empty memtable.
    pub(crate) fn switch_memtable(&self, force: bool) -> Result<()> {
        let switched = self.writes.exclusive(|wal, last_seq| {
            let view = self.versions.view();
            let full = view.mem.approximate_memory() >= self.options.memtable_size;
            if view.mem.is_empty() || (!force && !full) {
                return Ok(());
            }
            // The new log exists durably before the old one names it in its sealed record
            // (prepared ahead of need off the writer's path, else created here); the old log is
            // synced whole before any sync of the new one (its gate follows it), so recovery
            // may stop at the first torn log, dropping the never-synced writes after it,
            // without losing an acknowledged synced write. Nothing is synced here for a
            // prepared log: its header becomes durable with its first sync.
            let new_wal = match self.next_log.take_for_switch() {
                Some(prepared) => WalWriter::start_prepared(prepared, last_seq + 1)?,
                None => {
                    let number = self.versions.lock().new_file_number();
                    WalWriter::create(
                        &*self.storage,
                        number,
                        last_seq + 1,
                        self.options.wal_options(),
                    )?
                }
            };
            let number = new_wal.number();
            let tail = wal.seal_untrimmed(number)?;
            self.cut_later(tail);
            new_wal.gate().follow(wal.number(), wal.gate());
            *wal = new_wal;
            let mut versions = self.versions.lock();
            // The version comes from the version set, not from `view`: a flush may have
            // installed a newer one since `view` was read (views change only under its lock).
            let old_wal = versions.switch_memtable(view.mem.clone(), number);
            self.changes.logs().created(number, last_seq + 1);
            self.changes
                .logs()
                .sealed(old_wal, self.options.clock.now_ms());
            Ok(())
        });
        if let Err(e) = &switched {
            // A failed creation of the new log or seal of the old one poisons the database:
            // the old log's durability is unknown, and the next open must find the logs as
            // they are now.
            self.health.poison(e);
        }
        switched?;
        self.maintenance.background().notify();
        Ok(())
    }
}
