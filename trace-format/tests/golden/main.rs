//! Golden traces: test vectors for a new tracer or reader (`golden/`).
//!
//! Each `golden/NAME/` is a small trace of real x86-64 code, committed as
//! bytes, and `golden/NAME.txt` is its content written out record by record
//! (checked by hand against the code in this file). A reader must decode the
//! bytes to the text; an encoder given the same executions must produce the
//! same bytes (FORMAT.md §6.5, canonical encoding). `TF_BLESS=1` rewrites
//! the bytes (never the text) after a deliberate format change.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tf_trace::{
    BlockDef, EndKind, Event, ExitHow, LockKind, LoopChunk, SkipReason, Trace, TraceWriter, Via,
    WriterOptions,
};

mod render;
use render::render;

type Writer = fn(&Path) -> tf_trace::Result<()>;
const GOLDEN: [(&str, Writer); 2] = [("loop", write_loop), ("threads", write_threads)];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// A fixed manifest, so that the bytes do not depend on the machine.
fn writer(dir: &Path, chunk_target: usize, name: &str) -> tf_trace::Result<TraceWriter> {
    let _ = std::fs::remove_dir_all(dir);
    let opts = WriterOptions {
        chunk_target,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(dir, opts)?;
    let m = w.manifest_mut();
    m.tracer = "golden".into();
    m.tracer_version = "1".into();
    m.command = vec![name.into()];
    m.cwd = "/".into();
    m.exit_code = Some(0);
    Ok(w)
}

/// One thread: main calls sum(buf, 4), a 4-iteration loop over 8-byte words.
///
/// ```text
/// main  0x401000  sub $8,%rsp; mov $0x404000,%edi; mov $4,%esi; call sum
///       0x401013  add $8,%rsp; ret
/// sum   0x401100  xor %eax,%eax; mov %esi,%ecx            (falls into the loop)
///       0x401104  add (%rdi),%rax; add $8,%rdi; dec %ecx; jnz 0x401104
///       0x40110f  ret
/// ```
fn write_loop(dir: &Path) -> tf_trace::Result<()> {
    let mut w = writer(dir, 1 << 20, "loop")?;
    let m = w.module(0x40_0000, 0x5000, "/golden/loop", &[0xde, 0xad, 0xbe, 0xef])?;
    let main = w.function(0x40_1000, m, "main")?;
    let sum = w.function(0x40_1100, m, "sum")?;
    let call = w.block(
        &BlockDef::new(0x40_1000)
            .function(main)
            .insns(&[4, 5, 5, 5])
            .write(8)
            .end(EndKind::Call)
            .code(&hex("4883ec08 bf00404000 be04000000 e8ed000000")),
    )?;
    let back = w.block(
        &BlockDef::new(0x40_1013)
            .function(main)
            .insns(&[4, 1])
            .read(8)
            .end(EndKind::Return)
            .code(&hex("4883c408 c3")),
    )?;
    let head = w.block(
        &BlockDef::new(0x40_1100)
            .function(sum)
            .insns(&[2, 2])
            .end(EndKind::Fallthrough)
            .code(&hex("31c0 89f1")),
    )?;
    let body = w.block(
        &BlockDef::new(0x40_1104)
            .function(sum)
            .insn(3)
            .read(8)
            .insns(&[4, 2, 2])
            .end(EndKind::Branch)
            .code(&hex("480307 4883c708 ffc9 75f5")),
    )?;
    let ret = w.block(
        &BlockDef::new(0x40_110f)
            .function(sum)
            .insn(1)
            .read(8)
            .end(EndKind::Return)
            .code(&hex("c3")),
    )?;
    let mut t = w.thread(1)?;
    t.thread_start(0, 0x7ffe_0000, 0x7fff_0000, 0)?;
    t.exec(call, &[0x7ffe_eff0])?;
    t.exec(head, &[])?;
    for i in 0..4 {
        t.exec(body, &[0x40_4000 + 8 * i])?;
    }
    t.exec(ret, &[0x7ffe_eff0])?;
    t.exec(back, &[0x7ffe_eff8])?;
    t.skip(SkipReason::OutsideRegion, 1234)?;
    t.thread_exit(ExitHow::ProcessEnded)?;
    w.finish()
}

/// Two threads and small chunks (64-byte target, so every chunk restarts
/// the prediction state). Thread 1 creates thread 2 and waits in a join;
/// thread 2 (`worker`) takes a mutex around an increment, copies 3 bytes
/// with `rep movsb`, makes a `getpid` system call and faults in the middle
/// of a block; its SIGSEGV handler runs and returns.
///
/// ```text
/// main     0x401000  lea worker(%rip),%rdx; call pthread_create
///          0x40100c  call pthread_join
///          0x401011  xor %eax,%eax; ret
/// worker   0x401200  mov $0x404100,%rdi; call pthread_mutex_lock
///          0x40120c  incl 0x404200; mov $0x404100,%edi; call pthread_mutex_unlock
///          0x40121d  mov $3,%ecx; rep movsb                (the copy's first iteration)
///          0x401222  rep movsb                             (each later iteration)
///          0x401224  mov $39,%eax; syscall
///          0x40122b  mov %eax,0x404500; movq $0,0x10; ret  (faults at the movq)
/// on_segv  0x401300  ret
/// ```
fn write_threads(dir: &Path) -> tf_trace::Result<()> {
    let mut w = writer(dir, 64, "threads")?;
    let m = w.module(0x40_0000, 0x5000, "/golden/threads", &[])?;
    let main = w.function(0x40_1000, m, "main")?;
    let worker = w.function(0x40_1200, m, "worker")?;
    let on_segv = w.function(0x40_1300, m, "on_segv")?;
    let def = |a: u64, f, lens: &[u8], code: &str, end| {
        BlockDef::new(a)
            .function(f)
            .insns(lens)
            .end(end)
            .code(&hex(code))
    };
    let create = w.block(
        &def(
            0x40_1000,
            main,
            &[7, 5],
            "488d15f9010000 e800000000",
            EndKind::Call,
        )
        .write(8),
    )?;
    let join = w.block(&def(0x40_100c, main, &[5], "e800000000", EndKind::Call).write(8))?;
    let exit = w.block(&def(0x40_1011, main, &[2, 1], "31c0 c3", EndKind::Return).read(8))?;
    let lock = w.block(
        &def(
            0x40_1200,
            worker,
            &[7, 5],
            "48c7c700414000 e800000000",
            EndKind::Call,
        )
        .write(8),
    )?;
    let incr = w.block(
        &BlockDef::new(0x40_120c)
            .function(worker)
            .insn(7)
            .read(4)
            .write(4)
            .insns(&[5, 5])
            .write(8)
            .end(EndKind::Call)
            .code(&hex("ff042500424000 bf00414000 e800000000")),
    )?;
    let rep_first = w.block(
        &BlockDef::new(0x40_121d)
            .function(worker)
            .insns(&[5, 2])
            .cond_read(1)
            .cond_write(1)
            .end(EndKind::Branch)
            .code(&hex("b903000000 f3a4")),
    )?;
    let rep_next = w.block(
        &BlockDef::new(0x40_1222)
            .function(worker)
            .insn(2)
            .cond_read(1)
            .cond_write(1)
            .end(EndKind::Branch)
            .code(&hex("f3a4")),
    )?;
    let sys = w.block(&def(
        0x40_1224,
        worker,
        &[5, 2],
        "b827000000 0f05",
        EndKind::Syscall,
    ))?;
    let fault = w.block(
        &BlockDef::new(0x40_122b)
            .function(worker)
            .insn(7)
            .write(4)
            .insn(12)
            .write(8)
            .insn(1)
            .read(8)
            .end(EndKind::Return)
            .code(&hex("89042500454000 48c7042510000000 00000000 c3")),
    )?;
    let handler = w.block(&def(0x40_1300, on_segv, &[1], "c3", EndKind::Return).read(8))?;

    let mut t = w.thread(1)?;
    t.thread_start(0, 0x7ffe_0000, 0x7fff_0000, 0)?;
    t.exec(create, &[0x7ffe_eff8])?;
    t.skip(SkipReason::Other, 900)?;
    t.exec(join, &[0x7ffe_eff8])?;
    t.skip(SkipReason::SyncWait, 40)?;

    let mut t = w.thread(2)?;
    t.thread_start(1, 0x7f00_0000, 0x7f80_0000, 0x40_1200)?;
    t.exec(lock, &[0x7f7f_fff8])?;
    t.skip(SkipReason::LockRuntime, 27)?;
    t.lock_acquire(LockKind::Mutex, 0x40_4100)?;
    t.exec(incr, &[0x40_4200, 0x40_4200, 0x7f7f_fff8])?;
    t.lock_release(LockKind::Mutex, 0x40_4100)?;
    t.skip(SkipReason::LockRuntime, 31)?;
    t.skip(SkipReason::LoopSchedule, 55)?;
    t.loop_chunk(LoopChunk {
        loop_id: 1,
        first: 8,
        count: 4,
        stride: 0,
        trip: 16,
    })?;
    t.exec_opt(rep_first, &[Some(0x40_4300), Some(0x40_4400)])?;
    t.exec_opt(rep_next, &[Some(0x40_4301), Some(0x40_4401)])?;
    t.exec_opt(rep_next, &[Some(0x40_4302), Some(0x40_4402)])?;
    t.exec_opt(rep_next, &[None, None])?;
    t.exec(sys, &[])?;
    t.syscall(39, 1500)?;
    t.exec_partial(fault, 1, &[Some(0x40_4500)])?;
    t.signal(11)?;
    t.exec(handler, &[0x7f7f_f000])?;
    t.signal_return(11)?;
    t.thread_exit(ExitHow::ProcessEnded)?;

    let mut t = w.thread(1)?;
    t.exec(exit, &[0x7ffe_f000])?;
    t.thread_exit(ExitHow::ProcessEnded)?;
    w.finish()
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `golden/v3/NAME/` holds the same traces as written in version 3 (whose
/// block records have no run prefix, FORMAT.md §8): they decode to the same
/// contents.
#[test]
fn golden_traces_decode_to_their_written_down_contents() {
    for (name, dir) in GOLDEN.iter().flat_map(|&(name, _)| {
        [
            (name, golden_dir().join(name)),
            (name, golden_dir().join("v3").join(name)),
        ]
    }) {
        let trace = Trace::open(&dir).unwrap();
        assert!(
            trace.problems().is_empty(),
            "{name}: {:?}",
            trace.problems()
        );
        let want = std::fs::read_to_string(golden_dir().join(format!("{name}.txt"))).unwrap();
        assert_eq!(
            render(&trace),
            want,
            "{} does not decode to golden/{name}.txt",
            dir.display()
        );
    }
}

#[test]
fn the_writer_produces_the_golden_bytes() {
    for (name, write) in GOLDEN {
        let golden = golden_dir().join(name);
        if std::env::var_os("TF_BLESS").is_some() {
            write(&golden).unwrap();
        }
        let tmp = std::env::temp_dir().join(format!("tf-golden-{name}-{}", std::process::id()));
        write(&tmp).unwrap();
        let mut files: Vec<_> = std::fs::read_dir(&golden)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        files.sort();
        assert_eq!(
            files.len(),
            std::fs::read_dir(&tmp).unwrap().count(),
            "{name}: file count"
        );
        for f in files {
            let a = std::fs::read(golden.join(&f)).unwrap();
            let b = std::fs::read(tmp.join(&f)).unwrap();
            assert!(
                a == b,
                "golden/{name}/{} differs from what the writer produces",
                f.to_string_lossy()
            );
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
