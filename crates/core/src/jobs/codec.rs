//! The byte encodings of [`MaintenanceJob`] and [`JobOutput`] (docs/FORMAT.md, "Maintenance
//! jobs"): uvarints, tables as the manifest's "file added" fields. Decoding is total: malformed
//! bytes are [`Error::InvalidArgument`], never a panic.

use crate::jobs::spec::{
    CompactionWork, DeleteWork, FlushWork, JobOutput, JobWork, MaintenanceJob, SyncLogWork,
};
use crate::recordio::format::{go_code, go_compression};
use crate::sstable::TableOptions;
use crate::varint::{get_uvarint, put_uvarint_vec};
use crate::version::edit::VersionEdit;
use crate::version::{FileMeta, NUM_LEVELS};
use crate::{Error, Result};

/// The first byte of every encoded job.
const JOB_FORMAT: u64 = 1;
/// The first byte of every encoded output.
const OUTPUT_FORMAT: u64 = 1;
const WORK_FLUSH: u64 = 1;
const WORK_COMPACTION: u64 = 2;
const WORK_SYNC_LOG: u64 = 3;
const WORK_DELETE: u64 = 4;
/// Largest block size, restart interval or list a job may name (bounds what a decoder
/// allocates on bad input).
const MAX_FIELD: u64 = 1 << 30;

impl MaintenanceJob {
    /// The job as bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, v: u64| put_uvarint_vec(out, v);
        put(&mut out, JOB_FORMAT);
        put(&mut out, self.id);
        put(&mut out, self.table.block_size as u64);
        put(&mut out, self.table.restart_interval as u64);
        put(&mut out, u64::from(go_code(self.table.compression)));
        put(&mut out, u64::from(self.table.bloom_bits_per_key));
        put(&mut out, self.table.write_buffer_size as u64);
        put(&mut out, self.outputs.len() as u64);
        for n in &self.outputs {
            put(&mut out, *n);
        }
        match &self.work {
            JobWork::Flush(f) => {
                put(&mut out, WORK_FLUSH);
                put(&mut out, f.wal);
                put(&mut out, f.entries);
            }
            JobWork::Compaction(c) => {
                put(&mut out, WORK_COMPACTION);
                put(&mut out, c.level as u64);
                put(&mut out, u64::from(c.bottommost));
                put(&mut out, c.target_file_size);
                put(&mut out, c.snapshots.len() as u64);
                for s in &c.snapshots {
                    put(&mut out, *s);
                }
                put_tables(&mut out, c.level, &c.inputs);
                put_tables(&mut out, c.level + 1, &c.next_inputs);
            }
            JobWork::SyncLog(s) => {
                put(&mut out, WORK_SYNC_LOG);
                put(&mut out, s.wal);
            }
            JobWork::Delete(d) => {
                put(&mut out, WORK_DELETE);
                for numbers in [&d.tables, &d.logs] {
                    put(&mut out, numbers.len() as u64);
                    for n in numbers {
                        put(&mut out, *n);
                    }
                }
            }
        }
        out
    }

    /// Decodes [`MaintenanceJob::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<MaintenanceJob> {
        let mut d = Decoder { b: bytes, pos: 0 };
        d.expect(JOB_FORMAT, "job format")?;
        let id = d.uvarint("id")?;
        let table = TableOptions {
            block_size: d.bounded("block size")? as usize,
            restart_interval: d.bounded("restart interval")?.max(1) as usize,
            compression: {
                let code = d.uvarint("compression")?;
                u32::try_from(code)
                    .ok()
                    .and_then(go_compression)
                    .ok_or_else(|| d.err(format!("unknown compression {code}")))?
            },
            bloom_bits_per_key: u32::try_from(d.uvarint("bloom bits")?)
                .map_err(|_| d.err("bloom bits over u32"))?,
            write_buffer_size: d.bounded("write buffer size")? as usize,
            sync_on_finish: true,
        };
        let count = d.bounded("output count")?;
        let mut outputs = Vec::new();
        for _ in 0..count {
            outputs.push(d.uvarint("output number")?);
        }
        let work = match d.uvarint("work")? {
            WORK_FLUSH => JobWork::Flush(FlushWork {
                wal: d.uvarint("log number")?,
                entries: d.uvarint("entries")?,
            }),
            WORK_COMPACTION => {
                let level = d.uvarint("level")?;
                if level + 1 >= NUM_LEVELS as u64 {
                    return Err(d.err(format!("level {level} has no level below it")));
                }
                let level = level as usize;
                let bottommost = d.uvarint("bottommost")? != 0;
                let target_file_size = d.uvarint("target file size")?.max(1);
                let count = d.bounded("snapshot count")?;
                let mut snapshots = Vec::new();
                for _ in 0..count {
                    snapshots.push(d.uvarint("snapshot")?);
                }
                let inputs = d.tables(level)?;
                let next_inputs = d.tables(level + 1)?;
                JobWork::Compaction(CompactionWork {
                    level,
                    inputs,
                    next_inputs,
                    snapshots,
                    bottommost,
                    target_file_size,
                })
            }
            WORK_SYNC_LOG => JobWork::SyncLog(SyncLogWork {
                wal: d.uvarint("log number")?,
            }),
            WORK_DELETE => JobWork::Delete(DeleteWork {
                tables: d.numbers("table count")?,
                logs: d.numbers("log count")?,
            }),
            other => return Err(d.err(format!("unknown work {other}"))),
        };
        d.end()?;
        Ok(MaintenanceJob {
            id,
            work,
            table,
            outputs,
        })
    }
}

impl JobOutput {
    /// The output as bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_uvarint_vec(&mut out, OUTPUT_FORMAT);
        put_uvarint_vec(&mut out, self.id);
        // Tables are listed at level 0: the level is the job's, not the output's to say.
        put_tables(&mut out, 0, &self.tables);
        out
    }

    /// Decodes [`JobOutput::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<JobOutput> {
        let mut d = Decoder { b: bytes, pos: 0 };
        d.expect(OUTPUT_FORMAT, "output format")?;
        let id = d.uvarint("id")?;
        let tables = d.tables(0)?;
        d.end()?;
        Ok(JobOutput { id, tables })
    }
}

/// Appends `tables` as a length-prefixed version edit adding them at `level`.
fn put_tables(out: &mut Vec<u8>, level: usize, tables: &[FileMeta]) {
    let edit = VersionEdit {
        files_added: tables.iter().map(|t| (level as u8, t.clone())).collect(),
        ..VersionEdit::default()
    };
    let bytes = edit.encoded();
    put_uvarint_vec(out, bytes.len() as u64);
    out.extend_from_slice(&bytes);
}

struct Decoder<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    fn err(&self, reason: impl std::fmt::Display) -> Error {
        Error::InvalidArgument(format!(
            "malformed maintenance job bytes at byte {}: {reason}",
            self.pos
        ))
    }

    fn uvarint(&mut self, what: &str) -> Result<u64> {
        get_uvarint(self.b, &mut self.pos).map_err(|e| self.err(format!("{what}: {e:?}")))
    }

    fn bounded(&mut self, what: &str) -> Result<u64> {
        let v = self.uvarint(what)?;
        if v > MAX_FIELD {
            return Err(self.err(format!("{what} {v} is too large")));
        }
        Ok(v)
    }

    fn expect(&mut self, value: u64, what: &str) -> Result<()> {
        let v = self.uvarint(what)?;
        if v != value {
            return Err(self.err(format!("{what} {v}, expected {value}")));
        }
        Ok(())
    }

    /// A count, then that many file numbers.
    fn numbers(&mut self, what: &str) -> Result<Vec<u64>> {
        let count = self.bounded(what)?;
        let mut numbers = Vec::new();
        for _ in 0..count {
            numbers.push(self.uvarint("file number")?);
        }
        Ok(numbers)
    }

    /// A length-prefixed version edit holding only tables added at `level`.
    fn tables(&mut self, level: usize) -> Result<Vec<FileMeta>> {
        let len = self.bounded("table list length")? as usize;
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| self.err("table list runs past the end"))?;
        let edit = VersionEdit::decode(&self.b[self.pos..end], "maintenance job", self.pos as u64)
            .map_err(|e| self.err(e))?;
        self.pos = end;
        let only_tables = VersionEdit {
            files_added: edit.files_added.clone(),
            ..VersionEdit::default()
        };
        if edit != only_tables || edit.files_added.iter().any(|(l, _)| *l as usize != level) {
            return Err(self.err(format!(
                "a table list holds more than tables at level {level}"
            )));
        }
        Ok(edit.files_added.into_iter().map(|(_, t)| t).collect())
    }

    fn end(&self) -> Result<()> {
        if self.pos != self.b.len() {
            return Err(self.err("trailing bytes"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::InternalKey;
    use crate::recordio::Compression;

    fn table(number: u64) -> FileMeta {
        FileMeta {
            number,
            size: 1000 + number,
            smallest: InternalKey::new(b"a".to_vec(), 7),
            largest: InternalKey::new(b"z".to_vec(), 3),
            min_seq: 3,
            max_seq: 9,
            entries: 12,
            has_range_tombstones: number % 2 == 0,
        }
    }

    fn jobs() -> Vec<MaintenanceJob> {
        let table_options = TableOptions {
            compression: Compression::Snappy,
            ..TableOptions::default()
        };
        vec![
            MaintenanceJob {
                id: 1,
                work: JobWork::Flush(FlushWork {
                    wal: 9,
                    entries: 44,
                }),
                table: table_options.clone(),
                outputs: vec![12],
            },
            MaintenanceJob {
                id: u64::MAX,
                work: JobWork::Compaction(CompactionWork {
                    level: 0,
                    inputs: vec![table(3), table(4)],
                    next_inputs: vec![table(5)],
                    snapshots: vec![17, 1 << 40],
                    bottommost: true,
                    target_file_size: 64 << 20,
                }),
                table: table_options.clone(),
                outputs: (100..108).collect(),
            },
            MaintenanceJob {
                id: 77,
                work: JobWork::SyncLog(SyncLogWork { wal: 77 }),
                table: table_options.clone(),
                outputs: Vec::new(),
            },
            MaintenanceJob {
                id: 78,
                work: JobWork::Delete(DeleteWork {
                    tables: vec![3, 4, 1 << 40],
                    logs: vec![9],
                }),
                table: table_options,
                outputs: Vec::new(),
            },
        ]
    }

    #[test]
    fn jobs_and_outputs_round_trip() {
        for job in jobs() {
            assert_eq!(MaintenanceJob::decode(&job.encode()).unwrap(), job);
        }
        let output = JobOutput {
            id: 5,
            tables: vec![table(100), table(101)],
        };
        assert_eq!(JobOutput::decode(&output.encode()).unwrap(), output);
    }

    #[test]
    fn malformed_job_bytes_are_invalid_argument_at_every_cut_and_flip() {
        for job in jobs() {
            let bytes = job.encode();
            for cut in 0..bytes.len() {
                let r = MaintenanceJob::decode(&bytes[..cut]);
                assert!(
                    matches!(r, Err(Error::InvalidArgument(_))),
                    "cut {cut}: {r:?}"
                );
            }
            for at in 0..bytes.len() {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0x80;
                // Any outcome but a panic; a decoded job is checked again by its runner.
                let _ = MaintenanceJob::decode(&flipped);
            }
            let mut long = bytes.clone();
            long.push(0);
            assert!(matches!(
                MaintenanceJob::decode(&long),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}
