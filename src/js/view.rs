//! [`View`] over live JavaScript values through raw N-API calls: the caller's
//! objects are read in place, only where an algorithm needs them. String
//! lengths come from `napi_get_value_string_utf16` with no buffer (no copy,
//! and lone surrogates count as JS counts them).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ptr;

use napi::sys;

use prime_compaction_core::capacity::reserve_for;
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{ArgumentEntries, Key, Kind, View};

/// Per-call state: the env, the property keys and `JSON.stringify`, all
/// created in the call's outermost handle scope (a handle made inside a
/// nested scope would dangle once that scope closes).
pub struct Cx {
    pub env: sys::napi_env,
    /// The property keys, each made when first used (a small call reads a
    /// few of them, and making them all was most of its time), and every
    /// one not yet made just before the first nested handle scope opens
    /// ([`View::scoped`]), so all are handles of the outermost scope. Null
    /// until made.
    keys: [Cell<sys::napi_value>; Key::ALL.len()],
    /// Nested handle scopes open.
    depth: Cell<u32>,
    /// How many outermost [`View::scoped`] calls ran in the call's own
    /// scope (up to [`UNSCOPED`]).
    unscoped: Cell<u32>,
    /// `JSON`, `JSON.stringify` and `Array.isArray`, read when first used
    /// (most calls use none of them), or with the keys before the first
    /// nested handle scope opens. `None` until read.
    globals: Cell<Option<Globals>>,
    undefined: sys::napi_value,
    /// lib/api.js's `argumentEntries(args)`, when the call passed it:
    /// `[k0, JSON.stringify(v0), k1, ...]` for `Object.entries(args)` in one
    /// call into JS instead of one `JSON.stringify` call per argument.
    argument_entries: Cell<sys::napi_value>,
    /// `String.prototype.codePointAt`, when the call asked for it
    /// ([`Cx::use_string_methods`]).
    string_code_point_at: Cell<sys::napi_value>,
    /// A property read met null or undefined in this call. Such a read
    /// costs V8 a TypeError with its stack trace (microseconds), so from
    /// then on a value of unknown type is asked its type first.
    nullish_read: Cell<bool>,
    /// What [`Cx::keep`] keeps until the call ends: a `Vec<Box<[T]>>` for
    /// each element type `T` kept.
    kept: RefCell<Vec<Box<dyn Any>>>,
}

/// How many of a call's outermost scopes run without a scope of their own:
/// enough for the few entries a small call reads, few enough that the
/// handles they leave in the call's scope stay few.
const UNSCOPED: u32 = 16;

/// Globals a call may use, as handles of its outermost scope ([`Cx::globals`]).
#[derive(Clone, Copy)]
struct Globals {
    json: sys::napi_value,
    json_stringify: sys::napi_value,
    array_is_array: sys::napi_value,
}

/// A property key as a JS string (null if V8 cannot make one, which the
/// property access then reports). Keys are ASCII, so Latin-1: V8 copies the
/// bytes, where UTF-8 would go through its decoder.
fn make_key(env: sys::napi_env, key: Key) -> sys::napi_value {
    let name = key.as_str();
    let mut out = ptr::null_mut();
    let status = unsafe {
        if property_keys(env) {
            sys::node_api_create_property_key_latin1(
                env,
                name.as_ptr().cast(),
                name.len() as isize,
                &mut out,
            )
        } else {
            sys::napi_create_string_latin1(env, name.as_ptr().cast(), name.len() as isize, &mut out)
        }
    };
    if status == sys::Status::napi_ok {
        out
    } else {
        ptr::null_mut()
    }
}

/// Whether the host has `node_api_create_property_key_latin1` (Node-API 10:
/// Node 22.14 and later), which makes a key V8 has already internalized, so a
/// property read need not hash and look it up again. Asked once a process.
fn property_keys(env: sys::napi_env) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static KNOWN: AtomicU8 = AtomicU8::new(0);
    match KNOWN.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let mut version = 0u32;
            let ok = unsafe { sys::napi_get_version(env, &mut version) } == sys::Status::napi_ok;
            let has = ok && version >= 10;
            KNOWN.store(if has { 1 } else { 2 }, Ordering::Relaxed);
            has
        }
    }
}

pub fn check(status: sys::napi_status) -> Result<()> {
    match status {
        sys::Status::napi_ok => Ok(()),
        sys::Status::napi_pending_exception => Err(Error::js_exception()),
        other => Err(Error::invalid(format!(
            "N-API call failed with status {other}"
        ))),
    }
}

impl Cx {
    pub fn new(env: sys::napi_env) -> Result<Self> {
        let mut undefined = ptr::null_mut();
        check(unsafe { sys::napi_get_undefined(env, &mut undefined) })?;
        Ok(Cx {
            env,
            keys: std::array::from_fn(|_| Cell::new(ptr::null_mut())),
            depth: Cell::new(0),
            unscoped: Cell::new(0),
            globals: Cell::new(None),
            undefined,
            argument_entries: Cell::new(ptr::null_mut()),
            string_code_point_at: Cell::new(ptr::null_mut()),
            nullish_read: Cell::new(false),
            kept: RefCell::new(Vec::new()),
        })
    }

    /// `items`, kept until the call ends, borrowed for that long (a copy of
    /// a typed array's elements, the units of an id the branch walk read).
    pub fn keep<T: 'static>(&self, items: Box<[T]>) -> &[T] {
        let kept: *const [T] = &*items;
        let mut stores = self.kept.borrow_mut();
        match stores
            .iter_mut()
            .find_map(|store| (**store).downcast_mut::<Vec<Box<[T]>>>())
        {
            Some(store) => store.push(items),
            None => stores.push(Box::new(vec![items])),
        }
        // SAFETY: the boxed items never move (the vectors move only the
        // boxes) and are freed only with `self`, which the borrow returned
        // cannot outlive; nothing removes a box before that.
        unsafe { &*kept }
    }

    /// `object[name]`, read as a named property.
    pub fn named_property(
        &self,
        object: sys::napi_value,
        name: &std::ffi::CStr,
    ) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::napi_get_named_property(self.env, object, name.as_ptr(), &mut out) })?;
        Ok(out)
    }

    fn global(&self) -> Result<sys::napi_value> {
        let mut global = ptr::null_mut();
        check(unsafe { sys::napi_get_global(self.env, &mut global) })?;
        Ok(global)
    }

    /// `JSON`, `JSON.stringify` and `Array.isArray`, read on first use.
    fn globals(&self) -> Result<Globals> {
        if let Some(globals) = self.globals.get() {
            return Ok(globals);
        }
        let global = self.global()?;
        let json = self.named_property(global, c"JSON")?;
        let array = self.named_property(global, c"Array")?;
        let globals = Globals {
            json,
            json_stringify: self.named_property(json, c"stringify")?,
            array_is_array: self.named_property(array, c"isArray")?,
        };
        // Kept only as handles of the outermost scope: read in a nested
        // one (where reading them first failed), they are read again.
        if self.depth.get() == 0 {
            self.globals.set(Some(globals));
        }
        Ok(globals)
    }

    /// `JSON.stringify(value)`.
    fn stringify(&self, value: sys::napi_value) -> Result<sys::napi_value> {
        let Globals {
            json,
            json_stringify,
            ..
        } = self.globals()?;
        self.call(json, json_stringify, value)
    }

    /// `join.call(list, "\n")`.
    pub fn join_lines(&self, list: sys::napi_value, join: sys::napi_value) -> Result<JsStr> {
        let out = self.call(list, join, self.str("\n")?)?;
        self.read_string(out)
    }

    /// JS `Array.isArray(value)` (true for a Proxy around an array).
    fn is_array_js(&self, value: sys::napi_value) -> bool {
        let Ok(Globals { array_is_array, .. }) = self.globals() else {
            return false;
        };
        let Ok(out) = self.call(self.undefined, array_is_array, value) else {
            return false;
        };
        let mut b = false;
        let status = unsafe { sys::napi_get_value_bool(self.env, out, &mut b) };
        status == sys::Status::napi_ok && b
    }

    /// `f.call(this, arg)`.
    pub(crate) fn call(
        &self,
        this: sys::napi_value,
        f: sys::napi_value,
        arg: sys::napi_value,
    ) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        let argv = [arg];
        check(unsafe { sys::napi_call_function(self.env, this, f, 1, argv.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// Installs lib/api.js's argument-entries helper for this call, when one
    /// was passed (ignored unless it is a function).
    pub fn use_argument_entries(&self, helper: &Option<crate::js::out::Arg>) -> Result<()> {
        if let Some(helper) = helper {
            if self.type_of(helper.0)? == sys::ValueType::napi_function {
                self.argument_entries.set(helper.0);
            }
        }
        Ok(())
    }

    /// Looks up `String.prototype.codePointAt` for this call, so long texts
    /// can be probed in place instead of copied out.
    /// Call it in the outermost scope, before any value is read.
    pub fn use_string_methods(&self) -> Result<()> {
        let string = self.named_property(self.global()?, c"String")?;
        let proto = self.named_property(string, c"prototype")?;
        let code_point_at = self.named_property(proto, c"codePointAt")?;
        self.string_code_point_at.set(code_point_at);
        Ok(())
    }

    /// `s.codePointAt(index)`, when [`Cx::use_string_methods`] was called.
    pub fn code_point_at(&self, s: sys::napi_value, index: usize) -> Option<f64> {
        let f = self.string_code_point_at.get();
        if f.is_null() {
            return None;
        }
        let out = self
            .call_with(s, f, &[self.number(index as f64).ok()?])
            .ok()?;
        let mut n = 0.0;
        let status = unsafe { sys::napi_get_value_double(self.env, out, &mut n) };
        (status == sys::Status::napi_ok).then_some(n)
    }

    pub(crate) fn call_with(
        &self,
        this: sys::napi_value,
        f: sys::napi_value,
        args: &[sys::napi_value],
    ) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::napi_call_function(self.env, this, f, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }

    fn key(&self, key: Key) -> sys::napi_value {
        let slot = &self.keys[key as usize];
        if slot.get().is_null() {
            // Only in the outermost scope: every key is made before a
            // nested one opens.
            slot.set(make_key(self.env, key));
        }
        slot.get()
    }

    /// Makes every key not made yet (before a nested handle scope opens).
    fn make_all_keys(&self) {
        for key in Key::ALL {
            self.key(key);
        }
    }

    pub fn wrap(&self, raw: sys::napi_value) -> Result<JsVal<'_>> {
        Ok(JsVal {
            cx: self,
            raw,
            kind: Cell::new(None),
            type_of: Cell::new(None),
        })
    }

    fn type_of(&self, raw: sys::napi_value) -> Result<sys::napi_valuetype> {
        let mut ty = 0;
        check(unsafe { sys::napi_typeof(self.env, raw, &mut ty) })?;
        Ok(ty)
    }

    fn kind_from(&self, ty: sys::napi_valuetype, raw: sys::napi_value) -> Result<Kind> {
        Ok(match ty {
            sys::ValueType::napi_undefined => Kind::Undefined,
            sys::ValueType::napi_null => Kind::Null,
            sys::ValueType::napi_boolean => Kind::Bool,
            sys::ValueType::napi_number => Kind::Number,
            sys::ValueType::napi_string => Kind::String,
            sys::ValueType::napi_function => Kind::Function,
            sys::ValueType::napi_object => {
                let mut is_array = false;
                check(unsafe { sys::napi_is_array(self.env, raw, &mut is_array) })?;
                if is_array {
                    Kind::Array
                } else {
                    Kind::Object
                }
            }
            _ => Kind::Other,
        })
    }

    pub fn undefined(&self) -> sys::napi_value {
        self.undefined
    }

    /// Reads a JS string exactly (lone surrogates included); short strings
    /// (ids, paths, names) take a single call into a stack buffer.
    pub fn read_string(&self, raw: sys::napi_value) -> Result<JsStr> {
        let mut small = [0u16; 128];
        let written = self.copy_utf16(raw, &mut small)?;
        if written < small.len() - 1 {
            return Ok(JsStr::from_utf16(&small[..written]));
        }
        Ok(JsStr::from_utf16_vec(self.read_utf16(raw)?))
    }

    /// A JS string's UTF-16 units, exactly, in one copy.
    pub fn read_utf16(&self, raw: sys::napi_value) -> Result<Vec<u16>> {
        let mut buf = vec![0u16; self.string_len(raw)? + 1];
        let written = self.copy_utf16(raw, &mut buf)?;
        buf.truncate(written);
        Ok(buf)
    }

    /// Copies up to `buf.len() - 1` UTF-16 units of a JS string into `buf`
    /// (N-API keeps the last one for a terminator); returns how many.
    pub fn copy_utf16(&self, raw: sys::napi_value, buf: &mut [u16]) -> Result<usize> {
        let mut written = 0usize;
        check(unsafe {
            sys::napi_get_value_string_utf16(
                self.env,
                raw,
                buf.as_mut_ptr(),
                buf.len(),
                &mut written,
            )
        })?;
        Ok(written)
    }

    pub fn string_len(&self, raw: sys::napi_value) -> Result<usize> {
        let mut len = 0usize;
        check(unsafe {
            sys::napi_get_value_string_utf16(self.env, raw, ptr::null_mut(), 0, &mut len)
        })?;
        Ok(len)
    }
}

/// A JS value; its kind is asked of the engine only when needed, and once.
#[derive(Clone)]
pub struct JsVal<'c> {
    pub cx: &'c Cx,
    pub raw: sys::napi_value,
    kind: Cell<Option<Kind>>,
    /// `typeof`, cached apart from `kind` because telling arrays from
    /// objects costs a second call that most reads do not need.
    type_of: Cell<Option<sys::napi_valuetype>>,
}

impl JsVal<'_> {
    fn typeof_(&self) -> Option<sys::napi_valuetype> {
        if self.type_of.get().is_none() {
            self.type_of.set(self.cx.type_of(self.raw).ok());
        }
        self.type_of.get()
    }
}

/// An array index as N-API takes it.
fn element_index(index: usize) -> Result<u32> {
    u32::try_from(index).map_err(|_| Error::range("", "array index too large"))
}

impl<'c> View for JsVal<'c> {
    fn kind(&self) -> Kind {
        if let Some(kind) = self.kind.get() {
            return kind;
        }
        // typeof only fails with an exception pending; `Other` keeps later reads inert.
        let kind = match self.typeof_() {
            Some(ty) => self.cx.kind_from(ty, self.raw).unwrap_or(Kind::Other),
            None => Kind::Other,
        };
        self.kind.set(Some(kind));
        kind
    }

    fn is_object_like(&self) -> bool {
        // N-API reports null as `napi_null`, never as an object.
        matches!(
            self.typeof_(),
            Some(sys::ValueType::napi_object | sys::ValueType::napi_function)
        )
    }

    fn is_object_or_array(&self) -> bool {
        self.typeof_() == Some(sys::ValueType::napi_object)
    }

    fn get(&self, key: Key) -> Result<Self> {
        let undefined = || JsVal {
            cx: self.cx,
            raw: self.cx.undefined,
            kind: Cell::new(Some(Kind::Undefined)),
            type_of: Cell::new(Some(sys::ValueType::napi_undefined)),
        };
        let type_of = if self.cx.nullish_read.get() {
            self.typeof_()
        } else {
            self.type_of.get()
        };
        if matches!(type_of, Some(t) if t != sys::ValueType::napi_object && t != sys::ValueType::napi_function)
        {
            return Ok(undefined());
        }
        // With the type unknown, ask directly: N-API applies ToObject, so a
        // primitive reads like JS (`(5).type` is undefined) and only null or
        // undefined fail, with `object_expected` and an exception to clear.
        let mut out = ptr::null_mut();
        let status =
            unsafe { sys::napi_get_property(self.cx.env, self.raw, self.cx.key(key), &mut out) };
        if status == sys::Status::napi_object_expected {
            let mut thrown = ptr::null_mut();
            unsafe { sys::napi_get_and_clear_last_exception(self.cx.env, &mut thrown) };
            self.cx.nullish_read.set(true);
            return Ok(undefined());
        }
        check(status)?;
        self.cx.wrap(out)
    }

    fn has(&self, key: Key) -> Result<bool> {
        if !self.is_object_like() {
            return Ok(false);
        }
        let mut out = false;
        check(unsafe {
            sys::napi_has_property(self.cx.env, self.raw, self.cx.key(key), &mut out)
        })?;
        Ok(out)
    }

    // The typed reads below ask N-API directly: it answers `*_expected` for
    // a value of another type, which saves a typeof call on the hot path.

    fn number(&self) -> Option<f64> {
        if self.kind.get().is_some_and(|k| k != Kind::Number) {
            return None;
        }
        let mut n = 0.0;
        let status = unsafe { sys::napi_get_value_double(self.cx.env, self.raw, &mut n) };
        (status == sys::Status::napi_ok).then_some(n)
    }

    fn boolean(&self) -> Option<bool> {
        if self.kind.get().is_some_and(|k| k != Kind::Bool) {
            return None;
        }
        let mut b = false;
        let status = unsafe { sys::napi_get_value_bool(self.cx.env, self.raw, &mut b) };
        (status == sys::Status::napi_ok).then_some(b)
    }

    fn str_len(&self) -> Option<usize> {
        if self.kind.get().is_some_and(|k| k != Kind::String) {
            return None;
        }
        self.cx.string_len(self.raw).ok()
    }

    fn str_is(&self, lit: &str) -> bool {
        self.str_one_of(&[lit]).is_some()
    }

    fn str_one_of(&self, lits: &[&str]) -> Option<usize> {
        if self.kind.get().is_some_and(|k| k != Kind::String) {
            return None;
        }
        const CAP: usize = 40;
        if lits.iter().any(|l| l.len() >= CAP || !l.is_ascii()) {
            let s = self.string()?;
            return lits.iter().position(|l| s.eq_str(l));
        }
        // One read into a buffer one unit longer than any literal: a longer
        // string shows up as a longer `written`, so it never matches.
        let mut buf = [0u16; CAP + 1];
        let written = self.cx.copy_utf16(self.raw, &mut buf).ok()?;
        let got = &buf[..written];
        lits.iter().position(|l| {
            l.len() == got.len() && got.iter().zip(l.bytes()).all(|(&a, b)| a == u16::from(b))
        })
    }

    fn string(&self) -> Option<JsStr> {
        if self.kind.get().is_some_and(|k| k != Kind::String) {
            return None;
        }
        self.cx.read_string(self.raw).ok()
    }

    fn string_prefix(&self, n: usize) -> Option<JsStr> {
        if self.kind.get().is_some_and(|k| k != Kind::String) {
            return None;
        }
        let mut buf = vec![0u16; n + 1];
        let written = self.cx.copy_utf16(self.raw, &mut buf).ok()?;
        buf.truncate(written);
        Some(JsStr::from_utf16_vec(buf))
    }

    fn array_len(&self) -> Option<usize> {
        // An object may be a Proxy around an array (below).
        if self
            .kind
            .get()
            .is_some_and(|k| k != Kind::Array && k != Kind::Object)
        {
            return None;
        }
        let mut len = 0u32;
        let status = unsafe { sys::napi_get_array_length(self.cx.env, self.raw, &mut len) };
        if status == sys::Status::napi_ok {
            return Some(len as usize);
        }
        // A Proxy around an array is an array to `Array.isArray` (and to the
        // reference, which only indexes it) but not to N-API: ask JS, then
        // read `length` through the proxy.
        if self.typeof_() != Some(sys::ValueType::napi_object) || !self.cx.is_array_js(self.raw) {
            return None;
        }
        let length = self.get(Key::Length).ok()?.number()?;
        (length >= 0.0 && length.fract() == 0.0 && length <= f64::from(u32::MAX))
            .then_some(length as usize)
    }

    fn at(&self, index: usize) -> Result<Self> {
        let index = element_index(index)?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::napi_get_element(self.cx.env, self.raw, index, &mut out) })?;
        self.cx.wrap(out)
    }

    fn is_zero_bigint(&self) -> bool {
        if self.typeof_() != Some(sys::ValueType::napi_bigint) {
            return false;
        }
        let (mut value, mut lossless) = (0i64, false);
        let status = unsafe {
            sys::napi_get_value_bigint_int64(self.cx.env, self.raw, &mut value, &mut lossless)
        };
        status == sys::Status::napi_ok && value == 0 && lossless
    }

    fn has_at(&self, index: usize) -> Result<bool> {
        if !self.is_object_like() {
            return Ok(false);
        }
        let index = element_index(index)?;
        let mut out = false;
        check(unsafe { sys::napi_has_element(self.cx.env, self.raw, index, &mut out) })?;
        Ok(out)
    }

    /// Own keys of the array and of each prototype, integers kept as
    /// numbers. Not for a Proxy around an array, whose `has` trap decides.
    fn present_indices(&self, from: usize, len: usize) -> Result<Option<Vec<usize>>> {
        if self.kind() != Kind::Array {
            return Ok(None);
        }
        self.scoped(|| {
            let env = self.cx.env;
            let mut indices = Vec::new();
            let mut object = self.raw;
            loop {
                let mut keys = ptr::null_mut();
                check(unsafe {
                    sys::napi_get_all_property_names(
                        env,
                        object,
                        sys::KeyCollectionMode::own_only,
                        sys::KeyFilter::skip_symbols,
                        sys::KeyConversion::keep_numbers,
                        &mut keys,
                    )
                })?;
                let keys = self.cx.wrap(keys)?;
                for k in 0..keys.array_len().unwrap_or(0) {
                    if let Some(n) = keys.at(k)?.number() {
                        if n.fract() == 0.0 && n >= from as f64 && n < len as f64 {
                            indices.push(n as usize);
                        }
                    }
                }
                let mut proto = ptr::null_mut();
                check(unsafe { sys::napi_get_prototype(env, object, &mut proto) })?;
                if self.cx.wrap(proto)?.kind() == Kind::Null {
                    break;
                }
                object = proto;
            }
            indices.sort_unstable();
            indices.dedup();
            Ok(Some(indices))
        })
    }

    fn json_len(&self) -> Result<Option<usize>> {
        let out = self.cx.stringify(self.raw)?;
        Ok(self.cx.wrap(out)?.str_len())
    }

    fn argument_entries(&self) -> Result<Option<ArgumentEntries>> {
        let helper = self.cx.argument_entries.get();
        if helper.is_null() {
            return Ok(None);
        }
        let out = self.cx.call(self.cx.undefined, helper, self.raw)?;
        let flat = self.cx.wrap(out)?;
        let len = flat.array_len().unwrap_or(0);
        let mut pairs = Vec::with_capacity(reserve_for(len / 2));
        for i in (0..len.saturating_sub(1)).step_by(2) {
            // (the helper's keys are strings: anything else, a hole too,
            // is a helper that is not the package's)
            let key = flat
                .at(i)?
                .string()
                .ok_or_else(|| Error::internal("argumentEntries: expected a key string"))?;
            pairs.push((key, flat.at(i + 1)?.string()));
        }
        Ok(Some(pairs))
    }

    fn strict_equals(&self, other: &Self) -> Result<bool> {
        let mut out = false;
        check(unsafe { sys::napi_strict_equals(self.cx.env, self.raw, other.raw, &mut out) })?;
        Ok(out)
    }

    fn json_stringify(&self) -> Result<Option<JsStr>> {
        let out = self.cx.stringify(self.raw)?;
        let v = self.cx.wrap(out)?;
        Ok(v.string())
    }

    fn entries(&self) -> Result<Vec<(JsStr, Self)>> {
        if !self.is_object_like() {
            // Strings have index entries in JS; nothing here reads them.
            return Ok(Vec::new());
        }
        let mut names = ptr::null_mut();
        check(unsafe {
            sys::napi_get_all_property_names(
                self.cx.env,
                self.raw,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        })?;
        let names = self.cx.wrap(names)?;
        let len = names.array_len().unwrap_or(0);
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let key = names.at(i)?;
            let mut value = ptr::null_mut();
            check(unsafe { sys::napi_get_property(self.cx.env, self.raw, key.raw, &mut value) })?;
            let name = key.string().unwrap_or_default();
            out.push((name, self.cx.wrap(value)?));
        }
        Ok(out)
    }

    fn to_js_string(&self) -> Result<JsStr> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::napi_coerce_to_string(self.cx.env, self.raw, &mut out) })?;
        self.cx.read_string(out)
    }

    fn string_value(&self) -> Result<Option<Self>> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::napi_coerce_to_string(self.cx.env, self.raw, &mut out) })?;
        Ok(Some(self.cx.wrap(out)?))
    }

    fn scoped<R>(&self, f: impl FnOnce() -> R) -> R {
        let cx = self.cx;
        if cx.depth.get() == 0 {
            // A call's first few scopes are not opened: their handles stay
            // in the call's own scope, and the keys need not all be made
            // up front (most of a small call's time).
            let unscoped = cx.unscoped.get();
            if unscoped < UNSCOPED {
                cx.unscoped.set(unscoped + 1);
                return f();
            }
            cx.make_all_keys();
            // A failure here is met again, and reported, where they are used.
            let _ = cx.globals();
        }
        cx.depth.set(cx.depth.get() + 1);
        let out = {
            let _scope = Scope::open(cx.env);
            f()
        };
        cx.depth.set(cx.depth.get() - 1);
        out
    }
}

/// A handle scope closed on drop, so it is closed even while a panic unwinds.
pub struct Scope {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
}

impl Scope {
    pub fn open(env: sys::napi_env) -> Option<Scope> {
        let mut scope = ptr::null_mut();
        let status = unsafe { sys::napi_open_handle_scope(env, &mut scope) };
        (status == sys::Status::napi_ok).then_some(Scope { env, scope })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
    }
}
