//! The encodings recorded in a database for each keyspace (its metadata: a JSON object with
//! `keyEncoding` and `valueEncoding`, written by the JavaScript package; FORMAT.md, "Keyspace
//! metadata"), used when `--key-encoding` or `--value-encoding` is not given.

use serde_json::Value;
use shaledb::Db;

use crate::cli::Encodings;
use crate::encoding::Encoding;

/// The recorded (key, value) encodings of keyspace `name`, as the JSON object stored (`None`
/// if there is no record or it is not a JSON object: another program's metadata).
pub fn recorded(db: &Db, name: &str) -> Option<serde_json::Map<String, Value>> {
    parse(&db.keyspace_metadata(name).ok().flatten()?)
}

/// Keyspace metadata `bytes` as a JSON object, `None` if it is not one.
pub fn parse(bytes: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice(bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The tool's encoding of a recorded encoding name (`"utf8"`, `"json"`; others are unknown).
fn tool_encoding(name: Option<&Value>) -> Option<Encoding> {
    match name?.as_str()? {
        "utf8" => Some(Encoding::Utf8),
        "json" => Some(Encoding::Json),
        _ => None,
    }
}

impl Encodings {
    /// The key encoding: the one given, else `auto`.
    pub fn key(&self) -> Encoding {
        self.key_encoding.unwrap_or_default()
    }

    /// The value encoding: the one given, else `auto`.
    pub fn value(&self) -> Encoding {
        self.value_encoding.unwrap_or_default()
    }

    /// These encodings, each one not given taken from those recorded for keyspace `name`.
    pub fn with_recorded(self, db: &Db, name: &str) -> Encodings {
        if self.key_encoding.is_some() && self.value_encoding.is_some() {
            return self;
        }
        let map = recorded(db, name).unwrap_or_default();
        Encodings {
            key_encoding: self.key_encoding.or(tool_encoding(map.get("keyEncoding"))),
            value_encoding: self
                .value_encoding
                .or(tool_encoding(map.get("valueEncoding"))),
        }
    }
}
