//! One-byte strings whose characters stay in a Rust buffer:
//! `node_api_create_external_string_latin1` (Node 20.4 and 18.18 on). A
//! transcript built here is handed to V8 without the copy (and the fresh
//! allocation) that making an ordinary string of it would cost. The function
//! is looked up in the host process once; where it is missing, callers make
//! ordinary strings.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use napi::sys;

use super::out::Raw;

type CreateExternalLatin1 = unsafe extern "C" fn(
    env: sys::napi_env,
    chars: *const c_char,
    length: isize,
    finalize: Option<unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void)>,
    hint: *mut c_void,
    result: *mut sys::napi_value,
    copied: *mut bool,
) -> sys::napi_status;

/// The host's `node_api_create_external_string_latin1`, if it has one.
fn create_external_latin1() -> Option<CreateExternalLatin1> {
    static FOUND: OnceLock<Option<CreateExternalLatin1>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        const NAME: &[u8] = b"node_api_create_external_string_latin1\0";
        // The host process (node itself) exports Node-API; its symbols
        // live as long as the process.
        #[cfg(unix)]
        let found = {
            let host = libloading::os::unix::Library::this();
            unsafe { host.get::<CreateExternalLatin1>(NAME) }
                .ok()
                .map(|f| *f)
        };
        #[cfg(windows)]
        let found = libloading::os::windows::Library::this()
            .ok()
            .and_then(|host| {
                unsafe { host.get::<CreateExternalLatin1>(NAME) }
                    .ok()
                    .map(|f| *f)
            });
        #[cfg(not(any(unix, windows)))]
        let found = None;
        found
    })
}

/// Whether [`external_latin1`] can be used in this process.
pub fn available() -> bool {
    create_external_latin1().is_some()
}

/// Frees a buffer V8 no longer needs (it may run during garbage
/// collection: it only frees memory).
unsafe extern "C" fn free_buffer(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    if !hint.is_null() {
        drop(unsafe { Box::from_raw(hint.cast::<Vec<u8>>()) });
    }
}

/// A JS string of `bytes` (Latin-1: one character per byte), keeping the
/// buffer rather than copying it. `None` when the host cannot (no such
/// function, an empty or over-long string): make an ordinary string then.
pub fn external_latin1(env: sys::napi_env, bytes: Vec<u8>) -> Option<Raw> {
    let create = create_external_latin1()?;
    if bytes.is_empty() {
        return None;
    }
    let len = isize::try_from(bytes.len()).ok()?;
    let chars = bytes.as_ptr();
    // The box owns the buffer from here; on success the finalizer frees it
    // (at once if V8 copied the characters), on failure nothing else does.
    let hint = Box::into_raw(Box::new(bytes));
    let mut result = ptr::null_mut();
    let mut copied = false;
    let status = unsafe {
        create(
            env,
            chars.cast(),
            len,
            Some(free_buffer),
            hint.cast(),
            &mut result,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok || result.is_null() {
        if status != sys::Status::napi_ok {
            drop(unsafe { Box::from_raw(hint) });
        }
        return None;
    }
    Some(result)
}
