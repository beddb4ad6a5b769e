//! The golden traces' contents written down: every event of a trace as one
//! line of text, compared with the `.txt` beside each golden trace.

use super::*;

/// The trace's content as the `.txt` files write it.
pub(super) fn render(trace: &Trace) -> String {
    let mut out = String::new();
    let bt = trace.blocks();
    for m in bt.modules() {
        let id: String = m.build_id.iter().map(|b| format!("{b:02x}")).collect();
        let path = String::from_utf8_lossy(&m.path);
        writeln!(
            out,
            "module {} base {:#x} size {:#x} {path} build-id {id:?}",
            m.id, m.base, m.size
        )
        .unwrap();
    }
    for f in bt.functions() {
        writeln!(
            out,
            "function {} entry {:#x} module {} {}",
            f.id,
            f.entry,
            f.module,
            f.name_lossy()
        )
        .unwrap();
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
            "block {} {:#x} fn {} {} lengths {:?} ops [{}] code {code}",
            b.id(),
            b.address(),
            b.function(),
            b.end().name(),
            b.insn_lengths(),
            ops.join(" ")
        )
        .unwrap();
    }
    for tf in trace.threads() {
        writeln!(out, "thread {}", tf.tid).unwrap();
        let mut chunks = trace.chunks(tf.tid).unwrap();
        let mut dec = tf_trace::ChunkDecoder::new(bt, chunks.header().params);
        while let Some(c) = chunks.next_chunk() {
            let c = c.unwrap();
            writeln!(out, "  chunk {}", c.seq).unwrap();
            let mut events = dec.decode(c.payload).unwrap();
            while let Some(ev) = events.next_event() {
                writeln!(out, "    {}", event(&ev.unwrap())).unwrap();
            }
        }
    }
    out
}

fn event(ev: &Event<'_>) -> String {
    match ev {
        Event::Block(x) => {
            let via = match x.via {
                Via::Run => "run",
                Via::Candidate0 => "cand0",
                Via::Candidate1 => "cand1",
                Via::Explicit => "id",
            };
            let mut s = format!("{via} block {}", x.block);
            if !x.complete {
                write!(s, " partial {} insns {} operands", x.insns, x.operands).unwrap();
            }
            for a in x.accesses() {
                write!(
                    s,
                    " {}{}[{}]={:#x}",
                    if a.write { "w" } else { "r" },
                    a.size,
                    a.operand,
                    a.addr
                )
                .unwrap();
            }
            s
        }
        Event::ThreadStart {
            parent,
            stack_lo,
            stack_hi,
            start_routine,
        } => {
            format!("thread_start parent {parent} stack [{stack_lo:#x}, {stack_hi:#x}) start {start_routine:#x}")
        }
        Event::ThreadExit { how } => format!("thread_exit {how:?}"),
        Event::LockAcquire { kind, lock } => format!("lock_acquire {kind:?} {lock:#x}"),
        Event::LockRelease { kind, lock } => format!("lock_release {kind:?} {lock:#x}"),
        Event::Skip { reason, count } => format!("skip {reason:?} {count}"),
        Event::Syscall { number, nanos } => format!("syscall {number} {nanos} ns"),
        Event::Signal { signo } => format!("signal {signo}"),
        Event::SignalReturn { signo } => format!("signal_return {signo}"),
        Event::LoopChunk(c) => format!(
            "loop_chunk loop {} first {} count {} stride {} trip {}",
            c.loop_id, c.first, c.count, c.stride, c.trip
        ),
        other => format!("{other:?}"),
    }
}
