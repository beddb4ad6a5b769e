//! `cost FILE…`: runs each packed trace or export (a fuzz corpus) through
//! the three targets and prints the slowest, in seconds per MB of input
//! (0.01 MB at least, so that the smallest inputs do not dominate).
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("tf-cost-{}", std::process::id()));
    let (mut worst, mut n, mut bytes) = ((0.0f64, 0.0f64, String::new()), 0, 0usize);
    for path in std::env::args().skip(1) {
        let Ok(packed) = std::fs::read(&path) else {
            continue;
        };
        tf_fuzz_harness::unpack(&packed, &dir).expect("a writable temporary directory");
        let t = Instant::now();
        tf_fuzz_harness::read(&dir);
        tf_fuzz_harness::analyze(&dir);
        tf_fuzz_harness::check_export(&dir);
        let secs = t.elapsed().as_secs_f64();
        let per_mb = secs / (packed.len() as f64 / 1e6).max(0.01);
        if per_mb > worst.0 {
            worst = (per_mb, secs, path);
        }
        n += 1;
        bytes += packed.len();
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{n} inputs, {:.1} MB; slowest: {:.3} s per MB ({:.3} s, {})",
        bytes as f64 / 1e6,
        worst.0,
        worst.1,
        worst.2
    );
}
