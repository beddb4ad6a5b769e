//! Accel-Sim traces from tf's warp replay.
//!
//! Accel-Sim, the trace-driven GPU simulator, reads a directory with a
//! `kernelslist.g` and one `kernel-N.traceg` per kernel: per thread block,
//! per warp, the dynamic SASS instructions the warp issued with their active
//! masks and per-lane addresses. This crate turns tf's replay into such a
//! directory: [`translate`] lowers x86 instructions to SASS-like operations,
//! [`line`](mod@line) writes instruction lines, [`check`] validates a directory
//! against what Accel-Sim's parser and simulator require. The format as
//! this crate relies on it is described in `docs/accelsim-export.md`.
#![warn(missing_docs)]

pub mod check;
pub mod code;
pub mod export;
pub mod kernels;
pub mod line;
mod lower;
pub mod opcodes;
pub mod opmap;
pub mod regs;
pub mod translate;
pub mod warp;

#[cfg(test)]
mod translate_tests;

#[cfg(test)]
mod check_tests;

#[cfg(test)]
mod kernels_tests;
