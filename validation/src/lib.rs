//! `tf-validate`: the validation suite of tf. It builds the workloads of
//! `workloads/` at every -O level, traces and analyzes them with the `tf`
//! binary, compares the figures with the hand-derived expectations of
//! `workloads/expectations.toml`, compares with a GPU (the CUDA twins under
//! Nsight Compute, or their measurements stored in `validation/gpu/`) and with pigz, and writes a Markdown report
//! and a CSV (`docs/validation.md`, `docs/validation.csv`).

pub mod compare;
pub mod expect;
pub mod gpu;
pub mod gpu_report;
pub mod measure;
pub mod model;
pub mod outcome;
pub mod pigz;
pub mod report;
pub mod stored;
pub mod suite;
