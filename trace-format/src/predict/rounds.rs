//! Whole rounds of a loop that a run goes round, taken at once: the state
//! that executing them one by one would leave, without the executions.
//!
//! In a run (§6.1) every execution goes to successor candidate 0 and every
//! operand is present and equals its prediction. When the blocks from
//! candidate 0 on form a loop that neither calls nor returns, nothing the
//! run does changes the successor table (each arrival finds `s0` already
//! equal to the block), and once every operand of the loop has its address
//! entry, the addresses move on by a fixed amount each round:
//! - an operand in `stride` mode is predicted `last + stride`, so its
//!   stride stays what it is;
//! - an operand in `offset` mode (never a block's first, which has no
//!   previous operand and would turn to `stride` mode) is predicted
//!   `previous operand + offset`, so its offset stays and it moves as the
//!   operand before it does;
//! - neither mode changes, as the mode in use always predicts right.
//!
//! The entries of the loop's operands are then in slots of their own (two
//! entries of one slot cannot both be present), and `k` rounds leave each
//! one where its `k`-th round puts it.

use super::{hash, Predictor, SuccEntry, MODE_OFFSET, NONE};
use crate::block_table::{BlockId, BlockTable, EndKind};

/// The most blocks of a loop whose rounds are taken at once.
const MAX_BLOCKS: usize = 16;

/// A loop a run goes round: its blocks, candidate 0 first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Round {
    blocks: [BlockId; MAX_BLOCKS],
    /// Where each block's operands start among the round's.
    first_operand: [u32; MAX_BLOCKS],
    len: usize,
    /// Operands of one round.
    pub(crate) operands: u64,
}

impl Round {
    /// Its blocks, in the order a run executes them.
    #[inline(always)]
    pub(crate) fn blocks(&self) -> &[BlockId] {
        &self.blocks[..self.len]
    }

    /// Where the operands of its `i`-th block start among the round's
    /// (and their [`Course`]s).
    #[inline(always)]
    pub(crate) fn first_operand(&self, i: usize) -> usize {
        self.first_operand[i] as usize
    }
}

/// Where one operand of the loop goes: its entry's slot, its address in
/// the next round and how much each round adds, and its entry's `last`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Course {
    slot: usize,
    next: u64,
    step: u64,
    last: u64,
}

impl Course {
    /// Its address in round `k` (≥ 1) from now.
    #[inline(always)]
    pub(crate) fn at(&self, k: u64) -> u64 {
        self.next.wrapping_add((k - 1).wrapping_mul(self.step))
    }
}

impl Predictor {
    /// The entry of block `b` in the successor table, if it holds one.
    fn succ_entry(&self, b: BlockId) -> Option<SuccEntry> {
        let e = self.succ[hash(b as u64, self.succ_bits)];
        (e.tag == SuccEntry::tag(b, self.gen)).then_some(e)
    }

    /// The loop that executions going to candidate 0 go round from here,
    /// when they do: the blocks from candidate 0 on, each the `s0` of the
    /// one before and the last's `s0` the first, none ending in a call or a
    /// return or at the top of the return stack, and the arrival at the
    /// first leaving the last block's entry as it is.
    pub(crate) fn round(&self, table: &BlockTable) -> Option<Round> {
        let first = self.cand[0];
        if first == NONE || self.prev == NONE || self.succ_entry(self.prev)?.s0 != first {
            return None;
        }
        let top = (self.ret_len > 0).then(|| self.ret[self.ret_top as usize]);
        let mut r = Round {
            blocks: [NONE; MAX_BLOCKS],
            first_operand: [0; MAX_BLOCKS],
            len: 0,
            operands: 0,
        };
        let mut b = first;
        loop {
            let rec = table.rec(b);
            if r.len == MAX_BLOCKS
                || rec.end.is_call()
                || rec.end == EndKind::Return
                || top == Some(rec.address)
                || r.blocks().contains(&b)
            {
                return None;
            }
            r.blocks[r.len] = b;
            r.first_operand[r.len] = r.operands as u32;
            r.len += 1;
            r.operands += u64::from(rec.n_ops);
            b = self.succ_entry(b)?.s0;
            if b == first {
                return Some(r);
            }
        }
    }

    /// Takes `n` ≥ 1 executions of loop `r` (found by
    /// [`round`](Self::round) in this state) at once, as a run's would go,
    /// the address entries included when `addresses`: whole rounds, then
    /// the first blocks of one more. False, and nothing changed, when an
    /// operand of the loop has no entry yet or is a block's first in
    /// `offset` mode. `courses` is room for the work.
    pub(crate) fn go_round(
        &mut self,
        table: &BlockTable,
        r: &Round,
        n: u64,
        addresses: bool,
        courses: &mut Vec<Course>,
    ) -> bool {
        if addresses && !self.courses(table, r, courses) {
            return false;
        }
        self.went_round(table, r, n, addresses, courses);
        true
    }

    /// [`go_round`](Self::go_round) with the `courses` of `r`'s operands
    /// found in this state (by [`courses`](Self::courses)).
    pub(crate) fn went_round(
        &mut self,
        table: &BlockTable,
        r: &Round,
        n: u64,
        addresses: bool,
        courses: &[Course],
    ) {
        debug_assert!(n >= 1);
        if addresses {
            self.follow(table, r, n, courses);
        }
        let last = r.blocks()[((n - 1) % r.len as u64) as usize];
        self.prev = last;
        self.prev_slot = hash(last as u64, self.succ_bits);
        let e = self.succ[self.prev_slot];
        self.cand = [e.s0, e.s1];
        let went = &r.blocks()[..r.len.min(n as usize)];
        self.max_exec = went.iter().fold(self.max_exec, |m, &b| m.max(b));
    }

    /// The course of every operand of loop `r`, in the order executed;
    /// false when one cannot be told from the entries.
    pub(crate) fn courses(&self, table: &BlockTable, r: &Round, courses: &mut Vec<Course>) -> bool {
        courses.clear();
        for &b in r.blocks() {
            let n_ops = table.rec(b).n_ops;
            for j in 0..n_ops {
                let (key, slot) = self.addr_key(b, j);
                let e = &self.addr[slot];
                if e.tag & !MODE_OFFSET != self.tag(key) {
                    return false;
                }
                let course = if e.tag & MODE_OFFSET == 0 {
                    Course {
                        slot,
                        next: e.last.wrapping_add(e.stride),
                        step: e.stride,
                        last: e.last,
                    }
                } else if j > 0 {
                    let prev = courses[courses.len() - 1];
                    Course {
                        slot,
                        next: prev.next.wrapping_add(e.offset),
                        step: prev.step,
                        last: e.last,
                    }
                } else {
                    return false;
                };
                courses.push(course);
            }
        }
        true
    }

    /// Rewrites the entries of loop `r`'s operands, and `last_any`, as `n`
    /// executions on their `courses` leave them.
    fn follow(&mut self, table: &BlockTable, r: &Round, n: u64, courses: &[Course]) {
        let (k, partial) = (n / r.len as u64, (n % r.len as u64) as usize);
        // Each block's last execution, in the order they ran (the last
        // whole round's blocks from `partial` on, then the round begun):
        // the operand written last is the one executed last.
        for i in (partial..r.len).chain(0..partial) {
            let times = k + u64::from(i < partial);
            if times == 0 {
                continue;
            }
            let n_ops = table.rec(r.blocks[i]).n_ops as usize;
            let mut prev: Option<u64> = None;
            for course in &courses[r.first_operand(i)..][..n_ops] {
                let a = course.at(times);
                let before = if times >= 2 {
                    course.at(times - 1)
                } else {
                    course.last
                };
                let e = &mut self.addr[course.slot];
                e.stride = a.wrapping_sub(before);
                e.last = a;
                if let Some(p) = prev {
                    e.offset = a.wrapping_sub(p);
                }
                prev = Some(a);
                self.last_any = a;
            }
        }
    }

    /// The `last` address of operand `j` of block `b`'s entry (which must
    /// hold one).
    pub(crate) fn last_address(&self, b: BlockId, j: u32) -> u64 {
        self.addr[self.addr_key(b, j).1].last
    }
}
