//! The one line `tf trace` prints when the program ends.

use std::path::Path;
use tf_trace::Trace;

/// Summarizes the trace in `dir` in one line, from its manifest.
pub fn line(dir: &Path) -> String {
    let bytes = dir_bytes(dir);
    let shown = dir.display();
    let trace = match Trace::open(dir) {
        Ok(t) => t,
        Err(e) => return format!("tf: no usable trace in {shown}: {e}"),
    };
    match trace.manifest() {
        Some(m) if m.complete => {
            let traced = m.traced_instructions;
            let per_insn = if traced > 0 {
                bytes as f64 / traced as f64
            } else {
                0.0
            };
            format!(
                "tf: traced {} thread{}, {} instructions ({} skipped), {} → {shown} ({:.2} bytes/instruction)",
                m.threads.len(),
                if m.threads.len() == 1 { "" } else { "s" },
                human(traced as f64),
                human(m.skipped_instructions as f64),
                human_bytes(bytes),
                per_insn
            )
        }
        _ => format!(
            "tf: the tracer did not finish; {} recorded in {shown} (see: tf info {shown})",
            human_bytes(bytes)
        ),
    }
}

/// Bytes of the files in `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// 1234567 → "1.23 M".
pub fn human(x: f64) -> String {
    const UNITS: [&str; 5] = ["", " k", " M", " G", " T"];
    let mut x = x;
    let mut unit = 0;
    while x >= 1000.0 && unit + 1 < UNITS.len() {
        x /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}{}", UNITS[unit])
    }
}

/// Bytes with a decimal unit: 1234567 → "1.23 MB", 999 → "999 B".
pub fn human_bytes(bytes: u64) -> String {
    let n = human(bytes as f64);
    if n.contains(' ') {
        format!("{n}B")
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human(999.0), "999");
        assert_eq!(human(1234.0), "1.23 k");
        assert_eq!(human(1_500_000_000.0), "1.50 G");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_234_567), "1.23 MB");
    }
}
