//! A [`Storage`] whose files live wherever a JavaScript object puts them: Node's `fs`, or the
//! browser's OPFS. The object's contract is `StorageHost` in `packages/js/src/storage-host.ts`.
//!
//! Files cross the boundary as numeric ids (a string costs about twice as much per call); the
//! bytes of reads and writes cross as views into WebAssembly memory, without a copy.

use std::sync::Arc;

use js_sys::{Array, Reflect};
use shaledb::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use shaledb::{Error, Result};
use wasm_bindgen::prelude::*;

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
}

/// The storage of one database directory, backed by a `StorageHost`.
#[derive(Debug)]
pub struct JsStorage {
    host: StorageHost,
}

impl JsStorage {
    pub fn new(host: StorageHost) -> JsStorage {
        JsStorage { host }
    }
}

/// Translates what a host method threw into the core's error: `ENOENT` → `NotFound`,
/// `EEXIST` → `AlreadyExists`, `LOCKED` → `Locked`, `ENOSPC`/`QUOTA` → an I/O error of kind
/// `StorageFull` (code `QUOTA`), anything else → an I/O error keeping the code and message.
fn host_error(op: &'static str, file: &str, thrown: &JsValue) -> Error {
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
        "LOCKED" => Error::Locked {
            file: file.to_owned(),
            holder: message,
        },
        "ENOSPC" | "QUOTA" => Error::io(
            op,
            file,
            std::io::Error::new(std::io::ErrorKind::StorageFull, message),
        ),
        _ => Error::io(op, file, std::io::Error::other(message)),
    }
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

    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
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

/// An open file of a [`JsStorage`]; dropping the last handle closes its id.
#[derive(Debug)]
struct JsFile {
    host: StorageHost,
    id: u32,
    name: String,
}

impl StorageFile for JsFile {
    fn name(&self) -> &str {
        &self.name
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
                std::io::Error::other(format!("storage host reported {n} bytes read")),
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
                std::io::Error::other(format!("storage host reported size {size}")),
            ));
        }
        Ok(size as u64)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.host
            .truncate(self.id, len as f64)
            .map_err(|e| host_error("truncate", &self.name, &e))
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
