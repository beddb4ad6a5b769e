use super::*;
use crate::measure::Figures;
use crate::outcome::ModelFigures;
use std::collections::BTreeMap;

fn gpu(simt: f64) -> GpuFigures {
    GpuFigures {
        launches: 1,
        simt,
        load_sectors: Some(4.0),
        store_sectors: None,
    }
}

/// Three twins, one changed since it was measured: its figures are
/// shown but left out. By hand: (50, 40) and (100, 100) give a MAE of
/// 5 points and r = 1; under the model (40, 40) and (100, 100) give 0.
#[test]
fn stale_twins_are_shown_and_left_out_of_the_statistics() {
    let workload = |name: &str, simt: f64, model: f64| {
        let mut f = Figures::default();
        f.values.insert(Metric::Simt, Some(model));
        WorkloadOutcome {
            name: name.into(),
            rows: vec![Row {
                workload: name.into(),
                function: UNITS.into(),
                level: "O1".into(),
                width: 32,
                metric: Metric::Simt,
                measured: Some(simt),
                expected: None,
            }],
            models: vec![ModelFigures {
                model: "m".into(),
                level: "O1".into(),
                figures: Ok(f),
            }],
            ..WorkloadOutcome::default()
        }
    };
    let o = Outcome {
        levels: vec!["O1".into()],
        widths: vec![32],
        models: vec!["m".into()],
        workloads: vec![
            workload("a", 0.5, 0.4),
            workload("b", 1.0, 1.0),
            workload("c", 0.2, 0.9),
        ],
        gpu: GpuOutcome::Ran {
            device: "GPU".into(),
            source: GpuSource::Live,
            twins: [("a", 0.4), ("b", 1.0), ("c", 0.9)]
                .map(|(n, s)| (n.to_string(), Ok(gpu(s))))
                .into(),
            stale: BTreeMap::from([("c".to_string(), "c.cu changed".to_string())]),
        },
        ..Outcome::default()
    };
    let [simt, ld, _] = o.gpu_pairs("O1");
    assert_eq!(simt.len(), 2);
    assert!(ld.is_empty(), "no tf load figures: no pairs");
    let mut m = String::new();
    markdown(&mut m, &o);
    assert!(
        m.contains("| -O1 | 2 | 5.00 | 1.000 | — | — | — | — |"),
        "{m}"
    );
    assert!(m.contains("| c (not measured since) | 90.00 |"), "{m}");
    assert!(m.contains("- c: **not measured since**"), "{m}");
    assert!(m.contains("| m | 0.00 | 1.000 |"), "{m}");
    let mut csv = String::new();
    csv_rows(&mut csv, &o);
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.contains("a,[units],O1,32,simt,0.400000,gpu:m,0.400000,0.000000,"));
    assert_eq!(
        reason("tf analyze /tmp/x failed: error: no such model\nhelp"),
        "error: no such model"
    );
}
