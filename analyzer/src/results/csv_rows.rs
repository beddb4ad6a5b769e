//! The CSV form of a [`Report`]: one row per warp width and function.

use super::{FunctionResult, Report};

impl Report {
    /// One CSV row per (warp width, function), with the whole program as
    /// function `[all]`; the same numbers as the JSON. The column
    /// `spin_wait`, the `--spin-wait` rule, says whether
    /// `spin_wait_thread_instructions` are in `thread_instructions`
    /// (`count`) or left out of every figure (`exclude`). The last,
    /// `complete`, is `false` on every row when the figures cover less than
    /// the run ([`Report::is_complete`]), so that a reader of the CSV alone
    /// cannot take part for the whole.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let header = [
            "warp_size",
            "function",
            "module",
            "file",
            "line",
            "thread_instructions",
            "warp_instructions",
            "simt_efficiency",
            "share",
            "stack_requests",
            "stack_sectors_per_request",
            "stack_interleaved_sectors_per_request",
            "heap_requests",
            "heap_sectors_per_request",
            "global_requests",
            "global_sectors_per_request",
            "other_requests",
            "other_sectors_per_request",
            "serialized_warp_instructions",
            "skipped_instructions",
            "spin_wait_thread_instructions",
            "spin_wait",
            "complete",
        ];
        w.write_record(header).expect("writing to memory");
        for r in &self.results {
            let total = FunctionResult {
                name: "[all]".into(),
                module: String::new(),
                file: None,
                line: None,
                share: 1.0,
                thread_instructions: r.thread_instructions,
                warp_instructions: r.warp_instructions,
                simt_efficiency: r.simt_efficiency,
                memory: r.memory,
                serialized_warp_instructions: r.serialized_warp_instructions,
                skipped_instructions: r.skipped_instructions,
                spin_wait_thread_instructions: r.spin_wait_thread_instructions,
            };
            for f in std::iter::once(&total).chain(&r.functions) {
                let m = &f.memory;
                let row = [
                    r.warp_size.to_string(),
                    f.name.clone(),
                    f.module.clone(),
                    f.file.clone().unwrap_or_default(),
                    f.line.map(|l| l.to_string()).unwrap_or_default(),
                    f.thread_instructions.to_string(),
                    f.warp_instructions.to_string(),
                    format!("{:.6}", f.simt_efficiency),
                    format!("{:.6}", f.share),
                    m.stack.requests.to_string(),
                    format!("{:.4}", m.stack.sectors_per_request),
                    format!("{:.4}", m.stack_interleaved.sectors_per_request),
                    m.heap.requests.to_string(),
                    format!("{:.4}", m.heap.sectors_per_request),
                    m.global.requests.to_string(),
                    format!("{:.4}", m.global.sectors_per_request),
                    m.other.requests.to_string(),
                    format!("{:.4}", m.other.sectors_per_request),
                    f.serialized_warp_instructions.to_string(),
                    f.skipped_instructions.to_string(),
                    f.spin_wait_thread_instructions.to_string(),
                    self.spin_wait.clone(),
                    self.is_complete().to_string(),
                ];
                w.write_record(&row).expect("writing to memory");
            }
        }
        let bytes = w.into_inner().expect("writing to memory");
        String::from_utf8(bytes).expect("the fields are UTF-8")
    }
}
