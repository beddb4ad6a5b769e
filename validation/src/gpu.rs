//! The GPU side: the CUDA twins of the workloads (`workloads/cuda`), run
//! under Nsight Compute (`ncu`) where a machine has an NVIDIA GPU, nvcc and
//! ncu; the figures that correspond to tf's.

use crate::measure::{describe, output, run};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Warp efficiency: thread instructions per warp instruction (0..=32).
pub const RATIO: &str = "smsp__thread_inst_executed_per_inst_executed.ratio";
/// Thread instructions, summed over the kernel.
pub const THREAD_INST: &str = "smsp__thread_inst_executed.sum";
/// Warp instructions, summed over the kernel.
pub const WARP_INST: &str = "smsp__inst_executed.sum";
/// Sectors of global loads.
pub const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
/// Requests (warp instructions) of global loads.
pub const LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
/// Sectors of global stores.
pub const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
/// Requests of global stores.
pub const ST_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";

/// The metrics collected, in the order passed to ncu.
pub const METRICS: [&str; 7] = [
    RATIO,
    THREAD_INST,
    WARP_INST,
    LD_SECTORS,
    LD_REQUESTS,
    ST_SECTORS,
    ST_REQUESTS,
];

/// What Nsight Compute measured for a twin's kernels, all launches together.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuFigures {
    /// Kernel launches profiled.
    pub launches: usize,
    /// SIMT efficiency (fraction): thread over warp instructions, over 32.
    pub simt: f64,
    /// Global-load sectors per request (`None` without loads).
    pub load_sectors: Option<f64>,
    /// Global-store sectors per request (`None` without stores).
    pub store_sectors: Option<f64>,
}

/// Whether this machine can run the GPU part: `Ok(description of the GPU)`,
/// or `Err(the reason it cannot)`.
pub fn detect() -> std::result::Result<String, String> {
    let works = |program: &str, arg: &str| {
        Command::new(program)
            .arg(arg)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    if works("nvcc", "--version").is_none() {
        return Err("nvcc (the CUDA compiler) was not found".into());
    }
    if works("ncu", "--version").is_none() {
        return Err("Nsight Compute (ncu) was not found".into());
    }
    let gpus = works("nvidia-smi", "-L")
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    match gpus.lines().next() {
        Some(first) if !first.is_empty() => Ok(first.to_string()),
        _ => Err("no NVIDIA GPU (nvidia-smi -L lists none)".into()),
    }
}

/// Builds the twins (`make -C workloads cuda`).
pub fn build_twins(workloads_dir: &Path) -> Result<()> {
    run(Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(workloads_dir)
        .arg("cuda"))
    .context("building the CUDA twins")
}

/// Builds the twins for the CPU (`make -C workloads/cuda host-check`, the
/// host stub of `workloads/cuda/host_stub.h`) and checks that each prints
/// what its C workload prints at -O1 (which must be built). Returns, per
/// workload with a twin, `Err` with both outputs when they differ.
pub fn check_twins_on_host(
    workloads: &[&crate::expect::Workload],
    workloads_dir: &Path,
) -> Result<Vec<(String, std::result::Result<(), String>)>> {
    run(Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(workloads_dir.join("cuda"))
        .arg("host-check"))
    .context("building the CUDA twins for the host")?;
    let mut results = Vec::new();
    for w in workloads {
        let Some(twin) = &w.cuda else { continue };
        let gpu = output(
            Command::new(workloads_dir.join("build/cuda-host").join(&twin.program))
                .args(&twin.args),
        )?;
        let cpu =
            output(Command::new(workloads_dir.join("build/O1").join(&w.program)).args(&w.args))?;
        let verdict = if gpu == cpu {
            Ok(())
        } else {
            Err(format!("twin printed {gpu:?}, workload {cpu:?}"))
        };
        results.push((w.name.clone(), verdict));
    }
    Ok(results)
}

/// Runs `program args` under ncu, profiling every launch of `kernels`, and
/// sums their figures. `log` is a scratch file for ncu's CSV.
pub fn profile(
    program: &Path,
    args: &[String],
    kernels: &[String],
    log: &Path,
) -> Result<GpuFigures> {
    let mut c = Command::new("ncu");
    c.arg("--csv")
        .arg("--print-units")
        .arg("base")
        .arg("--kernel-name-base")
        .arg("function")
        .arg("--kernel-name")
        .arg(format!("regex:^({})$", kernels.join("|")))
        .arg("--metrics")
        .arg(METRICS.join(","))
        .arg("--log-file")
        .arg(log)
        .arg(program)
        .args(args);
    run(&mut c).with_context(|| describe(&c))?;
    let text =
        std::fs::read_to_string(log).with_context(|| format!("reading {}", log.display()))?;
    parse_ncu_csv(&text)
}

/// Sums ncu's `--csv` output (one line per launch and metric) into figures.
///
/// ```
/// let csv = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
/// "0","1","a","h","k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","smsp__thread_inst_executed.sum","inst","1,600"
/// "0","1","a","h","k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed.sum","inst","100"
/// "0","1","a","h","k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","32"
/// "0","1","a","h","k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","8"
/// "#;
/// let g = tf_validate::gpu::parse_ncu_csv(csv).unwrap();
/// assert_eq!((g.launches, g.simt, g.load_sectors, g.store_sectors), (1, 0.5, Some(4.0), None));
/// ```
pub fn parse_ncu_csv(text: &str) -> Result<GpuFigures> {
    let mut lines = text
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(split_csv_line);
    let header = lines
        .next()
        .context("ncu wrote no CSV (did any kernel run?)")?;
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("ncu's CSV has no column {name:?}"))
    };
    let (id, metric, value) = (col("ID")?, col("Metric Name")?, col("Metric Value")?);
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    let mut ratios = Vec::new();
    let mut launches = std::collections::BTreeSet::new();
    for cells in lines {
        if cells.len() <= id.max(metric).max(value) {
            continue;
        }
        let v: f64 = cells[value]
            .replace(',', "")
            .parse()
            .with_context(|| format!("ncu value {:?} of {}", cells[value], cells[metric]))?;
        launches.insert(cells[id].clone());
        if cells[metric] == RATIO {
            ratios.push(v);
        } else {
            *sums.entry(cells[metric].clone()).or_default() += v;
        }
    }
    if launches.is_empty() {
        bail!("ncu profiled no launch of the kernels");
    }
    let per = |num: &str, den: &str| match (sums.get(num), sums.get(den)) {
        (Some(n), Some(d)) if *d > 0.0 => Some(n / d),
        _ => None,
    };
    // Summed counts weigh every launch by its instructions; the per-launch
    // ratio is the fallback when the counts are missing.
    let ratio = per(THREAD_INST, WARP_INST)
        .or_else(|| crate::compare::mean(&ratios))
        .context("ncu reported no instruction counts")?;
    Ok(GpuFigures {
        launches: launches.len(),
        simt: ratio / 32.0,
        load_sectors: per(LD_SECTORS, LD_REQUESTS),
        store_sectors: per(ST_SECTORS, ST_REQUESTS),
    })
}

/// Splits one CSV line into cells (double quotes, `""` inside them).
fn split_csv_line(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_keep_commas_inside_quotes() {
        assert_eq!(
            split_csv_line(r#""a","1,024","say ""hi""",x"#),
            ["a", "1,024", "say \"hi\"", "x"]
        );
    }

    #[test]
    fn launches_are_summed_by_instructions() {
        let head = r#""ID","Kernel Name","Metric Name","Metric Value""#;
        let line = |id: u32, m: &str, v: &str| format!("\"{id}\",\"k\",\"{m}\",\"{v}\"");
        let text = [
            head.to_string(),
            line(0, THREAD_INST, "320"),
            line(0, WARP_INST, "10"),
            line(0, RATIO, "32"),
            line(1, THREAD_INST, "10"),
            line(1, WARP_INST, "10"),
            line(1, RATIO, "1"),
            line(1, ST_SECTORS, "12"),
            line(1, ST_REQUESTS, "3"),
            "==PROF== Disconnected".to_string(),
        ]
        .join("\n");
        let g = parse_ncu_csv(&text).unwrap();
        assert_eq!(g.launches, 2);
        assert!((g.simt - 330.0 / 20.0 / 32.0).abs() < 1e-12);
        assert_eq!(g.store_sectors, Some(4.0));
        assert_eq!(g.load_sectors, None);
        assert!(parse_ncu_csv(head).is_err());
    }
}
