//! What the line checks need to know of an opcode (its first part, the maps
//! that hold it, its memory width), worked out once per PC: a trace repeats
//! each PC's line many times, and looking the opcode up again on every line
//! was most of the validator's time.

use crate::opmap::{in_volta, is_memory, known, opcode_width, specialized_unit};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// What the checks need to know of one opcode, for one binary version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Facts {
    /// Where its first non-empty part (`LDG` of `LDG.E.64`) lies in it.
    first: (usize, usize),
    /// Its first part is in the Volta map.
    pub volta: bool,
    /// Its first part is in the map of the binary version.
    pub known: bool,
    /// It accesses memory.
    pub memory: bool,
    /// The bytes per lane the simulator reads from its modifiers.
    pub width: u32,
    /// It has a `.S8` or `.S16` part.
    pub narrow: bool,
    /// The specialized unit it needs, if any.
    pub unit: Option<u8>,
}

impl Facts {
    /// The facts of `opcode` under binary version `version`.
    pub(super) fn of(opcode: &str, version: u32) -> Facts {
        let first = opcode.split('.').find(|p| !p.is_empty()).unwrap_or("");
        let at = if first.is_empty() {
            0
        } else {
            first.as_ptr() as usize - opcode.as_ptr() as usize
        };
        Facts {
            first: (at, at + first.len()),
            volta: in_volta(first),
            known: known(version, first),
            memory: is_memory(first) || (version != 70 && matches!(first, "LDSM" | "LDGSTS")),
            width: opcode_width(opcode),
            narrow: opcode.split('.').any(|p| p == "S8" || p == "S16"),
            unit: specialized_unit(first),
        }
    }

    /// The first non-empty part of `opcode`, the opcode these facts are of.
    pub(super) fn first<'a>(&self, opcode: &'a str) -> &'a str {
        &opcode[self.first.0..self.first.1]
    }
}

/// How a line's opcode stands to the opcode first seen at its PC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AtPc {
    /// No line had this PC before.
    New,
    /// The first part is the same as the first seen there.
    Same,
    /// The first part differs from the first seen there.
    Other,
}

/// The opcode first seen at each PC of a kernel file, with its facts.
#[derive(Default)]
pub(super) struct PcOpcodes(FxHashMap<u32, (String, Facts)>);

impl PcOpcodes {
    /// The facts of `opcode` on a line at `pc` (binary version `version`):
    /// those kept with the PC when `opcode` is the one first seen there,
    /// else worked out (and kept, with `opcode`, when the PC had none).
    pub(super) fn facts(&mut self, pc: u32, opcode: &str, version: u32) -> Facts {
        match self.0.entry(pc) {
            Entry::Occupied(e) => match e.get() {
                (seen, facts) if seen == opcode => *facts,
                _ => Facts::of(opcode, version),
            },
            Entry::Vacant(e) => e.insert((opcode.to_string(), Facts::of(opcode, version))).1,
        }
    }

    /// How `opcode` on a line at `pc` stands to the opcode first seen
    /// there; kept as the first, with its `facts`, when the PC had none.
    pub(super) fn at_pc(&mut self, pc: u32, opcode: &str, facts: Facts) -> AtPc {
        match self.0.entry(pc) {
            Entry::Occupied(e) if same_first_part(&e.get().0, opcode) => AtPc::Same,
            Entry::Occupied(_) => AtPc::Other,
            Entry::Vacant(e) => {
                e.insert((opcode.to_string(), facts));
                AtPc::New
            }
        }
    }

    /// The opcode first seen at `pc` ("" if none).
    pub(super) fn first_seen(&self, pc: u32) -> &str {
        self.0.get(&pc).map_or("", |(seen, _)| seen)
    }
}

/// Whether `a` and `b` are alike up to their first `.` (the whole of
/// either that has none): the same string mostly, which is one comparison.
fn same_first_part(a: &str, b: &str) -> bool {
    fn first(s: &str) -> &str {
        s.find('.').map_or(s, |i| &s[..i])
    }
    a == b || first(a) == first(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_those_of_the_opcode_maps() {
        let f = Facts::of("LDG.E.64", 70);
        assert_eq!(f.first("LDG.E.64"), "LDG");
        assert!(f.volta && f.known && f.memory && !f.narrow);
        assert_eq!((f.width, f.unit), (8, None));
        let f = Facts::of(".LDS.S16", 70);
        assert_eq!(f.first(".LDS.S16"), "LDS");
        assert!(f.narrow && f.memory);
        assert_eq!(Facts::of("BRA", 70).unit, Some(1));
        let ldsm = (Facts::of("LDSM", 70), Facts::of("LDSM", 80));
        assert!(!ldsm.0.memory && !ldsm.0.known && ldsm.1.memory && ldsm.1.known);
        assert_eq!(Facts::of("", 70).first(""), "");
    }

    #[test]
    fn first_parts_are_those_of_split() {
        let ops = [
            "LDG.E", "LDG.E.64", "LDG", "STG.E", ".LDS", ".STS", "", ".", "LDG.", "A..B",
        ];
        for a in ops {
            for b in ops {
                let split = a.split('.').next() == b.split('.').next();
                assert_eq!(same_first_part(a, b), split, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_pc_remembers_its_first_opcode() {
        let mut pcs = PcOpcodes::default();
        let f = Facts::of("LDG.E", 70);
        assert_eq!(pcs.at_pc(0x10, "LDG.E", f), AtPc::New);
        assert_eq!(
            (pcs.facts(0x10, "LDG.E", 70), pcs.at_pc(0x10, "LDG.E", f)),
            (f, AtPc::Same)
        );
        let wide = pcs.facts(0x10, "LDG.E.64", 70);
        assert_eq!(
            (wide.width, pcs.at_pc(0x10, "LDG.E.64", wide)),
            (8, AtPc::Same)
        );
        assert_eq!(
            pcs.at_pc(0x10, "STG.E", Facts::of("STG.E", 70)),
            AtPc::Other
        );
        assert_eq!(pcs.first_seen(0x10), "LDG.E");
        // a cache of facts keeps the first opcode it saw at a PC
        let mut cache = PcOpcodes::default();
        assert_eq!(cache.facts(0x20, "LDL.64", 70).width, 8);
        assert_eq!(cache.facts(0x20, "LDL", 70).width, 4);
        assert_eq!(cache.first_seen(0x20), "LDL.64");
    }
}
