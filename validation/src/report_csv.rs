//! The CSV output of the validation (`docs/validation.csv` by default): one
//! line per figure, with what it was compared with and how far it was.

use crate::expect::Tolerance;
use crate::outcome::Outcome;
use std::fmt::Write;

/// The CSV: one line per workload, function, level, width and metric, with
/// the expectation (`reference` = `hand`) where there is one, and one per
/// workload, level and GPU metric (`reference` = `gpu`, function `[units]`,
/// width 32) where the GPU part ran, and per model (`reference` =
/// `gpu:MODEL`, SIMT efficiency only).
pub fn csv(o: &Outcome) -> String {
    let tolerance = o.tolerance.unwrap_or(Tolerance {
        simt_pp: 0.0,
        sectors_rel: 0.0,
    });
    let mut s = String::from(
        "workload,function,level,width,metric,measured,reference,expected,error,pass\n",
    );
    let num = |x: Option<f64>| x.map(|x| format!("{x:.6}")).unwrap_or_default();
    for w in &o.workloads {
        for r in &w.rows {
            let pass = r
                .passes(&tolerance)
                .map(|p| p.to_string())
                .unwrap_or_default();
            writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{}",
                w.name,
                r.function,
                r.level,
                r.width,
                r.metric,
                num(r.measured),
                if r.expected.is_some() { "hand" } else { "none" },
                num(r.expected),
                num(r.error().filter(|e| e.is_finite())),
                pass
            )
            .unwrap();
        }
    }
    crate::gpu_report::csv_rows(&mut s, o);
    s
}
