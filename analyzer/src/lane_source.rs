//! Where a lane's steps come from: read from its thread's stream as the
//! lane needs them, decoded ahead on a thread of their own (when a trace
//! makes fewer warps than there are cores), or read whole when the unit is
//! small; and the readers one worker keeps from one warp to the next.

use crate::blocks::CanonicalBlocks;
use crate::lanes::{LaneEvent, LaneStep, UnitReader};
use crate::scan::ChunkStart;
use crate::units::Unit;
use std::sync::Arc;
use tf_trace::{Access, Trace};

/// Steps of a unit decoded ahead: a whole small unit, or part of a long
/// one decoded by a reader thread.
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

/// Runs `reader` to the end of its unit, sending batches of steps.
fn decode_ahead(mut reader: UnitReader<'_>, tx: std::sync::mpsc::SyncSender<Batch>) {
    loop {
        let mut batch = Batch::new();
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
    batch: Arc<Batch>,
    /// The current batch's error, taken out of it.
    error: Option<tf_trace::Error>,
    pos: usize,
    events_pos: usize,
}

impl Prefetched {
    fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        loop {
            if let Some(&(step, events_end)) = self.batch.steps.get(self.pos) {
                events.clear();
                events.extend_from_slice(&self.batch.events[self.events_pos..events_end as usize]);
                self.events_pos = events_end as usize;
                self.pos += 1;
                *out = step;
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
                    self.batch = Arc::new(b);
                    self.pos = 0;
                    self.events_pos = 0;
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
    /// Decoded ahead by another thread.
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
        scope.spawn(move || decode_ahead(reader, tx));
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            batch: Arc::new(Batch::new()),
            error: None,
            pos: 0,
            events_pos: 0,
        }))
    }

    /// A source for a unit already read whole, without error, into `batch`.
    fn whole(batch: Arc<Batch>) -> LaneSource<'t> {
        debug_assert!(batch.end && batch.error.is_none());
        let (_, rx) = std::sync::mpsc::sync_channel(0);
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            batch,
            error: None,
            pos: 0,
            events_pos: 0,
        }))
    }

    /// See [`UnitReader::next_step`].
    #[inline]
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
            LaneSource::Prefetched(p) => {
                &p.0.batch.accesses[step.acc.0 as usize..step.acc.1 as usize]
            }
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

/// Units of at most this many events are read whole when their warp starts.
pub const SMALL_UNIT_EVENTS: u64 = 1 << 14;

/// Readers kept from one warp to the next by one worker: small units that
/// follow each other in a thread (loop iterations, calls of a function) are
/// read in one pass over the thread, not one pass from its start each.
#[derive(Default)]
pub struct UnitCache<'t> {
    /// Most recently used last; at most [`UnitCache::KEEP`].
    readers: Vec<UnitReader<'t>>,
    /// Steps and accesses of the last unit read whole.
    whole_size: (usize, usize),
}

impl<'t> UnitCache<'t> {
    /// Readers kept.
    const KEEP: usize = 4;

    /// The source of `unit`'s lane: read whole now when the unit is small
    /// (continuing the reader of its thread when the unit lies ahead of it),
    /// else read as the lane goes, on a thread of `scope` when `ahead`.
    pub fn source<'scope>(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
    ) -> tf_trace::Result<LaneSource<'t>>
    where
        't: 'scope,
    {
        Ok(self.decode(trace, canon, unit, chunks)?.into_lane(ahead))
    }

    /// `unit` read whole now when it is small, else a reader at its start:
    /// what [`UnitSource::lane`] makes the sources of several lanes from.
    /// A small unit that does not decode is an error now.
    pub fn decode(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitSource<'t>> {
        let mut reader = self.reader_for(trace, canon, unit, chunks)?;
        if unit.end.event.saturating_sub(unit.start.event) > SMALL_UNIT_EVENTS {
            // A long unit is read as the lane goes, by a copy of the reader
            // (which stands at its start); the kept reader goes on from there to the
            // next unit of the thread, so that the lanes of consecutive
            // units of one thread decode it about twice in all, not once per
            // lane from the start of a chunk (which may hold the whole thread).
            let lane = reader.try_clone()?;
            self.keep(reader);
            return Ok(UnitSource::Long(Box::new(lane)));
        }
        // Room for as much as the last unit read whole held: consecutive
        // units are mostly alike, and growing by doubling copies them.
        let (steps, accesses) = self.whole_size;
        let mut batch = Batch::new();
        batch.steps.reserve(steps);
        batch.accesses.reserve(accesses);
        fill(&mut reader, &mut batch, usize::MAX);
        self.whole_size = (batch.steps.len(), batch.accesses.len());
        self.keep(reader);
        match batch.error.take() {
            Some(e) => Err(e),
            None => Ok(UnitSource::Whole(Arc::new(batch))),
        }
    }

    /// A reader of `unit`: the kept reader of its thread when the unit lies
    /// ahead of it in the same chunk, else a new one at the unit's chunk.
    fn reader_for(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitReader<'t>> {
        // The first event of the chunk that `UnitReader::open` would seek
        // to: a reader behind it is better off seeking there.
        let k = chunks.partition_point(|c| c.first_event < unit.start.event);
        let chunk_start = k.checked_sub(1).map_or(0, |k| chunks[k].first_event);
        if let Some(i) = self.readers.iter().position(|r| r.tid() == unit.tid) {
            let mut r = self.readers.remove(i);
            if r.next_event >= chunk_start && r.retarget(unit)? {
                return Ok(r);
            }
        }
        UnitReader::open(trace, canon, unit, chunks)
    }

    /// Keeps `reader` for later units of its thread.
    fn keep(&mut self, reader: UnitReader<'t>) {
        self.readers.push(reader);
        if self.readers.len() > Self::KEEP {
            self.readers.remove(0);
        }
    }
}

/// A unit ready to be replayed by one lane or more (the lanes of the warps
/// that several widths form of the same units): read whole, or a reader at
/// its start.
pub enum UnitSource<'t> {
    /// A small unit read whole: every lane made of it shares its steps.
    Whole(Arc<Batch>),
    /// A long unit: each lane made of it reads it again.
    Long(Box<UnitReader<'t>>),
}

impl<'t> UnitSource<'t> {
    /// A lane's source (another one each call), decoded ahead on a thread
    /// of `scope` when given and the unit is long.
    pub fn lane<'scope>(
        &self,
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
    ) -> tf_trace::Result<LaneSource<'t>>
    where
        't: 'scope,
    {
        Ok(match self {
            UnitSource::Whole(batch) => LaneSource::whole(Arc::clone(batch)),
            UnitSource::Long(reader) => {
                UnitSource::Long(Box::new(reader.try_clone()?)).into_lane(ahead)
            }
        })
    }

    /// The source of the one lane made of this unit.
    pub fn into_lane<'scope>(
        self,
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
    ) -> LaneSource<'t>
    where
        't: 'scope,
    {
        match (self, ahead) {
            (UnitSource::Whole(batch), _) => LaneSource::whole(batch),
            (UnitSource::Long(reader), Some(scope)) => LaneSource::prefetched(*reader, scope),
            (UnitSource::Long(reader), None) => LaneSource::Direct(reader),
        }
    }
}
