//! How an overflow retry shrinks the request: each retry after a context
//! overflow drops more of the oldest rounds, keeps fewer tool-result bodies
//! and bounds any one oversized round tighter.

use crate::summary::compact::ModelLimits;

/// Retries after a context overflow, each with a smaller request.
pub const MAX_OVERFLOW_RETRIES: u8 = 2;

/// How much a request is shrunk; attempt 0 is the full request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrink {
    /// Oldest complete user rounds to leave out (at least one round always stays).
    pub drop_rounds: usize,
    /// How many of the newest tool-result bodies keep their text.
    pub tool_result_bodies: usize,
    /// Head-and-tail bound, in UTF-16 units, on one oversized round.
    pub round_bound: Option<usize>,
}

/// The shrink level of `attempt` (0 is the first try, then the retries).
/// `whole_units`: the length of the part's whole (attempt 0) transcript.
pub fn shrink_for(
    attempt: u8,
    limits: &ModelLimits,
    max_tokens: f64,
    whole_units: usize,
) -> Shrink {
    if attempt == 0 {
        return Shrink {
            drop_rounds: 0,
            tool_result_bodies: 3,
            round_bound: None,
        };
    }
    // About four UTF-16 units a token; half, then a quarter, of what the
    // window leaves after the answer. Unknown windows count as 128k tokens.
    let window = if limits.context_window > 0.0 {
        limits.context_window
    } else {
        128_000.0
    };
    let room = (window
        - if max_tokens.is_finite() {
            max_tokens
        } else {
            0.0
        })
    .max(4096.0);
    let share = if attempt == 1 { 0.5 } else { 0.25 };
    // The same share of the whole transcript where that is less: a round
    // that fits the declared window by this count overflowed all the same
    // (a server run with a smaller window than the model's, text of more
    // tokens a unit), and a bound on the window alone would leave it whole.
    // Never under 4,096 units (the window's least, a quarter of 4,096
    // tokens): a shorter round is not what overflows.
    let by_window = (room * 4.0 * share) as usize;
    let by_transcript = ((whole_units as f64 * share) as usize).max(4096);
    Shrink {
        drop_rounds: attempt as usize,
        tool_result_bodies: if attempt == 1 { 1 } else { 0 },
        round_bound: Some(by_window.min(by_transcript)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(context_window: f64) -> ModelLimits {
        ModelLimits {
            max_tokens: 0.0,
            context_window,
        }
    }

    #[test]
    fn each_retry_keeps_fewer_bodies_drops_a_round_more_and_bounds_a_round_tighter() {
        // A 128k window with a 16,384-token answer leaves 111,616 tokens:
        // half, then a quarter, at four units a token.
        let window = limits(128_000.0);
        assert_eq!(
            [0, 1, 2].map(|a| shrink_for(a, &window, 16_384.0, usize::MAX)),
            [
                Shrink {
                    drop_rounds: 0,
                    tool_result_bodies: 3,
                    round_bound: None
                },
                Shrink {
                    drop_rounds: 1,
                    tool_result_bodies: 1,
                    round_bound: Some(223_232)
                },
                Shrink {
                    drop_rounds: 2,
                    tool_result_bodies: 0,
                    round_bound: Some(111_616)
                },
            ]
        );
        // An unknown window counts as 128k; an answer budget that is no number, as none.
        assert_eq!(
            shrink_for(1, &limits(f64::NAN), 0.0, usize::MAX).round_bound,
            Some(256_000)
        );
        assert_eq!(
            shrink_for(1, &limits(0.0), f64::INFINITY, usize::MAX).round_bound,
            Some(256_000)
        );
        // Never less room than 4,096 tokens, however large the answer.
        assert_eq!(
            shrink_for(2, &window, 200_000.0, usize::MAX).round_bound,
            Some(4_096)
        );
    }

    #[test]
    fn a_transcript_under_the_window_bound_is_bounded_by_its_own_length() {
        // 400,000 units fit a 1M window's bound; half, then a quarter, of them.
        let window = limits(1_000_000.0);
        let bound = |a| shrink_for(a, &window, 16_384.0, 400_000).round_bound;
        assert_eq!(
            [bound(0), bound(1), bound(2)],
            [None, Some(200_000), Some(100_000)]
        );
        // Never under 4,096 units; past the window's bound, the window's.
        assert_eq!(
            shrink_for(2, &window, 16_384.0, 1_000).round_bound,
            Some(4_096)
        );
        assert_eq!(
            shrink_for(1, &limits(128_000.0), 16_384.0, 1_000_000).round_bound,
            Some(223_232)
        );
    }
}
