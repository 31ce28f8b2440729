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

/// xorshift64*, enough for shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn cut_points_found_on_demand_cut_where_the_listed_ones_do() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..20_000 {
        let line = AgentLine::ALL[round % 2];
        let n = 1 + rng.below(40) as usize;
        // Sparse cut points in some rounds, none in others.
        let density = rng.below(5);
        let mut entries = Synthetic {
            rules: line.cut,
            on_demand: false,
            cut_point: (0..n).map(|_| rng.below(4) < density).collect(),
            turn_start: (0..n).map(|_| rng.below(3) == 0).collect(),
            tokens: (0..n)
                .map(|_| (rng.below(5) > 0).then(|| rng.below(60)))
                .collect(),
            stops: (0..n).map(|_| rng.below(2) == 0).collect(),
        };
        let start = rng.below(n as u64) as usize;
        let end = start + rng.below((n - start) as u64 + 1) as usize;
        let keep = rng.below(300) as f64;
        let listed = cut_point(&entries, start, end, keep).unwrap_or_else(|e| panic!("{e}"));
        entries.on_demand = true;
        let found = cut_point(&entries, start, end, keep).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found, listed, "round {round}: {start}..{end}, keep {keep}");
    }
}
