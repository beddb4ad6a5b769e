//! Accel-Sim's opcode maps: the first piece of every opcode its Volta
//! (`-binary version = 70`) and Ampere (80, 86) front ends know. An opcode
//! whose first piece is missing from the map of the trace's version stops
//! the simulator ("undefined instruction").

use rustc_hash::FxHashSet;
use std::sync::OnceLock;

/// The Volta map (every entry is also in the Ampere map).
pub const VOLTA: &[&str] = &[
    // FP32 and FP16
    "FADD",
    "FADD32I",
    "FCHK",
    "FFMA",
    "FFMA32I",
    "FMNMX",
    "FMUL",
    "FMUL32I",
    "FSEL",
    "FSET",
    "FSETP",
    "FSWZADD",
    "HADD2",
    "HADD2_32I",
    "HFMA2",
    "HFMA2_32I",
    "HMUL2",
    "HMUL2_32I",
    "HSET2",
    "HSETP2", // special functions and FP64
    "MUFU",
    "DADD",
    "DFMA",
    "DMUL",
    "DSETP", // integer
    "BMSK",
    "BREV",
    "FLO",
    "IABS",
    "IADD",
    "IADD3",
    "IADD32I",
    "IDP",
    "IDP4A",
    "IMAD",
    "IMMA",
    "IMNMX",
    "IMUL",
    "IMUL32I",
    "ISCADD",
    "ISCADD32I",
    "ISETP",
    "LEA",
    "LOP",
    "LOP3",
    "LOP32I",
    "POPC",
    "SHF",
    "SHR",
    "VABSDIFF",
    "VABSDIFF4", // other ALU
    "B2R",
    "CCTL",
    "CCTLL",
    "CCTLT",
    "CS2R",
    "CSMTEST",
    "DEPBAR",
    "ERRBAR",
    "F2F",
    "F2I",
    "FRND",
    "GETLMEMBASE",
    "I2F",
    "I2I",
    "I2IP",
    "LDC",
    "LEPC",
    "MATCH",
    "MOV",
    "MOV32I",
    "NOP",
    "P2R",
    "PLOP3",
    "PMTRIG",
    "PRMT",
    "PSETP",
    "QSPC",
    "R2B",
    "R2P",
    "S2R",
    "SEL",
    "SETCTAID",
    "SETLMEMBASE",
    "SGXT",
    "SHFL",
    "VOTE",
    "VOTE_VTG", // memory
    "LD",
    "LDG",
    "LDL",
    "LDS",
    "ST",
    "STG",
    "STL",
    "STS",
    "ATOM",
    "ATOMG",
    "ATOMS",
    "RED",
    "MEMBAR",
    "BAR",
    "EXIT", // specialized unit 1: control
    "BMOV",
    "BPT",
    "BRA",
    "BREAK",
    "BRX",
    "BSSY",
    "BSYNC",
    "CALL",
    "JMP",
    "JMX",
    "KILL",
    "NANOSLEEP",
    "RET",
    "RPCMOV",
    "RTT",
    "WARPSYNC",
    "YIELD", // units 2 and 3
    "TEX",
    "TLD",
    "TLD4",
    "TMML",
    "TXD",
    "TXQ",
    "HMMA",
];

/// Entries of the Ampere map that Volta lacks.
pub const AMPERE_ONLY: &[&str] = &[
    "BMMA",
    "DMMA",
    "HMNMX2",
    "SHL",
    "F2FP",
    "F2IP",
    "I2FP",
    "MOVM",
    "LDSM",
    "LDGSTS",
    "LDGDEPBAR",
    "SUATOM",
    "SULD",
    "SUQUERY",
    "SURED",
    "SUST",
    "BRXU",
    "JMXU",
    "R2UR",
    "REDUX",
    "S2UR",
    "UBMSK",
    "UBREV",
    "UCLEA",
    "UF2FP",
    "UFLO",
    "UIADD3",
    "UIMAD",
    "UISETP",
    "ULDC",
    "ULEA",
    "ULOP",
    "ULOP3",
    "ULOP32I",
    "UMOV",
    "UP2UR",
    "UPLOP3",
    "UPOPC",
    "UPRMT",
    "UPSETP",
    "UR2UP",
    "USEL",
    "USGXT",
    "USHF",
    "USHL",
    "USHR",
    "VOTEU",
];

/// `-binary version` values the simulator has a map for.
pub const BINARY_VERSIONS: &[u32] = &[35, 60, 61, 70, 75, 80, 86, 90];

/// Opcodes (first piece) that access memory and need a memory part.
pub const MEMORY: &[&str] = &[
    "LD", "LDG", "LDL", "LDS", "ST", "STG", "STL", "STS", "ATOM", "ATOMG", "ATOMS", "RED",
];

/// Opcodes (first piece) that run on specialized unit 1, 2 or 3.
pub fn specialized_unit(first: &str) -> Option<u8> {
    match first {
        "BMOV" | "BPT" | "BRA" | "BREAK" | "BRX" | "BSSY" | "BSYNC" | "CALL" | "JMP" | "JMX"
        | "KILL" | "NANOSLEEP" | "RET" | "RPCMOV" | "RTT" | "WARPSYNC" | "YIELD" | "BRXU"
        | "JMXU" => Some(1),
        "TEX" | "TLD" | "TLD4" | "TMML" | "TXD" | "TXQ" => Some(2),
        "HMMA" | "BMMA" | "DMMA" => Some(3),
        _ => None,
    }
}

/// `list` as a set, made on first use: the export checks every line it
/// writes against these lists, and scanning them was most of the export's
/// time.
fn set(
    cell: &'static OnceLock<FxHashSet<&'static str>>,
    list: &'static [&'static str],
) -> &'static FxHashSet<&'static str> {
    cell.get_or_init(|| list.iter().copied().collect())
}

/// Whether the Volta map has `first`.
///
/// ```
/// assert!(tf_accelsim::opmap::in_volta("FFMA"));
/// assert!(!tf_accelsim::opmap::in_volta("LDGSTS"));
/// ```
pub fn in_volta(first: &str) -> bool {
    static VOLTA_SET: OnceLock<FxHashSet<&str>> = OnceLock::new();
    set(&VOLTA_SET, VOLTA).contains(first)
}

/// Whether `first` accesses memory ([`MEMORY`]).
///
/// ```
/// assert!(tf_accelsim::opmap::is_memory("LDG"));
/// assert!(!tf_accelsim::opmap::is_memory("FFMA"));
/// ```
pub fn is_memory(first: &str) -> bool {
    static MEMORY_SET: OnceLock<FxHashSet<&str>> = OnceLock::new();
    set(&MEMORY_SET, MEMORY).contains(first)
}

/// Whether the map of `version` has `first` (versions other than Volta's
/// and Ampere's are checked against both maps together).
///
/// ```
/// use tf_accelsim::opmap::known;
/// assert!(known(70, "FFMA") && known(80, "FFMA"));
/// assert!(!known(70, "LDGSTS") && known(80, "LDGSTS"));
/// assert!(!known(80, "NOSUCH"));
/// ```
pub fn known(version: u32, first: &str) -> bool {
    static AMPERE_SET: OnceLock<FxHashSet<&str>> = OnceLock::new();
    let volta = in_volta(first);
    match version {
        70 => volta,
        _ => volta || set(&AMPERE_SET, AMPERE_ONLY).contains(first),
    }
}

/// Bytes per lane that the simulator reads from an opcode's modifiers:
/// the first piece of all digits `N` gives `N / 8`, `U` and digits the same,
/// else 4 (so `.S8` and `.S16` count as 4).
///
/// ```
/// use tf_accelsim::opmap::opcode_width;
/// assert_eq!(opcode_width("LDG.E.64"), 8);
/// assert_eq!(opcode_width("STL.U8"), 1);
/// assert_eq!(opcode_width("LDG.E.S16"), 4);
/// ```
pub fn opcode_width(opcode: &str) -> u32 {
    for piece in opcode.split('.').filter(|p| !p.is_empty()).skip(1) {
        let digits = piece.strip_prefix('U').unwrap_or(piece);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return digits.parse::<u32>().map_or(0, |n| n / 8);
        }
    }
    4
}
