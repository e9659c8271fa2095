//! Errors crossing into JavaScript: a JS `Error` with the core error's message and its stable
//! `code` (`shaledb::Error::code`), which the TypeScript layer turns into a `ShaleError`.

use wasm_bindgen::JsValue;

/// The result type of exports.
#[cfg(target_arch = "wasm32")]
pub type JsResult<T> = Result<T, JsValue>;

/// A JavaScript `Error` carrying `error`'s message and code.
pub fn to_js_error(error: &shaledb::Error) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    js.set_name("ShaleError");
    // Setting a property on a fresh, extensible Error object cannot fail.
    let _ = js_sys::Reflect::set(&js, &JsValue::from_str("code"), &error.code().into());
    if let shaledb::Error::OffsetOutOfRange { first, next, .. } = error {
        // Where the log is now, for the TypeScript layer's `ShaleError.details`.
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str("first"), &(*first as f64).into());
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str("next"), &(*next as f64).into());
    }
    let detail = |name: &str, value: u64| {
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str(name), &(value as f64).into());
    };
    match error {
        shaledb::Error::ChangesTruncated { since, oldest } => {
            detail("since", *since);
            detail("oldest", *oldest);
        }
        shaledb::Error::ChangeGap { expected, got } => {
            detail("expected", *expected);
            detail("got", *got);
        }
        _ => {}
    }
    js.into()
}

/// An `INVALID_ARGUMENT` error.
pub fn invalid(message: String) -> JsValue {
    to_js_error(&shaledb::Error::InvalidArgument(message))
}

/// Converts a core result for JavaScript.
#[cfg(target_arch = "wasm32")]
pub fn js_result<T>(result: shaledb::Result<T>) -> JsResult<T> {
    result.map_err(|e| to_js_error(&e))
}

/// `value` as JavaScript writes it (`String(value)`). For numbers in error messages: Rust's own
/// float formatting would add about 15 KB to the module.
#[cfg(target_arch = "wasm32")]
pub fn js_number(value: f64) -> String {
    js_sys::Number::from(value)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}
