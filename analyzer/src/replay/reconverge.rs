//! Reconvergence models (`--reconverge`), and where lanes that stand in
//! different places of one frame rejoin when no branch split them (a lock
//! round ends, a join, regrouping): at the nearest block that
//! post-dominates every lane's position, found by climbing the frame
//! function's post-dominator tree. A lane inside a callee stands at the
//! post-dominator of the frame's call; a lane that left the frame stands at
//! its exit. Under `min-pc` a frame's lanes stay in one frontier entry
//! instead, which runs the group at the lowest address next.

use super::lane::Next;
use super::stack::{add_callee, bits, Entry, Pc};
use super::warp::Warp;
use crate::blocks::CBlockId;
use crate::cfg::VEXIT;

/// Where diverged lanes of a warp reconverge (`--reconverge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reconvergence {
    /// At the immediate post-dominator of the branch (a SIMT stack, as
    /// GPGPU-Sim and pre-Volta GPUs do).
    #[default]
    Ipdom,
    /// Never inside a function: diverged lanes run apart until the frame
    /// returns (the worst case).
    None,
    /// Thread-frontier style: the lanes of the frame that stand at the
    /// lowest code address run next; lanes reconverge wherever they meet.
    MinPc,
}

impl std::fmt::Display for Reconvergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reconvergence::Ipdom => "ipdom",
            Reconvergence::None => "none",
            Reconvergence::MinPc => "min-pc",
        })
    }
}

impl Warp<'_, '_, '_> {
    /// The nearest block of frame function `func` (or its exit) that
    /// post-dominates where every lane of `groups` and `callees` stands; the
    /// lanes of `left` stand at the exit. A lane inside a callee stands at
    /// the post-dominator of its call.
    pub(super) fn meet(&self, func: u64, left: u64) -> CBlockId {
        if self.cfg.reconvergence == Reconvergence::None {
            return VEXIT;
        }
        let ipdom = |b: CBlockId| self.cfg.ipdom.get(&(func, b)).copied().unwrap_or(VEXIT);
        let positions = self
            .groups
            .iter()
            .map(|g| g.0)
            .chain(self.callees.iter().map(|c| ipdom(c.0)))
            .chain((left != 0).then_some(VEXIT));
        // Walk the post-dominator tree up from the first position; every
        // other position climbs until it meets that chain (indexed, so that
        // each climb costs its own length only).
        let limit = self.cfg.canon.len() + 2;
        let mut chain: Vec<CBlockId> = Vec::new();
        let mut index: rustc_hash::FxHashMap<CBlockId, usize> = Default::default();
        let mut best = 0;
        for p in positions {
            if chain.is_empty() {
                let mut b = p;
                while b != VEXIT && chain.len() < limit {
                    index.insert(b, chain.len());
                    chain.push(b);
                    b = ipdom(b);
                }
                index.insert(VEXIT, chain.len());
                chain.push(VEXIT);
                continue;
            }
            let mut b = p;
            for _ in 0..limit {
                if let Some(&k) = index.get(&b) {
                    best = best.max(k);
                    break;
                }
                b = ipdom(b);
            }
        }
        chain.get(best).copied().unwrap_or(VEXIT)
    }
}

impl Warp<'_, '_, '_> {
    /// Where lanes that diverged at the end of `node` (frame function
    /// `func`) reconverge under the model.
    pub(super) fn point(&self, func: u64, node: CBlockId) -> Pc {
        match self.cfg.reconvergence {
            Reconvergence::Ipdom => self
                .cfg
                .ipdom
                .get(&(func, node))
                .map_or(Pc::Exit, |&r| Pc::of(r)),
            Reconvergence::None => Pc::Exit,
            Reconvergence::MinPc => Pc::Frontier,
        }
    }
}

impl Warp<'_, '_, '_> {
    /// `--reconverge min-pc`: runs the group of the frame's live lanes that
    /// stands at the lowest address; when they all stand together, the
    /// entry runs their block as any other.
    pub(super) fn frontier(&mut self, live: u64, top: Entry) -> tf_trace::Result<()> {
        self.regroup(live, top.depth);
        let at = self.stack.len() - 1;
        let canon = self.cfg.canon;
        let Some(&(block, func, mask)) =
            self.groups.iter().min_by_key(|g| canon.block(g.0).address)
        else {
            self.stack.pop();
            return Ok(());
        };
        if self.groups.len() == 1 {
            let e = &mut self.stack[at];
            e.pc = Pc::Block(block);
            e.func = func;
            return Ok(());
        }
        let here = Entry { func, ..top };
        let issued = self.execute(block, mask, &here);
        debug_assert!(issued, "a frontier group stands at its block");
        self.callees.clear();
        for i in bits(mask) {
            if let Next::Called { block: b, func: f } = self.advance(i, top.depth)? {
                add_callee(&mut self.callees, (block, b, f, 0, top.depth + 1, 0), i);
            }
        }
        self.push_callees(top, Pc::Exit, false);
        Ok(())
    }
}
