//! The numbers the JS passes and this crate exchange, in one place: the
//! flat form of messages (`flat-messages.js` writes it, [`super::flat`]
//! reads it), a transcript recipe ([`super::text`] writes it,
//! `assembleTranscript` reads it), the projection plan
//! (`src/project_for_summary.rs` writes it, `projectionOfPlan` reads it) and
//! the old branch read ahead (`lib/entry-path.js` writes it,
//! `src/branch_summary.rs` reads it). The JS files keep their own copies as
//! literals (the hot loops there read them as constants) and check them
//! against [`boundary_codes`] when they load (`lib/codes.js`), so a code
//! changed on one side only fails at the first `require`, not in a result.

use napi::{sys, Env};
use napi_derive::napi;

use crate::js::errors::run;
use crate::js::out::{Raw, RawValue};
use crate::js::view::{check, Cx};
use prime_compaction_core::error::Result;
use prime_compaction_core::session::model::{
    EntryType, ENTRY_TYPES, KIND_NOT_READ, KIND_OTHER_ROLE, KIND_OTHER_TYPE, KIND_ROLE_BASE,
    KIND_TYPE_BASE, ROLE_NAMES,
};

/// Declares each group's codes as constants of a module of that name, and
/// the table [`boundary_codes`] exports: `(group, [(name, value)])`.
macro_rules! codes {
    ($($group:ident as $js:literal: $ty:ty { $($name:ident = $value:expr,)* })*) => {
        $(pub mod $group {
            $(pub const $name: $ty = $value;)*
        })*
        const TABLE: &[(&std::ffi::CStr, &[(&std::ffi::CStr, f64)])] = &[
            $(($js, &[$(
                (match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                    Ok(name) => name,
                    Err(_) => panic!("a code's name is a C string"),
                }, $group::$name as f64),
            )*]),)*
        ];
    };
}

codes! {
    flat as c"flat": i32 {
        // Message codes.
        NATIVE = 0,
        USER_TEXT = 1,
        USER_BLOCKS = 2,
        ASSISTANT = 3,
        TOOL_RESULT = 4,
        // Block codes.
        TEXT = 5,
        THINKING = 6,
        TOOL_CALL = 7,
        IMAGE = 8,
        // Text-block flags.
        BLANK = 1,
        SPLITS_PAIR_AT_CUT = 2,
        // Where a text block's flag SPLITS_PAIR_AT_CUT looks.
        CUT = crate::js::text::TextHints::CUT as i32,
        // A tool-call argument's JSON longer than this is passed as a
        // string of the texts array (see flat-messages.js).
        LONG_JSON = 64,
    }
    recipe as c"recipe": i32 {
        // `i, n`: `strings[i].slice(0, n)`.
        OP_HEAD = -1,
        // `-2 - k`: label `k`.
        OP_LABEL_BASE = -2,
    }
    plan as c"plan": i32 {
        // Message kinds.
        USER_TEXT = 1,
        USER = 2,
        ASSISTANT = 3,
        TOOL_RESULT = 4,
        // Block kinds.
        TEXT = 1,
        THINKING = 2,
        TOOL_CALL = 3,
        IMAGE = 4,
        // Text references other than an index into the texts array.
        SHORT = -1,
        VALUE_BASE = -2,
        // A tool call whose arguments are the next object of the parsed `args`.
        PARSED_ARGS = -1,
        // How an argument given key by key holds its value.
        NO_JSON = 0,
        JSON = 1,
        STRING_VALUE = 2,
    }
    entry_path as c"entryPath": i32 {
        // The entry's id is the id it was looked up by.
        SAME = -3,
        // The parentId was not read (the id was not a string).
        NOT_READ = -2,
        // Not a string.
        NOT_STRING = -1,
    }
}

/// `{ flat: { NATIVE: 0, ... }, recipe, plan, entryPath, entryKinds }`:
/// every code above, for the JS side to check its own against at load, and
/// the entry-kind codes of the core (`EntryKind::from_code`), which
/// `lib/entry-kinds.js` takes from here as they are.
#[napi(js_name = "boundaryCodes")]
pub fn boundary_codes(env: Env) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let out = cx.object()?;
        for (group, codes) in TABLE {
            let o = cx.object()?;
            for (name, value) in *codes {
                cx.set(o, name, cx.number(*value)?)?;
            }
            cx.set(out, group, o)?;
        }
        cx.set(out, c"entryKinds", entry_kind_codes(cx)?)?;
        Ok(RawValue(out))
    })
}

/// `{ NOT_READ, OTHER_TYPE, OTHER_ROLE, MESSAGE_TYPE, types: { compaction:
/// 2, ... }, roles: { user: 16, ... } }`: a `type` string's code (a
/// message entry's is its role's).
fn entry_kind_codes(cx: &Cx) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"NOT_READ", cx.number(f64::from(KIND_NOT_READ))?)?;
    cx.set(o, c"OTHER_TYPE", cx.number(f64::from(KIND_OTHER_TYPE))?)?;
    cx.set(o, c"OTHER_ROLE", cx.number(f64::from(KIND_OTHER_ROLE))?)?;
    let types = cx.object()?;
    for (i, (name, ty)) in ENTRY_TYPES.iter().enumerate() {
        if *ty == EntryType::Message {
            cx.set(o, c"MESSAGE_TYPE", cx.str(name)?)?;
        } else {
            set_named(cx, types, name, f64::from(KIND_TYPE_BASE) + i as f64)?;
        }
    }
    cx.set(o, c"types", types)?;
    let roles = cx.object()?;
    for (i, name) in ROLE_NAMES.iter().enumerate() {
        set_named(cx, roles, name, f64::from(KIND_ROLE_BASE) + i as f64)?;
    }
    cx.set(o, c"roles", roles)?;
    Ok(o)
}

fn set_named(cx: &Cx, o: Raw, name: &str, value: f64) -> Result<()> {
    let key = cx.str(name)?;
    let value = cx.number(value)?;
    check(unsafe { sys::napi_set_property(cx.env, o, key, value) })
}
