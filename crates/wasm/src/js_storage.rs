//! A [`Storage`] whose files live wherever a JavaScript object puts them: Node's `fs`, or the
//! browser's OPFS. The object's contract is `StorageHost` in `packages/js/src/engine/storage-host.ts`.
//!
//! Files cross the boundary as numeric ids (a string costs about twice as much per call); the
//! bytes of reads and writes cross as views into WebAssembly memory, without a copy.
//!
//! Locking: a host either excludes other handles itself (`lock`/`unlock`: browsers, whose worker
//! holds the database's Web Lock) or offers `lockPrimitives` (Node.js), over which
//! [`Storage::lock`] runs the core's lock-file protocol (`shaledb::storage::lock_file`), the
//! same code native ShaleDB runs.

use std::sync::Arc;
use std::time::Duration;

use js_sys::{Array, Reflect, Uint8Array};
use shaledb::storage::lock_file;
use shaledb::storage::lock_primitives::{LockPrimitives, ProcessStat, SmallFile};
use shaledb::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use shaledb::{Error, Result};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::errors::js_number;

/// The largest file offset a host's `f64` arguments carry exactly (2^53 - 1).
const MAX_SAFE_OFFSET: u64 = (1 << 53) - 1;

#[wasm_bindgen]
extern "C" {
    /// The JavaScript object implementing `StorageHost`.
    #[derive(Debug, Clone)]
    pub type StorageHost;

    #[wasm_bindgen(method, catch)]
    fn open(this: &StorageHost, name: &str, mode: u32) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn read(this: &StorageHost, file: u32, offset: f64, buffer: &mut [u8]) -> Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn write(this: &StorageHost, file: u32, offset: f64, data: &[u8]) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn sync(this: &StorageHost, file: u32) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn size(this: &StorageHost, file: u32) -> Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn truncate(this: &StorageHost, file: u32, length: f64) -> Result<(), JsValue>;
    /// Optional (`StorageHost.extend` in `storage-host.ts`): only called when the host has it.
    #[wasm_bindgen(method, catch)]
    fn extend(this: &StorageHost, file: u32, length: f64) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &StorageHost, file: u32) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn exists(this: &StorageHost, name: &str) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn remove(this: &StorageHost, name: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn rename(this: &StorageHost, from: &str, to: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn list(this: &StorageHost) -> Result<Array, JsValue>;
    #[wasm_bindgen(method, catch, js_name = syncDir)]
    fn sync_dir(this: &StorageHost) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn lock(this: &StorageHost, name: &str) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn unlock(this: &StorageHost, lock: u32) -> Result<(), JsValue>;

    /// A host's `lockPrimitives` object (`LockPrimitives` in `storage-host.ts`).
    #[derive(Debug, Clone)]
    pub type LockPrimitivesHost;

    #[wasm_bindgen(method, catch, js_name = hardLink)]
    fn hard_link(this: &LockPrimitivesHost, existing: &str, name: &str) -> Result<(), JsValue>;
    /// A `SmallFile`: `{ bytes: Uint8Array, ageMs: number }`.
    #[wasm_bindgen(method, catch, js_name = readSmall)]
    fn read_small(this: &LockPrimitivesHost, name: &str, max: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = removeIfUnchanged)]
    fn remove_if_unchanged(
        this: &LockPrimitivesHost,
        name: &str,
        bytes: &[u8],
        limit: u32,
    ) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch, js_name = lockHeld)]
    fn lock_held(this: &LockPrimitivesHost, name: &str, bytes: &[u8]) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch, js_name = processId)]
    fn process_id(this: &LockPrimitivesHost) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch, js_name = processStat)]
    fn process_stat(this: &LockPrimitivesHost, pid: Option<u32>) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn path(this: &LockPrimitivesHost, name: &str) -> Result<String, JsValue>;
    /// The calling thread's id, or `undefined` (locks are the process's).
    #[wasm_bindgen(method, catch, js_name = threadId)]
    fn thread_id(this: &LockPrimitivesHost) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = threadAlive)]
    fn thread_alive(this: &LockPrimitivesHost, pid: u32, thread: f64) -> Result<bool, JsValue>;
}

/// The storage of one database directory, backed by a `StorageHost`.
#[derive(Debug, Clone)]
pub struct JsStorage {
    host: StorageHost,
    /// The host's `lockPrimitives`; without them, the host's own `lock` is used.
    primitives: Option<LockPrimitivesHost>,
    /// Whether the host extends files ahead of their data (has `extend`).
    extends: bool,
}

impl JsStorage {
    pub fn new(host: StorageHost) -> JsStorage {
        let primitives = Reflect::get(&host, &JsValue::from_str("lockPrimitives"))
            .ok()
            .filter(|p| p.is_object())
            .map(JsCast::unchecked_into::<LockPrimitivesHost>);
        let extends =
            Reflect::get(&host, &JsValue::from_str("extend")).is_ok_and(|f| f.is_function());
        JsStorage {
            host,
            primitives,
            extends,
        }
    }

    /// The host's lock primitives; a host without them cannot run the lock-file protocol.
    fn primitives(&self, op: &'static str, name: &str) -> Result<&LockPrimitivesHost> {
        self.primitives.as_ref().ok_or_else(|| {
            Error::io(
                op,
                name,
                std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "the storage host has no lockPrimitives",
                ),
            )
        })
    }
}

/// Translates what a host method threw into the core's error: `ENOENT` → `NotFound`,
/// `EEXIST` → `AlreadyExists`, `LOCKED` → `Locked`, `ENOSPC`/`QUOTA` → an I/O error of kind
/// `StorageFull` (code `QUOTA`), anything else → an I/O error keeping the code and message.
pub(crate) fn host_error(op: &'static str, file: &str, thrown: &JsValue) -> Error {
    let code = Reflect::get(thrown, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string())
        .unwrap_or_default();
    let message = Reflect::get(thrown, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "unknown error".to_owned());
    match code.as_str() {
        "ENOENT" => Error::NotFound {
            file: file.to_owned(),
        },
        "EEXIST" => Error::AlreadyExists {
            file: file.to_owned(),
        },
        // The host's message is the whole sentence (holder and what to do): keep it as is.
        "LOCKED" => Error::Locked {
            file: file.to_owned(),
            holder: locked_holder(&message),
        },
        "ENOSPC" | "QUOTA" => Error::io(
            op,
            file,
            std::io::Error::new(std::io::ErrorKind::StorageFull, message),
        ),
        _ => Error::io(op, file, std::io::Error::other(message)),
    }
}

/// The holder part of a host's `LOCKED` message: the text after "is locked by " and before
/// "; " (the protocol's own wording, shared with native), else the whole message.
fn locked_holder(message: &str) -> String {
    let rest = message
        .split_once(" is locked by ")
        .map_or(message, |(_, rest)| rest);
    rest.split_once("; ")
        .map_or(rest, |(holder, _)| holder)
        .to_owned()
}

fn mode_number(mode: OpenMode) -> u32 {
    match mode {
        OpenMode::Read => 0,
        OpenMode::ReadWrite => 1,
        OpenMode::Create => 2,
        OpenMode::CreateNew => 3,
    }
}

impl Storage for JsStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let id = self
            .host
            .open(name, mode_number(mode))
            .map_err(|e| host_error("open", name, &e))?;
        Ok(Arc::new(JsFile {
            host: self.host.clone(),
            id,
            name: name.to_owned(),
            extends: self.extends,
        }))
    }

    fn exists(&self, name: &str) -> Result<bool> {
        self.host
            .exists(name)
            .map_err(|e| host_error("stat", name, &e))
    }

    fn remove(&self, name: &str) -> Result<()> {
        self.host
            .remove(name)
            .map_err(|e| host_error("remove", name, &e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.host
            .rename(from, to)
            .map_err(|e| host_error("rename", from, &e))
    }

    fn list(&self) -> Result<Vec<String>> {
        let names = self.host.list().map_err(|e| host_error("list", "", &e))?;
        Ok(names.iter().filter_map(|n| n.as_string()).collect())
    }

    fn sync_dir(&self) -> Result<()> {
        self.host
            .sync_dir()
            .map_err(|e| host_error("sync_dir", "", &e))
    }

    /// With `lockPrimitives`: the core's lock-file protocol over them. Otherwise the host's own
    /// `lock`, whose `LOCKED` message is the whole sentence.
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        if self.primitives.is_some() {
            return lock_file::acquire(self, name);
        }
        let id = self
            .host
            .lock(name)
            .map_err(|e| host_error("lock", name, &e))?;
        Ok(Box::new(JsLock {
            host: self.host.clone(),
            id,
        }))
    }
}

impl LockPrimitives for JsStorage {
    fn hard_link(&self, existing: &str, name: &str) -> Result<()> {
        self.primitives("link", name)?
            .hard_link(existing, name)
            .map_err(|e| host_error("link", name, &e))
    }

    fn read_small(&self, name: &str, max: usize) -> Result<SmallFile> {
        let max32 = u32::try_from(max).unwrap_or(u32::MAX);
        let small = self
            .primitives("read", name)?
            .read_small(name, max32)
            .map_err(|e| host_error("read", name, &e))?;
        let field = |key: &str| Reflect::get(&small, &JsValue::from_str(key)).ok();
        let mut bytes = field("bytes")
            .and_then(|b| b.dyn_into::<Uint8Array>().ok())
            .ok_or_else(|| {
                Error::io(
                    "read",
                    name,
                    std::io::Error::other("the storage host's readSmall returned no bytes"),
                )
            })?
            .to_vec();
        bytes.truncate(max);
        // Missing, negative (in the future), NaN or absurd: unknown.
        let age = field("ageMs")
            .and_then(|a| a.as_f64())
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        Ok(SmallFile { bytes, age })
    }

    fn remove_if_unchanged(&self, name: &str, bytes: &[u8], limit: usize) -> Result<bool> {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        self.primitives("remove", name)?
            .remove_if_unchanged(name, bytes, limit)
            .map_err(|e| host_error("remove", name, &e))
    }

    fn lock_held(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.primitives("lock", name)?
            .lock_held(name, bytes)
            .map_err(|e| host_error("lock", name, &e))
    }

    fn process_id(&self) -> Result<u32> {
        self.primitives("lock", "")?
            .process_id()
            .map_err(|e| host_error("lock", "", &e))
    }

    /// The host answers a string (the status line), `null` (no such process) or `undefined`
    /// (no `/proc` here); a throw means the status exists but cannot be read.
    fn process_stat(&self, pid: Option<u32>) -> ProcessStat {
        let Some(primitives) = self.primitives.as_ref() else {
            return ProcessStat::Unsupported;
        };
        match primitives.process_stat(pid) {
            Ok(value) => match value.as_string() {
                Some(text) => ProcessStat::Text(text),
                None if value.is_null() => ProcessStat::NoProcess,
                None if value.is_undefined() => ProcessStat::Unsupported,
                None => ProcessStat::Unreadable,
            },
            Err(_) => ProcessStat::Unreadable,
        }
    }

    /// `Math.random`, twice: unique enough for temporary names, and no host call.
    fn random_u64(&self) -> u64 {
        let half = || (js_sys::Math::random() * 4_294_967_296.0) as u64 & 0xffff_ffff;
        (half() << 32) | half()
    }

    /// The host's `threadId()`, if it has one and answers a number.
    fn thread_id(&self) -> Option<u64> {
        let value = self.primitives.as_ref()?.thread_id().ok()?.as_f64()?;
        (value.fract() == 0.0 && value >= 0.0).then_some(value as u64)
    }

    /// The host's `threadAlive(pid, thread)`; alive if it cannot tell.
    fn thread_alive(&self, pid: u32, thread: u64) -> bool {
        self.primitives
            .as_ref()
            .is_none_or(|p| p.thread_alive(pid, thread as f64).unwrap_or(true))
    }

    fn display_name(&self, name: &str) -> String {
        self.primitives
            .as_ref()
            .and_then(|p| p.path(name).ok())
            .unwrap_or_else(|| name.to_owned())
    }
}

/// An open file of a [`JsStorage`]; dropping the last handle closes its id.
#[derive(Debug)]
struct JsFile {
    host: StorageHost,
    id: u32,
    name: String,
    /// Whether the host has `extend` (Node.js: preallocation of write-ahead logs).
    extends: bool,
}

impl StorageFile for JsFile {
    fn name(&self) -> &str {
        &self.name
    }

    fn host_id(&self) -> Option<u64> {
        Some(u64::from(self.id))
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let n = self
            .host
            .read(self.id, offset as f64, buf)
            .map_err(|e| host_error("read", &self.name, &e))?;
        // A host that reports more than it was given would break the caller's invariants.
        if !(0.0..=buf.len() as f64).contains(&n) {
            return Err(Error::io(
                "read",
                &self.name,
                std::io::Error::other(format!("storage host reported {} bytes read", js_number(n))),
            ));
        }
        Ok(n as usize)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.host
            .write(self.id, offset as f64, data)
            .map_err(|e| host_error("write", &self.name, &e))
    }

    fn sync(&self) -> Result<()> {
        self.host
            .sync(self.id)
            .map_err(|e| host_error("sync", &self.name, &e))
    }

    fn size(&self) -> Result<u64> {
        let size = self
            .host
            .size(self.id)
            .map_err(|e| host_error("size", &self.name, &e))?;
        if !(size >= 0.0 && size.fract() == 0.0) {
            return Err(Error::io(
                "size",
                &self.name,
                std::io::Error::other(format!("storage host reported size {}", js_number(size))),
            ));
        }
        Ok(size as u64)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.host
            .truncate(self.id, len as f64)
            .map_err(|e| host_error("truncate", &self.name, &e))
    }

    /// Through the host's `extend` where it has one (Node.js: the file is extended, sparse, so
    /// that a synced write into the range does not change the file's size and its
    /// `fdatasync` commits no metadata). Other hosts preallocate nothing (`false`): in browsers
    /// a file's whole size counts against the origin's OPFS quota and travels in exports.
    /// Nothing is mapped through a host (the default `map_writable`).
    fn allocate(&self, offset: u64, len: u64) -> Result<bool> {
        if !self.extends {
            return Ok(false);
        }
        let end = offset
            .checked_add(len)
            .filter(|&e| e <= MAX_SAFE_OFFSET)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{len} bytes at offset {offset} are beyond what a storage host can address"
                ))
            })?;
        self.host
            .extend(self.id, end as f64)
            .map_err(|e| host_error("allocate", &self.name, &e))
    }
}

impl Drop for JsFile {
    fn drop(&mut self) {
        // Nothing to report a failed close to; the data was written (and synced) already.
        let _ = self.host.close(self.id);
    }
}

/// A lock held through a `StorageHost`; dropping it releases the lock.
#[derive(Debug)]
struct JsLock {
    host: StorageHost,
    id: u32,
}

impl StorageLock for JsLock {}

impl Drop for JsLock {
    fn drop(&mut self) {
        let _ = self.host.unlock(self.id);
    }
}
