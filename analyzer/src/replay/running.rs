//! A warp's replay that runs in turns: [`Replay::start`] sets it up,
//! [`Running::run_for`] runs it some thread instructions at a time, and
//! [`Running::finish`] runs the rest and gives its counts. Several replays
//! on one core can so take turns, as the narrower warps whose counts a wide
//! warp's replay voided do with it (`crate::group_replay`): the work done
//! early is then a sample of all of it, and the progress bar's estimate is
//! right early too.

use super::alone::LanesAlone;
use super::counts::set_unfinished;
use super::issuer::Issuer;
use super::lane::Lane;
use super::narrower::{Narrower, NarrowerWarp, Void};
use super::reconverge::Reconvergence;
use super::tally::Tally;
use super::warp::Warp;
use super::{CountedAt, Counts, Replay};
use crate::sink::IssueSink;

/// A warp's replay under way.
pub struct Running<'a, 't, 's> {
    warp: Warp<'a, 't, 's>,
    done: bool,
}

impl<'a> Replay<'a> {
    /// Sets up the replay of one warp whose lanes are `lanes` (at most 64),
    /// counted at every width of `at` and told to its sinks, its lanes of
    /// `alone_lanes` (a mask) alone too, and the `narrower` warps (see
    /// [`Replay::run_counting`]); nothing runs yet.
    pub fn start<'t, 's>(
        &'a self,
        lanes: Vec<Lane<'t>>,
        at: &'s mut [CountedAt<'_>],
        alone_lanes: u64,
        narrower: &[NarrowerWarp],
    ) -> Running<'a, 't, 's> {
        assert!(lanes.len() <= 64 && at.iter().all(|c| lanes.len() <= c.width.max(1)));
        assert!(narrower.iter().all(|w| w.lanes.end <= lanes.len()));
        let stacks: Vec<_> = lanes.iter().map(|l| (l.stack, l.sp)).collect();
        let functions = self.functions.max_id() + 1;
        let widths: Vec<usize> = at.iter().map(|c| c.width).collect();
        let alone = (alone_lanes != 0).then(|| {
            let one = Tally::new(
                self.segments,
                self.spin_wait,
                &[1],
                stacks.clone(),
                functions,
            );
            LanesAlone::new(alone_lanes, one)
        });
        let narrower = (!narrower.is_empty()).then(|| {
            let (segments, spin_wait) = (self.segments, self.spin_wait);
            let mut n = Narrower::new(narrower, segments, spin_wait, &stacks, functions);
            // reconvergence other than at immediate post-dominators
            if self.reconvergence != Reconvergence::Ipdom {
                n.void();
            }
            n
        });
        // One tally counts every width; the sinks observe the replay
        // through one fan-out.
        let tally = Tally::new(self.segments, self.spin_wait, &widths, stacks, functions);
        let mut sinks: Vec<&mut dyn IssueSink> = Vec::new();
        for c in at.iter_mut() {
            if let Some(s) = c.sink.as_deref_mut() {
                sinks.push(s);
            }
        }
        let mut warp = Warp {
            cfg: self,
            issuer: Issuer::new(tally, sinks, alone, narrower),
            stack: Vec::new(),
            lanes,
            next_region: 0,
            groups: Vec::new(),
            callees: Vec::new(),
        };
        warp.start();
        Running { warp, done: false }
    }
}

impl Running<'_, '_, '_> {
    /// Runs until about `steps` more thread instructions are issued (the
    /// replay stops between two entries of its stack), or to the end: true
    /// once it is there.
    pub fn run_for(&mut self, steps: u64) -> tf_trace::Result<bool> {
        if !self.done {
            let until = self.warp.issuer.told().saturating_add(steps);
            self.done = self.warp.run_until(until)?;
        }
        Ok(self.done)
    }

    /// Thread instructions issued so far, as the progress bar is told
    /// them: the warp's own, and its narrower warps' while they are
    /// counted.
    pub fn told(&self) -> u64 {
        self.warp.issuer.told()
    }

    /// Once the narrower warps' counts are void, how many of their thread
    /// instructions the progress bar was told: they must replay by
    /// themselves, and may start now.
    pub fn narrower_void(&self) -> Option<Void> {
        self.warp.issuer.narrower_void()
    }

    /// Runs by turns of about `turn` steps until its narrower warps' counts
    /// are void, and gives how many steps of each the progress bar was
    /// told; or, when it gets to its end first (void there or not), none.
    pub fn run_until_void(&mut self, turn: u64) -> tf_trace::Result<Option<Void>> {
        while !self.run_for(turn)? {
            if let Some(void) = self.narrower_void() {
                return Ok(Some(void));
            }
        }
        Ok(None)
    }

    /// Runs the rest of the replay; what it counted.
    pub fn finish(mut self) -> tf_trace::Result<Counts> {
        self.run_for(u64::MAX)?;
        let w = &mut self.warp;
        // Every lane must have run its unit to the end: one that did not
        // would silently drop its instructions from every figure.
        let (mut all, alone, narrower) = w.issuer.finish(w.cfg);
        set_unfinished(&mut all, &w.lanes, u64::MAX);
        Ok(Counts {
            at: all,
            alone: alone.map_or_else(Default::default, |a| a.finish(&w.lanes)),
            narrower: narrower.map_or(Ok(Vec::new()), |n| n.finish(&w.lanes)),
        })
    }
}
