//! The tf trace format (see FORMAT.md).
