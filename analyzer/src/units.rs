//! Stage 5: units, the SIMT threads.
//!
//! A GPU thread does a fixed piece of work; a CPU thread often does many
//! (a pool worker serving requests, an OpenMP thread running a chunk of
//! iterations). A *unit* is the piece of a CPU thread's trace that becomes one
//! SIMT thread:
//!
//! | `--unit` | one unit is |
//! |---|---|
//! | `auto` (default) | on an OpenMP program (GCC `*._omp_fn.*`, LLVM `.omp_outlined.*`), each iteration of a worksharing loop whose chunks the trace records (crate::worksharing), and each call of an outlined function that ran none; otherwise each call of a thread's start routine (`main` for the first thread); a thread where neither is seen is one unit |
//! | `thread` | a whole thread |
//! | `call:FN` | each outermost call of `FN` (its callees included) |
//! | `iter:FN` | each iteration of `FN`'s worksharing loop when it ran one; otherwise of the outermost loop of `FN`: from one arrival at the loop header to the next, or to the exit from the loop (the code before and after the loop belongs to no unit) |
//!
//! Units are ordered by thread creation, then by time within the thread;
//! iterations of worksharing loops come first, by loop instance and logical
//! iteration number.
//! Positions are counted in the thread's events (as the trace reader returns
//! them, runs expanded) and, inside a block event, in canonical pieces.

use crate::blocks::{CBlockId, Step};
use crate::frames::{FrameTracker, Transition};
use crate::tasks::{RuntimeCalls, TaskPlan};
use crate::worksharing::{Iteration, IterationLoop, IterationPlan};
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;
use tf_trace::{FunctionId, LoopChunk, StaticLoop};

#[path = "units_worksharing.rs"]
mod worksharing_cut;
use worksharing_cut::Stretch;

/// A position in a thread's stream: an event, and a piece of it.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Pos {
    /// Index of the event in the thread's stream.
    pub event: u64,
    /// Index of the canonical piece within a block event.
    pub piece: u16,
}

/// One unit: a stretch of one thread's stream.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unit {
    /// The thread.
    pub tid: u64,
    /// Its first step.
    pub start: Pos,
    /// Just past its last step.
    pub end: Pos,
    /// The entry address of the function of its bottom frame.
    pub root: u64,
    /// That function's symbol (0 = unknown).
    pub root_sym: FunctionId,
    /// Its first block.
    pub first: CBlockId,
    /// The stack pointer at its start, when known (the address of the call's
    /// return-address push): the base of the interleaved stack model.
    pub stack_pointer: Option<u64>,
    /// Instructions it traced.
    pub insns: u64,
    /// For an iteration of an OpenMP worksharing loop: which one.
    pub iteration: Option<Iteration>,
}

/// The functions whose calls make units, by entry address.
#[derive(Clone, Debug, Default)]
pub struct CallSet {
    /// Entry addresses.
    pub entries: HashSet<u64>,
    /// Which of them are OpenMP tasks, whose calls are units wherever the
    /// runtime makes them, and which the regions they ran in, whose calls
    /// are none (crate::tasks).
    pub tasks: TaskPlan,
}

/// Where units of one thread begin and end, decided step by step.
pub enum Cutter {
    /// The whole thread is one unit.
    Whole,
    /// Outermost calls of these functions; with `true`, a thread where none
    /// is seen is one unit.
    Calls(CallSet, bool),
    /// Iterations of a loop of the function at this entry: from one arrival
    /// at its iteration block (the header) to the next, or out of the loop.
    Iterations(u64, IterationLoop),
    /// Iterations of OpenMP worksharing loops, numbered by their chunks
    /// (crate::worksharing); with a call set, each call of those functions
    /// in which the runtime handed out no chunk is one unit too.
    Worksharing(Arc<IterationPlan>, Option<CallSet>),
}

/// The unit being gathered.
struct Open {
    unit: Unit,
    /// The frame depth of its bottom frame.
    depth: usize,
}

/// Cuts one thread's steps into units.
pub struct UnitCutter {
    cutter: Cutter,
    cut: Cut,
}

/// The units cut so far and the one being gathered.
struct Cut {
    tid: u64,
    open: Option<Open>,
    /// Depth and stack pointer of the active frame of the loop's function.
    loop_frame: Option<(usize, Option<u64>)>,
    units: Vec<Unit>,
    /// The thread's first step (for the whole-thread fallback), and every
    /// instruction it traced.
    first: Option<Unit>,
    traced: u64,
    /// The worksharing stretch being cut.
    stretch: Option<Stretch>,
    /// Where each worksharing loop instance began in this thread.
    sites: HashMap<u64, CBlockId>,
    /// A call unit of the worksharing fallback: its depth, and whether the
    /// runtime handed out a chunk inside it (its unit was then dropped); or
    /// a call that is no unit because its tasks are (crate::tasks).
    call: Option<(usize, bool)>,
    /// Stretches whose iterations could not be cut as the runtime handed
    /// them out.
    problems: Vec<String>,
    /// Calls the OpenMP runtime made of unit functions that began no unit
    /// (crate::tasks).
    inside: RuntimeCalls,
    /// By frame depth: the stack pointer its frame began with, when its
    /// call was seen with addresses (the base of an iteration's GPU-local
    /// stack: the same for every iteration of the frame, whatever ran
    /// before it).
    frame_sp: Vec<Option<u64>>,
}

impl UnitCutter {
    /// A cutter for thread `tid`.
    pub fn new(tid: u64, cutter: Cutter) -> UnitCutter {
        UnitCutter {
            cutter,
            cut: Cut {
                tid,
                open: None,
                loop_frame: None,
                units: Vec::new(),
                first: None,
                traced: 0,
                stretch: None,
                sites: HashMap::new(),
                call: None,
                problems: Vec::new(),
                inside: RuntimeCalls::default(),
                frame_sp: Vec::new(),
            },
        }
    }

    /// Takes the step at `pos`, reached by `t` (`None` for the thread's
    /// first step, and where the `--only` region is entered); `tracker` is
    /// already past it. `call_sp` is the address the last call pushed its
    /// return address to, when `t` is a call (or the region's entry);
    /// `by_runtime`, whether the OpenMP runtime made that call.
    // Always inlined: the scan calls it on every step, and most steps stay in
    // their frame and change little.
    #[inline(always)]
    pub fn step(
        &mut self,
        pos: Pos,
        step: &Step,
        t: Option<Transition>,
        tracker: &FrameTracker,
        call_sp: Option<u64>,
        by_runtime: bool,
    ) {
        let cut = &mut self.cut;
        cut.traced += u64::from(step.insns);
        if t != Some(Transition::Same) {
            // The stack pointer where each frame on the stack began.
            let depth = tracker.depth();
            cut.frame_sp.resize(depth + 1, None);
            if matches!(t, None | Some(Transition::Call)) {
                cut.frame_sp[depth] = call_sp;
            }
        }
        // Staying in a frame neither opens nor closes a call unit.
        let quiet = t == Some(Transition::Same);
        if !(quiet && matches!(self.cutter, Cutter::Calls(..))) {
            let depth = tracker.depth();
            let top = *tracker.top();
            if cut.first.is_none() {
                cut.first = Some(cut.unit(pos, step, top.entry, top.sym, None));
            }
            match &self.cutter {
                Cutter::Whole => {
                    if t.is_none() {
                        cut.begin(pos, step, depth, top.entry, top.sym, None);
                    }
                }
                Cutter::Calls(set, _) => {
                    if cut.open.as_ref().is_some_and(|o| depth < o.depth) {
                        cut.close(pos);
                    }
                    if cut.call.is_some_and(|(d, _)| depth < d) {
                        cut.call = None;
                    }
                    let entered = matches!(
                        t,
                        None | Some(Transition::Call) | Some(Transition::TailCall)
                    );
                    if entered && set.entries.contains(&top.entry) {
                        let region = set.tasks.regions.contains(&top.entry);
                        match &cut.open {
                            // a task region's call: its tasks are the units,
                            // the runtime's calls in it
                            None if region => cut.call = cut.call.or(Some((depth, true))),
                            None if cut.call.is_none() || by_runtime => {
                                cut.begin(pos, step, depth, top.entry, top.sym, call_sp)
                            }
                            None => {}
                            Some(o) if by_runtime => cut.inside.note(top.entry, Some(o.unit.root)),
                            Some(_) => {}
                        }
                    }
                }
                Cutter::Iterations(function, lp) => {
                    let (function, header) = (*function, lp.block);
                    if let Some((d, _)) = cut.loop_frame {
                        if depth < d || (depth == d && top.entry != function) {
                            cut.close(pos);
                            cut.loop_frame = None;
                        }
                    }
                    if cut.loop_frame.is_none() && top.entry == function {
                        cut.loop_frame = Some((depth, cut.frame_sp[depth]));
                    }
                    if let Some((d, sp)) = cut.loop_frame {
                        if depth == d {
                            if step.cblock == header {
                                cut.close(pos);
                                cut.begin(pos, step, depth, top.entry, top.sym, sp);
                            } else if cut.open.is_some() && !lp.reach.contains(&step.cblock) {
                                cut.close(pos);
                            }
                        }
                    }
                }
                Cutter::Worksharing(plan, calls) => {
                    if let Some(set) = calls {
                        cut.call_fallback(set, pos, step, t, tracker, (call_sp, by_runtime));
                    }
                    cut.worksharing(plan, pos, step, tracker);
                }
            }
        }
        if let Some(o) = &mut cut.open {
            o.unit.insns += u64::from(step.insns);
        }
    }

    /// A `loop_chunk` event at `pos`: the stretch before it ends.
    pub fn loop_chunk(&mut self, pos: Pos, chunk: LoopChunk) {
        if let Cutter::Worksharing(plan, _) = &self.cutter {
            self.cut.end_stretch(pos);
            // A call that took part in a loop cut into iterations is no
            // unit, even when the runtime handed it none (and when the loop
            // runs in a function it calls: clang -O0's outlined wrappers).
            let cut = &mut self.cut;
            if let Some(o) = &cut.open {
                let cuts = plan.cuts(o.unit.root) || plan.cuts_instance(chunk.loop_id);
                match cut.call {
                    Some((d, false)) if cuts => {
                        cut.open = None;
                        cut.call = Some((d, true));
                    }
                    // a task's or nested region's call, in a region's call
                    Some((_, true)) if cuts => cut.open = None,
                    _ => {}
                }
            }
            self.cut.stretch = (chunk.count > 0).then(|| Stretch::new(chunk));
        }
    }

    /// A `static_loop` event at `pos`: when the plan found the thread's part
    /// a static schedule's, the chunk it stands for begins
    /// (crate::static_schedule); its stretch ends where its function returns.
    pub fn static_loop(&mut self, pos: Pos, place: StaticLoop) {
        if let Cutter::Worksharing(plan, _) = &self.cutter {
            if let Some(&chunk) = plan.statics.chunks.get(&(place.loop_id, place.thread)) {
                self.loop_chunk(pos, chunk);
                if let Some(st) = &mut self.cut.stretch {
                    st.ends_on_return = true;
                }
            }
        }
    }

    /// The thread left the `--only` region at `pos`: every frame of it
    /// ended (its root frame's return is not seen as one), so the call or
    /// iteration open ends, and a static part's stretch with it; the next
    /// traced block enters afresh.
    pub fn left_region(&mut self, pos: Pos) {
        let cut = &mut self.cut;
        if matches!(self.cutter, Cutter::Whole) {
            return;
        }
        if cut.stretch.as_ref().is_some_and(|st| st.ends_on_return) {
            cut.end_stretch(pos);
        } else if let Some(st) = &mut cut.stretch {
            st.frame = None; // a runtime's chunk goes on where it re-enters
        }
        if !matches!(cut.call, Some((_, true))) {
            cut.close(pos);
        }
        cut.call = None;
        cut.loop_frame = None;
    }

    /// Stretches whose iterations did not match what the runtime handed out.
    pub fn problems(&self) -> &[String] {
        &self.cut.problems
    }

    /// The thread ended at `end`: closes the open unit and returns them all
    /// with the problems found (see [`UnitCutter::problems`]) and the calls
    /// the OpenMP runtime made of unit functions that began no unit.
    pub fn finish(mut self, end: Pos) -> (Vec<Unit>, Vec<String>, RuntimeCalls) {
        let cut = &mut self.cut;
        cut.end_stretch(end);
        cut.close(end);
        if let (Cutter::Calls(_, true), true, Some(mut whole)) =
            (&self.cutter, cut.units.is_empty(), cut.first.take())
        {
            whole.end = end;
            whole.insns = cut.traced;
            cut.units.push(whole);
        }
        (self.cut.units, self.cut.problems, self.cut.inside)
    }
}

impl Cut {
    fn unit(
        &self,
        pos: Pos,
        step: &Step,
        root: u64,
        root_sym: FunctionId,
        sp: Option<u64>,
    ) -> Unit {
        Unit {
            tid: self.tid,
            start: pos,
            end: pos,
            root,
            root_sym,
            first: step.cblock,
            stack_pointer: sp,
            insns: 0,
            iteration: None,
        }
    }

    fn begin(
        &mut self,
        pos: Pos,
        step: &Step,
        depth: usize,
        root: u64,
        root_sym: FunctionId,
        sp: Option<u64>,
    ) {
        self.open = Some(Open {
            unit: self.unit(pos, step, root, root_sym, sp),
            depth,
        });
    }

    fn close(&mut self, pos: Pos) {
        if let Some(mut o) = self.open.take() {
            o.unit.end = pos;
            if o.unit.insns > 0 {
                self.units.push(o.unit);
            }
        }
    }
}
