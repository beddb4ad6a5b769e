//! Checks of one instruction line (checklist items 15–25).

use super::canonical::{self, Canonical};
use super::opcode::{Facts, PcOpcodes};
use super::tokens::{hex, Tokens};
use super::Report;
use arrayvec::ArrayVec;

/// What the checks of a line need to know about its kernel and warp.
#[derive(Clone, Copy)]
pub(super) struct LineContext {
    /// `-binary version`.
    pub version: u32,
    /// Lines end with an immediate (tracer version 5 and later).
    pub immediate: bool,
    /// Lines start with a line number (`-enable lineinfo = 1`).
    pub lineinfo: bool,
    /// The warp's launched lanes.
    pub launched: u32,
}

/// What a valid line tells the checks of its warp.
pub(super) struct Parsed<'a> {
    pub pc: u32,
    pub mask: u32,
    pub opcode: &'a str,
    pub max_reg: Option<u32>,
    /// What the checks know of its opcode.
    pub facts: Facts,
}

/// Checks one instruction line, taking what is known of its opcode from
/// `facts` (opcodes by PC, kept there when new); problems go to `r` (at
/// line `n`).
pub(super) fn check_line<'a>(
    text: &'a str,
    ctx: &LineContext,
    facts: &mut PcOpcodes,
    r: &mut Report,
    n: usize,
) -> Option<Parsed<'a>> {
    let mut addrs = ArrayVec::new();
    match canonical::read(text, ctx, &mut addrs) {
        Some(line) => Some(judged(line, &addrs, ctx, facts, r, n)),
        None => check_tokens(text, ctx, facts, r, n),
    }
}

/// [`check_line`] for any line: split into tokens, each read with the
/// problem it can have.
pub(super) fn check_tokens<'a>(
    text: &'a str,
    ctx: &LineContext,
    facts: &mut PcOpcodes,
    r: &mut Report,
    n: usize,
) -> Option<Parsed<'a>> {
    let mut toks = Tokens::of(text);
    let mut next = |what: &str, r: &mut Report| {
        let t = toks.next();
        if t.is_none() {
            r.error(n, 15, format!("line ends before its {what}"));
        }
        t
    };
    if ctx.lineinfo {
        let t = next("line number", r)?;
        if t.parse::<u64>().is_err() {
            r.error(n, 15, format!("line number {t:?} is not decimal"));
        }
    }
    let pc_t = next("PC", r)?;
    let pc = match hex(pc_t) {
        Some(pc) if pc < 1 << 32 => pc as u32,
        _ => return r.error_none(n, 16, format!("PC {pc_t:?} is not hex below 2^32")),
    };
    pc_warning(pc, pc_t, r, n);
    let mask_t = next("mask", r)?;
    let mask = match hex(mask_t) {
        Some(m) if m <= u64::from(u32::MAX) => m as u32,
        _ => return r.error_none(n, 16, format!("mask {mask_t:?} is not hex of 32 bits")),
    };
    mask_warning(mask, ctx, r, n);
    let mut max_reg: Option<u32> = None;
    let mut regs = |count_t: &str,
                    what: &str,
                    max: usize,
                    next: &mut dyn FnMut(&str, &mut Report) -> Option<&'a str>,
                    r: &mut Report|
     -> Option<Option<u32>> {
        let count = match count_t.parse::<usize>() {
            Ok(c) if c <= max => c,
            _ => return r.error_none(n, 17, format!("{what} count {count_t:?} is not 0..={max}")),
        };
        let mut first = None;
        for _ in 0..count {
            let t = next("registers", r)?;
            match t.strip_prefix('R').and_then(|d| d.parse::<u32>().ok()) {
                Some(x) => {
                    max_reg = Some(max_reg.map_or(x, |m| m.max(x)));
                    first.get_or_insert(x);
                }
                None => return r.error_none(n, 17, format!("register {t:?} is not R<number>")),
            }
        }
        Some(first)
    };
    let d_t = next("destination count", r)?;
    let dst = regs(d_t, "destination", 1, &mut next, r)?;
    destination_warning(dst, r, n);
    let opcode = next("opcode", r)?;
    let s_t = next("source count", r)?;
    regs(s_t, "source", 4, &mut next, r)?;
    let facts = facts.facts(pc, opcode, ctx.version);
    let first = facts.first(opcode);
    opcode_problems(&facts, opcode, ctx, r, n);
    let w_t = next("memory width", r)?;
    let width: u32 = match w_t.parse() {
        Ok(w) => w,
        Err(_) => return r.error_none(n, 15, format!("memory width {w_t:?} is not decimal")),
    };
    width_problems(&facts, opcode, width, r, n);
    if width > 0 {
        let addrs = addresses(&mut next, mask, n, r)?;
        check_addresses(first, facts.width, &addrs, n, r);
    }
    if ctx.immediate {
        let t = next("immediate", r)?;
        match t.parse::<u64>() {
            Ok(v) if first == "BAR" && v >= 16 => {
                r.warn(n, 25, format!("barrier id {v} is not below 16"))
            }
            Ok(v) if first != "BAR" && first != "DEPBAR" && v != 0 => {
                r.warn(n, 25, format!("immediate {v} on {opcode}"))
            }
            Ok(_) => {}
            Err(_) => r.error(n, 15, format!("immediate {t:?} is not decimal")),
        }
    }
    if let Some(extra) = toks.next() {
        r.error(
            n,
            15,
            format!("surplus token {extra:?} after the line's last field"),
        );
    }
    Some(Parsed {
        pc,
        mask,
        opcode,
        max_reg,
        facts,
    })
}

/// The checks of a line in the exporter's form, read by
/// [`canonical::read`]: the same, in the same order, as those of the
/// general reading, which finds the same fields in such a line.
fn judged<'a>(
    line: Canonical<'a>,
    addrs: &[u64],
    ctx: &LineContext,
    facts: &mut PcOpcodes,
    r: &mut Report,
    n: usize,
) -> Parsed<'a> {
    pc_warning(line.pc, line.pc_t, r, n);
    mask_warning(line.mask, ctx, r, n);
    destination_warning(line.dst, r, n);
    let facts = facts.facts(line.pc, line.opcode, ctx.version);
    opcode_problems(&facts, line.opcode, ctx, r, n);
    width_problems(&facts, line.opcode, line.width, r, n);
    if line.width > 0 {
        check_addresses(facts.first(line.opcode), facts.width, addrs, n, r);
    }
    Parsed {
        pc: line.pc,
        mask: line.mask,
        opcode: line.opcode,
        max_reg: line.max_reg,
        facts,
    }
}

/// 16: a PC (written `pc_t`) that is not a multiple of 16.
fn pc_warning(pc: u32, pc_t: &str, r: &mut Report, n: usize) {
    if !pc.is_multiple_of(16) {
        r.warn(n, 16, format!("PC {pc_t} is not a multiple of 16"));
    }
}

/// 24: a mask with lanes the warp did not launch.
fn mask_warning(mask: u32, ctx: &LineContext, r: &mut Report, n: usize) {
    if mask & !ctx.launched != 0 {
        r.warn(
            n,
            24,
            format!("mask {mask:08x} has lanes that were not launched"),
        );
    }
}

/// 17: the zero register as a destination.
fn destination_warning(dst: Option<u32>, r: &mut Report, n: usize) {
    if dst == Some(255) {
        r.warn(n, 17, "R255 (the zero register) as a destination".into());
    }
}

/// 18: an opcode outside the Volta map, or outside that of the binary
/// version.
fn opcode_problems(facts: &Facts, opcode: &str, ctx: &LineContext, r: &mut Report, n: usize) {
    let first = facts.first(opcode);
    if !facts.volta && !facts.known {
        r.error(
            n,
            18,
            format!(
                "opcode {opcode}: {first} is not in the map of binary version {}",
                ctx.version
            ),
        );
    } else if !facts.volta {
        r.warn(
            n,
            18,
            format!("opcode {opcode}: {first} is not in the Volta map"),
        );
    }
}

/// 19 and 20: a memory width where the opcode has none, none where it has
/// one, or one other than the opcode's.
fn width_problems(facts: &Facts, opcode: &str, width: u32, r: &mut Report, n: usize) {
    let is_mem = facts.memory;
    if is_mem && width == 0 {
        r.error(
            n,
            19,
            format!("memory opcode {opcode} without a memory width"),
        );
    }
    if !is_mem && width != 0 {
        r.warn(
            n,
            19,
            format!("{opcode} is not a memory opcode but has a memory part"),
        );
    }
    if width > 0 {
        let ow = facts.width;
        if facts.narrow {
            r.warn(n, 20, format!("{opcode}: .S8/.S16 are read as 4 bytes"));
        }
        if ![1, 2, 4, 8, 16].contains(&ow) {
            r.warn(
                n,
                20,
                format!("{opcode}: width {ow} is not 1, 2, 4, 8 or 16"),
            );
        } else if ow != width {
            r.warn(
                n,
                20,
                format!("{opcode} accesses {ow} bytes, the width field says {width}"),
            );
        }
    }
}

/// Reads the address mode and payload; returns the active lanes' addresses.
fn addresses<'a>(
    next: &mut dyn FnMut(&str, &mut Report) -> Option<&'a str>,
    mask: u32,
    n: usize,
    r: &mut Report,
) -> Option<ArrayVec<u64, 32>> {
    let k = mask.count_ones() as usize;
    let mode_t = next("address mode", r)?;
    let mut base = |r: &mut Report| {
        let t = next("base address", r)?;
        hex(t).or_else(|| r.error_none(n, 21, format!("address {t:?} is not hex")))
    };
    // (a mask of 32 bits: at most 32 addresses)
    let mut out = ArrayVec::new();
    match mode_t {
        "0" => {
            for _ in 0..k {
                out.push(base(r)?);
            }
        }
        "1" => {
            // The lanes from the lowest active one up, widened so that a
            // full warp's run of 32 ones can be tested without overflow (and
            // an empty mask shifts by nothing).
            let run = u64::from(mask.checked_shr(mask.trailing_zeros()).unwrap_or(0));
            if k < 1 || run & (run + 1) != 0 {
                r.error(
                    n,
                    21,
                    format!("mode 1 with mask {mask:08x}, whose lanes are not one contiguous run"),
                );
            }
            let b = base(r)?;
            let t = next("stride", r)?;
            let Some(s) = t.parse::<i32>().ok() else {
                return r.error_none(
                    n,
                    21,
                    format!("stride {t:?} is not a signed 32-bit decimal"),
                );
            };
            strided(b, s, k, &mut out);
        }
        "2" => {
            let mut a = base(r)?;
            out.push(a);
            for _ in 1..k {
                let t = next("address delta", r)?;
                let Some(d) = t.parse::<i64>().ok() else {
                    return r.error_none(
                        n,
                        21,
                        format!("delta {t:?} is not a signed 64-bit decimal"),
                    );
                };
                a = a.wrapping_add(d as u64);
                out.push(a);
            }
        }
        m => return r.error_none(n, 21, format!("address mode {m:?} is not 0, 1 or 2")),
    }
    Some(out)
}

/// Appends the `k` addresses of mode 1 from `base`, `stride` bytes apart.
pub(super) fn strided(base: u64, stride: i32, k: usize, out: &mut ArrayVec<u64, 32>) {
    for i in 0..k {
        out.push(base.wrapping_add((i64::from(stride) * i as i64) as u64));
    }
}

fn check_addresses(first: &str, width: u32, addrs: &[u64], n: usize, r: &mut Report) {
    let w = u64::from(width);
    if matches!(first, "LDL" | "STL") {
        if width >= 4 && (!width.is_multiple_of(4) || width > 32) {
            r.error(
                n,
                23,
                format!("local access of {width} bytes: not a multiple of 4 up to 32"),
            );
        }
        if let Some(a) = addrs
            .iter()
            .find(|&&a| if w >= 4 { a % 4 != 0 } else { a % 4 + w > 4 })
        {
            r.error(n, 23, format!("local address {a:#x} of a {width}-byte access is not 4-byte aligned (or crosses a word)"));
        }
    } else if matches!(
        first,
        "LDG" | "STG" | "ATOMG" | "RED" | "LD" | "ST" | "ATOM"
    ) && addrs.contains(&0)
    {
        r.warn(
            n,
            22,
            "a global address of an active lane is 0 (no access)".into(),
        );
    }
}
