//! The limits of FORMAT.md §9: bounds that a writer never exceeds and a
//! reader checks, so that no record of a trace, however crafted, costs more
//! to decode than its bytes justify and no table is larger than the format
//! needs.
//!
//! ```
//! use tf_trace::limits;
//! // A run record's header is one byte at the longest run.
//! assert!(((limits::MAX_RUN - 1) << 1 | 1) < 0x80);
//! assert_eq!(limits::MAX_TABLE_BITS, 16);
//! ```

/// The most block executions one run record stands for (§6.1). With it, a
/// run record's header always fits in one byte.
pub const MAX_RUN: u64 = 64;

/// The longest run a block record carries as its prefix (§6.1, version 4):
/// the two bits of the record's header that hold it.
pub const MAX_RUN_PREFIX: u64 = 3;

/// A run record ends as soon as its executions have this many memory
/// operands or more: every execution of a run but its last starts below
/// this count (§6.1).
pub const RUN_OPERANDS: u64 = 256;

/// The most instructions of one block (§5).
pub const MAX_BLOCK_INSNS: u64 = 4096;

/// The most memory operands of one block (§5).
pub const MAX_BLOCK_OPERANDS: u64 = 2048;

/// The smallest `addr_table_bits` and `succ_table_bits` (§4.1).
pub const MIN_TABLE_BITS: u8 = 8;

/// The largest `addr_table_bits` and `succ_table_bits` (§4.1): the tables of
/// one reader stay within a few megabytes.
pub const MAX_TABLE_BITS: u8 = 16;

/// The largest manifest a reader accepts, in bytes (§7).
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;
