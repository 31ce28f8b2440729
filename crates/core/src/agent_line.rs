//! The agent lines this package is a drop-in for, as data: every rule in
//! which one line of `@earendil-works/pi-coding-agent` behaves differently
//! from another is a field here, and the algorithms read the field instead
//! of knowing a version. Adding a line is adding a value.
//!
//! What the compaction spec decides (the transcript format, the summary
//! projection, the Reasoning Digest, overflow retries, custom instructions
//! in every request) is the same in every line and is not a field.

/// One agent line's rules.
#[derive(Debug, PartialEq, Eq)]
pub struct AgentLine {
    /// The line's name, as its entry point is named (`prime-compaction/agent-<name>`).
    pub name: &'static str,
    /// `convertToLlm` passes `role: "system"` messages through as they are
    /// (1.6 keeps the agent's system prompt in its transcript; 0.78 had no
    /// such messages and dropped unknown roles).
    pub convert_keeps_system: bool,
}

impl AgentLine {
    /// `@earendil-works/pi-coding-agent` 0.78.x.
    pub const V0_78: AgentLine = AgentLine {
        name: "0.78",
        convert_keeps_system: false,
    };

    /// `@earendil-works/pi-coding-agent` 1.6.x.
    pub const V1_6: AgentLine = AgentLine {
        name: "1.6",
        convert_keeps_system: true,
    };

    /// Every supported line, oldest first; a line's index here is how the
    /// binding names it.
    pub const ALL: [&'static AgentLine; 2] = [&Self::V0_78, &Self::V1_6];

    /// The newest line: what the bare package entry follows.
    pub fn newest() -> &'static AgentLine {
        Self::ALL[Self::ALL.len() - 1]
    }

    pub fn by_name(name: &str) -> Option<&'static AgentLine> {
        Self::ALL.iter().copied().find(|line| line.name == name)
    }

    pub fn by_index(index: usize) -> Option<&'static AgentLine> {
        Self::ALL.get(index).copied()
    }

    pub fn index(&self) -> usize {
        Self::ALL
            .iter()
            .position(|line| line.name == self.name)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::AgentLine;

    #[test]
    fn lines_are_found_by_name_and_index() {
        for (i, line) in AgentLine::ALL.iter().enumerate() {
            assert_eq!(AgentLine::by_name(line.name), Some(*line));
            assert_eq!(AgentLine::by_index(i), Some(*line));
            assert_eq!(line.index(), i);
        }
        assert_eq!(AgentLine::by_name("0.79"), None);
        assert_eq!(AgentLine::by_index(AgentLine::ALL.len()), None);
        assert_eq!(AgentLine::newest().name, "1.6");
    }
}
