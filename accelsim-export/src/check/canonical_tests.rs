//! The exporter's form read here gives what the general reading gives: on
//! lines as the exporter writes them and on every kind of damage to them,
//! under several contexts, the same fields and the same problems.

use super::super::insn::{check_line, check_tokens, LineContext, Parsed};
use super::super::opcode::PcOpcodes;
use super::super::{Problem, Report};
use crate::line::write_line;

/// A little generator of numbers (xorshift), the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const OPCODES: [&str; 14] = [
    "LDG.E.64",
    "STG.E",
    "LDL",
    "STL.64",
    "IADD3",
    "BRA",
    "EXIT",
    "BAR.SYNC",
    "ATOMG.E.ADD",
    "S2R",
    "LDG.E.S8",
    "LDS.U.128",
    "NOSUCH",
    "FFMA",
];

/// A line as the exporter writes it, with random fields (some that the
/// checks warn of: a PC off 16, the zero register, a global address 0).
fn written(rng: &mut Rng) -> String {
    let pc = (rng.below(0x1_0000) * 16 + u64::from(rng.below(8) == 0)) as u32;
    let mask = match rng.below(4) {
        0 => u32::MAX,
        1 => (1u32 << rng.below(32)).wrapping_sub(1) << rng.below(4),
        _ => rng.next() as u32,
    };
    let dst = (rng.below(3) > 0).then(|| [1, 9, 200, 255][rng.below(4) as usize]);
    let srcs: Vec<u8> = (0..rng.below(5)).map(|_| rng.below(256) as u8).collect();
    let opcode = OPCODES[rng.below(OPCODES.len() as u64) as usize];
    let k = mask.count_ones() as usize;
    let base = [0, 0x10, 0x7fff_f000, rng.next()][rng.below(4) as usize];
    let addrs: Vec<u64> = match rng.below(3) {
        0 => (0..k as u64).map(|i| base.wrapping_add(4 * i)).collect(),
        1 => (0..k)
            .map(|_| base.wrapping_add(rng.below(64) * 4))
            .collect(),
        _ => (0..k).map(|_| rng.next() >> rng.below(64)).collect(),
    };
    let width = [1u8, 2, 4, 8, 16, 3][rng.below(6) as usize];
    let mem = (rng.below(3) > 0).then_some((width, &addrs[..]));
    let mut out = Vec::new();
    write_line(&mut out, pc, mask, dst, &srcs, opcode, mem);
    String::from_utf8(out).unwrap().trim_end().to_string()
}

/// `line` damaged in one of many ways, at a random place.
fn damaged(line: &str, rng: &mut Rng) -> String {
    let chars: Vec<char> = line.chars().collect();
    let at = rng.below(chars.len() as u64 + 1) as usize;
    let odd = [
        ' ', '\t', '0', '9', 'a', 'f', 'A', 'F', 'g', 'x', 'R', '-', '+', '.', '\u{85}', '\u{a0}',
        'é', '\u{7f}', '\u{1}',
    ];
    let c = odd[rng.below(odd.len() as u64) as usize];
    let mut out: Vec<char> = chars.clone();
    match rng.below(5) {
        0 if at < out.len() => out[at] = c,
        1 if at < out.len() => {
            out.remove(at);
        }
        2 => out.insert(at, c),
        3 => out.extend(" 7".chars()),
        _ => {
            // a long field: many digits where a number stands
            let digits = "1".repeat(1 + rng.below(24) as usize);
            out.splice(at..at, digits.chars());
        }
    }
    out.into_iter().collect()
}

/// What a check of a line gives, to compare.
type Outcome = (
    Option<(u32, u32, String, Option<u32>, String)>,
    Vec<Problem>,
);

/// How a line is checked: [`check_line`] or [`check_tokens`].
type Check =
    for<'a> fn(&'a str, &LineContext, &mut PcOpcodes, &mut Report, usize) -> Option<Parsed<'a>>;

/// Checks `text` with `check` (line 7 of a file), with `facts` kept from
/// the lines before.
fn outcome(check: Check, text: &str, ctx: &LineContext, facts: &mut PcOpcodes) -> Outcome {
    let mut r = Report::new("k".into());
    let parsed = check(text, ctx, facts, &mut r, 7).map(|p| {
        let facts = format!("{:?}", p.facts);
        (p.pc, p.mask, p.opcode.to_string(), p.max_reg, facts)
    });
    (parsed, r.finish())
}

#[test]
fn lines_read_in_the_exporters_form_check_as_any_line_does() {
    let exporter = LineContext {
        version: 70,
        immediate: false,
        lineinfo: false,
        launched: u32::MAX,
    };
    let contexts = [
        exporter,
        LineContext {
            launched: 0xffff,
            ..exporter
        },
        LineContext {
            version: 86,
            ..exporter
        },
        LineContext {
            immediate: true,
            ..exporter
        },
        LineContext {
            lineinfo: true,
            ..exporter
        },
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut lines, mut fast) = (0, 0);
    for ctx in &contexts {
        // each way keeps its own facts by PC across the lines, as a file's
        // check does
        let (mut ours, mut theirs) = (PcOpcodes::default(), PcOpcodes::default());
        for _ in 0..3000 {
            let line = written(&mut rng);
            let mut texts = vec![line.clone()];
            texts.extend((0..12).map(|_| damaged(&line, &mut rng)));
            for text in &texts {
                let mine = outcome(check_line, text, ctx, &mut ours);
                let general = outcome(check_tokens, text, ctx, &mut theirs);
                assert_eq!(mine, general, "{text:?}");
                lines += 1;
                let mut addrs = arrayvec::ArrayVec::new();
                fast += usize::from(super::read(text, ctx, &mut addrs).is_some());
            }
        }
    }
    // Both ways are taken often: the exporter's lines under its context,
    // and the damaged ones that stay in its form.
    assert!(fast > lines / 10 && fast < lines / 2, "{fast} of {lines}");
}
