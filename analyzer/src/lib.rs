//! SIMT replay of tf traces: stages 2–8 of DESIGN.md.

pub mod blocks;
pub mod cfg;
pub mod frames;
pub mod ipdom;

#[cfg(test)]
mod testutil;
