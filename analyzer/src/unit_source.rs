//! The units a worker's warps read: small ones read whole when their warp
//! starts (and shared by the lanes of every width made of them), long ones
//! by a reader at their start; and the readers one worker keeps from one
//! warp to the next.

use crate::blocks::CanonicalBlocks;
use crate::lane_source::{Batch, LaneSource};
use crate::lanes::UnitReader;
use crate::scan::ChunkStart;
use crate::unit_starts::Places;
use crate::units::Unit;
use std::sync::Arc;
use tf_trace::Trace;

/// Units of at most this many events are read whole when their warp starts.
pub const SMALL_UNIT_EVENTS: u64 = 1 << 14;

/// A unit of more than [`SMALL_UNIT_EVENTS`] events, read as its lane goes.
pub fn is_long(unit: &Unit) -> bool {
    unit.end.event.saturating_sub(unit.start.event) > SMALL_UNIT_EVENTS
}

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
        places: Places<'_>,
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
    ) -> tf_trace::Result<LaneSource<'t>>
    where
        't: 'scope,
    {
        Ok(self.decode(trace, canon, unit, places)?.into_lane(ahead))
    }

    /// `unit` read whole now when it is small, else a reader at its start:
    /// what [`UnitSource::lane`] makes the sources of several lanes from.
    /// A small unit that does not decode is an error now.
    pub fn decode(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        places: Places<'_>,
    ) -> tf_trace::Result<UnitSource<'t>> {
        if is_long(unit) {
            let lane = match places.starts.and_then(|s| s.get(unit)) {
                // Placed by the first pass: read from there, walking
                // nothing; a reader kept there too goes on to the thread's
                // next unit when that one is small (a long one is placed).
                Some(start) => {
                    self.keep(UnitReader::resume(trace, canon, unit, &start)?);
                    UnitReader::resume(trace, canon, unit, &start)?
                }
                // Else read by a copy of a reader walked to its start; the
                // kept reader goes on from there to the thread's next unit,
                // so that the lanes of consecutive units of one thread
                // decode it about twice in all, not once per lane from the
                // start of a chunk (which may hold the whole thread).
                None => {
                    let reader = self.reader_for(trace, canon, unit, places.chunks)?;
                    let lane = reader.try_clone()?;
                    self.keep(reader);
                    lane
                }
            };
            return Ok(UnitSource::Long(Box::new(lane)));
        }
        let mut reader = self.reader_for(trace, canon, unit, places.chunks)?;
        // Room for as much as the last unit read whole held: consecutive
        // units are mostly alike, and growing by doubling copies them.
        let batch = Batch::whole(&mut reader, self.whole_size)?;
        self.whole_size = batch.size();
        self.keep(reader);
        Ok(UnitSource::Whole(Arc::new(batch)))
    }

    /// A reader of `unit` at its start, from the kept reader of its thread
    /// when there is one (see [`UnitReader::reach`]).
    fn reader_for(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitReader<'t>> {
        let kept = self.readers.iter().position(|r| r.tid() == unit.tid);
        let kept = kept.map(|i| self.readers.remove(i));
        UnitReader::reach(kept, trace, canon, unit, chunks)
    }

    /// Keeps `reader` for later units of its thread, in place of any
    /// reader of that thread kept before.
    fn keep(&mut self, reader: UnitReader<'t>) {
        self.readers.retain(|r| r.tid() != reader.tid());
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
        match self {
            UnitSource::Whole(batch) => LaneSource::whole(batch),
            UnitSource::Long(reader) => match ahead {
                Some(scope) => LaneSource::prefetched(*reader, scope),
                None => LaneSource::Direct(reader),
            },
        }
    }
}
