//! The validator on a valid directory and on one mutation per check.

use crate::check::{check_dir, Problem};

const HEADER: &str =
    "-kernel name = demo\n-kernel id = 1\n-grid dim = (2,1,1)\n-block dim = (48,1,1)\n\
-shmem = 0\n-nregs = 7\n-binary version = 70\n-cuda stream id = 0\n-accelsim tracer version = 4\n\
-enable lineinfo = 0\n\n#traces format = PC mask ...\n";

const CTA0: &str = "\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = 5\n\
0000 ffffffff 1 R0 S2R 0 0\n\
0010 0000000f 1 R1 LDG.E.U8 1 R2 1 0 0x10000000 0x10000005 0x10000003 0x10000100\n\
0020 0000f00f 0 STG.E.128 2 R2 R4 16 2 0x20000000 16 16 16 -1024 16 16 16\n\
0030 ffffffff 0 BAR.SYNC 0 0\n\
0050 ffffffff 0 EXIT 0 0\n\
\nwarp = 1\ninsts = 5\n\
0000 0000ffff 1 R0 S2R 0 0\n\
0040 0000ffff 1 R6 LDL.64 1 R1 8 1 0x10 0\n\
0030 0000ffff 0 BAR.SYNC 0 0\n\
0050 00000fff 0 EXIT 0 0\n\
0050 0000f000 0 EXIT 0 0\n\
\n#END_TB\n";

const CTA1: &str =
    "\n#BEGIN_TB\n\nthread block = 1,0,0\n\nwarp = 0\ninsts = 1\n0050 ffffffff 0 EXIT 0 0\n\
\nwarp = 1\ninsts = 1\n0050 0000ffff 0 EXIT 0 0\n\n#END_TB\n";

fn run(list: &str, kernel: &str) -> Vec<Problem> {
    let dir = tempdir();
    std::fs::write(dir.join("kernelslist.g"), list).unwrap();
    std::fs::write(dir.join("kernel-1.traceg"), kernel).unwrap();
    let p = check_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    p
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "tf-check-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn valid() -> String {
    format!("{HEADER}{CTA0}{CTA1}")
}

/// The checks (and whether errors) that `kernel` fails.
fn failing(kernel: &str) -> Vec<(u8, bool)> {
    let mut v: Vec<(u8, bool)> = run("kernel-1.traceg\n", kernel)
        .iter()
        .map(|p| (p.check, p.error))
        .collect();
    v.dedup();
    v
}

#[test]
fn a_valid_directory_has_no_problem() {
    let p = run(
        "MemcpyHtoD,0x00007f3a40000000,4096\nkernel-1.traceg\n",
        &valid(),
    );
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn the_kernel_list() {
    let p = run("kernel-1.traceg", &valid()); // no final newline
    assert_eq!(p[0].check, 1);
    let p = run(
        "kernel-2.traceg\nMemcpyHtoD,0x10\nkernel-1.trace\nhello\n",
        &valid(),
    );
    let checks: Vec<u8> = p.iter().map(|x| x.check).collect();
    assert_eq!(checks, [3, 2, 2, 4]);
    assert!(p[0]
        .to_string()
        .contains("kernelslist.g:1: error (check 3)"));
}

#[test]
fn each_mutation_fails_its_check() {
    let v = valid();
    let cases: &[(&str, &str, (u8, bool))] = &[
        ("\n#END_TB\n", "\r\n#END_TB\n", (1, true)),
        ("-kernel name = demo", "-kernel name = d\u{e9}mo", (1, true)),
        ("-block dim = (48,1,1)\n", "", (6, true)),
        ("= 70", "= 71", (7, true)),
        ("= 70", "= 75", (7, false)),
        ("tracer version = 4", "tracer version = 3", (8, false)),
        ("-nregs = 7", "-nregs = 9", (9, false)),
        ("#traces format = PC mask ...\n", "", (10, true)),
        (
            "\n#END_TB\n\n#BEGIN_TB\n\nthread block = 1",
            "\n#BEGIN_TB\n\nthread block = 1",
            (11, true),
        ),
        ("-grid dim = (2,1,1)", "-grid dim = (3,1,1)", (12, true)),
        ("thread block = 1,0,0", "thread block = 0,0,0", (13, false)),
        (
            "insts = 1\n0050 ffffffff",
            "insts = 2\n0050 ffffffff",
            (14, true),
        ),
        (
            "0000 ffffffff 1 R0 S2R 0 0\n",
            "0000 ffffffff 1 R0 S2R 0 0 7\n",
            (15, true),
        ),
        (
            "0000 ffffffff 1 R0 S2R",
            "100000000 ffffffff 1 R0 S2R",
            (16, true),
        ),
        (
            "0000 ffffffff 1 R0 S2R",
            "0004 ffffffff 1 R0 S2R",
            (16, false),
        ),
        ("1 R0 S2R 0 0\n0010", "2 R0 R1 S2R 0 0\n0010", (17, true)),
        ("1 R0 S2R 0 0\n0010", "1 R0 FOO 0 0\n0010", (18, true)),
        ("LDL.64 1 R1 8 1 0x10 0", "LDL.64 1 R1 0", (19, true)),
        ("LDL.64 1 R1 8 1", "LDL.64 1 R1 4 1", (20, false)),
        (
            "1 0 0x10000000 0x10000005 0x10000003 0x10000100",
            "1 0 0x10000000 0x10000005",
            (15, true),
        ),
        (
            "16 2 0x20000000 16 16 16 -1024 16 16 16",
            "16 1 0x20000000 16",
            (21, true),
        ),
        ("0x10000000 0x10000005", "0x0 0x10000005", (22, false)),
        (
            "LDL.64 1 R1 8 1 0x10 0",
            "LDL.64 1 R1 8 1 0x12 0",
            (23, true),
        ),
        ("0040 0000ffff 1 R6", "0040 0001ffff 1 R6", (24, false)),
        ("0050 00000fff 0 EXIT", "0050 00000ff0 0 EXIT", (26, true)),
        (
            "0030 0000ffff 0 BAR.SYNC 0 0\n",
            "0030 0000ffff 0 S2R 0 0\n",
            (27, true),
        ),
    ];
    for &(from, to, want) in cases {
        assert!(v.contains(from), "{from:?}");
        let k = v.replacen(from, to, 1);
        let got = failing(&k);
        assert!(
            got.contains(&want),
            "{from:?} -> {to:?}: want {want:?}, got {got:?}"
        );
    }
    // SHL is Ampere's only: an error for Volta, a warning for Ampere.
    let shl = v.replacen("1 R0 S2R 0 0\n0010", "1 R0 SHL 0 0\n0010", 1);
    assert!(failing(&shl).contains(&(18, true)));
    let shl = shl.replacen("= 70", "= 86", 1);
    assert!(failing(&shl).contains(&(18, false)));
    assert!(!failing(&shl).contains(&(18, true)));
}

#[test]
fn the_run_configuration_enables_the_branch_unit() {
    let dir = tempdir();
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").unwrap();
    let k = valid().replacen(
        "0000 ffffffff 1 R0 S2R 0 0\n0010",
        "0060 ffffffff 0 BRA 0 0\n0010",
        1,
    );
    std::fs::write(dir.join("kernel-1.traceg"), k).unwrap();
    assert!(check_dir(&dir).is_empty());
    std::fs::write(
        dir.join("trace.config"),
        "-specialized_unit_1 0,4,4,4,4,BRA\n",
    )
    .unwrap();
    let p = check_dir(&dir);
    assert_eq!((p.len(), p[0].check), (1, 28), "{p:?}");
    std::fs::write(
        dir.join("trace.config"),
        "-specialized_unit_1 1,4,4,4,4,BRA\n",
    )
    .unwrap();
    assert!(check_dir(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A full warp's addresses as a base and a stride (mode 1 over all 32
/// lanes) are valid, and checking them does not overflow.
#[test]
fn a_full_warp_in_mode_1_is_valid() {
    let kernel = valid().replace(
        "0010 0000000f 1 R1 LDG.E.U8 1 R2 1 0 0x10000000 0x10000005 0x10000003 0x10000100",
        "0010 ffffffff 1 R1 LDG.E.U8 1 R2 1 1 0x10000000 1",
    );
    assert_ne!(kernel, valid());
    assert!(run("kernel-1.traceg\n", &kernel).is_empty());
}

/// A PC whose line has another opcode than the first line at that PC is a
/// warning; one with the same opcode under other modifiers is checked for
/// its own (the validator keeps what it knows of each PC's first opcode).
#[test]
fn a_pc_with_another_opcode_than_its_first_line() {
    let clash = valid().replacen("0000 0000ffff 1 R0 S2R", "0000 0000ffff 1 R0 MOV", 1);
    let p = run("kernel-1.traceg\n", &clash);
    assert_eq!(p.len(), 1, "{p:?}");
    let line = clash.lines().position(|l| l.contains("R0 MOV")).unwrap() + 1;
    assert_eq!(
        (p[0].check, p[0].error, p[0].line),
        (16, false, line),
        "{p:?}"
    );
    assert!(p[0]
        .message
        .contains("PC 0000 is MOV here and S2R elsewhere"));
    let wider = "0010 0000ffff 1 R6 LDG.E.64 1 R1 8 1 0x10 0";
    let same = valid().replacen("0040 0000ffff 1 R6 LDL.64 1 R1 8 1 0x10 0", wider, 1);
    assert_ne!(same, valid());
    assert!(failing(&same).is_empty(), "{:?}", failing(&same));
    let narrower = same.replacen("LDG.E.64 1 R1 8", "LDG.E.64 1 R1 4", 1);
    assert_eq!(failing(&narrower), [(20, false)]);
}

/// A kernel long enough to be read in several blocks, its lines after the
/// first blocks checked ahead on other threads: the same problems, in the
/// same order, as checked in order on one thread. Its mutations lie far
/// into the file, in a warp that launched every lane and in one that did
/// not (checked in order either way), and at a PC first seen near the top.
/// The header of a kernel of one thread block of 48 threads.
fn one_block_header() -> String {
    HEADER
        .replace("(2,1,1)", "(1,1,1)")
        .replace("nregs = 7", "nregs = 9")
}

/// `n` valid instruction lines of lanes `mask`, three kinds in turn, and
/// the warp's exit.
fn lines(n: usize, mask: &str) -> Vec<String> {
    let body = [
        format!("0010 {mask} 1 R1 LDG.E.64 1 R2 8 1 0x10000000 8"),
        format!("0020 {mask} 1 R3 IADD3 2 R1 R4 0"),
        format!("0030 {mask} 0 STL 2 R5 R8 4 1 0x100 0"),
    ];
    let mut lines: Vec<String> = (0..n).map(|i| body[i % 3].clone()).collect();
    lines.push(format!("0050 {mask} 0 EXIT 0 0"));
    lines
}

/// A kernel of [`one_block_header`] whose thread block's two warps run
/// `w0` and `w1`.
fn one_block_kernel(w0: &[String], w1: &[String]) -> String {
    format!(
        "{}\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = {}\n{}\n\nwarp = 1\ninsts = {}\n{}\n\n#END_TB\n",
        one_block_header(),
        w0.len(),
        w0.join("\n"),
        w1.len(),
        w1.join("\n")
    )
}

#[test]
fn lines_checked_ahead_find_what_lines_checked_in_order_do() {
    let (mut w0, mut w1) = (lines(360_000, "ffffffff"), lines(90_000, "0000ffff"));
    let mutations: [(usize, &str, &str); 6] = [
        (249_999, "LDG.E.64 1 R2 8", "LDG.E.64 1 R2 4"),
        (280_000, "IADD3 2 R1 R4", "IADD3 2 R1 Q4"),
        (300_002, "0x100 0", "0x102 0"),
        (
            330_000,
            "0010 ffffffff 1 R1 LDG.E.64",
            "0010 ffffffff 1 R1 STG.E.64",
        ),
        (340_000, " R4 0", " R4 0 9"),
        (350_000, "ffffffff", "fffffffg"),
    ];
    for &(i, from, to) in &mutations {
        assert!(w0[i].contains(from), "{i}: {from:?}");
        w0[i] = w0[i].replacen(from, to, 1);
    }
    w1[80_000] = w1[80_000].replacen("0000ffff", "0001ffff", 1);
    w1[85_000] = w1[85_000].replacen("IADD3 2 R1 R4", "IADD3 2 R1 X4", 1);
    let kernel = one_block_kernel(&w0, &w1);
    assert!(kernel.len() > 12 << 20, "several blocks of lines");
    // (each run checks a directory of its own: the problems without it)
    let on = |threads: usize| -> Vec<(usize, u8, bool, String)> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let found = pool.install(|| run("kernel-1.traceg\n", &kernel));
        found
            .into_iter()
            .map(|p| (p.line, p.check, p.error, p.message))
            .collect()
    };
    let (in_order, ahead) = (on(1), on(3));
    assert_eq!(in_order, ahead);
    let found: Vec<(u8, bool)> = in_order.iter().map(|p| (p.1, p.2)).collect();
    assert_eq!(
        found,
        [
            (20, false),
            (17, true),
            (23, true),
            (16, false),
            (15, true),
            (16, true),
            (24, false),
            (17, true)
        ],
        "{in_order:?}"
    );
    assert!(in_order.iter().all(|p| p.0 > 249_999), "{in_order:?}");
}

/// A progress bar's view of a check: its stages (name, total) and every
/// step told.
#[derive(Default)]
struct Told {
    stages: std::sync::Mutex<Vec<(String, u64)>>,
    steps: std::sync::Mutex<Vec<u64>>,
}

impl tf_analyzer::Progress for Told {
    fn stage(&self, name: &str, total: u64) {
        self.stages.lock().unwrap().push((name.to_string(), total));
    }
    fn advance(&self, n: u64) {
        self.steps.lock().unwrap().push(n);
    }
}

#[test]
fn the_bytes_checked_are_told_block_by_block() {
    // A kernel of several blocks of lines, and one with a byte that is not
    // UTF-8 (its text is longer than its bytes).
    let long = one_block_kernel(&lines(300_000, "ffffffff"), &lines(60_000, "0000ffff"));
    assert!(long.len() > 8 << 20, "three blocks or more");
    let mut broken = valid().into_bytes();
    broken[HEADER.len() + 30] = 0xff;
    let dir = tempdir();
    std::fs::write(
        dir.join("kernelslist.g"),
        "kernel-1.traceg\nkernel-2.traceg\n",
    )
    .unwrap();
    std::fs::write(dir.join("kernel-1.traceg"), &long).unwrap();
    std::fs::write(dir.join("kernel-2.traceg"), &broken).unwrap();
    let told = Told::default();
    let problems = crate::check::check_dir_with(&dir, &told);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        problems.iter().all(|p| p.file.ends_with("kernel-2.traceg")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|p| p.check == 1), "{problems:?}");
    let (stages, steps) = (
        told.stages.into_inner().unwrap(),
        told.steps.into_inner().unwrap(),
    );
    let total = (long.len() + broken.len()) as u64;
    assert_eq!(stages, [("checking the export".to_string(), total)]);
    assert_eq!(steps.iter().sum::<u64>(), total);
    assert!(steps.len() >= 4, "{steps:?}");
}
