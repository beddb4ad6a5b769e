//! SIMT replay of tf traces (stages 2-8 of DESIGN.md).
