//! Prints everything in a trace: manifest, block table, every record of
//! every thread stream, stopping a stream at its first damaged chunk.
//!
//! ```text
//! cargo run -q -p tf-trace --example dump -- TRACE_DIR [--thread N] [--no-blocks]
//! ```
//!
//! Exits with status 1 if anything was damaged, 2 on a usage error.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use tf_trace::{ChunkDecoder, Event, Trace, Via};

fn main() -> ExitCode {
    let mut dir = None;
    let mut only = None;
    let mut blocks = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--thread" => match args.next().and_then(|n| n.parse::<u64>().ok()) {
                Some(n) => only = Some(n),
                None => return usage("--thread needs a thread id"),
            },
            "--no-blocks" => blocks = false,
            "-h" | "--help" => return usage(""),
            _ if dir.is_none() && !a.starts_with('-') => dir = Some(a),
            _ => return usage(&format!("unexpected argument {a}")),
        }
    }
    let Some(dir) = dir else {
        return usage("no trace directory");
    };
    let trace = match Trace::open(&dir) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("dump: {e}");
            return ExitCode::FAILURE;
        }
    };
    let out = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, out.lock());
    match dump(&trace, only, blocks, &mut out).and_then(|d| out.flush().map(|_| d)) {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::FAILURE,
        // A closed pipe (`dump | head`) is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dump: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(why: &str) -> ExitCode {
    if !why.is_empty() {
        eprintln!("dump: {why}");
    }
    eprintln!("usage: dump TRACE_DIR [--thread N] [--no-blocks]");
    ExitCode::from(2)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Prints the trace; returns whether anything was damaged.
fn dump(
    trace: &Trace,
    only: Option<u64>,
    show_blocks: bool,
    out: &mut impl Write,
) -> io::Result<bool> {
    let mut damaged = false;
    match trace.manifest() {
        None => writeln!(out, "manifest: none")?,
        Some(m) => {
            writeln!(
                out,
                "manifest: {} v{}, tracer {} {} ({}), complete: {}",
                m.format, m.version, m.tracer, m.tracer_version, m.backend, m.complete
            )?;
            let cmd: Vec<String> = m.command.iter().map(|c| c.to_string()).collect();
            writeln!(
                out,
                "  command: {:?}  cwd: {}  pid: {}  start: {}",
                cmd, m.cwd, m.pid, m.start_time
            )?;
            writeln!(
                out,
                "  exit_code: {:?}  exit_signal: {:?}  only: {:?}  exclude: {:?}",
                m.exit_code, m.exit_signal, m.only, m.exclude
            )?;
            let exec: Vec<String> = m.exec.iter().map(|c| c.to_string()).collect();
            writeln!(out, "  forked: {}  exec: {:?}", m.forked, exec)?;
            writeln!(
                out,
                "  traced: {}  skipped: {}  blocks: {}",
                m.traced_instructions, m.skipped_instructions, m.blocks
            )?;
            for t in &m.threads {
                writeln!(
                    out,
                    "  thread {}: parent {} stack [{:#x}, {:#x}) start {:#x} traced {} skipped {}",
                    t.tid,
                    t.parent,
                    t.stack_lo,
                    t.stack_hi,
                    t.start_routine,
                    t.traced_instructions,
                    t.skipped_instructions
                )?;
            }
            for md in &m.modules {
                writeln!(
                    out,
                    "  module {}: {:#x}+{:#x} {}",
                    md.id, md.base, md.size, md.path
                )?;
            }
        }
    }
    for p in trace.problems() {
        writeln!(out, "PROBLEM: {p}")?;
        damaged = true;
    }
    let bt = trace.blocks();
    writeln!(
        out,
        "block table: {} modules, {} functions, {} blocks",
        bt.modules().len(),
        bt.functions().len(),
        bt.len()
    )?;
    if show_blocks {
        for m in bt.modules() {
            let bid: String = m.build_id.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(
                out,
                "  module {}: [{:#x}, {:#x}) {} build-id {}",
                m.id,
                m.base,
                m.base.wrapping_add(m.size),
                lossy(&m.path),
                if bid.is_empty() { "-" } else { &bid }
            )?;
        }
        for f in bt.functions() {
            writeln!(
                out,
                "  function {}: {:#x} module {} {}",
                f.id,
                f.entry,
                f.module,
                f.name_lossy()
            )?;
        }
        for b in bt.iter() {
            let ops: Vec<String> = b
                .operands()
                .iter()
                .map(|o| {
                    format!(
                        "i{}:{}{}{}",
                        o.insn,
                        if o.write { "w" } else { "r" },
                        o.size,
                        if o.conditional { "?" } else { "" }
                    )
                })
                .collect();
            let code: String = b.code().iter().map(|c| format!("{c:02x}")).collect();
            writeln!(
                out,
                "  block {}: {:#x} fn {} {} {} insns {:?} ops [{}] code {}",
                b.id(),
                b.address(),
                b.function(),
                b.end().name(),
                b.n_insns(),
                b.insn_lengths(),
                ops.join(" "),
                code
            )?;
        }
    }
    for tf in trace.threads() {
        if only.is_some_and(|t| t != tf.tid) {
            continue;
        }
        let mut chunks = match trace.chunks(tf.tid) {
            Ok(c) => c,
            Err(e) => {
                writeln!(out, "thread {}: ERROR: {e}", tf.tid)?;
                damaged = true;
                continue;
            }
        };
        let p = chunks.header().params;
        writeln!(
            out,
            "thread {} ({}, {} bytes): addr_table_bits {} succ_table_bits {} ret_stack_depth {}",
            tf.tid,
            tf.path.display(),
            tf.size,
            p.addr_table_bits,
            p.succ_table_bits,
            p.ret_stack_depth
        )?;
        let mut dec = ChunkDecoder::new(bt, p);
        while let Some(c) = chunks.next_chunk() {
            let c = match c {
                Ok(c) => c,
                Err(e) => {
                    writeln!(out, "ERROR: {e}")?;
                    damaged = true;
                    break;
                }
            };
            let mut events = match dec.decode(c.payload) {
                Ok(ev) => ev,
                Err(e) => {
                    writeln!(out, "ERROR: {}", c.damaged(e))?;
                    damaged = true;
                    break;
                }
            };
            writeln!(
                out,
                "  chunk {} at byte {}: {} payload bytes",
                c.seq,
                c.offset,
                c.payload.len()
            )?;
            while let Some(ev) = events.next_event() {
                match ev {
                    Ok(ev) => print_event(bt, &ev, out)?,
                    Err(e) => {
                        writeln!(out, "ERROR: {e}")?;
                        damaged = true;
                        break;
                    }
                }
            }
        }
    }
    Ok(damaged)
}

fn print_event(bt: &tf_trace::BlockTable, ev: &Event<'_>, out: &mut impl Write) -> io::Result<()> {
    match ev {
        Event::Block(x) => {
            let b = bt.block(x.block).expect("decoded blocks exist");
            let via = match x.via {
                Via::Run => "run",
                Via::Candidate0 => "cand0",
                Via::Candidate1 => "cand1",
                Via::Explicit => "id",
            };
            write!(out, "    {via:5} block {} {:#x}", x.block, b.address())?;
            if !x.complete {
                write!(out, " PARTIAL {}/{} insns", x.insns, b.n_insns())?;
            }
            for a in x.accesses() {
                write!(
                    out,
                    " {}{}[{}]={:#x}",
                    if a.write { "w" } else { "r" },
                    a.size,
                    a.operand,
                    a.addr
                )?;
            }
            writeln!(out)
        }
        Event::Unknown { ty, payload } => writeln!(out, "    event type {ty} (unknown), {} bytes", payload.len()),
        Event::ThreadStart {
            parent,
            stack_lo,
            stack_hi,
            start_routine,
        } => writeln!(
            out,
            "    thread_start parent {parent} stack [{stack_lo:#x}, {stack_hi:#x}) start {start_routine:#x}"
        ),
        Event::LockAcquire { kind, lock } => writeln!(out, "    lock_acquire {kind:?} {lock:#x}"),
        Event::LockRelease { kind, lock } => writeln!(out, "    lock_release {kind:?} {lock:#x}"),
        Event::Skip { reason, count } => writeln!(out, "    skip {reason:?} {count}"),
        Event::Syscall { number, nanos } => writeln!(out, "    syscall {number} {nanos} ns"),
        other => writeln!(out, "    {other:?}"),
    }
}
