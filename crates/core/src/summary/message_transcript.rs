//! The bridge between the compaction job and the summary projection: a
//! message list that renders itself, projected and serialized, at any
//! shrink level the overflow retries ask for.

use crate::js::string::JsStr;
use crate::projection::{project, ProjectOptions};
use crate::summary::compact::Transcript;
use crate::summary::retry::Shrink;
use crate::transcript::llm_message::Message;
use crate::transcript::serialize::{serialize, SerializeOptions};

pub struct MessageTranscript {
    pub messages: Vec<Message>,
    /// Keep readable reasoning (false for Claude-family summarizers).
    pub reasoning: bool,
}

impl Transcript for MessageTranscript {
    fn render(&self, shrink: &Shrink) -> JsStr {
        let options = ProjectOptions {
            tool_result_bodies: shrink.tool_result_bodies,
            drop_oldest_rounds: shrink.drop_rounds,
            round_bound: shrink.round_bound,
            reasoning: self.reasoning,
        };
        let projected = project(&self.messages, &options);
        serialize(
            &projected,
            SerializeOptions {
                reasoning: self.reasoning,
            },
        )
    }
}
