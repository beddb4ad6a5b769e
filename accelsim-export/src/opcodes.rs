//! Which SASS opcodes an x86 instruction's operation becomes.
//!
//! Only opcodes whose first piece is in both the Volta (`-binary version =
//! 70`) and Ampere (86) opcode maps of Accel-Sim are used, so one trace runs
//! with either; see `docs/accelsim-export.md` for the table and why.

use iced_x86::{FlowControl, Instruction};

/// What the operation of an x86 instruction is, besides its memory accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Data moves only: loads and stores carry it (`mov`, `push`, `pop`,
    /// `movs`); a register-to-register move is one `MOV`.
    Move,
    /// A control transfer (`BRA`, `BRX`, `CALL…`, `RET…`).
    Control(&'static str),
    /// A `lock`-prefixed read-modify-write (or `xchg` with memory): one
    /// global atomic (`ATOMG…`) that carries the read and the write.
    Atomic(&'static str),
    /// One or more operations, in order (several for expansions such as
    /// division or square root).
    Ops(&'static [&'static str]),
}

/// The class of `instr`, whose mnemonic in lower case is `name` with a VEX
/// or EVEX `v` prefix removed.
pub fn classify(instr: &Instruction, name: &str, has_memory: bool) -> Class {
    match instr.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch => {
            return Class::Control("BRA")
        }
        FlowControl::IndirectBranch => return Class::Control("BRX"),
        FlowControl::Call => return Class::Control("CALL.REL.NOINC"),
        FlowControl::IndirectCall => return Class::Control("CALL.ABS.NOINC"),
        FlowControl::Return => return Class::Control("RET.REL.NODEC"),
        _ => {}
    }
    if has_memory && (instr.has_lock_prefix() || name == "xchg") {
        return Class::Atomic(match name {
            "xchg" => "ATOMG.E.EXCH.STRONG.GPU",
            n if n.starts_with("cmpxchg") => "ATOMG.E.CAS.STRONG.GPU",
            "and" | "btr" => "ATOMG.E.AND.STRONG.GPU",
            "or" | "bts" => "ATOMG.E.OR.STRONG.GPU",
            "xor" | "btc" => "ATOMG.E.XOR.STRONG.GPU",
            _ => "ATOMG.E.ADD.STRONG.GPU",
        });
    }
    Class::Ops(ops(name))
}

/// Whether `name` only moves data.
pub fn is_move(name: &str) -> bool {
    matches!(
        name,
        "mov"
            | "movzx"
            | "movsx"
            | "movsxd"
            | "movd"
            | "movq"
            | "movaps"
            | "movups"
            | "movapd"
            | "movupd"
            | "movdqa"
            | "movdqu"
            | "movdqa32"
            | "movdqa64"
            | "movdqu8"
            | "movdqu16"
            | "movdqu32"
            | "movdqu64"
            | "movss"
            | "movlps"
            | "movhps"
            | "movlpd"
            | "movhpd"
            | "movnti"
            | "movntdq"
            | "movntps"
            | "movntpd"
            | "movntdqa"
            | "lddqu"
            | "push"
            | "pop"
            | "xchg"
            | "fld"
            | "fst"
            | "fstp"
            | "fxch"
    ) || name.starts_with("stos")
        || name.starts_with("lods")
        || name.starts_with("movs") && name.len() == 5
}

/// The opcodes of an operation (the fallback for an unlisted mnemonic is
/// one integer add, the commonest integer-unit operation).
pub fn ops(name: &str) -> &'static [&'static str] {
    const DIV: &[&str] = &[
        "I2F.U32.RP",
        "MUFU.RCP",
        "F2I.FTZ.U32.TRUNC",
        "IMAD.HI.U32",
        "IMAD",
        "ISETP.GE.U32.AND",
        "IADD3",
    ];
    let n = name;
    let has = |s: &str| n.contains(s);
    let double = n.ends_with("sd") || n.ends_with("pd");
    let single = n.ends_with("ss") || n.ends_with("ps");
    match n {
        "nop" | "pause" | "endbr64" | "endbr32" | "syscall" | "int3" | "ud2" | "hlt"
        | "vzeroupper" | "zeroupper" | "emms" | "xgetbv" | "cpuid" => return &["NOP"],
        "rdtsc" | "rdtscp" => return &["CS2R"],
        "mfence" | "lfence" | "sfence" => return &["MEMBAR.SC.GPU"],
        "lea" => return &["LEA"],
        "cmp" | "cmps" | "cmpsb" | "cmpsw" | "cmpsq" | "scasb" | "scasw" | "scasd" | "scasq" => {
            return &["ISETP.NE.AND"]
        }
        "test" | "bt" | "ptest" => return &["LOP3.LUT"],
        "div" | "idiv" => return DIV,
        "popcnt" => return &["POPC"],
        "bsr" | "bsf" | "lzcnt" | "tzcnt" => return &["FLO.U32"],
        "bswap" => return &["PRMT"],
        "cbw" | "cwde" | "cdqe" | "cwd" | "cdq" | "cqo" | "sar" | "sarx" => {
            return &["SHF.R.S32.HI"]
        }
        "shl" | "sal" | "shlx" | "rol" | "rcl" | "shld" => return &["SHF.L.U32"],
        "shr" | "shrx" | "ror" | "rorx" | "rcr" | "shrd" => return &["SHF.R.U32.HI"],
        "imul" | "mul" | "mulx" => return &["IMAD"],
        "fdiv" | "fdivp" | "fdivr" | "fdivrp" | "fidiv" => return &["MUFU.RCP64H", "DMUL"],
        "fsqrt" => return &["MUFU.RSQ64H", "DMUL"],
        _ => {}
    }
    if n.starts_with("cmov") || n.starts_with("set") && !n.starts_with("setp") {
        return &["SEL"];
    }
    if n.starts_with("cvt") {
        return conversion(n);
    }
    if n.starts_with("round") {
        return &["FRND"];
    }
    if n.starts_with('p') && !n.starts_with("pop") && !n.starts_with("push") {
        return packed_int(n);
    }
    if double || single {
        if let Some(ops) = floating(n, double) {
            return ops;
        }
    }
    if n.starts_with('f') {
        // x87: double precision stands in for extended precision.
        return if has("mul") {
            &["DMUL"]
        } else if has("com") || has("ucom") {
            &["DSETP.GT.AND"]
        } else {
            &["DADD"]
        };
    }
    match n {
        "and" | "or" | "xor" | "not" | "andn" | "bts" | "btr" | "btc" | "blsr" | "blsi"
        | "blsmsk" | "bzhi" | "pdep" | "pext" => &["LOP3.LUT"],
        _ => &["IADD3"],
    }
}

fn conversion(n: &str) -> &'static [&'static str] {
    let from_int = n.contains("si2") || n.contains("dq2");
    if from_int {
        return if n.ends_with("sd") || n.ends_with("pd") {
            &["I2F.F64"]
        } else {
            &["I2F"]
        };
    }
    match n {
        "cvtss2sd" | "cvtps2pd" | "cvtph2ps" => &["F2F.F64.F32"],
        "cvtsd2ss" | "cvtpd2ps" | "cvtps2ph" => &["F2F.F32.F64"],
        _ if n.contains("sd2") || n.contains("pd2") => &["F2I.F64"],
        _ => &["F2I"],
    }
}

fn floating(n: &str, double: bool) -> Option<&'static [&'static str]> {
    let has = |s: &str| n.contains(s);
    let fma = has("fmadd") || has("fmsub") || has("fnmadd") || has("fnmsub");
    Some(match (double, n) {
        (false, _) if fma => &["FFMA"],
        (true, _) if fma => &["DFMA"],
        (false, _) if n.starts_with("add") || n.starts_with("sub") || n.starts_with("hadd") => {
            &["FADD"]
        }
        (true, _) if n.starts_with("add") || n.starts_with("sub") || n.starts_with("hadd") => {
            &["DADD"]
        }
        (false, _) if n.starts_with("mul") => &["FMUL"],
        (true, _) if n.starts_with("mul") => &["DMUL"],
        (false, _) if n.starts_with("div") => &["MUFU.RCP", "FMUL"],
        (true, _) if n.starts_with("div") => &["MUFU.RCP64H", "DFMA", "DFMA", "DMUL"],
        (false, _) if n.starts_with("sqrt") => &["MUFU.RSQ", "FMUL"],
        (true, _) if n.starts_with("sqrt") => &["MUFU.RSQ64H", "DFMA", "DMUL"],
        (false, _) if n.starts_with("rcp") => &["MUFU.RCP"],
        (false, _) if n.starts_with("rsqrt") => &["MUFU.RSQ"],
        (false, _) if n.starts_with("min") || n.starts_with("max") => &["FMNMX"],
        (true, _) if n.starts_with("min") || n.starts_with("max") => &["DSETP.GT.AND", "FSEL"],
        (false, _) if n.contains("comi") || n.starts_with("cmp") => &["FSETP.GT.AND"],
        (true, _) if n.contains("comi") || n.starts_with("cmp") => &["DSETP.GT.AND"],
        (_, _)
            if n.starts_with("and")
                || n.starts_with("or")
                || n.starts_with("xor")
                || n.starts_with("andn") =>
        {
            &["LOP3.LUT"]
        }
        (_, _)
            if n.starts_with("shuf")
                || n.starts_with("unpck")
                || n.starts_with("blend")
                || n.starts_with("movmsk")
                || n.starts_with("perm")
                || n.starts_with("insert")
                || n.starts_with("extract")
                || n.starts_with("broadcast")
                || n.starts_with("mov") =>
        {
            &["PRMT"]
        }
        _ => return None,
    })
}

fn packed_int(n: &str) -> &'static [&'static str] {
    let s = |p: &str| n.starts_with(p);
    if s("pmul") || s("pmadd") {
        &["IMAD"]
    } else if s("padd") || s("psub") || s("pavg") || s("psad") || s("phadd") || s("phsub") {
        &["IADD3"]
    } else if s("pand") || s("por") || s("pxor") || s("pternlog") {
        &["LOP3.LUT"]
    } else if s("psll") {
        &["SHF.L.U32"]
    } else if s("psrl") {
        &["SHF.R.U32.HI"]
    } else if s("psra") {
        &["SHF.R.S32.HI"]
    } else if s("pcmp") {
        &["ISETP.EQ.AND"]
    } else if s("pmin") || s("pmax") {
        &["IMNMX"]
    } else {
        // Shuffles, packs, unpacks, inserts, extracts, broadcasts, mask moves.
        &["PRMT"]
    }
}
