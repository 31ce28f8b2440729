//! The numbers the JS passes and the binding exchange, in one place: the
//! flat form of messages (`flat-messages.js` writes it,
//! [`crate::transcript::flat`] reads it), a transcript recipe
//! ([`crate::transcript::recipe`] writes it, `assembleTranscript` reads it),
//! the projection plan ([`crate::projection::plan`] writes it,
//! `projectionOfPlan` reads it), the entry facts (`lib/entry-facts.js`
//! writes them, [`crate::session::facts`] reads them) and the two paths read ahead
//! (`lib/entry-path.js` writes it, `src/branch_summary.rs` reads it), and
//! a message's file operations (`src/file_ops.rs` writes their kinds,
//! `lib/api.js` adds each path to its Set). The
//! binding exports [`TABLE`] as `boundaryCodes()` (`src/js/codes.rs`); the
//! JS files keep their own copies as literals (the hot loops there read
//! them as constants) and check them against it when they load
//! (`lib/codes.js`), so a code changed on one side only fails at the first
//! `require`, not in a result.

use std::ffi::CStr;

/// Declares each group's codes as constants of a module of that name, and
/// the table [`TABLE`]: `(group, [(name, value)])`.
macro_rules! codes {
    ($($group:ident as $js:literal: $ty:ty { $($name:ident = $value:expr,)* })*) => {
        $(pub mod $group {
            $(pub const $name: $ty = $value;)*
        })*
        /// Every code above by its group's JS name and its own.
        pub const TABLE: &[(&CStr, &[(&CStr, f64)])] = &[
            $(($js, &[$(
                (match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
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
        CUT = crate::transcript::text::TextHints::CUT as i32,
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
    entry_facts as c"entryFacts": u8 {
        // An `id` or `parentId` (the latter shifted by PARENT_SHIFT).
        ID_NOT_READ = 0,
        ID_ABSENT = 1,
        ID_STRING = 2,
        // A `parentId` equal to the string `id` of the entry before, which
        // the same chunk holds: its text is not sent again.
        ID_PREVIOUS = 3,
        ID_MASK = 3,
        PARENT_SHIFT = 2,
        // A message's content, and whether its calls were read.
        CONTENT_NOT_READ = 0,
        CONTENT_PRESENT = 1,
        CONTENT_NULLISH = 2,
        CONTENT_MASK = 3,
        CALLS_READ = 4,
        // How a message's content was measured (session::measures).
        MEASURE_NOT_READ = 0,
        MEASURE_TEXT = 1,
        MEASURE_BLOCKS = 2,
        // A measured block's type.
        BLOCK_OTHER = 0,
        BLOCK_TEXT = 1,
        BLOCK_THINKING = 2,
        BLOCK_TOOL_CALL = 3,
        BLOCK_IMAGE = 4,
    }
    entry_path as c"entryPath": i32 {
        // The step threw (getEntry or a getter): what it threw is the next
        // element of `others`, and the step's second code is NOT_READ.
        THREW = -4,
        // The entry's id is the id it was looked up by.
        SAME = -3,
        // The parentId was not read (the id was not a string).
        NOT_READ = -2,
        // Not a string.
        NOT_STRING = -1,
        // Steps of the target's path read before the old branch.
        TARGET_STEPS = crate::plan::branch_summary::TARGET_STEPS as i32,
    }
    context_facts as c"contextFacts": u8 {
        // An assistant's `stopReason`, and its `usage` (added).
        STOP_OTHER = 1,
        STOP_ABORTED = 2,
        STOP_ERROR = 3,
        STOP_MASK = 3,
        USAGE_NULLISH = 4,
        USAGE_NUMBERS = 8,
    }
    file_ops as c"fileOps": u8 {
        // The Set of `FileOperations` a path goes into.
        READ = crate::plan::file_ops::FileOpKind::Read as u8,
        WRITTEN = crate::plan::file_ops::FileOpKind::Written as u8,
        EDITED = crate::plan::file_ops::FileOpKind::Edited as u8,
    }
}
