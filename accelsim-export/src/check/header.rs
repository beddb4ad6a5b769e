//! Checks of a kernel file's header (checklist items 6–9).

use super::insn::LineContext;
use super::Report;
use crate::opmap::BINARY_VERSIONS;

#[derive(Default)]
pub(super) struct Header {
    pub(super) grid: Option<[u64; 3]>,
    pub(super) block: Option<[u64; 3]>,
    pub(super) shmem: Option<u64>,
    pub(super) nregs: Option<u64>,
    pub(super) version: Option<u64>,
    pub(super) stream: Option<u64>,
    pub(super) tracer: Option<u64>,
    pub(super) lineinfo: u64,
}

fn dims(v: &str) -> Option<[u64; 3]> {
    let v = v.trim().strip_prefix('(')?.strip_suffix(')')?;
    let p: Vec<u64> = v
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    p.try_into().ok()
}

/// Reads one header line (without its `-`).
pub(super) fn header_line(rest: &str, h: &mut Header, r: &mut Report, n: usize) {
    let mut words = rest.split_whitespace();
    let key = format!(
        "{} {}",
        words.next().unwrap_or(""),
        words.next().unwrap_or("")
    );
    let value = rest.split_once('=').map(|(_, v)| v);
    let num = |r: &mut Report, check: u8| -> Option<u64> {
        match value.map(|v| v.trim().parse::<u64>()) {
            Some(Ok(x)) => Some(x),
            _ => r.error_none(
                n,
                check,
                format!("-{rest}: the value is not a decimal number"),
            ),
        }
    };
    match key.as_str() {
        "grid dim" | "block dim" => {
            let d = value.and_then(dims);
            if d.is_none() {
                r.error(n, 6, format!("-{rest}: not (x,y,z)"));
            }
            if d.is_some_and(|d| d.contains(&0)) {
                r.warn(n, 9, format!("-{rest}: a dimension is 0"));
            }
            if key == "grid dim" {
                h.grid = d
            } else {
                h.block = d
            }
        }
        "shmem =" => h.shmem = num(r, 6),
        "nregs =" => h.nregs = num(r, 6),
        "binary version" => h.version = num(r, 6),
        "cuda stream" => h.stream = num(r, 6),
        "accelsim tracer" => h.tracer = num(r, 6),
        "enable lineinfo" => h.lineinfo = num(r, 6).unwrap_or(0),
        "kernel name" if !rest.contains("= ") || rest.contains("=  ") => r.warn(
            n,
            9,
            "-kernel name: exactly one space must follow '='".into(),
        ),
        _ => {}
    }
}

/// Checks that the header had every required key (6–9).
pub(super) fn finish_header(h: &Header, r: &mut Report) -> LineContext {
    let missing = [
        ("grid dim", h.grid.is_some()),
        ("block dim", h.block.is_some()),
        ("shmem", h.shmem.is_some()),
        ("nregs", h.nregs.is_some()),
        ("binary version", h.version.is_some()),
        ("cuda stream id", h.stream.is_some()),
        ("accelsim tracer version", h.tracer.is_some()),
    ];
    for (key, present) in missing {
        if !present {
            r.error(0, 6, format!("the header has no valid -{key} line"));
        }
    }
    let version = h.version.unwrap_or(70) as u32;
    if !BINARY_VERSIONS.contains(&version) {
        r.error(
            0,
            7,
            format!("binary version {version} is not one the simulator knows"),
        );
    } else if version != 70 && version != 86 {
        r.warn(
            0,
            7,
            format!("binary version {version}: 70 or 86 keep the opcode subset valid"),
        );
    }
    let tracer = h.tracer.unwrap_or(4);
    if tracer != 4 && tracer != 5 {
        r.warn(
            0,
            8,
            format!("accelsim tracer version {tracer}: 4 or 5 is what this checker knows"),
        );
    }
    if h.lineinfo != 0 {
        r.warn(
            0,
            8,
            "enable lineinfo = 1 is unknown to older simulators".into(),
        );
    }
    if h.nregs == Some(0) {
        r.warn(0, 9, "nregs = 0 turns the register limit off".into());
    }
    LineContext {
        version,
        immediate: tracer >= 5,
        lineinfo: h.lineinfo == 1,
        launched: u32::MAX,
    }
}
