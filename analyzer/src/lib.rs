//! SIMT replay of tf traces: stages 2–8 of `docs/ARCHITECTURE.md`.
//!
//! [`analyze`] runs them all: read the trace, split blocks into canonical
//! basic blocks ([`blocks`]), follow frames ([`frames`]) to build one dynamic
//! CFG per function ([`cfg`](mod@cfg)) and its post-dominators ([`ipdom`]), cut units
//! ([`units`]), batch them into warps ([`warps`]), replay each warp on a SIMT
//! stack ([`replay`]) and report ([`results`]).

mod already_told;
mod analysis;
pub mod blocks;
pub mod cfg;
pub mod coalesce;
pub mod code_flow;
pub mod common_tails;
mod first_pass;
pub mod frames;
pub mod functions;
pub mod go_names;
mod group_replay;
pub mod ipdom;
mod job_order;
pub mod lane_source;
pub mod lanes;
mod lanes_alone;
pub mod lazy_binding;
pub mod loops;
pub mod merge;
mod naming;
pub mod off_stack;
pub mod plt;
pub mod predicate;
pub mod processes;
mod program_main;
pub mod recorded;
mod recut;
pub mod replay;
pub mod results;
pub mod scan;
pub mod scan_index;
pub mod segments;
pub mod sink;
mod skipped;
pub mod spin_wait;
pub mod static_schedule;
mod static_split;
pub mod stats;
pub mod symbols;
pub mod tail_copies;
pub mod tasks;
mod turns;
pub mod unit_rule;
pub mod unit_source;
pub mod unit_starts;
pub mod units;
mod warp_jobs;
pub mod warps;
pub mod worksharing;

pub use analysis::{analyze, analyze_observed, Error, Options, Progress, Silent};

#[cfg(test)]
mod testutil;
