//! Decodes a trace and writes it again with the Rust writer, then says
//! whether each thread file came out byte for byte the same: a check that a
//! tracer writes the canonical encoding of FORMAT.md §6.5.
//!
//! ```text
//! cargo run -q -p tf-trace --example reencode -- TRACE_DIR OUT_DIR
//! ```
//!
//! Chunks that a tracer closed before reaching its target (a flush before
//! `exec` or exit) are closed at the same places. Exits with status 1 if a
//! file differs or the trace is damaged.

use std::process::ExitCode;

use tf_trace::{BlockDef, ChunkDecoder, Event, Trace, TraceWriter, WriterOptions};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, out] = &args[..] else {
        eprintln!("usage: reencode TRACE_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    match run(src, out) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("reencode: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(src: &str, out: &str) -> tf_trace::Result<bool> {
    let trace = Trace::open(src)?;
    let mut same = true;
    for tf in trace.threads() {
        let mut chunks = trace.chunks(tf.tid)?;
        let params = chunks.header().params;
        // The target is what the tracer used: its largest chunk's payload
        // is at least the target, so a target of 1 MiB is assumed unless a
        // chunk says otherwise.
        let opts = WriterOptions {
            chunk_target: 1 << 20,
            params,
        };
        let dir = std::path::Path::new(out).join(format!("thread-{}", tf.tid));
        let mut w = TraceWriter::create_with(&dir, opts)?;
        let bt = trace.blocks();
        for m in bt.modules() {
            w.module(m.base, m.size, &m.path, &m.build_id)?;
        }
        for f in bt.functions() {
            w.function(f.entry, f.module, &f.name)?;
        }
        for b in bt.iter() {
            let mut d = BlockDef::new(b.address())
                .function(b.function())
                .end(b.end())
                .code(b.code());
            let ops = b.operands();
            for (i, &len) in b.insn_lengths().iter().enumerate() {
                d = d.insn(len);
                for o in &ops[b.operand_range(i)] {
                    d = d.operand(o.size, o.write, o.conditional);
                }
            }
            w.block(&d)?;
        }
        let mut dec = ChunkDecoder::new(bt, params);
        let mut t = w.thread(tf.tid)?;
        let mut addrs: Vec<Option<u64>> = Vec::new();
        while let Some(c) = chunks.next_chunk() {
            let c = c?;
            let mut events = dec.decode(c.payload).map_err(|e| c.damaged(e))?;
            while let Some(ev) = events.next_event() {
                match ev.map_err(|e| c.damaged(e))? {
                    Event::Block(x) => {
                        addrs.clear();
                        addrs.resize(x.operands as usize, None);
                        for a in x.accesses() {
                            addrs[a.operand as usize] = Some(a.addr);
                        }
                        if x.complete {
                            t.exec_opt(x.block, &addrs)?;
                        } else {
                            t.exec_partial(x.block, x.insns, &addrs)?;
                        }
                    }
                    other => t.event(&other)?,
                }
            }
            t.flush()?;
        }
        w.finish()?;
        let name = format!("thread-{}.tfc", tf.tid);
        let a = std::fs::read(&tf.path).map_err(|e| tf_trace::Error::Io {
            file: tf.path.display().to_string(),
            source: e,
        })?;
        let b = std::fs::read(dir.join(&name)).map_err(|e| tf_trace::Error::Io {
            file: name.clone(),
            source: e,
        })?;
        if a == b {
            println!("{name}: identical ({} bytes)", a.len());
        } else {
            let at = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            println!(
                "{name}: DIFFERS at byte {at} ({} vs {} bytes)",
                a.len(),
                b.len()
            );
            same = false;
        }
    }
    Ok(same)
}
