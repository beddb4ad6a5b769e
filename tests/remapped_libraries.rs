//! A program that unloads a library and loads another, which the dynamic
//! linker maps at the same addresses (workloads/remap_libraries.c): tf finds
//! a module by address, so it names the code there, and gives it source
//! lines, from the first library's file, and says so in a warning; the
//! figures stay right.

mod common;

use common::*;

#[test]
fn a_library_loaded_where_another_was_is_named_in_a_warning() {
    let dir = tempdir();
    let libs: Vec<_> = ["a", "b"]
        .iter()
        .map(|k| {
            let so = dir.path().join(format!("libremap_{k}.so"));
            let src = root().join(format!("workloads/remap/{k}.c"));
            compile(&["gcc", "-O1", "-g", "-shared", "-fPIC"], &[src], &so, &[]);
            so
        })
        .collect();
    let t = dir.path().join("remap");
    let args: Vec<&str> = libs.iter().map(|p| p.to_str().unwrap()).collect();
    let out = trace_ok(&t, &workload("remap_libraries"), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[2], "0 1 3 6 11 24 49 110", "{stdout}");
    let r = analyze_json(&t, &["--warp", "4", "--unit", "call:worker"]);
    let warnings: Vec<&str> = (r["warnings"].as_array().unwrap().iter())
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w
                .starts_with("libremap_b.so was mapped where libremap_a.so had been: the program")),
        "{warnings:?} ({stdout})"
    );
    // The figures: both libraries' compute() keep their own names (the
    // tracer gives them with their module), and every unit is replayed.
    let res = width(&r, 4);
    assert_eq!(res["units"], 8);
    assert_eq!(
        res["thread_instructions"],
        res["recorded_thread_instructions"]
    );
    let modules: Vec<&str> = (res["functions"].as_array().unwrap().iter())
        .filter(|f| f["name"] == "compute")
        .map(|f| f["module"].as_str().unwrap())
        .collect();
    assert_eq!(modules.len(), 2, "{modules:?}");
    assert!(modules.contains(&"libremap_a.so") && modules.contains(&"libremap_b.so"));
}
