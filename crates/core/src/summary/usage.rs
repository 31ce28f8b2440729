//! The `usage` a summary result reports (in the agent lines whose results
//! carry one): the one answer's own usage object, or, for a split turn, the
//! history's and the turn prefix's added up as pi 1.6's `combineUsage` adds
//! them, key for key.

/// The numbers of one usage object. Each field is what JS `+` would add:
/// `ToNumber` of the value, so a missing field is NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageNumbers {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// `None` when the field is `undefined`.
    pub cache_write_1h: Option<f64>,
    /// `None` when the field is `undefined`.
    pub reasoning: Option<f64>,
    pub total_tokens: f64,
    /// `None` when `cost` is not an object.
    pub cost: Option<CostNumbers>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostNumbers {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
    /// `cost.totalFromProvider === true`.
    pub total_from_provider: bool,
}

impl CostNumbers {
    /// Stands in for a missing `cost` (where pi 1.6 throws a TypeError after
    /// both summaries were made): it adds nothing, and the sum's total is
    /// then not the provider's.
    const NOTHING: CostNumbers = CostNumbers {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
        total: 0.0,
        total_from_provider: false,
    };
}

/// The sum of two usages, in `combineUsage`'s key order: `input, output,
/// cacheRead, cacheWrite, cacheWrite1h?, reasoning?, totalTokens, cost {input,
/// output, cacheRead, cacheWrite, total, totalFromProvider}`.
pub fn combine_usage(a: &UsageNumbers, b: &UsageNumbers) -> UsageNumbers {
    // An optional split is summed (a missing side as 0) when either side has it.
    let optional = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
    };
    let ca = a.cost.unwrap_or(CostNumbers::NOTHING);
    let cb = b.cost.unwrap_or(CostNumbers::NOTHING);
    UsageNumbers {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        cache_write_1h: optional(a.cache_write_1h, b.cache_write_1h),
        reasoning: optional(a.reasoning, b.reasoning),
        total_tokens: a.total_tokens + b.total_tokens,
        cost: Some(CostNumbers {
            input: ca.input + cb.input,
            output: ca.output + cb.output,
            cache_read: ca.cache_read + cb.cache_read,
            cache_write: ca.cache_write + cb.cache_write,
            total: ca.total + cb.total,
            total_from_provider: ca.total_from_provider && cb.total_from_provider,
        }),
    }
}

/// Which usage a result reports, by answer (0 is the first call's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultUsage {
    /// That answer's own `usage` value, as it is.
    Answer(usize),
    /// The sum of the two answers' usages.
    Sum(usize, usize),
}

/// A split turn with a history call: the sum when both answers carry a
/// usage object. pi 1.6 sums whenever the history's usage is truthy (and
/// throws when the prefix's is missing); here a side that is not an object
/// is left out, so the result is the other side's usage.
pub fn split_turn_usage(history_is_object: bool, prefix_is_object: bool) -> ResultUsage {
    match (history_is_object, prefix_is_object) {
        (true, true) => ResultUsage::Sum(0, 1),
        (true, false) => ResultUsage::Answer(0),
        (false, _) => ResultUsage::Answer(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(input: f64, output: f64, total_from_provider: bool) -> CostNumbers {
        CostNumbers {
            input,
            output,
            cache_read: 0.0,
            cache_write: 0.0,
            total: input + output,
            total_from_provider,
        }
    }

    fn usage(input: f64, output: f64, cost: Option<CostNumbers>) -> UsageNumbers {
        UsageNumbers {
            input,
            output,
            cache_read: 0.0,
            cache_write: 0.0,
            cache_write_1h: None,
            reasoning: None,
            total_tokens: input + output,
            cost,
        }
    }

    #[test]
    fn sums_as_combine_usage_does() {
        let a = usage(10.0, 5.0, Some(cost(1.0, 0.0, false)));
        let b = UsageNumbers {
            cache_write_1h: Some(0.0),
            ..usage(1.0, 2.0, Some(cost(1.0, 1.0, true)))
        };
        let sum = combine_usage(&a, &b);
        assert_eq!((sum.input, sum.output, sum.total_tokens), (11.0, 7.0, 18.0));
        assert_eq!(sum.cache_write_1h, Some(0.0));
        assert_eq!(sum.reasoning, None);
        assert_eq!(sum.cost, Some(cost(2.0, 1.0, false)));
    }

    #[test]
    fn missing_numbers_and_costs() {
        let a = UsageNumbers {
            input: f64::NAN,
            ..usage(10.0, 5.0, None)
        };
        let sum = combine_usage(&a, &usage(1.0, 1.0, Some(cost(1.0, 0.0, true))));
        assert!(sum.input.is_nan());
        assert_eq!(sum.cost, Some(cost(1.0, 0.0, false)));
        let p = usage(1.0, 1.0, Some(cost(0.0, 0.0, true)));
        assert_eq!(combine_usage(&p, &p).cost, Some(cost(0.0, 0.0, true)));
    }

    #[test]
    fn which_usage_a_split_turn_reports() {
        assert_eq!(split_turn_usage(true, true), ResultUsage::Sum(0, 1));
        assert_eq!(split_turn_usage(false, true), ResultUsage::Answer(1));
        assert_eq!(split_turn_usage(false, false), ResultUsage::Answer(1));
        assert_eq!(split_turn_usage(true, false), ResultUsage::Answer(0));
    }
}
