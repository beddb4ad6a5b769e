//! The C header `include/tf_trace.h` against the Rust crate: a C program
//! (tests/c/write_trace.c) writes a trace with the header and logs every
//! call it made; the Rust reader must decode exactly those records, and the
//! Rust writer fed the same calls must produce byte-identical files.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{read_all, Op, Rec, TempDir};
use tf_trace::{
    BlockDef, EndKind, LoopChunk, StaticLoop, TableParams, Trace, TraceWriter, WriterOptions,
};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// Compiles write_trace.c with extra flags; panics clearly without gcc.
fn compile(out: &Path, flags: &[&str]) -> PathBuf {
    let exe = out.join(format!("write_trace{}", flags.join("")));
    let r = Command::new("gcc")
        .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg("-I")
        .arg(Path::new(CRATE).join("include"))
        .arg(Path::new(CRATE).join("tests/c/write_trace.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc ({e}): the C header test needs gcc on PATH"));
    assert!(
        r.status.success(),
        "gcc failed on tests/c/write_trace.c:\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    exe
}

fn run(exe: &Path, dir: &Path, args: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let r = Command::new(exe).arg(dir).args(args).output().unwrap();
    assert!(
        r.status.success(),
        "write_trace failed: {}",
        String::from_utf8_lossy(&r.stderr)
    );
}

fn hex_u64(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("bad hex {s}"))
}

fn hex_bytes(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// What ops.txt says.
#[derive(Default)]
struct Log {
    table_target: usize,
    modules: Vec<(u64, u64, Vec<u8>, Vec<u8>)>,
    functions: Vec<(u64, u32, Vec<u8>)>,
    blocks: Vec<(BlockDef, Vec<bool>)>,
    threads: BTreeMap<u64, (TableParams, usize, Vec<Op>)>,
}

fn parse_log(path: &Path) -> Log {
    let text = std::fs::read_to_string(path).unwrap();
    let mut log = Log::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let n = |i: usize| hex_u64(f[i]);
        match f[0] {
            "table" => log.table_target = n(1) as usize,
            "module" => log
                .modules
                .push((n(2), n(3), hex_bytes(f[4]), hex_bytes(f[5]))),
            "function" => log.functions.push((n(2), n(3) as u32, hex_bytes(f[4]))),
            "block" => {
                assert_eq!(n(1) as usize, log.blocks.len());
                let code = hex_bytes(f[5]);
                let lens = hex_bytes(f[6]);
                let mut def = BlockDef::new(n(2))
                    .function(n(3) as u32)
                    .end(EndKind::from_code(n(4)).unwrap())
                    .code(&code);
                let mut cond = Vec::new();
                let mut ops: Vec<(u64, u64, u64)> = Vec::new();
                if f[7] != "-" {
                    for op in f[7].split(',') {
                        let p: Vec<u64> = op.split(':').map(hex_u64).collect();
                        ops.push((p[0], p[1], p[2]));
                    }
                }
                for (i, &l) in lens.iter().enumerate() {
                    def = def.insn(l);
                    for &(insn, flags, size) in ops.iter().filter(|o| o.0 == i as u64) {
                        def = def.operand(size as u16, flags & 1 != 0, flags & 2 != 0);
                        cond.push(flags & 2 != 0);
                        let _ = insn;
                    }
                }
                log.blocks.push((def, cond));
            }
            "thread" => {
                let params = TableParams {
                    addr_table_bits: n(2) as u8,
                    succ_table_bits: n(3) as u8,
                    ret_stack_depth: n(4) as u8,
                    run_prefix: true,
                };
                log.threads
                    .insert(n(1), (params, n(5) as usize, Vec::new()));
            }
            "x" | "p" => {
                let tid = n(1);
                let id = n(2) as u32;
                let cond = &log.blocks[id as usize].1;
                let (partial, first) = if f[0] == "p" {
                    (Some(n(3) as u32), 5)
                } else {
                    (None, 3)
                };
                let addrs = f[first..]
                    .iter()
                    .enumerate()
                    .map(|(j, a)| {
                        let a = hex_u64(a);
                        (!(cond[j] && a == 0)).then_some(a)
                    })
                    .collect();
                log.threads.get_mut(&tid).unwrap().2.push(Op::Exec {
                    block: id,
                    partial,
                    addrs,
                });
            }
            "ev" => {
                let v: Vec<u64> = f[3..].iter().map(|s| hex_u64(s)).collect();
                let op = match n(2) {
                    1 => Op::Start(v[0], v[1], v[2], v[3]),
                    2 => Op::Exit(v[0]),
                    3 => Op::Acquire(v[0], v[1]),
                    4 => Op::Release(v[0], v[1]),
                    5 => Op::Skip(v[0], v[1]),
                    6 => Op::Syscall(v[0], v[1]),
                    7 => Op::Signal(v[0]),
                    8 => Op::SignalReturn(v[0]),
                    9 => Op::Marker(v[0], v[1]),
                    10 => Op::LoopChunk(LoopChunk {
                        loop_id: v[0],
                        first: v[1],
                        count: v[2],
                        stride: v[3],
                        trip: v[4],
                    }),
                    11 => Op::StaticLoop(StaticLoop {
                        loop_id: v[0],
                        thread: v[1],
                        threads: v[2],
                    }),
                    12 => Op::RegionEntry(v[0]),
                    t => panic!("event type {t}"),
                };
                log.threads.get_mut(&n(1)).unwrap().2.push(op);
            }
            "raw" => log
                .threads
                .get_mut(&n(1))
                .unwrap()
                .2
                .push(Op::Raw(n(2), hex_bytes(f[3]))),
            "flush" => log.threads.get_mut(&n(1)).unwrap().2.push(Op::Flush),
            other => panic!("ops.txt: unknown line kind {other}"),
        }
    }
    log
}

fn define_all(w: &mut TraceWriter, log: &Log) {
    for (base, size, path, bid) in &log.modules {
        w.module(*base, *size, path, bid).unwrap();
    }
    for (entry, module, name) in &log.functions {
        w.function(*entry, *module, name).unwrap();
    }
    for (def, _) in &log.blocks {
        w.block(def).unwrap();
    }
}

/// Panics at the first byte where two files differ, naming the chunk.
fn assert_same_file(rust: &Path, c: &Path) {
    let a = std::fs::read(rust).unwrap();
    let b = std::fs::read(c).unwrap();
    if a == b {
        return;
    }
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let mut chunk = 0;
    let mut off = 32usize;
    while off + 16 <= at.min(b.len()) {
        let len = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
        if off + 16 + len > at {
            break;
        }
        off += 16 + len;
        chunk += 1;
    }
    panic!(
        "{} and {} differ first at byte {at} (chunk {chunk} at byte {off}); sizes {} and {}",
        rust.display(),
        c.display(),
        a.len(),
        b.len()
    );
}

fn check_trace(cdir: &Path, scratch: &TempDir) {
    let log = parse_log(&cdir.join("ops.txt"));
    let trace = Trace::open(cdir).unwrap();
    assert!(trace.problems().is_empty(), "{:?}", trace.problems());
    assert!(trace.manifest().is_none());

    // (a) The block table and every record decode as the C side wrote them.
    let bt = trace.blocks();
    assert_eq!(bt.len(), log.blocks.len());
    assert_eq!(bt.modules().len(), log.modules.len());
    assert_eq!(bt.functions().len(), log.functions.len());
    for ((def, _), b) in log.blocks.iter().zip(bt.iter()) {
        assert_eq!(b.insn_lengths(), def.insn_lengths());
        assert_eq!(b.operands(), def.operands());
    }
    assert_eq!(trace.threads().len(), log.threads.len());
    for (&tid, (_, _, ops)) in &log.threads {
        let expect: Vec<Rec> = ops.iter().filter_map(|o| o.expected(bt)).collect();
        let (got, err) = read_all(&trace, tid);
        assert!(err.is_none(), "thread {tid}: {}", err.unwrap());
        assert_eq!(got.len(), expect.len(), "thread {tid}");
        for (i, (g, e)) in got.iter().zip(&expect).enumerate() {
            assert_eq!(g, e, "thread {tid} record {i}");
        }
    }

    // (b) The Rust writer, fed the same calls, writes the same bytes.
    let tdir = scratch.join("rust-table");
    let mut w = TraceWriter::create_with(
        &tdir,
        WriterOptions {
            chunk_target: log.table_target,
            ..Default::default()
        },
    )
    .unwrap();
    define_all(&mut w, &log);
    w.finish().unwrap();
    assert_same_file(&tdir.join("blocks.tfc"), &cdir.join("blocks.tfc"));
    for (&tid, (params, target, ops)) in &log.threads {
        let dir = scratch.join(&format!("rust-{tid}"));
        let mut w = TraceWriter::create_with(
            &dir,
            WriterOptions {
                chunk_target: *target,
                params: *params,
            },
        )
        .unwrap();
        define_all(&mut w, &log);
        let mut t = w.thread(tid).unwrap();
        for op in ops {
            op.apply(&mut t).unwrap();
        }
        w.finish().unwrap();
        let name = format!("thread-{tid}.tfc");
        assert_same_file(&dir.join(&name), &cdir.join(&name));
    }
}

#[test]
fn c_header_and_rust_agree() {
    let d = TempDir::new("c-header");
    let exe = compile(d.path(), &[]);
    let cdir = d.join("c");
    run(&exe, &cdir, &[]);
    check_trace(&cdir, &d);

    // The header's SSE4.2 CRC path and its table path write the same bytes.
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("sse4.2") {
        let exe2 = compile(d.path(), &["-msse4.2"]);
        let cdir2 = d.join("c-sse");
        run(&exe2, &cdir2, &[]);
        for f in [
            "blocks.tfc",
            "thread-1.tfc",
            "thread-2.tfc",
            "thread-3.tfc",
            "ops.txt",
        ] {
            assert_same_file(&cdir2.join(f), &cdir.join(f));
        }
    }
}

/// tf_trace.h sizes its chunk buffer as target + the largest block record
/// for `max_ops`; with `max_ops = 0` that is 32 bytes, less than a
/// `thread_start` event with large fields (42 bytes). `tf_enc_event` then
/// makes room through `tf__stream_room`, which closes the chunk early
/// (non-canonical) and without resetting the encoder's prediction state:
/// the next chunk's records are encoded against stale state and do not
/// decode ("run: successor candidate 0 does not exist"). Run with
/// `--ignored` once the header is fixed.
#[test]
fn c_header_with_max_ops_zero_and_large_events() {
    let d = TempDir::new("c-tiny");
    let exe = compile(d.path(), &[]);
    let cdir = d.join("c");
    run(&exe, &cdir, &["tiny"]);
    check_trace(&cdir, &d);
}
