//! What one chunk holds, counted while it is validated.

/// Counts of what one chunk holds, for `tf info`.
///
/// ```no_run
/// # fn main() -> tf_trace::Result<()> {
/// let trace = tf_trace::Trace::open("trace")?;
/// let (chunks, damage) = trace.thread_stats(1)?;
/// let total: u64 = chunks.iter().map(|c| c.insns).sum();
/// println!("{total} instructions in {} chunks{}", chunks.len(),
///          if damage.is_some() { " (damaged)" } else { "" });
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Byte offset of the chunk in its file.
    pub offset: u64,
    /// Sequence number.
    pub seq: u32,
    /// Payload bytes.
    pub payload_bytes: u64,
    /// Run records.
    pub run_records: u64,
    /// Block records with a run prefix (§6.1, version 4).
    pub run_prefixes: u64,
    /// Block executions given by run records and run prefixes.
    pub run_blocks: u64,
    /// Block records.
    pub block_records: u64,
    /// Block records with an explicit id.
    pub explicit: u64,
    /// Block records with addresses.
    pub with_addresses: u64,
    /// Partial executions.
    pub partial: u64,
    /// Event records other than `partial` (unknown types included).
    pub events: u64,
    /// Event records of unknown types.
    pub unknown_events: u64,
    /// Block executions (run and block records).
    pub block_execs: u64,
    /// Instructions executed.
    pub insns: u64,
    /// Memory accesses (present operands).
    pub accesses: u64,
    /// Instructions reported by `skip` events (saturating).
    pub skipped_insns: u64,
}

impl ChunkStats {
    /// Adds another chunk's counts to these (offset and seq are kept).
    pub fn add(&mut self, o: &ChunkStats) {
        self.payload_bytes += o.payload_bytes;
        self.run_records += o.run_records;
        self.run_prefixes += o.run_prefixes;
        self.run_blocks += o.run_blocks;
        self.block_records += o.block_records;
        self.explicit += o.explicit;
        self.with_addresses += o.with_addresses;
        self.partial += o.partial;
        self.events += o.events;
        self.unknown_events += o.unknown_events;
        self.block_execs += o.block_execs;
        self.insns += o.insns;
        self.accesses += o.accesses;
        self.skipped_insns = self.skipped_insns.saturating_add(o.skipped_insns);
    }
}
