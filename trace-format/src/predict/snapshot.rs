//! The prediction state written out and read back: what a reader needs to
//! go on from the middle of a chunk without decoding the chunk's start.
//!
//! Only the entries of the current chunk are kept (the tables' other
//! entries are empty to the decoder, see [`Predictor::reset`]), so a state
//! is as large as what the chunk has executed so far, not as the tables.

use super::{AddrEntry, Predictor, SuccEntry, GEN_SHIFT, MODE_OFFSET, NONE};
use serde::{Deserialize, Serialize};

/// A [`Predictor`]'s state, without its table sizes (those of the stream).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PredictorState {
    /// Successor entries: slot, key (block id + 1), candidates 0 and 1.
    succ: Vec<(u32, u32, u32, u32)>,
    /// Address entries: slot, tag without its generation (key + 1, and
    /// [`MODE_OFFSET`]), last address, stride, offset.
    addr: Vec<(u32, u64, u64, u64, u64)>,
    regs: Registers,
}

/// The state besides the tables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Registers {
    /// The return stack's live addresses, oldest first; the top's index.
    ret: Vec<u64>,
    ret_top: u8,
    prev: u32,
    prev_slot: u32,
    max_exec: u32,
    cand: [u32; 2],
    last_any: u64,
}

impl Predictor {
    /// The state, for [`Predictor::restore`].
    pub(crate) fn save(&self) -> PredictorState {
        let gen = self.gen;
        let succ = (0u32..)
            .zip(self.succ.iter())
            .filter(|(_, e)| e.key() != 0 && e.gen() == gen)
            .map(|(slot, e)| (slot, e.key(), e.s0, e.s1))
            .collect();
        let key_mask = (1u64 << GEN_SHIFT) - 1;
        let addr = (0u32..)
            .zip(self.addr.iter())
            .filter(|(_, e)| {
                e.tag & key_mask != 0 && (e.tag & !MODE_OFFSET) >> GEN_SHIFT == u64::from(gen)
            })
            .map(|(slot, e)| {
                let tag = e.tag & (key_mask | MODE_OFFSET);
                (slot, tag, e.last, e.stride, e.offset)
            })
            .collect();
        let ret = (0..self.ret_len)
            .rev()
            .map(|k| self.ret[self.ret_top.wrapping_sub(k) as usize])
            .collect();
        PredictorState {
            succ,
            addr,
            regs: Registers {
                ret,
                ret_top: self.ret_top,
                prev: self.prev,
                prev_slot: self.prev_slot as u32,
                max_exec: self.max_exec,
                cand: self.cand,
                last_any: self.last_any,
            },
        }
    }

    /// Takes state `s` (saved from a predictor of a stream with the same
    /// table sizes, decoding against a block table of `blocks` blocks);
    /// an error names what does not fit, and leaves a fresh state.
    pub(crate) fn restore(&mut self, s: &PredictorState, blocks: u32) -> Result<(), String> {
        self.reset();
        let r = &s.regs;
        let fits = |what: &str, ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(format!("{what} out of range"))
            }
        };
        let block = |b: u32| b == NONE || b < blocks;
        fits("return stack", r.ret.len() <= usize::from(self.ret_cap))?;
        fits("successor slot", (r.prev_slot as usize) < self.succ.len())?;
        fits(
            "block id",
            block(r.prev) && r.cand.iter().all(|&c| block(c)),
        )?;
        fits("block id", r.max_exec == 0 || r.max_exec < blocks)?;
        for &(slot, key, s0, s1) in &s.succ {
            fits(
                "successor entry",
                (slot as usize) < self.succ.len() && key != 0,
            )?;
            fits("block id", key - 1 < blocks && block(s0) && block(s1))?;
        }
        let key_mask = (1u64 << GEN_SHIFT) - 1;
        for &(slot, tag, ..) in &s.addr {
            fits("address entry", (slot as usize) < self.addr.len())?;
            fits(
                "address tag",
                tag & !(key_mask | MODE_OFFSET) == 0 && tag & key_mask != 0,
            )?;
        }
        let gen = self.gen;
        for &(slot, key, s0, s1) in &s.succ {
            self.succ[slot as usize] = SuccEntry {
                tag: SuccEntry::tag(key - 1, gen),
                s0,
                s1,
            };
        }
        let gen_bits = u64::from(gen) << GEN_SHIFT;
        for &(slot, tag, last, stride, offset) in &s.addr {
            self.addr[slot as usize] = AddrEntry {
                tag: tag | gen_bits,
                last,
                stride,
                offset,
            };
        }
        for (k, &a) in r.ret.iter().rev().enumerate() {
            self.ret[r.ret_top.wrapping_sub(k as u8) as usize] = a;
        }
        self.ret_top = r.ret_top;
        self.ret_len = r.ret.len() as u8;
        self.prev = r.prev;
        self.prev_slot = r.prev_slot as usize;
        self.max_exec = r.max_exec;
        self.cand = r.cand;
        self.last_any = r.last_any;
        Ok(())
    }
}

impl PredictorState {
    /// This state less the entries it shares with `earlier`, a state saved
    /// earlier in the same chunk (whose tables only ever overwrite entries:
    /// nothing is removed before the chunk ends); `None` when `earlier` has
    /// an entry in a slot where this state has none (it is not earlier).
    pub(crate) fn since(&self, earlier: &PredictorState) -> Option<PredictorState> {
        Some(PredictorState {
            succ: changed(&self.succ, &earlier.succ, |e| e.0)?,
            addr: changed(&self.addr, &earlier.addr, |e| e.0)?,
            regs: self.regs.clone(),
        })
    }

    /// The state that [`since`](Self::since) made `delta` of, from `earlier`.
    pub(crate) fn after(earlier: &PredictorState, delta: &PredictorState) -> PredictorState {
        PredictorState {
            succ: merged(&earlier.succ, &delta.succ, |e| e.0),
            addr: merged(&earlier.addr, &delta.addr, |e| e.0),
            regs: delta.regs.clone(),
        }
    }
}

/// The entries of `now` (sorted by slot) that `then` does not hold as they
/// are; `None` when `then` has a slot that `now` lacks.
fn changed<T: Copy + PartialEq>(now: &[T], then: &[T], slot: impl Fn(&T) -> u32) -> Option<Vec<T>> {
    let mut then = then.iter().peekable();
    let mut out = Vec::new();
    for e in now {
        if then.next_if(|t| slot(t) < slot(e)).is_some() {
            return None;
        }
        match then.next_if(|t| slot(t) == slot(e)) {
            Some(t) if t == e => {}
            _ => out.push(*e),
        }
    }
    then.peek().is_none().then_some(out)
}

/// `base` (sorted by slot) with the entries of `over` put in their slots.
fn merged<T: Copy>(base: &[T], over: &[T], slot: impl Fn(&T) -> u32) -> Vec<T> {
    let mut out = Vec::with_capacity(base.len() + over.len());
    let mut over = over.iter().peekable();
    for b in base {
        while let Some(o) = over.next_if(|o| slot(o) < slot(b)) {
            out.push(*o);
        }
        match over.next_if(|o| slot(o) == slot(b)) {
            Some(o) => out.push(*o),
            None => out.push(*b),
        }
    }
    out.extend(over);
    out
}
