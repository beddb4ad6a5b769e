//! Memory coalescing: one request per x86 memory operand that at least one
//! active lane performed; its sectors are the distinct aligned 32-byte
//! sectors the lanes touch, counted twice: with stack addresses as the CPU
//! laid them out, and interleaved as GPU local memory lays them out.

use super::stack::bits;
use super::warp::Warp;
use crate::segments::{interleaved_sectors, sectors};

impl Warp<'_, '_, '_> {
    /// Counts the requests and sectors of the lanes' memory accesses, one
    /// request per operand that at least one lane performed.
    pub(super) fn coalesce(&mut self, live: u64, n_ops: u32, f: usize) {
        // Each lane's accesses are in operand order: walk them side by side,
        // one operand at a time, with a cursor per lane.
        self.cursors.clear();
        for i in bits(live) {
            let lane = &self.lanes[i];
            let acc = lane.source.accesses(&lane.step);
            if !acc.is_empty() {
                self.cursors.push((i as u32, 0));
            }
        }
        if self.cursors.is_empty() {
            return;
        }
        for j in 0..n_ops as u16 {
            self.sectors.clear();
            self.interleaved.clear();
            let mut first: Option<(usize, u64, bool)> = None;
            for c in &mut self.cursors {
                let lane = &self.lanes[c.0 as usize];
                let acc = lane.source.accesses(&lane.step);
                let Some(a) = acc.get(c.1 as usize) else {
                    continue;
                };
                if a.operand - lane.step.first_op != j {
                    continue;
                }
                c.1 += 1;
                first.get_or_insert((c.0 as usize, a.addr, a.write));
                sectors(a.addr, a.size, &mut self.sectors);
                if a.addr >= lane.stack.0 && a.addr < lane.stack.1 {
                    interleaved_sectors(
                        a.addr,
                        a.size,
                        lane.sp,
                        c.0,
                        self.cfg.width,
                        &mut self.interleaved,
                    );
                } else {
                    sectors(a.addr, a.size, &mut self.interleaved);
                }
            }
            let Some((lane, addr, write)) = first else {
                continue;
            };
            let segment =
                self.cfg
                    .segments
                    .classify(self.lanes[lane].stack, addr, &mut self.segment_cache);
            let n = distinct(&mut self.sectors);
            let ni = distinct(&mut self.interleaved);
            self.stats.memory.add_request(segment, write, n, ni);
            self.stats.functions[f]
                .memory
                .add_request(segment, write, n, ni);
        }
    }
}

/// Number of distinct values (sorts `v`).
pub(super) fn distinct(v: &mut [u64]) -> u64 {
    match v.len() {
        0 | 1 => return v.len() as u64,
        2 => return 1 + u64::from(v[0] != v[1]),
        _ => {}
    }
    v.sort_unstable();
    let mut n = 0;
    let mut last = None;
    for &x in v.iter() {
        if last != Some(x) {
            n += 1;
            last = Some(x);
        }
    }
    n
}
