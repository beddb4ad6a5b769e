//! Writes a small trace with every record type, to try `dump` or `tf` on.
//!
//! ```text
//! cargo run -q -p tf-trace --example sample -- DIR
//! ```

use tf_trace::{BlockDef, EndKind, ExitHow, LockKind, SkipReason, TraceWriter};

fn main() -> tf_trace::Result<()> {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: sample DIR");
        std::process::exit(2);
    };
    let mut w = TraceWriter::create(&dir)?;
    w.manifest_mut().command = vec!["sample".into()];
    let m = w.module(0x40_0000, 0x1000, "/bin/sample", &[0xab, 0xcd])?;
    let main_f = w.function(0x40_1000, m, "main")?;
    let work_f = w.function(0x40_1100, m, "work")?;
    let call = w.block(
        &BlockDef::new(0x40_1000)
            .function(main_f)
            .insn(4)
            .write(8)
            .insn(5)
            .end(EndKind::Call),
    )?;
    let after = w.block(
        &BlockDef::new(0x40_1009)
            .function(main_f)
            .insn(3)
            .end(EndKind::Return),
    )?;
    let body = w.block(
        &BlockDef::new(0x40_1100)
            .function(work_f)
            .insn(4)
            .read(4)
            .insn(3)
            .read(4)
            .write(4)
            .insn(2)
            .cond_read(8)
            .insn(2)
            .end(EndKind::Branch),
    )?;
    let ret = w.block(
        &BlockDef::new(0x40_110b)
            .function(work_f)
            .insn(1)
            .end(EndKind::Return),
    )?;
    let mut t = w.thread(1)?;
    t.thread_start(0, 0x7ff0_0000, 0x7ff1_0000, 0x40_1000)?;
    t.exec(call, &[0x7ff0_fff8])?;
    for i in 0..8u64 {
        let cond = if i % 3 == 0 {
            None
        } else {
            Some(0x60_0000 + 8 * i)
        };
        t.exec_opt(
            body,
            &[
                Some(0x50_0000 + 4 * i),
                Some(0x51_0000 + 4 * i),
                Some(0x51_0000 + 4 * i),
                cond,
            ],
        )?;
    }
    t.exec(ret, &[])?;
    t.lock_acquire(LockKind::Mutex, 0x60_1040)?;
    t.exec_partial(body, 2, &[Some(0x50_1000), Some(0x51_1000)])?;
    t.signal(11)?;
    t.signal_return(11)?;
    t.lock_release(LockKind::Mutex, 0x60_1040)?;
    t.skip(SkipReason::LockRuntime, 57)?;
    t.syscall(1, 1200)?;
    t.marker(1, 2)?;
    t.exec(after, &[])?;
    t.thread_exit(ExitHow::Ended)?;
    w.finish()
}
