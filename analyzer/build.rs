//! Fingerprints the sources that decide what the first pass computes (this
//! crate's, the trace reader's and the workspace's locked dependencies), so
//! that a first pass kept in a trace's index by another build of tf is
//! never taken for this build's (`src/scan_index.rs`).

use std::path::{Path, PathBuf};

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let roots = [dir.join("src"), dir.join("../trace-format/src")];
    let mut files = Vec::new();
    for root in &roots {
        println!("cargo:rerun-if-changed={}", root.display());
        collect(root, root, &mut files);
    }
    // Dependencies (symbol reading among them) decide it too.
    let lock = dir.join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    if lock.exists() {
        files.push(("Cargo.lock".to_string(), lock));
    }
    files.sort();
    // FNV-1a over each file's path (relative to its root) and contents.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, path) in &files {
        let bytes = std::fs::read(path).expect("readable source");
        for b in name.bytes().chain([0]).chain(bytes) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("source_fingerprint"), format!("{h:016x}")).expect("OUT_DIR writable");
}

/// Every file under `dir`, as (path relative to `root`'s parent, path).
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            let name = path
                .strip_prefix(root.parent().unwrap_or(root))
                .unwrap_or(&path);
            out.push((name.display().to_string(), path));
        }
    }
}
