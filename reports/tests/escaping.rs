//! Names from a trace (symbols, modules, paths, lock symbols, the command)
//! reach the pages escaped: a hostile name cannot add markup or a script.

use tf_analyzer::results::{FunctionResult, LockResult, Report, ThreadReport, WidthResult};
use tf_reports::{write, RunInfo, Settings};

const EVIL: &str = "<script>alert(\"x\")</script> & 'q'";
const ESCAPED: &str = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";

fn function(name: &str, warp: u64) -> FunctionResult {
    FunctionResult {
        name: name.into(),
        module: format!("mod{EVIL}"),
        file: Some(format!("/src/{EVIL}.c")),
        line: Some(7),
        share: 0.5,
        thread_instructions: warp * 2,
        warp_instructions: warp,
        simt_efficiency: 0.5,
        memory: Default::default(),
        serialized_warp_instructions: 0,
        skipped_instructions: 0,
        spin_wait_thread_instructions: 0,
    }
}

fn report() -> Report {
    let result = |w: usize| WidthResult {
        warp_size: w,
        units: 4,
        warps: 1,
        thread_instructions: 400,
        recorded_thread_instructions: 400,
        unfinished_units: 0,
        predicated_branches: 0,
        predicated_off_thread_instructions: 0,
        spinning_thread_instructions: 0,
        warp_instructions: 100,
        simt_efficiency: 1.0,
        divergent_branches: 0,
        memory: Default::default(),
        skipped_instructions: 0,
        serialized_warp_instructions: 3,
        off_stack: Default::default(),
        spin_wait_thread_instructions: 0,
        excluded_thread_instructions: 0,
        locks: vec![LockResult {
            address: "0x1000".into(),
            symbol: Some(format!("lock{EVIL}")),
            location: format!("heap{EVIL}"),
            kind: "mutex".into(),
            acquisitions: 4,
            contentions: 1,
            serialized_lanes: 3,
            serialized_warp_instructions: 3,
        }],
        functions: vec![function(&format!("f{EVIL}"), 50), function("plain", 50)],
    };
    Report {
        trace: format!("/traces/{EVIL}"),
        command: vec![format!("prog{EVIL}")],
        unit: "thread".into(),
        units_are: "each thread".into(),
        batch: "consecutive".into(),
        reconverge: "ipdom".into(),
        predicate: 0,
        lock_model: "serialize".into(),
        spin_wait: "count".into(),
        merge_tails: false,
        merged_blocks: 0,
        shard: None,
        locks: true,
        threads: vec![ThreadReport {
            tid: 1,
            parent: 0,
            start_routine: format!("start{EVIL}"),
            traced_instructions: 400,
            skipped_instructions: 0,
            skipped: Default::default(),
            units: 4,
        }],
        skipped: Default::default(),
        results: tf_reports::SWEEP.iter().map(|&w| result(w)).collect(),
        warnings: vec![format!("warning{EVIL}")],
        incomplete: vec![format!("incomplete{EVIL}")],
        damage: vec![format!("damage{EVIL}")],
        unrecorded: vec![format!("unrecorded{EVIL}")],
    }
}

#[test]
fn hostile_names_are_escaped_on_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        widths: vec![4],
        all_functions: false,
    };
    let written = write(dir.path(), &report(), &RunInfo::default(), &settings, None).unwrap();
    assert_eq!(written.function_pages, 2);
    let mut pages = vec![std::fs::read_to_string(&written.index).unwrap()];
    for entry in std::fs::read_dir(dir.path().join("functions")).unwrap() {
        pages.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    for page in &pages {
        // Only the page's own sorting script.
        assert_eq!(page.matches("<script>").count(), 1, "{page}");
        assert!(!page.contains("alert(\""), "a raw name leaked");
        assert!(!page.contains("& 'q'"), "a raw ampersand or quote leaked");
        assert!(page.contains(ESCAPED), "names are shown, escaped");
    }
    let index = &pages[0];
    for shown in [
        "f",
        "mod",
        "lock",
        "start",
        "warning",
        "incomplete",
        "unrecorded",
    ] {
        assert!(
            index.contains(&format!("{shown}{ESCAPED}")),
            "{shown} escaped on the index"
        );
    }
    // The command is shown quoted as a shell reads it, then escaped.
    let quoted = tf_analyzer::processes::quoted_words([format!("prog{EVIL}")]);
    let escaped = (quoted.replace('&', "&amp;").replace('<', "&lt;"))
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;");
    assert!(index.contains(&escaped), "the command escaped on the index");
    // The page file names keep only safe characters.
    for entry in std::fs::read_dir(dir.path().join("functions")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
            "{name}"
        );
    }
}
