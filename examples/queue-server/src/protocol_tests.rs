use super::*;

const MAX: usize = 1024;

fn request(input: &[u8]) -> Request {
    match parse(input, MAX) {
        Parsed::Request(r, n) => {
            assert_eq!(n, input.len(), "consumed the whole request");
            r
        }
        other => panic!("expected a request, got {other:?}"),
    }
}

fn error(input: &[u8]) -> (ProtocolError, usize) {
    match parse(input, MAX) {
        Parsed::Error(e, n) => (e, n),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn fatal(input: &[u8]) -> ProtocolError {
    match parse(input, MAX) {
        Parsed::Fatal(e) => e,
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

fn get(queue: &str, options: GetOptions) -> Request {
    Request::Get {
        queue: queue.into(),
        options,
    }
}

#[test]
fn a_set_carries_its_data_block_and_exptime() {
    assert_eq!(
        request(b"set jobs 0 60 5\r\nhello\r\n"),
        Request::Set {
            queue: "jobs".into(),
            sync: false,
            exptime: 60,
            data: b"hello".to_vec()
        }
    );
}

#[test]
fn a_set_with_sync_asks_for_stable_storage() {
    assert_eq!(
        request(b"SET jobs/sync 7 0 0\r\n\r\n"),
        Request::Set {
            queue: "jobs".into(),
            sync: true,
            exptime: 0,
            data: vec![]
        }
    );
}

#[test]
fn a_data_block_may_hold_line_endings_and_any_byte() {
    let input = b"set q 0 0 6\r\na\r\n\0\xff\n\r\n";
    assert!(matches!(request(input), Request::Set { data, .. } if data == b"a\r\n\0\xff\n"));
}

#[test]
fn a_set_waits_for_its_whole_data_block() {
    let input = b"set q 0 0 5\r\nhello\r\n";
    for cut in 0..input.len() {
        assert_eq!(
            parse(&input[..cut], MAX),
            Parsed::Incomplete,
            "cut at {cut}"
        );
    }
}

#[test]
fn only_the_first_request_is_consumed() {
    let input = b"get a\r\nget b\r\n";
    assert_eq!(
        parse(input, MAX),
        Parsed::Request(get("a", GetOptions::default()), 7)
    );
}

#[test]
fn a_bare_newline_ends_a_line_too() {
    assert_eq!(request(b"version\n"), Request::Version);
}

#[test]
fn get_options_combine_as_kestrel_does() {
    assert_eq!(
        request(b"get q/close/open/t=500\r\n"),
        get(
            "q",
            GetOptions {
                open: true,
                close: true,
                timeout_ms: Some(500),
                ..GetOptions::default()
            }
        )
    );
    assert_eq!(
        request(b"gets q/t=10/peek/\r\n"),
        get(
            "q",
            GetOptions {
                peek: true,
                timeout_ms: Some(10),
                ..GetOptions::default()
            }
        )
    );
    assert_eq!(
        request(b"get q/abort\r\n"),
        get(
            "q",
            GetOptions {
                abort: true,
                ..GetOptions::default()
            }
        )
    );
}

#[test]
fn contradictory_get_options_are_client_errors() {
    for input in [
        &b"get q/abort/open\r\n"[..],
        b"get q/abort/close\r\n",
        b"get q/peek/open\r\n",
        b"get q/close/peek\r\n",
        b"get q/bogus\r\n",
        b"get q/t=\r\n",
        b"get q/t=-1\r\n",
        b"get q/t=99999999999999999999999\r\n",
    ] {
        let (e, n) = error(input);
        assert!(matches!(e, ProtocolError::Client(_)), "{input:?}");
        assert_eq!(n, input.len());
    }
}

#[test]
fn the_other_commands_parse() {
    assert_eq!(
        request(b"delete q\r\n"),
        Request::Delete { queue: "q".into() }
    );
    assert_eq!(
        request(b"flush q\r\n"),
        Request::Flush { queue: "q".into() }
    );
    assert_eq!(request(b"flush_all\r\n"), Request::FlushAll);
    assert_eq!(request(b"stats\r\n"), Request::Stats);
    assert_eq!(request(b"quit\r\n"), Request::Quit);
}

#[test]
fn an_unknown_or_empty_command_is_an_error_and_skipped() {
    assert_eq!(error(b"incr q 1\r\n"), (ProtocolError::UnknownCommand, 10));
    assert_eq!(error(b"\r\n"), (ProtocolError::UnknownCommand, 2));
    assert_eq!(ProtocolError::UnknownCommand.reply(), b"ERROR\r\n");
}

#[test]
fn wrong_argument_counts_are_client_errors() {
    for input in [
        &b"get\r\n"[..],
        b"get a b\r\n",
        b"delete\r\n",
        b"flush a b\r\n",
        b"stats items\r\n",
        b"version 1\r\n",
    ] {
        let (e, n) = error(input);
        assert!(matches!(e, ProtocolError::Client(_)), "{input:?}");
        assert_eq!(n, input.len());
    }
}

#[test]
fn bad_queue_names_are_client_errors_that_skip_the_data_block() {
    let long = format!("set {} 0 0 1\r\nx\r\n", "q".repeat(MAX_QUEUE_NAME + 1));
    for input in [
        long.as_bytes(),
        b"set \xff\xfe 0 0 1\r\nx\r\n",
        b"set a\tb 0 0 1\r\nx\r\n",
        b"set /sync 0 0 1\r\nx\r\n",
        b"set q/fast 0 0 1\r\nx\r\n",
        b"set q x 0 1\r\nx\r\n",
        b"set q 0 -5 1\r\nx\r\n",
        b"set q 4294967296 0 1\r\nx\r\n",
    ] {
        let (e, n) = error(input);
        assert!(matches!(e, ProtocolError::Client(_)), "{input:?}");
        assert_eq!(n, input.len(), "{input:?}");
    }
    let (_, n) = error(b"set q/fast 0 0 1\r\nx\r\nget q\r\n");
    assert_eq!(n, 21, "the next request starts after the data block");
}

#[test]
fn a_set_whose_length_cannot_be_trusted_closes_the_connection() {
    for input in [
        &b"set q 0 0 abc\r\n"[..],
        b"set q 0 0 -1\r\n",
        b"set q 0 0 99999999999999999999999999\r\n",
        b"set q 0 0\r\n",
        b"set q 0 0 1 noreply\r\n",
    ] {
        assert!(
            matches!(fatal(input), ProtocolError::Client(_)),
            "{input:?}"
        );
    }
}

#[test]
fn an_oversize_item_closes_the_connection_before_its_data_arrives() {
    let e = fatal(format!("set q 0 0 {}\r\n", MAX + 1).as_bytes());
    assert_eq!(e.reply(), b"CLIENT_ERROR object too large\r\n");
    assert!(matches!(
        parse(format!("set q 0 0 {MAX}\r\n").as_bytes(), MAX),
        Parsed::Incomplete
    ));
}

#[test]
fn a_data_block_without_its_line_ending_closes_the_connection() {
    assert_eq!(
        fatal(b"set q 0 0 2\r\nabcd\r\n"),
        ProtocolError::Client("bad data chunk".into())
    );
}

#[test]
fn an_oversize_line_closes_the_connection() {
    let mut long = vec![b'a'; MAX_LINE + 2];
    assert!(matches!(parse(&long, MAX), Parsed::Fatal(_)));
    long.extend_from_slice(b"\r\n");
    assert!(matches!(parse(&long, MAX), Parsed::Fatal(_)));
    assert_eq!(parse(&long[..MAX_LINE], MAX), Parsed::Incomplete);
}

#[test]
fn exptime_is_relative_up_to_thirty_days_then_absolute() {
    assert_eq!(ttl_secs(0, 1_000_000_000), None);
    assert_eq!(ttl_secs(60, 1_000_000_000), Some(60));
    assert_eq!(
        ttl_secs(MAX_RELATIVE_EXPTIME, 5),
        Some(MAX_RELATIVE_EXPTIME)
    );
    assert_eq!(ttl_secs(1_000_000_100, 1_000_000_000), Some(100));
    assert_eq!(ttl_secs(3_000_000, 1_000_000_000), Some(1), "already past");
}

/// Arbitrary bytes never panic the parser, and what it consumes is within the input.
#[test]
fn arbitrary_input_never_panics() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let alphabet: &[u8] = b"set get /open/close/t=1 0 12 \r\n\xff\0q";
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (x % 48) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|i| alphabet[((x >> (i % 50)) as usize + i * 7) % alphabet.len()])
            .collect();
        match parse(&bytes, 16) {
            Parsed::Request(_, n) | Parsed::Error(_, n) => assert!(n > 0 && n <= bytes.len()),
            Parsed::Incomplete | Parsed::Fatal(_) => {}
        }
    }
}
