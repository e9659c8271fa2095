//! The first frame of every connection: the topic's name.

use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::frame;

/// How long a new connection has to name its topic.
const TOPIC_DEADLINE: Duration = Duration::from_secs(10);

/// Reads frames into `buf` until the first one is whole, and returns it as a topic name
/// (leaving what follows it in `buf`). Errors: the connection ends or stalls first, the frame
/// is over `max` bytes, or the name is not UTF-8.
pub async fn read_topic<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    max: usize,
) -> Result<String, String> {
    let read = async {
        loop {
            if let Some((payload, span)) = frame::parse(buf, max).map_err(|e| e.to_string())? {
                let name = buf.get(payload).map(<[u8]>::to_vec).unwrap_or_default();
                buf.advance(span);
                return String::from_utf8(name).map_err(|_| "the topic name is not UTF-8".into());
            }
            match reader.read_buf(buf).await {
                Ok(0) => return Err("closed before naming a topic".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("reading the topic: {e}")),
            }
        }
    };
    tokio::time::timeout(TOPIC_DEADLINE, read)
        .await
        .map_err(|_| "no topic named in time".to_owned())?
}
