//! Building result values: plain objects, arrays, typed arrays and exact strings.

use std::ffi::CStr;
use std::ptr;

use napi::sys;

use crate::js::view::{check, Cx};
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::string::{utf16_len_of_str, JsStr, MAX_STRING_UNITS};

pub type Raw = sys::napi_value;

/// A value already built on the JS side, handed back to napi-rs as is.
pub struct RawValue(pub Raw);

impl napi::bindgen_prelude::ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl napi::bindgen_prelude::TypeName for RawValue {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

impl Cx {
    pub fn object(&self) -> Result<Raw> {
        let mut o = ptr::null_mut();
        check(unsafe { sys::napi_create_object(self.env, &mut o) })?;
        Ok(o)
    }

    pub fn set(&self, obj: Raw, name: &CStr, value: Raw) -> Result<()> {
        check(unsafe { sys::napi_set_named_property(self.env, obj, name.as_ptr(), value) })
    }

    /// A plain object with these fields, in this order.
    pub fn record(&self, fields: &[(&CStr, Raw)]) -> Result<Raw> {
        let o = self.object()?;
        for &(name, value) in fields {
            self.set(o, name, value)?;
        }
        Ok(o)
    }

    pub fn number(&self, n: f64) -> Result<Raw> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_create_double(self.env, n, &mut v) })?;
        Ok(v)
    }

    pub fn boolean(&self, b: bool) -> Result<Raw> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_get_boolean(self.env, b, &mut v) })?;
        Ok(v)
    }

    pub fn null(&self) -> Result<Raw> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_get_null(self.env, &mut v) })?;
        Ok(v)
    }

    /// A string of these UTF-16 units; past V8's longest string, the
    /// `RangeError` JS throws for one (N-API's own failure names nothing).
    pub fn utf16(&self, units: &[u16]) -> Result<Raw> {
        if units.len() > MAX_STRING_UNITS {
            return Err(Error::string_too_long());
        }
        let mut v = ptr::null_mut();
        check(unsafe {
            sys::napi_create_string_utf16(self.env, units.as_ptr(), units.len() as isize, &mut v)
        })?;
        Ok(v)
    }

    /// A string of Latin-1 bytes, one code unit each (past V8's longest
    /// string, its `RangeError`, as [`Cx::utf16`]).
    pub fn latin1(&self, bytes: &[u8]) -> Result<Raw> {
        if bytes.len() > MAX_STRING_UNITS {
            return Err(Error::string_too_long());
        }
        let mut v = ptr::null_mut();
        check(unsafe {
            sys::napi_create_string_latin1(
                self.env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut v,
            )
        })?;
        Ok(v)
    }

    /// A string of this UTF-8 text (past V8's longest string, its
    /// `RangeError`, as [`Cx::utf16`]: a UTF-8 text has at least as many
    /// bytes as UTF-16 units, so only a long one is counted).
    pub fn str(&self, s: &str) -> Result<Raw> {
        if s.len() > MAX_STRING_UNITS && utf16_len_of_str(s) > MAX_STRING_UNITS {
            return Err(Error::string_too_long());
        }
        let mut v = ptr::null_mut();
        check(unsafe {
            sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), s.len() as isize, &mut v)
        })?;
        Ok(v)
    }

    pub fn js_str(&self, s: &JsStr) -> Result<Raw> {
        match s.as_str() {
            Some(text) => self.str(text),
            None => self.utf16(&s.to_utf16()),
        }
    }

    pub fn array(&self, items: impl ExactSizeIterator<Item = Result<Raw>>) -> Result<Raw> {
        let mut arr = ptr::null_mut();
        check(unsafe { sys::napi_create_array_with_length(self.env, items.len(), &mut arr) })?;
        for (i, item) in items.enumerate() {
            check(unsafe { sys::napi_set_element(self.env, arr, i as u32, item?) })?;
        }
        Ok(arr)
    }

    pub fn strings<'a>(&self, items: impl ExactSizeIterator<Item = &'a JsStr>) -> Result<Raw> {
        self.array(items.map(|s| self.js_str(s)))
    }

    /// Typed arrays holding copies of `parts`, in order, all views of one
    /// new ArrayBuffer (one allocation instead of one each), each at an
    /// offset its element size divides.
    pub fn typed_arrays<const N: usize>(&self, parts: [Typed<'_>; N]) -> Result<[Raw; N]> {
        let mut offsets = [0usize; N];
        let mut bytes = 0usize;
        for (offset, part) in offsets.iter_mut().zip(&parts) {
            let size = part.element_size();
            *offset = bytes.div_ceil(size) * size;
            bytes = *offset + part.bytes().len();
        }
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        check(unsafe { sys::napi_create_arraybuffer(self.env, bytes, &mut data, &mut buffer) })?;
        let mut out = [ptr::null_mut(); N];
        for ((arr, part), &offset) in out.iter_mut().zip(&parts).zip(&offsets) {
            let src = part.bytes();
            if !src.is_empty() && !data.is_null() {
                // The buffer holds `bytes` bytes, and this part ends within them.
                unsafe {
                    ptr::copy_nonoverlapping(src.as_ptr(), data.cast::<u8>().add(offset), src.len())
                };
            }
            let len = src.len() / part.element_size();
            check(unsafe {
                sys::napi_create_typedarray(self.env, part.kind(), len, buffer, offset, arr)
            })?;
        }
        Ok(out)
    }

    pub fn f64_array(&self, items: &[f64]) -> Result<Raw> {
        let [arr] = self.typed_arrays([Typed::F64(items)])?;
        Ok(arr)
    }

    pub fn i32_array(&self, items: &[i32]) -> Result<Raw> {
        let [arr] = self.typed_arrays([Typed::I32(items)])?;
        Ok(arr)
    }

    pub fn u32_array(&self, items: &[u32]) -> Result<Raw> {
        let [arr] = self.typed_arrays([Typed::U32(items)])?;
        Ok(arr)
    }

    pub fn u8_array(&self, items: &[u8]) -> Result<Raw> {
        let [arr] = self.typed_arrays([Typed::U8(items)])?;
        Ok(arr)
    }
}

/// One typed array's items, for [`Cx::typed_arrays`].
pub enum Typed<'a> {
    F64(&'a [f64]),
    I32(&'a [i32]),
    U32(&'a [u32]),
    U8(&'a [u8]),
}

impl Typed<'_> {
    fn element_size(&self) -> usize {
        match self {
            Typed::F64(_) => 8,
            Typed::I32(_) | Typed::U32(_) => 4,
            Typed::U8(_) => 1,
        }
    }

    fn kind(&self) -> sys::napi_typedarray_type {
        match self {
            Typed::F64(_) => sys::TypedarrayType::float64_array,
            Typed::I32(_) => sys::TypedarrayType::int32_array,
            Typed::U32(_) => sys::TypedarrayType::uint32_array,
            Typed::U8(_) => sys::TypedarrayType::uint8_array,
        }
    }

    /// The items' bytes, in the machine's order (a typed array's).
    fn bytes(&self) -> &[u8] {
        /// A slice's memory, read as the bytes it is (plain numbers, no padding).
        fn of<T: Copy>(items: &[T]) -> &[u8] {
            unsafe {
                std::slice::from_raw_parts(
                    items.as_ptr().cast::<u8>(),
                    std::mem::size_of_val(items),
                )
            }
        }
        match self {
            Typed::F64(items) => of(items),
            Typed::I32(items) => of(items),
            Typed::U32(items) => of(items),
            Typed::U8(items) => items,
        }
    }
}

/// An argument taken as is; the core reads it through [`crate::js::view::JsVal`].
pub struct Arg(pub Raw);

impl napi::bindgen_prelude::FromNapiValue for Arg {
    unsafe fn from_napi_value(_env: sys::napi_env, val: sys::napi_value) -> napi::Result<Self> {
        Ok(Arg(val))
    }
}

impl napi::bindgen_prelude::TypeName for Arg {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for Arg {}
