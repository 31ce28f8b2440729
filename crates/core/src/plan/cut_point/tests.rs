use super::*;
use crate::agent_line::AgentLine;

/// Entries made of their answers, cut points found either way.
struct Synthetic {
    rules: CutRules,
    on_demand: bool,
    cut_point: Vec<bool>,
    turn_start: Vec<bool>,
    tokens: Vec<Option<u64>>,
    stops: Vec<bool>,
}

impl CutEntries for Synthetic {
    fn rules(&self) -> &CutRules {
        &self.rules
    }
    fn is_cut_point(&self, i: usize) -> Result<bool> {
        Ok(self.cut_point[i])
    }
    fn cut_points_on_demand(&self) -> bool {
        self.on_demand
    }
    fn starts_turn(&self, i: usize) -> Result<bool> {
        Ok(self.turn_start[i])
    }
    fn cut_keeps_turn(&self, i: usize) -> Result<bool> {
        Ok(self.turn_start[i])
    }
    fn budget_tokens(&self, i: usize) -> Result<Option<u64>> {
        Ok(self.tokens[i])
    }
    fn stops_absorb(&self, i: usize) -> Result<bool> {
        Ok(self.stops[i])
    }
    fn label(&self, i: usize) -> String {
        format!("entries[{i}]")
    }
}

#[test]
fn cut_points_found_on_demand_cut_where_the_listed_ones_do() {
    // Every pattern of cut points over up to 7 entries, every range, a few
    // budgets, both lines' rules; tokens, turn starts and stops vary with
    // the pattern and the entry.
    let mut cases = 0;
    for line in AgentLine::ALL {
        for n in 1..=7usize {
            for mask in 0..1u32 << n {
                let at = |i: usize, salt: u32| (mask.wrapping_mul(31) + (i as u32) * 7 + salt) % 5;
                let mut entries = Synthetic {
                    rules: line.cut,
                    on_demand: false,
                    cut_point: (0..n).map(|i| mask & (1 << i) != 0).collect(),
                    turn_start: (0..n).map(|i| at(i, 1) < 2).collect(),
                    tokens: (0..n)
                        .map(|i| (at(i, 2) > 0).then(|| u64::from(at(i, 3)) * 20))
                        .collect(),
                    stops: (0..n).map(|i| at(i, 4) < 3).collect(),
                };
                for start in 0..n {
                    for end in start..=n {
                        for keep in [0.0, 25.0, 60.0, 1000.0] {
                            entries.on_demand = false;
                            let listed = cut_point(&entries, start, end, keep)
                                .unwrap_or_else(|e| panic!("{e}"));
                            entries.on_demand = true;
                            let found = cut_point(&entries, start, end, keep)
                                .unwrap_or_else(|e| panic!("{e}"));
                            assert_eq!(found, listed, "{mask:b}, {start}..{end}, keep {keep}");
                            cases += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 50_000, "{cases} cases");
}
