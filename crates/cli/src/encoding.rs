//! How keys and values are shown and read back (`--key-encoding`, `--value-encoding`).
//!
//! - `auto` (the default): bytes that are valid UTF-8 are a JSON string; any other bytes are
//!   the marker object `{"base64": "..."}`. Round-trips every byte string through `dump` and
//!   `load`.
//! - `utf8`: always a string; invalid UTF-8 is replaced by U+FFFD (for reading only: it does
//!   not round-trip).
//! - `hex`, `base64`: always a string holding the bytes in that encoding.
//! - `json`: the bytes parsed as JSON and embedded as that value (keys stay strings: the
//!   JSON text); bytes that are not JSON fall back to `auto`.
//!
//! Reading (`load` lines, command-line arguments) is the reverse: with `auto` and `utf8` a
//! string is its UTF-8 bytes and a `{"base64": ..}` or `{"hex": ..}` object is decoded; any
//! other JSON value is stored as its JSON text. With `hex`/`base64` a string is decoded; with
//! `json` any value is stored as its JSON text.

use base64::Engine;
use clap::ValueEnum;
use serde_json::Value;

/// One of the encodings of the module doc.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Encoding {
    /// UTF-8 text as a string, other bytes as `{"base64": ...}` (round-trips).
    #[default]
    Auto,
    /// Always a string, invalid UTF-8 replaced by U+FFFD.
    Utf8,
    /// Lower-case hexadecimal.
    Hex,
    /// Standard base64 with padding.
    Base64,
    /// The bytes parsed as JSON (falls back to `auto` when they are not JSON).
    Json,
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// `bytes` as a JSON value in `encoding`.
pub fn to_json(bytes: &[u8], encoding: Encoding) -> Value {
    match encoding {
        Encoding::Auto => match std::str::from_utf8(bytes) {
            Ok(s) => Value::String(s.to_owned()),
            Err(_) => marker(bytes),
        },
        Encoding::Utf8 => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        Encoding::Hex => Value::String(hex::encode(bytes)),
        Encoding::Base64 => Value::String(B64.encode(bytes)),
        Encoding::Json => {
            serde_json::from_slice(bytes).unwrap_or_else(|_| to_json(bytes, Encoding::Auto))
        }
    }
}

/// `bytes` as text for a terminal: the string itself for string encodings, else JSON.
pub fn to_text(bytes: &[u8], encoding: Encoding) -> String {
    match to_json(bytes, encoding) {
        Value::String(s) if encoding != Encoding::Json => s,
        other => other.to_string(),
    }
}

/// The `{"base64": ...}` marker of bytes that are not UTF-8.
fn marker(bytes: &[u8]) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("base64".to_owned(), Value::String(B64.encode(bytes)));
    Value::Object(map)
}

/// The bytes a command-line argument stands for in `encoding`.
pub fn from_arg(arg: &str, encoding: Encoding) -> Result<Vec<u8>, String> {
    match encoding {
        Encoding::Auto | Encoding::Utf8 => Ok(arg.as_bytes().to_vec()),
        Encoding::Hex => hex::decode(arg).map_err(|e| format!("not hexadecimal: {e}")),
        Encoding::Base64 => B64.decode(arg).map_err(|e| format!("not base64: {e}")),
        Encoding::Json => {
            let v: Value =
                serde_json::from_str(arg).map_err(|e| format!("not a JSON value: {e}"))?;
            Ok(v.to_string().into_bytes())
        }
    }
}

/// The bytes a JSON value (of a `load` line) stands for in `encoding`.
pub fn from_json(value: &Value, encoding: Encoding) -> Result<Vec<u8>, String> {
    match (encoding, value) {
        (Encoding::Json, v) => Ok(v.to_string().into_bytes()),
        (Encoding::Hex | Encoding::Base64, Value::String(s)) => from_arg(s, encoding),
        (Encoding::Hex | Encoding::Base64, _) => Err(format!(
            "expected a {} string, found {value}",
            if encoding == Encoding::Hex {
                "hex"
            } else {
                "base64"
            }
        )),
        (_, Value::String(s)) => Ok(s.as_bytes().to_vec()),
        (_, Value::Object(map)) if map.len() == 1 => {
            if let Some(Value::String(s)) = map.get("base64") {
                return B64.decode(s).map_err(|e| format!("bad base64 marker: {e}"));
            }
            if let Some(Value::String(s)) = map.get("hex") {
                return hex::decode(s).map_err(|e| format!("bad hex marker: {e}"));
            }
            Ok(value.to_string().into_bytes())
        }
        (_, v) => Ok(v.to_string().into_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_round_trips_text_and_binary() {
        for bytes in [&b"hello"[..], &[0xff, 0x00, 0x80][..], &b""[..]] {
            let v = to_json(bytes, Encoding::Auto);
            assert_eq!(from_json(&v, Encoding::Auto).as_deref(), Ok(bytes));
        }
        assert_eq!(
            to_json(&[0xff], Encoding::Auto).to_string(),
            r#"{"base64":"/w=="}"#
        );
    }

    #[test]
    fn hex_base64_and_json_round_trip() {
        for enc in [Encoding::Hex, Encoding::Base64] {
            let v = to_json(&[1, 2, 254], enc);
            assert_eq!(from_json(&v, enc).as_deref(), Ok(&[1u8, 2, 254][..]));
        }
        let v = to_json(br#"{"a":[1,2]}"#, Encoding::Json);
        assert_eq!(v["a"][1], 2);
        assert_eq!(
            from_json(&v, Encoding::Json).as_deref(),
            Ok(&br#"{"a":[1,2]}"#[..])
        );
    }

    #[test]
    fn bad_hex_argument_is_an_error() {
        assert!(from_arg("zz", Encoding::Hex).is_err());
        assert!(from_arg("{", Encoding::Json).is_err());
    }
}
