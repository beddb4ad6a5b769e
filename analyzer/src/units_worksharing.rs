//! The worksharing part of the unit cutter (crate::units): a loop's chunks
//! cut into iterations, and the call units that stand in for functions
//! whose loops are not cut.

use super::{CallSet, Cut, Pos};
use crate::blocks::Step;
use crate::frames::{FrameTracker, Transition};
use crate::worksharing::{Iteration, IterationPlan, LoopSite};
use tf_trace::LoopChunk;

/// A worksharing stretch: a chunk, its function's frame (depth, entry;
/// learnt at its first step) and the arrivals at its iteration block.
pub(super) struct Stretch {
    pub(super) chunk: LoopChunk,
    pub(super) frame: Option<(usize, LoopSite)>,
    pub(super) arrivals: u64,
    /// Which of its iteration loop's sibling loops it runs (0: the first),
    /// and how many siblings follow the first.
    pub(super) sibling: u32,
    pub(super) siblings: u32,
    /// A static part's: it ends where its function returns.
    pub(super) ends_on_return: bool,
}

impl Stretch {
    /// A stretch of `chunk`, its frame not seen yet.
    pub(super) fn new(chunk: LoopChunk) -> Stretch {
        Stretch {
            chunk,
            frame: None,
            arrivals: 0,
            sibling: 0,
            siblings: 0,
            ends_on_return: false,
        }
    }
}

impl Cut {
    /// One step of the worksharing cutter's call units; `call` is the stack
    /// pointer of the call `t` (when it is one) and whether the OpenMP
    /// runtime made it.
    pub(super) fn call_fallback(
        &mut self,
        set: &CallSet,
        pos: Pos,
        step: &Step,
        t: Option<Transition>,
        tracker: &FrameTracker,
        (sp, by_runtime): (Option<u64>, bool),
    ) {
        let (depth, top) = (tracker.depth(), tracker.top());
        if let Some((d, taken)) = self.call {
            if depth < d {
                if !taken {
                    self.close(pos);
                }
                self.call = None;
            }
        }
        // a task that began in a region's call returned
        if self.stretch.is_none() && self.open.as_ref().is_some_and(|o| depth < o.depth) {
            self.close(pos);
        }
        let entered = matches!(
            t,
            None | Some(Transition::Call) | Some(Transition::TailCall)
        );
        if entered && set.entries.contains(&top.entry) {
            let idle = self.open.is_none() && self.stretch.is_none();
            if self.call.is_none() && self.stretch.is_none() {
                // a task region's call is no unit: its tasks are
                let region = set.tasks.regions.contains(&top.entry);
                if !region {
                    self.begin(pos, step, depth, top.entry, top.sym, sp);
                }
                self.call = Some((depth, region));
            } else if by_runtime && idle && set.tasks.tasks.contains(&top.entry) {
                self.begin(pos, step, depth, top.entry, top.sym, sp);
            } else if by_runtime {
                // a task or a nested region, inside a unit or a call whose
                // work is cut into iterations
                let host = self.open.as_ref().map(|o| o.unit.root);
                self.inside.note(top.entry, host);
            }
        }
    }

    /// One step of a worksharing stretch (crate::worksharing).
    pub(super) fn worksharing(
        &mut self,
        plan: &IterationPlan,
        pos: Pos,
        step: &Step,
        tracker: &FrameTracker,
    ) {
        let Some(st) = &mut self.stretch else {
            return;
        };
        let (depth, top) = (tracker.depth(), tracker.top());
        let sites = &mut self.sites;
        let (d, site) = *st.frame.get_or_insert_with(|| {
            (
                depth,
                LoopSite::of(sites, st.chunk.loop_id, top.entry, step.cblock),
            )
        });
        let entry = site.entry;
        let Some(lp) = plan.loops.get(&site) else {
            // a loop of a function that is not cut into iterations
            self.stretch = None;
            return;
        };
        if let Some((d, false)) = self.call {
            self.open = None; // the call's work is cut into iterations
            self.call = Some((d, true));
        }
        if depth < d && st.ends_on_return {
            self.end_stretch(pos);
            return;
        }
        if depth < d || (depth == d && top.entry != entry) {
            self.close(pos);
            return;
        }
        if depth != d {
            return;
        }
        st.siblings = lp.siblings.len() as u32;
        let sibling = if step.cblock == lp.block {
            Some(0)
        } else {
            let k = lp.siblings.iter().position(|&b| b == step.cblock);
            k.map(|k| k as u32 + 1)
        };
        if let Some(k) = sibling {
            if k != st.sibling {
                // the chunk's next loop: the last one's iterations all ran
                let problem = (k != st.sibling + 1 || st.arrivals != st.chunk.iterations())
                    .then(|| arrival_problem(self.tid, st));
                self.problems.extend(problem);
                st.sibling = k;
                st.arrivals = 0;
            }
            let iteration = Some(Iteration {
                loop_id: st.chunk.loop_id,
                sibling: k,
                number: st.chunk.number(st.arrivals),
            });
            st.arrivals += 1;
            self.close(pos);
            let sp = self.frame_sp.get(depth).copied().flatten();
            self.begin(pos, step, depth, top.entry, top.sym, sp);
            if let Some(o) = &mut self.open {
                o.unit.iteration = iteration;
            }
        } else if !lp.reach.contains(&step.cblock) {
            self.close(pos);
        }
    }

    /// The stretch ends at `pos`: its arrivals must be its iterations, in
    /// each of its sibling loops.
    pub(super) fn end_stretch(&mut self, pos: Pos) {
        if let Some(st) = self.stretch.take() {
            self.close(pos);
            let want = st.chunk.iterations();
            if st.arrivals != want || (want > 0 && st.sibling != st.siblings) {
                self.problems.push(arrival_problem(self.tid, &st));
            }
        }
    }
}

/// What went wrong when a stretch's arrivals (in its current sibling loop)
/// are not the iterations its chunk hands out.
fn arrival_problem(tid: u64, st: &Stretch) -> String {
    let loops = match st.siblings {
        0 => String::new(),
        n => format!(
            " (loop {} of the {} its static split runs)",
            st.sibling + 1,
            n + 1
        ),
    };
    format!(
        "thread {tid}, loop instance {}{loops}: the runtime handed out {} iteration(s) from \
         number {}, the trace shows {} arrival(s) at the loop's iteration block",
        st.chunk.loop_id,
        st.chunk.iterations(),
        st.chunk.first,
        st.arrivals
    )
}
