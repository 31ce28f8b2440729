//! User rounds, and the oldest of them an overflow retry drops.
//!
//! A round opens at a user message and runs to the next one. Messages
//! before the first user message (the tail of a turn an earlier compaction
//! split) form a leading group that `split_user_rounds` returns as its first
//! range; it is no complete user round, and a retry drops it with the
//! oldest one (`first_kept`).

use std::ops::Range;

use crate::transcript::llm_message::Message;

/// The rounds of `messages` as index ranges covering all of them, in order.
pub fn split_user_rounds<T>(messages: &[Message<T>]) -> Vec<Range<usize>> {
    round_ranges(messages.iter().map(Message::is_user), messages.len())
}

/// Round ranges from which positions open a round.
pub fn round_ranges(opens: impl Iterator<Item = bool>, len: usize) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = opens
        .enumerate()
        .filter_map(|(i, open)| open.then_some(i))
        .collect();
    if len > 0 && starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        out.push(s..starts.get(k + 1).copied().unwrap_or(len));
    }
    out
}

/// The first message kept when the `drop` oldest complete user rounds are
/// dropped (the newest always stays). Messages before the first user
/// message (the rest of a turn an earlier compaction split) are no complete
/// round: they go with the oldest one, or alone when only one round is left.
pub fn first_kept<T>(messages: &[Message<T>], drop: usize) -> usize {
    if drop == 0 {
        return 0;
    }
    let rounds = split_user_rounds(messages);
    let leading = usize::from(messages.first().is_some_and(|m| !m.is_user()));
    let complete = rounds.len() - leading;
    let dropped = drop.min(complete.saturating_sub(1));
    rounds.get(leading + dropped).map_or(0, |r| r.start)
}
