//! `boundaryCodes()`: the numbers the JS passes and the binding exchange,
//! whose one source is the core's [`prime_compaction_core::boundary_codes`]
//! (the flat form of messages, a transcript recipe, the projection plan,
//! the old branch read ahead), and the core's entry-kind codes. The JS
//! files keep their own copies as literals (the hot loops there read them
//! as constants) and check them against [`boundary_codes`] when they load
//! (`lib/codes.js`), so a code changed on one side only fails at the first
//! `require`, not in a result.

use napi::{sys, Env};
use napi_derive::napi;

use crate::js::errors::run;
use crate::js::out::{Raw, RawValue};
use crate::js::view::{check, Cx};
use prime_compaction_core::boundary_codes::TABLE;
pub use prime_compaction_core::boundary_codes::{entry_path, flat, plan, recipe};
use prime_compaction_core::error::Result;
use prime_compaction_core::session::model::{
    EntryType, ENTRY_TYPES, KIND_NOT_READ, KIND_OTHER_ROLE, KIND_OTHER_TYPE, KIND_ROLE_BASE,
    KIND_TYPE_BASE, ROLE_NAMES,
};

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
