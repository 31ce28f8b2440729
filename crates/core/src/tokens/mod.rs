//! Token counts: the chars/4 estimate and usage-based context sizes
//! ([`estimate`]), system messages in them ([`system`]), the context size
//! of a session projection ([`projected`]) and the facts a JS pass reads
//! ahead for them ([`context_facts`]), exact counts of a message
//! ([`exact`]) with a BPE tokenizer ([`tokenizer`]) and its generated
//! character classes ([`classes`]).

pub mod classes;
pub mod context_facts;
pub mod estimate;
pub mod exact;
pub mod projected;
pub mod system;
pub mod tokenizer;
