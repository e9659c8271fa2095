//! Sorted string tables on RecordIO. TODO(sstable): implement.
