//! minikafka's framing, as pure functions: a frame is a 4-byte big-endian payload length, then
//! the payload. Publishers send frames, subscribers receive them; the first frame of every
//! connection names the topic. Nothing here panics on any input.

use std::ops::Range;

/// Bytes of the length prefix.
pub const HEADER: usize = 4;

/// Largest payload the server accepts by default (16 MiB): a longer announced length is
/// treated as a broken or hostile stream, never allocated.
pub const DEFAULT_MAX_PAYLOAD: usize = 16 << 20;

/// Why a stream cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A frame announces a payload longer than the limit.
    TooLarge { len: u64, max: usize },
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge { len, max } => {
                write!(f, "a frame announces {len} bytes, over the limit of {max}")
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// The payload range of the frame at the start of `buf` and the bytes it spans, or `None` if
/// `buf` does not hold a whole frame yet. Fails if the frame announces more than `max` bytes.
pub fn parse(buf: &[u8], max: usize) -> Result<Option<(Range<usize>, usize)>, FrameError> {
    let Some(&[a, b, c, d]) = buf.get(..HEADER) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([a, b, c, d]);
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= max)
        .ok_or(FrameError::TooLarge {
            len: u64::from(len),
            max,
        })?;
    let end = HEADER + len;
    if buf.len() < end {
        return Ok(None);
    }
    Ok(Some((HEADER..end, end)))
}

/// The payloads of the whole frames at the start of `buf`, at most `max_frames` of them and
/// stopping once `max_bytes` of payload are gathered, and the bytes they span.
pub fn parse_burst(
    buf: &[u8],
    max: usize,
    max_frames: usize,
    max_bytes: usize,
) -> Result<(Vec<Range<usize>>, usize), FrameError> {
    let mut frames = Vec::new();
    let (mut at, mut bytes) = (0, 0);
    while frames.len() < max_frames && bytes < max_bytes {
        let Some(rest) = buf.get(at..) else { break };
        let Some((payload, span)) = parse(rest, max)? else {
            break;
        };
        bytes += payload.len();
        frames.push(payload.start + at..payload.end + at);
        at += span;
    }
    Ok((frames, at))
}

/// Appends `payload` to `out` as one frame. Fails if it is longer than a length prefix can say.
pub fn encode_into(out: &mut Vec<u8>, payload: &[u8]) -> Result<(), FrameError> {
    let len = u32::try_from(payload.len()).map_err(|_| FrameError::TooLarge {
        len: payload.len() as u64,
        max: u32::MAX as usize,
    })?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            encode_into(&mut out, p).unwrap();
        }
        out
    }

    #[test]
    fn a_frame_is_a_big_endian_length_then_the_payload() {
        assert_eq!(framed(&[b"topic"]), b"\0\0\0\x05topic");
        assert_eq!(framed(&[b""]), b"\0\0\0\0");
    }

    #[test]
    fn an_encoded_frame_parses_back() {
        let buf = framed(&[b"hello"]);
        let (payload, span) = parse(&buf, 100).unwrap().unwrap();
        assert_eq!(&buf[payload], b"hello");
        assert_eq!(span, buf.len());
    }

    #[test]
    fn a_partial_header_or_payload_is_not_a_frame_yet() {
        let buf = framed(&[b"hello"]);
        for cut in 0..buf.len() {
            assert_eq!(parse(&buf[..cut], 100), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn an_oversize_length_fails_before_its_payload_arrives() {
        assert_eq!(
            parse(&[0xff, 0xff, 0xff, 0xff], 1024),
            Err(FrameError::TooLarge {
                len: u64::from(u32::MAX),
                max: 1024
            })
        );
        assert!(parse(&[0, 0, 4, 1], 1024).is_err());
        assert!(parse(&[0, 0, 4, 0], 1024).unwrap().is_none());
    }

    #[test]
    fn an_empty_payload_is_a_frame() {
        let (payload, span) = parse(b"\0\0\0\0rest", 10).unwrap().unwrap();
        assert!(payload.is_empty());
        assert_eq!(span, 4);
    }

    #[test]
    fn a_burst_takes_the_whole_frames_and_leaves_the_partial_one() {
        let mut buf = framed(&[b"a", b"bb", b"ccc"]);
        let whole = buf.len();
        buf.extend_from_slice(b"\0\0\0\x09par");
        let (frames, used) = parse_burst(&buf, 100, 100, 1 << 20).unwrap();
        let got: Vec<&[u8]> = frames.iter().map(|r| &buf[r.clone()]).collect();
        assert_eq!(got, [&b"a"[..], b"bb", b"ccc"]);
        assert_eq!(used, whole);
    }

    #[test]
    fn a_burst_stops_at_its_frame_and_byte_limits() {
        let buf = framed(&[b"aaaa", b"bbbb", b"cccc"]);
        let (frames, used) = parse_burst(&buf, 100, 2, 1 << 20).unwrap();
        assert_eq!((frames.len(), used), (2, 16));
        let (frames, used) = parse_burst(&buf, 100, 100, 5).unwrap();
        assert_eq!((frames.len(), used), (2, 16));
    }

    #[test]
    fn a_burst_fails_at_an_oversize_frame() {
        let mut buf = framed(&[b"ok"]);
        buf.extend_from_slice(&[0x7f, 0, 0, 0]);
        assert!(parse_burst(&buf, 100, 100, 1 << 20).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut x: u32 = 12345;
        for len in 0..200 {
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    (x % 7) as u8
                })
                .collect();
            let _ = parse_burst(&buf, 64, 1000, 1 << 20);
        }
    }
}
