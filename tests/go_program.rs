//! A Go program from Debian: age, the file encryption tool. Debian strips
//! its symbol table, so its functions are named from the table the Go
//! runtime keeps for its stack traces (analyzer/src/go_names.rs), not
//! `age+0x…`.

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

/// A recipient's public key (age-keygen's), to encrypt to.
const RECIPIENT: &str = "age1rzq53algxew0g6qaqezle3usf53vyezp5hcstda4z38rhlrueeqqkvcql7";

#[test]
fn a_stripped_go_program_is_named_from_its_own_table() {
    assert!(
        Command::new("age").arg("--version").output().is_ok(),
        "age is not installed: run scripts/setup.sh (apt-get install -y age)"
    );
    let dir = tempdir();
    let input = dir.path().join("input.txt");
    text_file(&input, 200_000);
    let trace = dir.path().join("trace");
    let sealed = dir.path().join("input.age");
    let r = RECIPIENT;
    trace_ok(
        &trace,
        "age".as_ref(),
        &[
            "-r",
            r,
            "-o",
            sealed.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
    );
    let res = analyze_json(&trace, &["--warp", "8"]);
    let functions: Vec<&Value> = width(&res, 8)["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["module"] == "age")
        .collect();
    let named = |n: &str| functions.iter().any(|f| f["name"] == n);
    // the Go runtime sets itself up, allocates, and runs the program's main
    for name in ["runtime.schedinit", "runtime.mallocgc", "main.main"] {
        assert!(named(name), "no function {name} in age's");
    }
    // the program's hottest function is Go code, named by its package
    let hottest = functions
        .iter()
        .max_by_key(|f| f["thread_instructions"].as_u64().unwrap())
        .unwrap();
    let name = hottest["name"].as_str().unwrap();
    assert!(!name.starts_with("age+0x") && name.contains('.'), "{name}");
    // and `--unit call:` takes the name: one unit per call, all its code in them
    let calls = analyze_json(&trace, &["--warp", "8", "--unit", &format!("call:{name}")]);
    let by_calls = width(&calls, 8);
    assert!(by_calls["units"].as_u64().unwrap() > 0, "{name}");
    assert_eq!(
        function(by_calls, name)["thread_instructions"],
        hottest["thread_instructions"],
        "{name}"
    );
    // only code outside Go's table (the C side of cgo) may go unnamed
    let unnamed = functions
        .iter()
        .filter(|f| f["name"].as_str().unwrap().starts_with("age+0x"))
        .count();
    assert!(
        unnamed * 100 < functions.len(),
        "{unnamed} of {} unnamed",
        functions.len()
    );
}
