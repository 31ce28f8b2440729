//! A session as the agent stores it: entry types and message roles
//! ([`model`]), lazy access to an entry array ([`entries`]), the session
//! file read from disk ([`file`]), one branch of its tree ([`tree`]), entry
//! ids and the path they link ([`context`], looked up by [`id_index`]),
//! what a JS pass read of the entries ahead ([`facts`]), and the context
//! the agent rebuilds from that path ([`projection`]), and the system
//! message a 1.6 compaction entry keeps of it ([`system_message`]).

pub mod context;
pub mod entries;
pub mod facts;
pub mod file;
pub mod id_index;
pub mod measures;
pub mod model;
pub mod projection;
pub mod system_message;
pub mod tree;
