//! A kernel of one warp whose lines went to a temporary file takes that
//! file, its header written in the file's head room: the same kernel as
//! when the lines are copied, but for the blanks that pad the `#` line.

use crate::check::check_dir;
use crate::export::{Lines, Warp, HEAD_ROOM};
use crate::kernels::{assemble, Layout};
use crate::warp::Counts;
use std::io::Write;
use std::path::Path;

/// `n` instruction lines of one warp of 32 lanes, as the export writes them.
fn lines(n: usize) -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..n {
        writeln!(text, "{:04x} ffffffff 1 R1 IADD 2 R1 R2 0", 16 * i).unwrap();
    }
    text.extend_from_slice(format!("{:04x} ffffffff 0 EXIT 0 0\n", 16 * n).as_bytes());
    text
}

/// The one warp of `text` (its lines), kept as `lines`.
fn warp(text: &[u8], lines: Lines) -> Warp {
    let n = text.iter().filter(|&&b| b == b'\n').count() as u64;
    Warp {
        index: 0,
        kind: 0,
        lines,
        counts: Counts {
            lines: n,
            lane_instructions: 32 * n,
            ..Counts::default()
        },
        max_reg: 2,
        selected: true,
    }
}

/// `text` in a temporary file of `dir`, after the head room, as the
/// export's sinks leave it.
fn spilled(dir: &Path, text: &[u8]) -> Lines {
    let path = dir.join("warp-0");
    let mut f = std::fs::File::create(&path).unwrap();
    f.set_len(HEAD_ROOM).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).unwrap();
    f.write_all(text).unwrap();
    Lines::File(path)
}

/// The kernel file and summary of `warp` exported into `dir` under `name`.
fn export(dir: &Path, name: &str, warp: Warp) -> (String, crate::kernels::Summary) {
    std::fs::create_dir_all(dir).unwrap();
    let names = [name.to_string()];
    let layout = Layout {
        names: &names,
        block_size: 256,
        warp_width: 32,
        code: None,
        filtered: false,
    };
    let summary = assemble(dir, vec![warp], &layout, &|_| {}).unwrap();
    let problems = check_dir(dir);
    assert!(problems.is_empty(), "{problems:?}");
    let text = std::fs::read_to_string(dir.join("kernel-1.traceg")).unwrap();
    (text, summary)
}

#[test]
fn a_warp_alone_in_its_kernel_takes_its_temporary_file() {
    let tmp = tempfile::tempdir().unwrap();
    let text = lines(5000);
    let copied = export(
        &tmp.path().join("memory"),
        "worker",
        warp(&text, Lines::Memory(text.clone())),
    );
    let spill = tmp.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    let taken = export(
        &tmp.path().join("taken"),
        "worker",
        warp(&text, spilled(&spill, &text)),
    );
    // The file was moved, not copied.
    assert!(!spill.join("warp-0").exists());
    // The same lines, the `#` line padded so that the lines start after
    // the head room.
    let unpadded: Vec<&str> = taken.0.lines().map(str::trim_end).collect();
    assert_eq!(unpadded, copied.0.lines().collect::<Vec<_>>());
    let first = taken.0.find("0000 ffffffff").unwrap();
    assert_eq!(first as u64, HEAD_ROOM);
    assert_eq!(taken.1.kernels[0].bytes, taken.0.len() as u64);
    assert_eq!(taken.1.kernels[0].counts, copied.1.kernels[0].counts);
    assert_eq!(taken.1.kernels[0].grid, copied.1.kernels[0].grid);
    assert_eq!(taken.1.kernels[0].block, copied.1.kernels[0].block);
}

#[test]
fn a_header_too_long_for_the_head_room_is_copied_with_the_lines() {
    // A kernel name of 5000 characters (long C++ names exist).
    let tmp = tempfile::tempdir().unwrap();
    let name = "f".repeat(5000);
    let text = lines(100);
    let copied = export(
        &tmp.path().join("memory"),
        &name,
        warp(&text, Lines::Memory(text.clone())),
    );
    let spill = tmp.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    let from_file = export(
        &tmp.path().join("file"),
        &name,
        warp(&text, spilled(&spill, &text)),
    );
    assert_eq!(from_file.0, copied.0);
    assert!(!spill.join("warp-0").exists());
}
