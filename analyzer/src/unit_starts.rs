//! Where the long units of each thread start, found once by the first pass
//! and kept with it in the trace's index.
//!
//! A long unit's lane reads its unit as it goes. To start there, a reader
//! must have decoded everything from the start of the unit's chunk, and a
//! thread's file is often one chunk (a loop's code compresses to little):
//! the lanes of consecutive units of one thread, side by side in a warp,
//! would each need the thread's stream decoded up to their start. The
//! replay used to walk one reader from unit to unit of a thread and copy it
//! at each start, which decodes the thread twice in all (once walking, once
//! in the lanes). This pass walks each thread's long units once, the same
//! way, keeping the reader's place at each start ([`UnitStart`]): the
//! replay then opens each lane's reader there, and kept in the index, the
//! walk is not made again by later analyses. The walk itself skips the
//! rounds of loops on its way ([`tf_trace::ThreadReader::skip_rounds`]):
//! most of a long unit is such rounds.

use crate::blocks::CanonicalBlocks;
use crate::lanes::{UnitReader, UnitStart};
use crate::scan::{ChunkStart, ThreadScan};
use crate::unit_source::is_long;
use crate::units::{Pos, Unit};
use rayon::prelude::*;
use tf_trace::{ReaderState, ReaderStateDelta, Trace};

/// The places the long units of one thread start at.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct UnitStarts {
    /// By the unit's first position, in order.
    starts: Vec<Kept>,
}

/// A long unit's start as kept: its reader's place whole, or as what
/// changed since the start kept before it, in the same chunk (the units of
/// a loop rewrite few prediction entries from one start to the next; the
/// entries that the code before them left are kept once).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Kept {
    at: Pos,
    reader: Place,
    next_event: u64,
    start_sp: Option<u64>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Place {
    Whole(ReaderState),
    /// What changed since the start kept before this one.
    Since(ReaderStateDelta),
}

/// At most this many starts in a row are kept as changes: making a place
/// again applies the changes since the last one kept whole.
const CHANGES_IN_A_ROW: usize = 16;

impl UnitStarts {
    /// The starts of the long units of every thread of `scans` (by thread
    /// id, threads without long units left out), walked in parallel;
    /// `each` is told of every long unit placed.
    pub fn find(
        trace: &Trace,
        canon: &CanonicalBlocks,
        scans: &[ThreadScan],
        each: &(dyn Fn() + Sync),
    ) -> Vec<(u64, UnitStarts)> {
        scans
            .par_iter()
            .map(|s| {
                let starts = UnitStarts::walk(trace, canon, &s.units, &s.chunks, each);
                (s.tid, starts)
            })
            .filter(|(_, s)| !s.starts.is_empty())
            .collect()
    }

    /// Long units of `scan` whose start `find` would look for.
    pub fn wanted(scan: &ThreadScan) -> usize {
        scan.units.iter().filter(|u| is_long(u)).count()
    }

    /// Walks one reader through the thread's long units in order, as the
    /// replay's reader of a thread did (see [`UnitReader::reach`]). A unit
    /// that cannot be reached (a damaged chunk) ends the walk: the replay's
    /// own readers meet the damage and say so.
    fn walk(
        trace: &Trace,
        canon: &CanonicalBlocks,
        units: &[Unit],
        chunks: &[ChunkStart],
        each: &(dyn Fn() + Sync),
    ) -> UnitStarts {
        let mut starts: Vec<Kept> = Vec::new();
        let mut last: Option<ReaderState> = None;
        let mut in_a_row = 0;
        let mut reader: Option<UnitReader<'_>> = None;
        let mut long: Vec<&Unit> = units.iter().filter(|u| is_long(u)).collect();
        long.sort_by_key(|u| u.start);
        for unit in long {
            let Ok(mut r) = UnitReader::reach(reader.take(), trace, canon, unit, chunks) else {
                break;
            };
            if let Some(start) = r.place() {
                let since = last
                    .as_ref()
                    .filter(|_| in_a_row < CHANGES_IN_A_ROW)
                    .and_then(|l| start.reader.since(l));
                in_a_row = if since.is_some() { in_a_row + 1 } else { 0 };
                let reader = match since {
                    Some(delta) => Place::Since(delta),
                    None => Place::Whole(start.reader.clone()),
                };
                last = Some(start.reader);
                starts.push(Kept {
                    at: unit.start,
                    reader,
                    next_event: start.next_event,
                    start_sp: start.start_sp,
                });
            }
            each();
            reader = Some(r);
        }
        UnitStarts { starts }
    }

    /// Where `unit` starts, when it is one of the long units walked.
    pub fn get(&self, unit: &Unit) -> Option<UnitStart> {
        let i = self
            .starts
            .binary_search_by_key(&unit.start, |s| s.at)
            .ok()?;
        let kept = &self.starts[i];
        // The last start kept whole, and the changes since, in order.
        let (whole, mut reader) = (0..=i).rev().find_map(|k| match &self.starts[k].reader {
            Place::Whole(r) => Some((k, r.clone())),
            Place::Since(_) => None,
        })?;
        for k in &self.starts[whole + 1..=i] {
            if let Place::Since(delta) = &k.reader {
                reader = delta.after(&reader);
            }
        }
        Some(UnitStart {
            reader,
            next_event: kept.next_event,
            start_sp: kept.start_sp,
        })
    }
}

/// Where readers of one thread may start: at its chunks, and at its long
/// units.
#[derive(Clone, Copy, Debug, Default)]
pub struct Places<'a> {
    /// Where its chunks start.
    pub chunks: &'a [ChunkStart],
    /// Where its long units start, when the first pass placed them.
    pub starts: Option<&'a UnitStarts>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::LaneStep;
    use crate::testutil::TempTrace;
    use tf_trace::{BlockDef, EndKind};

    /// Units of `EVENTS` events each, one after the other in one thread
    /// (one chunk): a call, a loop over scattered and strided addresses,
    /// a return.
    const UNITS: u64 = 18;
    const EVENTS: u64 = crate::unit_source::SMALL_UNIT_EVENTS + 100;

    fn steps(mut r: UnitReader<'_>) -> Vec<(LaneStep, Vec<tf_trace::Access>)> {
        let (mut step, mut events) = (LaneStep::default(), Vec::new());
        let mut out = Vec::new();
        while r.next_step(&mut step, &mut events).unwrap() {
            assert!(events.is_empty());
            out.push((step, r.accesses(&step).to_vec()));
        }
        out
    }

    #[test]
    fn a_lane_resumed_at_its_start_reads_what_a_walk_there_reads() {
        let mut t = TempTrace::new();
        let w = t.writer();
        let call = w
            .block(&BlockDef::new(0x1000).insn(5).write(8).end(EndKind::Call))
            .unwrap();
        let body = w
            .block(
                &BlockDef::new(0x2000)
                    .insn(4)
                    .read(8)
                    .insn(3)
                    .read(4)
                    .write(4)
                    .end(EndKind::Branch),
            )
            .unwrap();
        let ret = w
            .block(&BlockDef::new(0x2010).insn(1).read(8).end(EndKind::Return))
            .unwrap();
        let mut th = w.thread(1).unwrap();
        let mut x = 1u64;
        for u in 0..UNITS {
            th.exec(call, &[0x7000_0000 - 8]).unwrap();
            for i in 0..EVENTS - 2 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(u + 1);
                let scattered = 0x50_0000 + (x >> 44) * 4;
                th.exec(
                    body,
                    &[0x10_0000 + 8 * (u * EVENTS + i), scattered, scattered],
                )
                .unwrap();
            }
            th.exec(ret, &[0x7000_0000 - 8]).unwrap();
        }
        let trace = t.finish();
        let canon = CanonicalBlocks::build(trace.blocks());
        let units: Vec<Unit> = (0..UNITS)
            .map(|u| Unit {
                tid: 1,
                start: Pos {
                    event: u * EVENTS + 1,
                    piece: 0,
                },
                end: Pos {
                    event: (u + 1) * EVENTS,
                    piece: 0,
                },
                root: 0x2000,
                root_sym: 0,
                first: 0,
                stack_pointer: None,
                insns: 0,
                iteration: None,
            })
            .collect();
        assert!(units.iter().all(is_long));
        let starts = UnitStarts::walk(&trace, &canon, &units, &[], &|| {});
        let kept_whole = starts
            .starts
            .iter()
            .filter(|k| matches!(k.reader, Place::Whole(_)))
            .count();
        assert_eq!(
            kept_whole, 2,
            "the first start, then 16 as changes, then whole again"
        );
        for unit in &units {
            let start = starts.get(unit).expect("every long unit placed");
            let resumed = UnitReader::resume(&trace, &canon, unit, &start).unwrap();
            let walked = UnitReader::open(&trace, &canon, unit, &[]).unwrap();
            assert_eq!(resumed.start_sp(), walked.start_sp());
            let (resumed, walked) = (steps(resumed), steps(walked));
            assert_eq!(resumed.len() as u64, EVENTS - 1);
            let same = resumed
                .iter()
                .zip(&walked)
                .all(|(a, b)| format!("{a:?}") == format!("{b:?}"));
            assert!(
                same && resumed.len() == walked.len(),
                "unit at {:?}",
                unit.start
            );
        }
    }
}
