//! Where a lane's steps come from: read from its thread's stream as the
//! lane needs them, decoded ahead on a thread of their own (when a trace
//! makes fewer warps than there are cores), or read whole when the unit is
//! small ([`crate::unit_source`]).

use crate::lanes::{LaneEvent, LaneStep, UnitReader};
use std::sync::Arc;
use tf_trace::Access;

/// Steps of a unit decoded ahead: a whole small unit, or part of a long
/// one.
pub struct Batch {
    /// Steps, each with the end of its events in `events`.
    steps: Vec<(LaneStep, u32)>,
    events: Vec<LaneEvent>,
    accesses: Vec<Access>,
    start_sp: Option<u64>,
    /// The unit ends after these steps (with this error, if it failed).
    end: bool,
    error: Option<tf_trace::Error>,
}

/// Steps per batch: large enough that handing batches over costs nothing,
/// small enough that the reader thread keeps only a little ahead.
const BATCH_STEPS: usize = 8192;

impl Batch {
    fn new() -> Batch {
        Batch {
            steps: Vec::with_capacity(BATCH_STEPS),
            events: Vec::new(),
            accesses: Vec::new(),
            start_sp: None,
            end: false,
            error: None,
        }
    }

    /// Empties it for another fill, keeping its room.
    fn clear(&mut self) {
        self.steps.clear();
        self.events.clear();
        self.accesses.clear();
        self.start_sp = None;
        self.end = false;
        self.error = None;
    }

    /// The rest of `reader`'s unit, read now, with room reserved for
    /// `size` (steps and accesses, as [`Batch::size`] gives: consecutive
    /// units are mostly alike, and growing by doubling copies them). A unit
    /// that does not decode is an error now.
    pub fn whole(reader: &mut UnitReader<'_>, size: (usize, usize)) -> tf_trace::Result<Batch> {
        let mut batch = Batch::new();
        batch.steps.reserve(size.0);
        batch.accesses.reserve(size.1);
        fill(reader, &mut batch, usize::MAX);
        match batch.error.take() {
            Some(e) => Err(e),
            None => Ok(batch),
        }
    }

    /// Steps and accesses held.
    pub fn size(&self) -> (usize, usize) {
        (self.steps.len(), self.accesses.len())
    }

    /// Hands out the step after `at` into `out` and `events` (what
    /// happened since the previous one); false when the batch has no more.
    #[inline]
    fn hand_out(&self, at: &mut At, out: &mut LaneStep, events: &mut Vec<LaneEvent>) -> bool {
        let Some(&(step, events_end)) = self.steps.get(at.step) else {
            return false;
        };
        events.clear();
        events.extend_from_slice(&self.events[at.event..events_end as usize]);
        at.event = events_end as usize;
        at.step += 1;
        *out = step;
        true
    }

    /// The accesses of a step it handed out.
    #[inline]
    fn accesses(&self, step: &LaneStep) -> &[Access] {
        &self.accesses[step.acc.0 as usize..step.acc.1 as usize]
    }
}

/// The next step of a batch to hand out, and its first event.
#[derive(Clone, Copy, Debug, Default)]
struct At {
    step: usize,
    event: usize,
}

/// Reads steps of `reader` into `batch` until it holds `max` steps or the
/// unit ends (then `batch.end` is set, with the error if reading failed).
fn fill(reader: &mut UnitReader<'_>, batch: &mut Batch, max: usize) {
    let mut step = LaneStep::default();
    let mut events = Vec::new();
    while batch.steps.len() < max {
        match reader.next_step(&mut step, &mut events) {
            Ok(true) => {
                batch.events.extend_from_slice(&events);
                let acc = reader.accesses(&step);
                let lo = batch.accesses.len() as u32;
                batch.accesses.extend_from_slice(acc);
                let mut s = step;
                s.acc = (lo, lo + acc.len() as u32);
                batch.steps.push((s, batch.events.len() as u32));
            }
            Ok(false) => {
                batch.end = true;
                break;
            }
            Err(e) => {
                batch.end = true;
                batch.error = Some(e);
                break;
            }
        }
    }
    batch.start_sp = reader.start_sp();
}

/// Runs `reader` to the end of its unit, sending batches of steps and
/// filling again those that come back.
// Reused, a batch keeps its room and its memory stays mapped: a new one for
// every fill cost its allocation and the growth of its vectors, 4% of a
// one-warp replay's time on two cores.
fn decode_ahead(
    mut reader: UnitReader<'_>,
    tx: std::sync::mpsc::SyncSender<Batch>,
    used: std::sync::mpsc::Receiver<Batch>,
) {
    loop {
        let mut batch = match used.try_recv() {
            Ok(mut b) => {
                b.clear();
                b
            }
            Err(_) => Batch::new(),
        };
        fill(&mut reader, &mut batch, BATCH_STEPS);
        let end = batch.end;
        if tx.send(batch).is_err() || end {
            return;
        }
    }
}

/// The consuming side of [`decode_ahead`], or of a unit read whole (whose
/// batch the warps of several widths may share).
struct Prefetched {
    rx: std::sync::mpsc::Receiver<Batch>,
    /// Where batches handed out go back to be filled again (none for a
    /// unit read whole).
    used: Option<std::sync::mpsc::Sender<Batch>>,
    batch: Arc<Batch>,
    /// The current batch's error, taken out of it.
    error: Option<tf_trace::Error>,
    at: At,
}

impl Prefetched {
    fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        loop {
            if self.batch.hand_out(&mut self.at, out, events) {
                return Ok(true);
            }
            if self.batch.end {
                return match self.error.take() {
                    Some(e) => Err(e),
                    None => Ok(false),
                };
            }
            match self.rx.recv() {
                Ok(mut b) => {
                    self.error = b.error.take();
                    let done = std::mem::replace(&mut self.batch, Arc::new(b));
                    if let (Some(used), Ok(done)) = (&self.used, Arc::try_unwrap(done)) {
                        // the reader may have ended: nothing to give back to
                        let _ = used.send(done);
                    }
                    self.at = At::default();
                }
                Err(_) => return Ok(false),
            }
        }
    }
}

/// Where a lane's steps come from: read as the lane needs them, or decoded
/// ahead on a thread of their own (when there are fewer warps than cores,
/// this puts the decoding of a warp's lanes on the idle cores).
pub enum LaneSource<'t> {
    /// Read on demand.
    Direct(Box<UnitReader<'t>>),
    /// Decoded ahead by another thread, or read whole.
    Prefetched(PrefetchedSource),
}

/// The state of a [`LaneSource::Prefetched`].
pub struct PrefetchedSource(Prefetched);

impl<'t> LaneSource<'t> {
    /// Reads `reader` on demand.
    pub fn direct(reader: UnitReader<'t>) -> LaneSource<'t> {
        LaneSource::Direct(Box::new(reader))
    }

    /// Decodes `reader` ahead on a thread of `scope`.
    pub fn prefetched<'scope>(
        reader: UnitReader<'t>,
        scope: &'scope std::thread::Scope<'scope, '_>,
    ) -> LaneSource<'t>
    where
        't: 'scope,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        let (used_tx, used) = std::sync::mpsc::channel();
        scope.spawn(move || decode_ahead(reader, tx, used));
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            used: Some(used_tx),
            batch: Arc::new(Batch::new()),
            error: None,
            at: At::default(),
        }))
    }

    /// A source for a unit already read whole, without error, into `batch`.
    pub fn whole(batch: Arc<Batch>) -> LaneSource<'t> {
        debug_assert!(batch.end && batch.error.is_none());
        let (_, rx) = std::sync::mpsc::sync_channel(0);
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            used: None,
            batch,
            error: None,
            at: At::default(),
        }))
    }

    /// See [`UnitReader::next_step`].
    // Always inlined: the replay's block-to-block loop calls it on every
    // step; called, it cost that loop 7% on a one-warp replay.
    #[inline(always)]
    pub fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        match self {
            LaneSource::Direct(r) => r.next_step(out, events),
            LaneSource::Prefetched(p) => p.0.next_step(out, events),
        }
    }

    /// See [`UnitReader::accesses`].
    #[inline]
    pub fn accesses(&self, step: &LaneStep) -> &[Access] {
        match self {
            LaneSource::Direct(r) => r.accesses(step),
            LaneSource::Prefetched(p) => p.0.batch.accesses(step),
        }
    }

    /// See [`UnitReader::start_sp`] (known once the first step is read).
    pub fn start_sp(&self) -> Option<u64> {
        match self {
            LaneSource::Direct(r) => r.start_sp(),
            LaneSource::Prefetched(p) => p.0.batch.start_sp,
        }
    }
}
