//! The names the engine and the layers built on it give their objects (change cursors, queues,
//! topics, consumer groups): 1 to [`MAX_NAME_LEN`] bytes, no NUL.

use crate::{Error, Result};

/// Longest name of a queue, a topic, a consumer group or a change cursor, in bytes.
pub const MAX_NAME_LEN: usize = 200;

/// `InvalidArgument` unless `name` is a valid name of a `what` (`"queue"`, `"topic"`,
/// `"change cursor"`: 1 to 200 bytes; a consumer group, `empty_ok`: 0 to 200 bytes), with no
/// NUL.
pub(crate) fn validate_name(what: &str, name: &str, empty_ok: bool) -> Result<()> {
    if (name.is_empty() && !empty_ok) || name.len() > MAX_NAME_LEN || name.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "a {what} name must be {} to {MAX_NAME_LEN} bytes with no NUL character",
            u8::from(!empty_ok)
        )));
    }
    Ok(())
}
