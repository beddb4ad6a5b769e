//! Writes one thread's block executions, as a tracer hands them to its
//! encoder, to a file that `benches/encode.c` encodes again with the C
//! header's encoder: the input of `benches/encode_throughput.sh`, which
//! measures the encoder alone, without a tracer around it.
//!
//! ```text
//! cargo run -q --release -p tf-trace --example executions -- TRACE_DIR TID OUT [MAX]
//! ```
//!
//! At most MAX executions (default: all). The file, little-endian:
//! `TFEX`, the block count and the largest operand count (u32 each); per
//! block in id order its address (u64), code length, instruction count,
//! operand count and end kind (u32 each) and one flag byte per operand
//! (`TF_OP_WRITE`, `TF_OP_COND`); then per execution its block id, operand
//! count and instruction count (u32 each; bit 31 of the instruction count
//! set for a partial execution) and one address per operand (u64, 0 for an
//! absent one).

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use tf_trace::{Event, Trace};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, tid, out, max) = match &args[..] {
        [d, t, o] => (d, t, o, u64::MAX),
        [d, t, o, m] => (d, t, o, m.parse().unwrap_or(u64::MAX)),
        _ => {
            eprintln!("usage: executions TRACE_DIR TID OUT [MAX]");
            return ExitCode::from(2);
        }
    };
    let Ok(tid) = tid.parse() else {
        eprintln!("executions: TID must be a number, not {tid:?}");
        return ExitCode::from(2);
    };
    match run(dir, tid, out, max) {
        Ok(n) => {
            eprintln!("executions: {n} block executions of thread {tid} -> {out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("executions: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &str, tid: u64, out: &str, max: u64) -> Result<u64, Box<dyn std::error::Error>> {
    let trace = Trace::open(dir)?;
    let blocks = trace.blocks();
    let mut w = BufWriter::new(std::fs::File::create(out)?);
    w.write_all(b"TFEX")?;
    w.write_all(&(blocks.len() as u32).to_le_bytes())?;
    w.write_all(&(blocks.max_ops() as u32).to_le_bytes())?;
    for b in blocks.iter() {
        w.write_all(&b.address().to_le_bytes())?;
        for v in [
            b.code().len(),
            b.n_insns(),
            b.operands().len(),
            b.end() as usize,
        ] {
            w.write_all(&(v as u32).to_le_bytes())?;
        }
        for op in b.operands() {
            w.write_all(&[u8::from(op.write) | u8::from(op.conditional) << 1])?;
        }
    }
    let mut reader = trace.read_thread(tid)?;
    let mut n = 0u64;
    let mut addrs = Vec::new();
    while let Some(ev) = reader.next_event() {
        let Event::Block(x) = ev? else { continue };
        addrs.clear();
        addrs.resize(x.operands as usize, 0u64);
        for a in x.accesses() {
            addrs[usize::from(a.operand)] = a.addr;
        }
        let insns = x.insns | if x.complete { 0 } else { 1 << 31 };
        for v in [x.block, x.operands, insns] {
            w.write_all(&v.to_le_bytes())?;
        }
        for a in &addrs {
            w.write_all(&a.to_le_bytes())?;
        }
        n += 1;
        if n == max {
            break;
        }
    }
    w.flush()?;
    Ok(n)
}
