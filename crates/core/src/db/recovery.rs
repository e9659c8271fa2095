//! Recovery of the logs at open: replays, into one memtable, the chain of WALs that the
//! manifest's log number starts, checking that no acknowledged write is missing. Changes no
//! file, so an open that fails or crashes at any later step can simply be run again.
//!
//! # The chain (manifest format 2)
//!
//! The log the log number names must exist. Each log is replayed in turn; a sealed log names
//! the next one, which must exist (it is durably created before a seal names it). The chain
//! ends at a log that is not sealed, at a torn tail (damage that hit only data never synced,
//! [`crate::write::wal::WalReader::replay`]), or at a log without one intact record: a log
//! prepared ahead of need gets its header from the switch without a sync, and its first sync
//! makes the header durable with its first records, so a log whose header a crash lost never
//! held a synced write.
//! Sequence numbers run on densely from the manifest's last sequence number through every log
//! of the chain (each log's header says where it starts). Every other log at or above the log
//! number must hold no batch (a log created by an open or a memtable switch that failed before
//! it was used), with one exception: later logs, after the end of the chain, whose records
//! claim nothing synced past their header. The chain's last log lost its seal then, with the
//! rest of its unsynced tail (torn, or cut at a record boundary: a file size not made
//! durable). A log is sealed without a sync, and no byte of a newer log is synced before the
//! older ones are whole ([`crate::write::wal::SyncGate`]), so those hold only writes never
//! synced, made after the lost ones: they are dropped with them ([`RecoveredLogs::dropped`]),
//! and recovery ends at the same prefix of the writes a single log's torn tail leaves. Any
//! other batch outside the chain means the chain lost a link (a log was damaged or cut short):
//! corruption, never a silent drop of later writes that a sync had made durable.
//!
//! # Format 1 databases
//!
//! Their logs have no headers or sealed records: the chain is every format-1 log from the log
//! number on, in number order, with the same density rule; a torn tail ends it, and any later
//! log must then hold no batch. Logs of format 2 there were created by a failed open of this
//! code and must be empty too.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::memtable::MemTable;
use crate::storage::Storage;
use crate::write::wal::{self, WalEnd, WalReader};
use crate::{Error, Result};

/// Which rules the logs follow: those of the manifest's format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogRules {
    /// Manifest format 2: logs of format 2, chained by their sealed records.
    Chained,
    /// Manifest format 1: logs of format 1, in number order.
    Legacy,
    /// A new database: no log holds a write (the caller checked).
    None,
}

/// What the logs held.
pub(crate) struct RecoveredLogs {
    /// Every replayed batch.
    pub(crate) mem: Arc<MemTable>,
    /// The last sequence number in use: the manifest's, or the last replayed.
    pub(crate) last_seq: u64,
    /// Logs after the chain's end whose never-synced writes were dropped (module doc). The
    /// open deletes them before the logs' writes go anywhere else: left in place, the change
    /// feed could serve writes the database does not hold.
    pub(crate) dropped: Vec<u64>,
}

/// Replays the logs of `names` (a listing of the storage) at or above `log_number`, given the
/// `last_sequence` of the manifest named `manifest`; see the module doc for the rules and the
/// errors.
pub(crate) fn recover_logs(
    storage: &dyn Storage,
    names: &[String],
    manifest: &str,
    log_number: u64,
    last_sequence: u64,
    rules: LogRules,
) -> Result<RecoveredLogs> {
    let present: BTreeSet<u64> = names
        .iter()
        .filter_map(|n| wal::parse_wal_file_name(n))
        .filter(|&n| n >= log_number)
        .collect();
    let mem = Arc::new(MemTable::new());
    let mut last_seq = last_sequence;
    let mut expected = last_sequence + 1;
    let mut visited = BTreeSet::new();
    let mut first_log = true;
    // Where the chain ended: the last log and, for a torn tail, where its valid data ends.
    let mut chain_end: Option<(u64, Option<u64>)> = None;
    let mut current = match rules {
        LogRules::None => None,
        LogRules::Chained if !present.contains(&log_number) => {
            return Err(Error::corruption(
                manifest,
                0,
                format!(
                    "its log number names {}, which is missing (the manifest lost edits, or \
                     the log was deleted and the writes it held are lost)",
                    wal::wal_file_name(log_number)
                ),
            ))
        }
        LogRules::Chained => Some(log_number),
        LogRules::Legacy => next_legacy_log(storage, &present, log_number)?,
    };
    while let Some(number) = current {
        visited.insert(number);
        let name = wal::wal_file_name(number);
        let replay = WalReader::replay(storage, number, |first_seq, batch| {
            mem.apply(first_seq, &batch);
            Ok(())
        })?;
        let starts_at = match (rules, replay.format) {
            (LogRules::Chained, 2) => replay.header.map(|h| h.first_seq),
            (LogRules::Chained, 0) => {
                // Not one intact record, and none that claims a sync: a log prepared ahead of
                // need whose header, handed to it unsynced by the switch, a crash lost.
                chain_end = Some((number, Some(0)));
                break;
            }
            (LogRules::Chained, _) => {
                return Err(Error::corruption(
                    &name,
                    0,
                    "a log of this database lacks its log header (it was written whole before \
                     the log was used)",
                ))
            }
            (LogRules::Legacy | LogRules::None, _) => replay.first_batch_seq,
        };
        if let Some(first) = starts_at {
            // The first log may start below the manifest's last sequence number (an older open
            // recorded it before it replaced the log); never above it.
            if first > expected || (first < expected && !first_log) {
                return Err(Error::corruption(
                    &name,
                    0,
                    format!(
                        "the log starts at sequence number {first}, but the writes before it end \
                         at {}{}",
                        expected - 1,
                        missing(expected, first)
                    ),
                ));
            }
        }
        first_log = false;
        if let Some(next) = replay.next_seq {
            expected = next;
        }
        if let Some(seq) = replay.last_seq {
            last_seq = last_seq.max(seq);
        }
        if let WalEnd::TornTail { valid_up_to } = replay.end {
            chain_end = Some((number, Some(valid_up_to)));
            break;
        }
        chain_end = Some((number, None));
        current = match rules {
            LogRules::Chained => match replay.sealed {
                Some(next) if !present.contains(&next) => {
                    return Err(Error::corruption(
                        &name,
                        replay.valid_up_to,
                        format!(
                            "the log continues in {}, which is missing (deleted?): the writes it \
                             held are lost",
                            wal::wal_file_name(next)
                        ),
                    ))
                }
                Some(next) if visited.contains(&next) || next <= number => {
                    return Err(Error::corruption(
                        &name,
                        replay.valid_up_to,
                        format!("the log continues in log {next}, which is not newer"),
                    ))
                }
                other => other,
            },
            LogRules::Legacy => next_legacy_log(storage, &present, number + 1)?,
            LogRules::None => None,
        };
    }
    let mut dropped = Vec::new();
    for &number in present.difference(&visited) {
        let replay = WalReader::replay(storage, number, |_, _| Ok(()))?;
        if let (Some(first), Some(last)) = (replay.first_batch_seq, replay.last_seq) {
            let never_synced = replay.format == 2 && replay.max_synced <= replay.header_end;
            if rules == LogRules::Chained
                && never_synced
                && matches!(chain_end, Some((end, _)) if number > end)
            {
                dropped.push(number);
                continue;
            }
            let later = format!(
                "{} holds the later writes {first}..={last}",
                wal::wal_file_name(number)
            );
            return Err(match chain_end {
                Some((end, Some(at))) => Error::corruption(
                    wal::wal_file_name(end),
                    at,
                    format!("the log is damaged or cut short here although {later}"),
                ),
                Some((end, None)) => Error::corruption(
                    wal::wal_file_name(end),
                    0,
                    format!("the log does not lead to the next one although {later}"),
                ),
                None => Error::corruption(
                    wal::wal_file_name(number),
                    0,
                    "the log holds writes but no log leads to it",
                ),
            });
        }
    }
    Ok(RecoveredLogs {
        mem,
        last_seq,
        dropped,
    })
}

/// `": the writes a..b are missing"` when `first > expected`.
fn missing(expected: u64, first: u64) -> String {
    if first > expected {
        format!(": the writes {expected}..{} are missing", first - 1)
    } else {
        String::new()
    }
}

/// The first format-1 (or empty) log numbered `from` or more; logs of format 2 are skipped
/// (in a format-1 database they are leftovers of a failed open, checked to be empty later).
fn next_legacy_log(
    storage: &dyn Storage,
    present: &BTreeSet<u64>,
    from: u64,
) -> Result<Option<u64>> {
    for &number in present.range(from..) {
        if WalReader::format(storage, number)? != 2 {
            return Ok(Some(number));
        }
    }
    Ok(None)
}
