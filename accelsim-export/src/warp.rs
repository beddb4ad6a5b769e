//! One warp's instruction lines, from the issues of its replay.
//!
//! Every warp issue becomes the lines of its block's x86 instructions: the
//! instruction `i`'s operations run with the lanes that ran at least `i + 1`
//! of the block's instructions; a memory operation runs with the lanes that
//! made its access. A request whose first lane's address lies in that lane's
//! own stack is local (`LDL`/`STL`), any other global (`LDG`/`STG`), as
//! `tf analyze` classifies requests.
//!
//! Local addresses are offsets in each lane's private local memory: byte
//! `addr` of a lane whose unit started with stack pointer `sp` is at offset
//! [`LOCAL_BIAS`]` + (addr − sp)`. The simulator lays local memory out
//! interleaved (word `k` of thread `t` at `base + 4·(k·N + t)`), which is
//! what `tf analyze --stack-model interleaved` models.

use crate::code::Program;
use crate::line::{mem_opcode, write_line};
use crate::translate::MemKind;
use serde::Serialize;
use std::sync::Arc;
use tf_analyzer::segments::sectors;
use tf_analyzer::sink::{Issue, IssueSink};
use tf_trace::FunctionId;

/// Offset of a unit's stack pointer in its lane's local memory: frames of
/// up to this many bytes below it have non-negative offsets.
pub const LOCAL_BIAS: u64 = 1 << 20;

/// Counts of an export, per warp, kernel or in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// x86 instructions run by lanes (thread instructions of `tf analyze`).
    pub x86_thread_instructions: u64,
    /// x86 instructions issued by warps (warp instructions of `tf analyze`).
    pub x86_warp_instructions: u64,
    /// Instruction lines written (RISC warp instructions, `EXIT`s included).
    pub lines: u64,
    /// Active lanes summed over the lines (RISC thread instructions).
    pub lane_instructions: u64,
    /// Global requests: x86 memory operands outside the lane's own stack.
    pub global_requests: u64,
    /// Distinct 32-byte sectors of the global requests.
    pub global_sectors: u64,
    /// Local (stack) requests.
    pub local_requests: u64,
}

impl Counts {
    /// Adds `o`.
    pub fn add(&mut self, o: &Counts) {
        self.x86_thread_instructions += o.x86_thread_instructions;
        self.x86_warp_instructions += o.x86_warp_instructions;
        self.lines += o.lines;
        self.lane_instructions += o.lane_instructions;
        self.global_requests += o.global_requests;
        self.global_sectors += o.global_sectors;
        self.local_requests += o.local_requests;
    }
}

/// The lines of one warp as it replays.
pub struct WarpLines {
    program: Arc<Program>,
    /// Per lane: its thread's stack `[lo, hi)` and the stack pointer at its unit's start.
    lanes: Vec<((u64, u64), u64)>,
    /// The lines written so far.
    pub out: Vec<u8>,
    /// What they add up to.
    pub counts: Counts,
    /// The function of the warp's first issue: the kind of its units.
    pub first_function: Option<FunctionId>,
    /// The highest register number used.
    pub max_reg: u8,
    addrs: Vec<u64>,
    scratch: Vec<u64>,
}

impl WarpLines {
    /// Lines for a warp whose lanes have these stacks and start stack
    /// pointers, of `program`'s code (and only its selected functions).
    pub fn new(program: Arc<Program>, lanes: Vec<((u64, u64), u64)>) -> WarpLines {
        WarpLines {
            program,
            lanes,
            out: Vec::new(),
            counts: Counts::default(),
            first_function: None,
            max_reg: 0,
            addrs: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Ends the warp: one `EXIT` for all 32 lanes (every lane of every
    /// exported warp is launched, and each exits here exactly once).
    pub fn finish(&mut self) {
        write_line(
            &mut self.out,
            self.program.code.exit_pc,
            u32::MAX,
            None,
            &[],
            "EXIT",
            None,
        );
        self.counts.lines += 1;
        self.counts.lane_instructions += 32;
    }

    fn line(&mut self, pc: u32, mask: u32, op: &crate::translate::RiscOp, mem: Option<(&str, u8)>) {
        for &r in op.dst.iter().chain(&op.srcs) {
            self.max_reg = self.max_reg.max(r);
        }
        let opcode = mem.map_or(op.opcode, |m| m.0);
        let mem = mem.map(|m| (m.1, self.addrs.as_slice()));
        write_line(&mut self.out, pc, mask, op.dst, &op.srcs, opcode, mem);
        self.counts.lines += 1;
        self.counts.lane_instructions += u64::from(mask.count_ones());
    }
}

impl IssueSink for WarpLines {
    fn issue(&mut self, issue: &Issue<'_>) {
        self.first_function.get_or_insert(issue.function);
        let program = Arc::clone(&self.program);
        if program
            .selected
            .as_ref()
            .is_some_and(|s| !s.contains(&issue.function))
        {
            return;
        }
        self.counts.x86_thread_instructions += issue.thread_instructions;
        self.counts.x86_warp_instructions += issue.warp_instructions;
        let code = &program.code;
        let block = &code.blocks[issue.cblock as usize];
        let mut pc = code.pc[issue.cblock as usize];
        let n_lanes = self.lanes.len();
        for (i, insn) in block
            .insns
            .iter()
            .enumerate()
            .take(issue.warp_instructions as usize)
        {
            let ran = issue
                .lanes
                .iter()
                .filter(|l| l.insns as usize > i && l.lane < n_lanes);
            let mask = ran.clone().fold(0u32, |m, l| m | 1 << l.lane);
            for op in &insn.ops {
                let this_pc = pc;
                pc = pc.wrapping_add(16);
                let Some(mem) = op.mem else {
                    self.line(this_pc, mask, op, None);
                    continue;
                };
                // The lanes that made this access, and their addresses.
                let mut m = 0u32;
                self.addrs.clear();
                self.scratch.clear();
                let mut local = None;
                for l in ran.clone() {
                    let Some(a) = l
                        .accesses
                        .iter()
                        .find(|a| a.operand.wrapping_sub(l.first_op) == mem.operand)
                    else {
                        continue;
                    };
                    let (stack, sp) = self.lanes[l.lane];
                    let is_local = *local.get_or_insert(a.addr >= stack.0 && a.addr < stack.1);
                    let addr = a.addr.wrapping_add(u64::from(mem.offset));
                    self.addrs.push(if is_local {
                        LOCAL_BIAS.wrapping_add(addr.wrapping_sub(sp))
                    } else {
                        addr
                    });
                    if mem.offset == 0 && !is_local {
                        sectors(a.addr, a.size, &mut self.scratch);
                    }
                    m |= 1 << l.lane;
                }
                let Some(local) = local else {
                    continue;
                };
                if mem.offset == 0 {
                    if local {
                        self.counts.local_requests += 1;
                    } else {
                        self.scratch.sort_unstable();
                        self.scratch.dedup();
                        self.counts.global_requests += 1;
                        self.counts.global_sectors += self.scratch.len() as u64;
                    }
                }
                if !local && mem.kind == MemKind::AtomicWrite {
                    continue; // carried by its atomic
                }
                let width = if local {
                    align_local(&mut self.addrs, mem.width)
                } else {
                    mem.width
                };
                // A local access is another static instruction than the
                // global one: it has its own PC, in a second copy of the code.
                let pc = if local {
                    this_pc.wrapping_add(code.exit_pc + 16)
                } else {
                    this_pc
                };
                let opcode = mem_opcode(mem.kind, local, width);
                self.line(pc, m, op, Some((&opcode, width)));
            }
        }
    }
}

/// Makes local accesses what the simulator accepts: 4-byte aligned when 4
/// bytes or wider, within one 4-byte word when narrower. A misaligned
/// access becomes the aligned access of the words it touches (at most 16
/// bytes). Returns the width.
fn align_local(addrs: &mut [u64], width: u8) -> u8 {
    let w = u64::from(width);
    let ok = |a: u64| {
        if w >= 4 {
            a.is_multiple_of(4)
        } else {
            a % 4 + w <= 4
        }
    };
    if addrs.iter().all(|&a| ok(a)) {
        return width;
    }
    let cover = addrs
        .iter()
        .map(|&a| (a + w).div_ceil(4) * 4 - a / 4 * 4)
        .max()
        .unwrap_or(4);
    for a in addrs.iter_mut() {
        *a = *a / 4 * 4;
    }
    cover.next_power_of_two().min(16) as u8
}

#[cfg(test)]
mod tests {
    use super::align_local;

    #[test]
    fn misaligned_local_accesses_cover_their_words() {
        let mut a = [0x100, 0x108];
        assert_eq!(align_local(&mut a, 8), 8);
        let mut a = [0x102, 0x106];
        assert_eq!(align_local(&mut a, 4), 8);
        assert_eq!(a, [0x100, 0x104]);
        let mut a = [0x103];
        assert_eq!(align_local(&mut a, 2), 8);
        let mut a = [0x101];
        assert_eq!(align_local(&mut a, 2), 2);
        assert_eq!(a, [0x101]);
    }
}
