//! Reading Accel-Sim trace directories back in tests, independently of the
//! writer: kernels, warps and instruction lines with decoded addresses.

use serde_json::Value;
use std::path::Path;

/// One instruction line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub pc: u32,
    pub mask: u32,
    pub opcode: String,
    /// Bytes per lane (0: not a memory instruction).
    pub width: u32,
    /// Addresses of the active lanes, in lane order.
    pub addrs: Vec<u64>,
}

impl Line {
    /// The opcode's first piece.
    pub fn op(&self) -> &str {
        self.opcode.split('.').next().unwrap()
    }

    /// Distinct 32-byte sectors of its lanes' accesses.
    pub fn sectors(&self) -> u64 {
        let mut s: Vec<u64> = self
            .addrs
            .iter()
            .flat_map(|&a| a / 32..=(a + u64::from(self.width) - 1) / 32)
            .collect();
        s.sort_unstable();
        s.dedup();
        s.len() as u64
    }
}

fn hex(t: &str) -> u64 {
    u64::from_str_radix(t.trim_start_matches("0x"), 16).unwrap()
}

/// Parses one line of tracer format 4 (no line numbers, no immediate).
pub fn parse_line(text: &str) -> Line {
    let t: Vec<&str> = text.split_whitespace().collect();
    let pc = hex(t[0]) as u32;
    let mask = hex(t[1]) as u32;
    let d: usize = t[2].parse().unwrap();
    let opcode = t[3 + d].to_string();
    let s: usize = t[4 + d].parse().unwrap();
    let mut i = 5 + d + s;
    let width: u32 = t[i].parse().unwrap();
    let mut addrs = Vec::new();
    if width > 0 {
        let k = mask.count_ones() as usize;
        let base = hex(t[i + 2]);
        match t[i + 1] {
            "0" => addrs.extend(t[i + 2..i + 2 + k].iter().map(|a| hex(a))),
            "1" => {
                let stride: i64 = t[i + 3].parse().unwrap();
                addrs.extend((0..k).map(|j| base.wrapping_add((stride * j as i64) as u64)));
            }
            "2" => {
                addrs.push(base);
                for d in &t[i + 3..i + 2 + k] {
                    let next = addrs
                        .last()
                        .unwrap()
                        .wrapping_add(d.parse::<i64>().unwrap() as u64);
                    addrs.push(next);
                }
            }
            m => panic!("mode {m}"),
        }
        i += 2 + match t[i + 1] {
            "0" => k,
            "1" => 2,
            _ => k,
        };
    } else {
        i += 1;
    }
    assert_eq!(i, t.len(), "tokens left over in {text:?}");
    Line {
        pc,
        mask,
        opcode,
        width,
        addrs,
    }
}

/// The warps of a kernel file in order (CTA by CTA, warp by warp).
pub fn warps(path: &Path) -> Vec<Vec<Line>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut warps: Vec<Vec<Line>> = Vec::new();
    let mut body = false;
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('-') || l.starts_with('#') || l.starts_with("thread block")
        {
            continue;
        }
        if l.starts_with("warp") {
            warps.push(Vec::new());
            body = false;
        } else if l.starts_with("insts") {
            body = true;
        } else if body {
            warps.last_mut().unwrap().push(parse_line(l));
        }
    }
    warps
}

/// Runs `tf export --accelsim TRACE -o OUT ARGS` and returns its summary.
pub fn export(trace: &Path, out: &Path, args: &[&str]) -> Value {
    let o = super::tf()
        .args(["export", "--accelsim"])
        .arg(trace)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tf export failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out.join("tf-export.json")).unwrap()).unwrap()
}

/// Runs `tf export --check DIR` and returns its status and output.
pub fn check(dir: &Path) -> (bool, String) {
    let o = super::tf()
        .args(["export", "--check"])
        .arg(dir)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Traces `program args` with `env` set (and LD_BIND_NOW=1, as
/// [`super::trace_command`] sets it).
pub fn trace_env(dir: &Path, program: &Path, args: &[&str], env: &[(&str, &str)]) {
    let o = super::trace_command(dir, &[], program, args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tf trace failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
