//! `serializeConversation`: the transcript of the caller's messages, as a
//! recipe flat-messages.js joins from the caller's own strings.

use napi::Env;
use napi_derive::napi;

use crate::js::args::{added_options, reasoning_option};
use crate::js::errors::run;
use crate::js::flat::{Flat, MessageSource, Scratch};
use crate::js::out::{Arg, RawValue};
use crate::js::text::{use_transcript_helpers, RecipeSink};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::transcript::llm_message::ReadLimits;
use prime_compaction_core::transcript::serialize::{Parts, SerializeOptions};

/// `serializeConversation(messages, options?)`.
#[napi(js_name = "serializeConversation")]
pub fn serialize_conversation(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
    flat: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        use_transcript_helpers(cx, &argument_entries)?;
        let reasoning = match added_options(cx, &options)? {
            Some(o) => reasoning_option(&o).within("options")?,
            None => true,
        };
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let options = SerializeOptions { reasoning };
        let limits = ReadLimits::borrowed_transcript();
        let mut source = match &flat {
            Some(flat) => MessageSource::Flat(Flat::new(cx, flat.0)?),
            None => MessageSource::Native { next: 0, len },
        };
        let strings = match &source {
            MessageSource::Flat(flat) => Some(flat.strings()),
            MessageSource::Native { .. } => None,
        };
        let mut sink = RecipeSink::new(cx, strings)?;
        let mut parts = Parts::new(&mut sink);
        let mut scratch = Scratch::default();
        // A batch of messages at a time, each in a handle scope of its own:
        // the texts are only borrowed until their batch is written (the
        // pieces array keeps what it was given), so the handles of a long
        // conversation never pile up.
        while !source.is_done() {
            list.scoped(|| -> Result<()> {
                for _ in 0..SERIALIZE_BATCH {
                    if source.is_done() {
                        break;
                    }
                    // Written as soon as read: flat messages straight
                    // from their codes, others read and dropped, so the
                    // next message reuses the memory this one freed.
                    source.write(&list, limits, &mut parts, options, &mut scratch)?;
                }
                // The batch's native texts are handles of this scope.
                parts.sink().flush();
                Ok(())
            })
            .within("messages")?;
        }
        Ok(RawValue(sink.finish()?))
    })
}

/// Messages read and written per handle scope by `serializeConversation`.
const SERIALIZE_BATCH: usize = 512;
