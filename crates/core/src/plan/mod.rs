//! Deciding what a compaction summarizes and what it keeps, before any
//! model call: `prepareCompaction` ([`prepare`]) and where it cuts
//! ([`cut_point`]), the settings it obeys ([`settings`]), the files the
//! summarized messages touched ([`file_ops`]), the same plan for a session
//! file ([`from_file`]), and what a branch summary covers
//! ([`branch_summary`]).

pub mod branch_summary;
pub mod cut_point;
pub mod file_ops;
pub mod from_file;
pub mod prepare;
pub mod settings;
