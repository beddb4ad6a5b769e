//! The first pass over a trace: one thread at a time, it follows frames,
//! builds the dynamic CFGs, cuts units, counts skipped work and indexes the
//! stream's chunks so that the replay can start reading at any unit.

use crate::blocks::{CBlockId, CanonicalBlocks, PieceCursor};
use crate::cfg::CfgBuilder;
use crate::frames::{FrameTracker, Transition};
use crate::tasks::RuntimeCalls;
use crate::units::{Cutter, Pos, Unit, UnitCutter};
use crate::worksharing::LoopCensus;
use std::collections::HashSet;
use tf_trace::{EndKind, Event, FunctionId, SkipReason, Trace};

pub use crate::skipped::{Skipped, SyscallCount};

/// Where a chunk of a thread's stream starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChunkStart {
    /// Byte offset of the chunk in the file.
    pub offset: u64,
    /// Its sequence number.
    pub seq: u32,
    /// Index of its first event in the stream.
    pub first_event: u64,
}

/// What the first pass learned about one thread.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ThreadScan {
    /// The thread id.
    pub tid: u64,
    /// Its parent (0 = none).
    pub parent: u64,
    /// Its stack, `[lo, hi)` (empty when unknown).
    pub stack: (u64, u64),
    /// Its start routine (0 = unknown).
    pub start_routine: u64,
    /// Where each chunk starts.
    pub chunks: Vec<ChunkStart>,
    /// Its units, in order.
    pub units: Vec<Unit>,
    /// Where its units could not be cut as the trace says they must be.
    pub unit_problems: Vec<String>,
    /// What its worksharing loops showed (crate::worksharing).
    pub loops: LoopCensus,
    /// Instructions traced.
    pub traced: u64,
    /// Block executions traced.
    pub block_execs: u64,
    /// Memory accesses traced (present operands).
    pub accesses: u64,
    /// Lock acquisitions traced.
    pub lock_acquisitions: u64,
    /// Work not traced.
    pub skipped: Skipped,
    /// Skipped instructions by where they were skipped: the symbol of the
    /// block before the skip (0 = none) and the entry of its frame.
    pub skipped_in: Vec<((FunctionId, u64), u64)>,
    /// Traced instructions by where they ran: the block's symbol, and for
    /// code without one (symbol 0) the entry of its frame, which names it.
    pub traced_in: Vec<((FunctionId, u64), u64)>,
    /// Events in the stream (readable part).
    pub events: u64,
    /// The damage that stopped the reading, if any.
    pub damage: Option<String>,
    /// The damage was found in a chunk whose events were being used as they
    /// decoded ([`ScanJob::check_ahead`] off): what this scan made of that
    /// chunk must be dropped, by scanning again checking ahead.
    pub used_damaged_chunk: bool,
    /// Functions the OpenMP runtime called through a pointer: the outlined
    /// bodies of parallel regions (and tasks), named or not.
    pub outlined: HashSet<u64>,
    /// Calls the OpenMP runtime made of unit functions that began no unit
    /// (tasks, nested parallel regions: crate::tasks).
    #[serde(default)]
    pub runtime_calls_inside: RuntimeCalls,
}

/// How to scan.
pub struct ScanJob<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// Its canonical blocks.
    pub canon: &'a CanonicalBlocks,
    /// Entry addresses of function ids (for root frames).
    pub entry_of: &'a (dyn Fn(FunctionId) -> Option<u64> + Sync),
    /// Decode memory addresses (only to find the stack pointer of each
    /// unit's frame; following control flow without them is much faster).
    pub addresses: bool,
    /// Count traced instructions by function ([`ThreadScan::traced_in`]).
    pub per_function: bool,
    /// Told the bytes of each thread file as they are scanned, chunk by
    /// chunk (so that a progress bar's estimate holds for a trace of a few
    /// large threads too).
    pub progress: Option<&'a dyn crate::analysis::Progress>,
    /// The address ranges of the OpenMP runtime's modules (libgomp,
    /// libomp), whose indirect calls enter outlined functions.
    pub runtime: &'a [(u64, u64)],
    /// Decode each chunk completely before using its first event. Off, each
    /// chunk is decoded once instead of twice, and a scan that met a chunk
    /// whose records do not decode says so
    /// ([`ThreadScan::used_damaged_chunk`]): see
    /// [`ThreadReader::set_check_ahead`](tf_trace::ThreadReader::set_check_ahead).
    pub check_ahead: bool,
}

impl ScanJob<'_> {
    /// Scans thread `tid`, cutting units with `cutter` (chosen once the
    /// thread's start routine is known, from its `thread_start` event) and
    /// adding the edges it runs to `cfg`, if given.
    pub fn scan(
        &self,
        tid: u64,
        cutter: impl FnOnce(u64) -> Cutter,
        mut cfg: Option<&mut CfgBuilder>,
    ) -> ThreadScan {
        // What the manifest says of the thread, until its `thread_start`
        // event says it: a thread the program made that never ran before
        // it exited has no event, but its parent and start routine.
        let listed = (self.trace.manifest())
            .and_then(|m| m.threads.iter().find(|t| t.tid == tid))
            .map_or((0, 0), |t| (t.parent, t.start_routine));
        let mut out = ThreadScan {
            tid,
            parent: listed.0,
            stack: (0, 0),
            start_routine: listed.1,
            chunks: Vec::new(),
            units: Vec::new(),
            unit_problems: Vec::new(),
            loops: LoopCensus::default(),
            traced: 0,
            block_execs: 0,
            accesses: 0,
            lock_acquisitions: 0,
            skipped: Skipped::default(),
            skipped_in: Vec::new(),
            traced_in: Vec::new(),
            events: 0,
            damage: None,
            used_damaged_chunk: false,
            outlined: HashSet::new(),
            runtime_calls_inside: RuntimeCalls::default(),
        };
        let mut reader = match self.trace.read_thread(tid) {
            Ok(r) => r,
            Err(e) => {
                out.damage = Some(e.to_string());
                return out;
            }
        };
        reader.set_addresses(self.addresses);
        // Checksums are still verified; a chunk is decoded ahead only where
        // asked (see ThreadReader::set_validate and set_check_ahead).
        reader.set_validate(false);
        reader.set_check_ahead(self.check_ahead);
        let mut cutter_fn = Some(cutter);
        let mut units: Option<UnitCutter> = None;
        let mut tracker: Option<FrameTracker> = None;
        let mut prev: Option<(CBlockId, EndKind)> = None;
        let mut prev_call_sp: Option<u64> = None;
        // Where the --only region was last entered: its first frame's start.
        let mut region_sp: Option<u64> = None;
        let mut last_sym: FunctionId = 0;
        let mut skipped_in: std::collections::HashMap<(FunctionId, u64), u64> = Default::default();
        // Consecutive steps mostly run in one function: count a run, then add it.
        let mut traced_in: std::collections::HashMap<(FunctionId, u64), u64> = Default::default();
        let mut run: ((FunctionId, u64), u64) = ((0, 0), 0);
        let mut chunk_seq = u32::MAX;
        let mut reported = 0u64;
        let mut event = 0u64;
        // Counted in registers, stored once at the end.
        let (mut block_execs, mut accesses) = (0u64, 0u64);
        // Each event is read in place (ThreadReader::advance), not built
        // and returned through memory.
        loop {
            match reader.advance() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    out.damage = Some(e.to_string());
                    break;
                }
            }
            match reader.current().expect("advance read an event") {
                Event::Block(x) => {
                    out.traced += u64::from(x.insns);
                    block_execs += 1;
                    accesses += u64::from(x.present_operands());
                    let units = cutter_of(&mut units, &mut cutter_fn, tid, out.start_routine);
                    let mut cursor = PieceCursor::new(x.block, x.insns, x.complete);
                    loop {
                        let piece = cursor.piece() as u16;
                        let Some(s) = cursor.next_in(self.canon, x.accesses()) else {
                            break;
                        };
                        let pos = Pos { event, piece };
                        let t = match (&mut tracker, prev) {
                            (Some(tr), Some((p, p_end))) => Some(match &mut cfg {
                                Some(cfg) => cfg.step(tr, self.canon, p, p_end, s.cblock),
                                None => tr.advance(self.canon, p, p_end, s.cblock),
                            }),
                            _ => {
                                let tr = FrameTracker::new(FrameTracker::root_for(
                                    self.canon,
                                    &self.entry_of,
                                    s.cblock,
                                ));
                                if let Some(cfg) = &mut cfg {
                                    cfg.start(&tr);
                                }
                                tracker = Some(tr);
                                None
                            }
                        };
                        let call_sp = match t {
                            Some(Transition::Call) => prev_call_sp,
                            None => region_sp.take(),
                            _ => None,
                        };
                        let tr = tracker.as_ref().expect("set");
                        let by_runtime = match (t, prev) {
                            (Some(Transition::Call), Some((p, EndKind::IndirectCall))) => {
                                let a = self.canon.block(p).address;
                                self.runtime.iter().any(|&(lo, hi)| (lo..hi).contains(&a))
                            }
                            _ => false,
                        };
                        if by_runtime {
                            out.outlined.insert(tr.top().entry);
                        }
                        units.step(pos, &s, t, tr, call_sp, by_runtime);
                        out.loops.step(s.cblock, tr);
                        prev_call_sp = call_push(s.accesses);
                        last_sym = self.canon.block(s.cblock).function;
                        if !self.per_function {
                            prev = Some((s.cblock, s.end));
                            continue;
                        }
                        let frame = match last_sym {
                            0 => tracker.as_ref().map_or(0, |t| t.top().entry),
                            _ => 0,
                        };
                        if run.0 != (last_sym, frame) {
                            if run.1 > 0 {
                                *traced_in.entry(run.0).or_default() += run.1;
                            }
                            run = ((last_sym, frame), 0);
                        }
                        run.1 += u64::from(s.insns);
                        prev = Some((s.cblock, s.end));
                    }
                }
                Event::ThreadStart {
                    parent,
                    stack_lo,
                    stack_hi,
                    start_routine,
                } => {
                    out.parent = parent;
                    out.stack = (stack_lo, stack_hi);
                    out.start_routine = start_routine;
                }
                Event::Skip { reason, count } => {
                    out.skipped.add(reason, count);
                    let frame = tracker.as_ref().map_or(0, |t| t.top().entry);
                    *skipped_in.entry((last_sym, frame)).or_default() += count;
                    // Outside the --only functions: the next traced block
                    // enters one afresh, as a thread's first block does.
                    if reason == SkipReason::OutsideRegion {
                        if let (Some(cfg), Some(tr)) = (&mut cfg, &tracker) {
                            cfg.end(tr);
                        }
                        out.loops.finish();
                        cutter_of(&mut units, &mut cutter_fn, tid, out.start_routine)
                            .left_region(Pos { event, piece: 0 });
                        tracker = None;
                        prev = None;
                    }
                }
                Event::Syscall { number, nanos } => out.skipped.syscall(number, nanos),
                Event::LockAcquire { .. } => out.lock_acquisitions += 1,
                Event::LoopChunk(chunk) => {
                    out.loops.chunk(chunk);
                    cutter_of(&mut units, &mut cutter_fn, tid, out.start_routine)
                        .loop_chunk(Pos { event, piece: 0 }, chunk);
                }
                Event::StaticLoop(place) => {
                    out.loops.static_loop(place, tracker.as_ref());
                    cutter_of(&mut units, &mut cutter_fn, tid, out.start_routine)
                        .static_loop(Pos { event, piece: 0 }, place);
                }
                Event::RegionEntry { sp } => region_sp = Some(sp),
                Event::Signal { .. } => {
                    if let Some(tr) = &mut tracker {
                        tr.signal();
                    }
                }
                Event::SignalReturn { .. } => {
                    if let Some(tr) = &mut tracker {
                        tr.signal_return();
                    }
                }
                _ => {}
            }
            let stats = reader.chunk_stats();
            if stats.seq != chunk_seq {
                chunk_seq = stats.seq;
                if let Some(p) = self.progress {
                    p.advance(stats.offset.saturating_sub(reported));
                    reported = reported.max(stats.offset);
                }
                out.chunks.push(ChunkStart {
                    offset: stats.offset,
                    seq: stats.seq,
                    first_event: event,
                });
            }
            event += 1;
        }
        out.events = event;
        (out.block_execs, out.accesses) = (block_execs, accesses);
        out.used_damaged_chunk = reader.returned_damaged_events();
        if let Some(p) = self.progress {
            let size = self
                .trace
                .threads()
                .iter()
                .find(|t| t.tid == tid)
                .map_or(0, |t| t.size);
            p.advance(size.saturating_sub(reported));
        }
        if let (Some(cfg), Some(tr)) = (cfg, &tracker) {
            cfg.end(tr);
        }
        out.loops.finish();
        (out.units, out.unit_problems, out.runtime_calls_inside) = units
            .map(|u| u.finish(Pos { event, piece: 0 }))
            .unwrap_or_default();
        out.skipped_in = skipped_in.into_iter().collect();
        out.skipped_in.sort_unstable();
        if run.1 > 0 {
            *traced_in.entry(run.0).or_default() += run.1;
        }
        out.traced_in = traced_in.into_iter().collect();
        out.traced_in.sort_unstable();
        out
    }
}

/// The thread's unit cutter, made when first needed: by then its
/// `thread_start` event has named its start routine.
fn cutter_of<'u>(
    units: &'u mut Option<UnitCutter>,
    make: &mut Option<impl FnOnce(u64) -> Cutter>,
    tid: u64,
    start_routine: u64,
) -> &'u mut UnitCutter {
    units.get_or_insert_with(|| {
        UnitCutter::new(tid, (make.take().expect("made once"))(start_routine))
    })
}

/// The stack pointer a call leaves for its callee: the address where it
/// pushed the return address (its block's last 8-byte write).
pub fn call_push(accesses: &[tf_trace::Access]) -> Option<u64> {
    accesses
        .iter()
        .rev()
        .find(|a| a.write && a.size == 8)
        .map(|a| a.addr)
}
