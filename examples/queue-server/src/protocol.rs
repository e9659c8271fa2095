//! Kestrel's memcache text protocol, the requests side: turning the bytes a client sent into one
//! [`Request`]. Pure (no I/O, no clock); never panics on any input.
//!
//! Grammar (one request per line, `\r\n` or `\n` terminated, tokens separated by spaces, the
//! command case-insensitive):
//!
//! ```text
//! set <queue>[/sync] <flags> <exptime> <bytes>\r\n<data>\r\n
//! get <queue>[/open][/close][/abort][/peek][/t=<ms>]      (also `gets`)
//! delete <queue> | flush <queue> | flush_all | stats | version | quit
//! ```
//!
//! Errors come in two kinds (see [`Parsed`]): those after which the next request can still be
//! found (a bad queue name, a bad flag: the whole request is skipped) and those after which it
//! cannot (a line longer than [`MAX_LINE`], a `set` whose length is not a number or is over the
//! item size limit, a data block not followed by `\r\n`): the connection must then be closed.

/// Longest request line accepted, in bytes, without its line ending (memcache keys are at most
/// 250 bytes; Kestrel's options add a few).
pub const MAX_LINE: usize = 2048;

/// Longest queue name accepted, in bytes (the core's limit).
pub const MAX_QUEUE_NAME: usize = 200;

/// Largest `exptime` read as a number of seconds from now; larger values are absolute Unix
/// times, as memcache defines it (30 days).
pub const MAX_RELATIVE_EXPTIME: u64 = 30 * 24 * 3600;

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `set <queue>[/sync] <flags> <exptime> <bytes>`: push `data`. `flags` are accepted and not
    /// kept (Kestrel returns 0); `exptime` is raw (see [`ttl_secs`]).
    Set {
        queue: String,
        sync: bool,
        exptime: u64,
        data: Vec<u8>,
    },
    /// `get <queue>/<options>`.
    Get { queue: String, options: GetOptions },
    /// `delete <queue>`: drop the queue and its items.
    Delete { queue: String },
    /// `flush <queue>`: drop every item of the queue.
    Flush { queue: String },
    /// `flush_all`: flush every queue.
    FlushAll,
    /// `stats`.
    Stats,
    /// `version`.
    Version,
    /// `quit`: close the connection.
    Quit,
}

/// The options of a `get`, as Kestrel combines them (`get q/close/open/t=500`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// `/open`: a reliable read; the item stays reserved for this client until closed.
    pub open: bool,
    /// `/close`: acknowledge this client's open item (before opening the next one).
    pub close: bool,
    /// `/abort`: give this client's open item back to the head of the queue.
    pub abort: bool,
    /// `/peek`: return the head item without removing it.
    pub peek: bool,
    /// `/t=<ms>`: wait up to this many milliseconds for an item.
    pub timeout_ms: Option<u64>,
}

/// A request the server refuses, and how to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// A command the protocol does not have: `ERROR`.
    UnknownCommand,
    /// A malformed request: `CLIENT_ERROR <message>`.
    Client(String),
}

impl ProtocolError {
    /// The reply line, with its `\r\n`.
    pub fn reply(&self) -> Vec<u8> {
        match self {
            ProtocolError::UnknownCommand => b"ERROR\r\n".to_vec(),
            ProtocolError::Client(m) => format!("CLIENT_ERROR {m}\r\n").into_bytes(),
        }
    }
}

/// The outcome of [`parse`] on the bytes received so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// No whole request yet: read more bytes.
    Incomplete,
    /// A request, and the number of bytes it took.
    Request(Request, usize),
    /// A refused request: answer the error, skip that many bytes, go on with the next request.
    Error(ProtocolError, usize),
    /// A refused request after which the next one cannot be found: answer, then close.
    Fatal(ProtocolError),
}

/// Parses the first request in `buf`. `max_item_size` bounds a `set`'s data block (bytes).
pub fn parse(buf: &[u8], max_item_size: usize) -> Parsed {
    let Some(nl) = memchr::memchr(b'\n', buf) else {
        return if buf.len() > MAX_LINE + 1 {
            Parsed::Fatal(client("line too long"))
        } else {
            Parsed::Incomplete
        };
    };
    let line = buf.get(..nl).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > MAX_LINE {
        return Parsed::Fatal(client("line too long"));
    }
    let after_line = nl + 1;
    let tokens: Vec<&[u8]> = line
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty())
        .collect();
    let Some((&command, args)) = tokens.split_first() else {
        return Parsed::Error(ProtocolError::UnknownCommand, after_line);
    };
    let is = |name: &str| command.eq_ignore_ascii_case(name.as_bytes());
    if is("set") {
        return parse_set(buf, args, after_line, max_item_size);
    }
    let request = if is("get") || is("gets") {
        one_arg(args, "get").and_then(|key| {
            let (queue, options) = parse_get_key(key)?;
            Ok(Request::Get { queue, options })
        })
    } else if is("delete") {
        one_arg(args, "delete").and_then(|q| {
            Ok(Request::Delete {
                queue: queue_name(q)?,
            })
        })
    } else if is("flush") {
        one_arg(args, "flush").and_then(|q| {
            Ok(Request::Flush {
                queue: queue_name(q)?,
            })
        })
    } else if is("flush_all") {
        no_arg(args, Request::FlushAll)
    } else if is("stats") {
        no_arg(args, Request::Stats)
    } else if is("version") {
        no_arg(args, Request::Version)
    } else if is("quit") {
        no_arg(args, Request::Quit)
    } else {
        Err(ProtocolError::UnknownCommand)
    };
    match request {
        Ok(r) => Parsed::Request(r, after_line),
        Err(e) => Parsed::Error(e, after_line),
    }
}

/// The ttl in seconds that a `set`'s `exptime` means at Unix time `now_unix` (seconds): `None`
/// for 0 (no expiry), the value itself up to [`MAX_RELATIVE_EXPTIME`], else the time left until
/// that absolute Unix time (at least 1 second: an item set already expired lives one second).
pub fn ttl_secs(exptime: u64, now_unix: u64) -> Option<u64> {
    match exptime {
        0 => None,
        e if e <= MAX_RELATIVE_EXPTIME => Some(e),
        e => Some(e.saturating_sub(now_unix).max(1)),
    }
}

/// Splits a `get` key into the queue name and its options.
pub fn parse_get_key(key: &[u8]) -> Result<(String, GetOptions), ProtocolError> {
    let mut parts = key.split(|&b| b == b'/');
    let queue = queue_name(parts.next().unwrap_or_default())?;
    let mut o = GetOptions::default();
    for part in parts {
        match part {
            b"" => {}
            b"open" => o.open = true,
            b"close" => o.close = true,
            b"abort" => o.abort = true,
            b"peek" => o.peek = true,
            _ => match part.strip_prefix(b"t=").and_then(number) {
                Some(ms) => o.timeout_ms = Some(ms),
                None => return Err(client("unknown get option")),
            },
        }
    }
    if o.abort && (o.open || o.close || o.peek) {
        return Err(client("abort must be by itself"));
    }
    if o.peek && (o.open || o.close) {
        return Err(client("cannot open and peek"));
    }
    Ok((queue, o))
}

fn parse_set(buf: &[u8], args: &[&[u8]], after_line: usize, max_item_size: usize) -> Parsed {
    let [key, flags, exptime, len] = args else {
        return Parsed::Fatal(client("bad command line format"));
    };
    let Some(len) = number(len).and_then(|n| usize::try_from(n).ok()) else {
        return Parsed::Fatal(client("bad data chunk length"));
    };
    if len > max_item_size {
        return Parsed::Fatal(client("object too large"));
    }
    let end = after_line.saturating_add(len);
    let Some(terminator) = buf.get(end..end.saturating_add(2)) else {
        return Parsed::Incomplete;
    };
    if terminator != b"\r\n" {
        return Parsed::Fatal(client("bad data chunk"));
    }
    let consumed = end + 2;
    let data = buf.get(after_line..end).unwrap_or_default().to_vec();
    let request = (|| {
        let (queue, sync) = parse_set_key(key)?;
        if number(flags).is_none_or(|f| f > u64::from(u32::MAX)) {
            return Err(client("bad flags"));
        }
        let exptime = number(exptime).ok_or_else(|| client("bad exptime"))?;
        Ok(Request::Set {
            queue,
            sync,
            exptime,
            data,
        })
    })();
    match request {
        Ok(r) => Parsed::Request(r, consumed),
        Err(e) => Parsed::Error(e, consumed),
    }
}

fn parse_set_key(key: &[u8]) -> Result<(String, bool), ProtocolError> {
    let mut parts = key.split(|&b| b == b'/');
    let queue = queue_name(parts.next().unwrap_or_default())?;
    let mut sync = false;
    for part in parts {
        match part {
            b"" => {}
            b"sync" => sync = true,
            _ => return Err(client("unknown set option")),
        }
    }
    Ok((queue, sync))
}

/// A queue name: 1 to [`MAX_QUEUE_NAME`] bytes of UTF-8 without control characters.
fn queue_name(raw: &[u8]) -> Result<String, ProtocolError> {
    if raw.is_empty() || raw.len() > MAX_QUEUE_NAME {
        return Err(client("bad queue name length"));
    }
    let name = std::str::from_utf8(raw).map_err(|_| client("queue name is not UTF-8"))?;
    if name.chars().any(char::is_control) {
        return Err(client("control character in queue name"));
    }
    Ok(name.to_owned())
}

/// A decimal number of ASCII digits only (no sign, no spaces), if it fits in a u64.
fn number(raw: &[u8]) -> Option<u64> {
    if raw.is_empty() || !raw.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(raw).ok()?.parse().ok()
}

fn one_arg<'a>(args: &[&'a [u8]], command: &str) -> Result<&'a [u8], ProtocolError> {
    match args {
        [one] => Ok(one),
        _ => Err(client(&format!("{command} takes one queue name"))),
    }
}

fn no_arg(args: &[&[u8]], request: Request) -> Result<Request, ProtocolError> {
    if args.is_empty() {
        Ok(request)
    } else {
        Err(client("unexpected arguments"))
    }
}

fn client(message: &str) -> ProtocolError {
    ProtocolError::Client(message.to_owned())
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
