//! Lock serialization: lanes of a warp that move on together holding the
//! same lock run their critical sections in rounds, one holder of each
//! contended lock per round (see the [module rules](super#locks)).

use super::lane::Membership;
use super::stack::{bits, Entry, Pc};
use super::warp::Warp;
use super::LockModel;
use std::collections::HashMap;
use tf_trace::LockKind;

impl Warp<'_, '_, '_> {
    /// If lanes moving on together hold the same lock, splits them into
    /// serialized rounds (see the module documentation); true if it did.
    pub(super) fn serialize(&mut self, top: Entry, left: u64) -> bool {
        let stay = self
            .groups
            .iter()
            .map(|g| g.2)
            .chain(self.callees.iter().map(|c| c.3))
            .fold(0u64, |m, x| m | x);
        // Holders per lock, in lane order, and whether one holds it exclusively.
        let mut holders: Vec<(u64, u64, bool)> = Vec::new();
        for i in bits(stay) {
            let lane = &self.lanes[i];
            for &(lock, kind) in &lane.held {
                // Already waiting in a region of this lock.
                if lane.regions.iter().any(|m| m.lock == Some(lock)) {
                    continue;
                }
                let exclusive = kind != LockKind::RwRead;
                match holders.iter_mut().find(|h| h.0 == lock) {
                    Some(h) => {
                        h.1 |= 1 << i;
                        h.2 |= exclusive;
                    }
                    None => holders.push((lock, 1 << i, exclusive)),
                }
            }
        }
        // Readers of a reader-writer lock share it; a writer excludes all.
        holders.retain(|h| h.1.count_ones() > 1 && h.2);
        if holders.is_empty() {
            return false;
        }
        // Each lane waits for the first contended lock it holds.
        let mut waits_for: HashMap<usize, u64> = HashMap::new();
        let mut rounds: Vec<(u64, Option<u64>)> = vec![(stay, None)];
        for &(lock, mask, _) in &holders {
            let mut waiting = 0;
            for (n, i) in bits(mask).enumerate() {
                if waits_for.contains_key(&i) {
                    continue;
                }
                waits_for.insert(i, lock);
                if n > 0 {
                    waiting += 1;
                    rounds[0].0 &= !(1 << i);
                    if rounds.len() <= n {
                        rounds.push((0, Some(lock)));
                    }
                    rounds[n].0 |= 1 << i;
                }
            }
            self.issuer.tell(|s| s.lock_contended(lock, mask, waiting));
        }
        self.issuer.tell(|s| s.lock_rounds(&rounds));
        let region = self.next_region;
        self.next_region += 1;
        for i in bits(stay) {
            self.lanes[i].regions.push(Membership {
                region,
                lock: waits_for.get(&i).copied(),
                depth: top.depth,
            });
        }
        let at = self.stack.len() - 1;
        let _ = left;
        self.stack[at] = Entry::above(&top, Pc::Join(region), top.rpc, stay, top.depth, top.func);
        // Under `--lock-model spin`, the lanes of later rounds spin while a
        // round runs, and count as active.
        let spin = self.cfg.lock_model == LockModel::Spin;
        let mut later = 0u64;
        for &(mask, lock) in rounds.iter().rev() {
            let mut e = Entry::above(
                &top,
                Pc::Resume,
                Pc::Join(region),
                mask,
                top.depth,
                top.func,
            );
            e.serialized = lock.and_then(std::num::NonZeroU64::new).or(top.serialized);
            if spin {
                e.spinning |= later;
            }
            later |= mask;
            self.stack.push(e);
        }
        true
    }
}
