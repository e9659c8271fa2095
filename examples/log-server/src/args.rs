//! The command line: `log-server --data DIR [--publish ADDR] [--subscribe ADDR] [--sync]`.

use std::path::PathBuf;

/// What the server was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Where publishers connect (default `127.0.0.1:5555`, minikafka's publish port).
    pub publish: String,
    /// Where subscribers connect (default `127.0.0.1:5556`, minikafka's subscribe port).
    pub subscribe: String,
    /// The database directory (created if missing).
    pub data: PathBuf,
    /// Acknowledge a publish only once it is on disk (fsync), not only handed to the OS.
    pub sync: bool,
}

/// The usage line printed with a parse error.
pub const USAGE: &str =
    "usage: log-server --data DIR [--publish ADDR (127.0.0.1:5555)] [--subscribe ADDR (127.0.0.1:5556)] [--sync]";

/// Parses the arguments after the program name; `--flag value` and `--flag=value` both work.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut publish = "127.0.0.1:5555".to_owned();
    let mut subscribe = "127.0.0.1:5556".to_owned();
    let mut data = None;
    let mut sync = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg, None),
        };
        if flag == "--sync" && inline.is_none() {
            sync = true;
            continue;
        }
        let slot = match flag.as_str() {
            "--publish" => &mut publish,
            "--subscribe" => &mut subscribe,
            "--data" => data.insert(String::new()),
            _ => return Err(format!("unknown argument {flag:?}")),
        };
        *slot = match inline.or_else(|| args.next()) {
            Some(v) if !v.is_empty() => v,
            _ => return Err(format!("{flag} needs a value")),
        };
    }
    let data = data.ok_or("--data DIR is required")?;
    Ok(Args {
        publish,
        subscribe,
        data: PathBuf::from(data),
        sync,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Args, String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn defaults_are_minikafkas_ports_on_loopback() {
        let a = parse_str("--data /tmp/x").unwrap();
        assert_eq!(a.publish, "127.0.0.1:5555");
        assert_eq!(a.subscribe, "127.0.0.1:5556");
        assert_eq!(a.data, PathBuf::from("/tmp/x"));
        assert!(!a.sync);
    }

    #[test]
    fn flags_take_separate_or_inline_values() {
        let a = parse_str("--publish 127.0.0.1:1 --subscribe=127.0.0.1:2 --data=d --sync").unwrap();
        assert_eq!(
            (a.publish.as_str(), a.subscribe.as_str(), a.sync),
            ("127.0.0.1:1", "127.0.0.1:2", true)
        );
    }

    #[test]
    fn missing_data_unknown_flags_and_missing_values_are_errors() {
        assert!(parse_str("--publish 127.0.0.1:1").is_err());
        assert!(parse_str("--data d --bogus").is_err());
        assert!(parse_str("--data").is_err());
        assert!(parse_str("--data d --publish=").is_err());
    }
}
