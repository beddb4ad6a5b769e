//! PLT stubs are named as objdump names them (`strcmp@plt`), and a frame
//! that starts at one is charged to that name.

mod common;

use common::*;
use std::collections::HashMap;
use std::process::Command;

/// objdump's names of the PLT entries of `program`, by address.
fn objdump_plt(program: &std::path::Path) -> HashMap<u64, String> {
    let out = Command::new("objdump")
        .args(["-d", "-j", ".plt", "-j", ".plt.sec", "-j", ".plt.got"])
        .arg(program)
        .output()
        .expect("objdump is installed (binutils, with gcc)");
    // "0000000000001040 <strcmp@plt>:"
    (String::from_utf8_lossy(&out.stdout).lines())
        .filter_map(|l| {
            let (addr, rest) = l.split_once(" <")?;
            let name = rest.strip_suffix(">:")?;
            let addr = u64::from_str_radix(addr, 16).ok()?;
            name.ends_with("@plt").then(|| (addr, name.to_string()))
        })
        .collect()
}

#[test]
fn plt_entries_have_objdump_s_names() {
    for name in ["divergence", "spin_wait", "omp_schedules"] {
        let program = workload(name);
        let want = objdump_plt(&program);
        assert!(want.len() >= 3, "{name}: {want:?}");
        let got = tf_analyzer::plt::plt_names(&std::fs::read(&program).unwrap());
        // objdump's names have symbol versions (strcmp@GLIBC_2.2.5@plt
        // in some versions): compare without them
        let plain = |n: &str| n.split('@').next().unwrap().to_string();
        for (addr, n) in &want {
            let ours = got
                .get(addr)
                .unwrap_or_else(|| panic!("{name}: no name at {addr:#x} ({n})"));
            assert_eq!(plain(ours), plain(n), "{name} at {addr:#x}");
        }
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
    }
}

#[test]
fn a_frame_at_a_plt_stub_is_named_after_its_function() {
    // Each of triangle's 64 units calls strcmp twice ("oddeven" first),
    // each call through the stub's one jump (bound at start-up)
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("divergence"), &["triangle", "64"]);
    let r = analyze_json(&t, &["--unit", "call:worker", "--warp", "32"]);
    let w = width(&r, 32);
    assert_eq!(function(w, "strcmp@plt")["thread_instructions"], 128);
    assert_eq!(function(w, "strcmp@plt")["module"], "divergence");
    let unnamed: Vec<&str> = (w["functions"].as_array().unwrap().iter())
        .map(|f| f["name"].as_str().unwrap())
        .filter(|n| n.starts_with("divergence+"))
        .collect();
    assert!(unnamed.is_empty(), "{unnamed:?}");
}
