//! `--unit call:FN` takes the names tf prints for code without a symbol:
//! `module+0xoffset` in a stripped program (as Debian ships them); cut by
//! such a name, the units are those the symbol's name cuts. (`0xaddress`,
//! for code outside every module: tests/jit_code.rs; a Go function's name:
//! tests/go_program.rs.)

mod common;

use common::*;
use object::{Object, ObjectSymbol};
use serde_json::Value;
use std::process::Command;

/// The address of `name` in the symbol table of `program`.
fn symbol_address(program: &std::path::Path, name: &str) -> u64 {
    let data = std::fs::read(program).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let sym = file.symbols().find(|s| s.name() == Ok(name));
    sym.unwrap_or_else(|| panic!("no symbol {name}")).address()
}

/// Units, thread and warp instructions of a result.
fn figures(res: &Value) -> (u64, u64, u64) {
    let n = |k: &str| res[k].as_u64().unwrap();
    (n("units"), n("thread_instructions"), n("warp_instructions"))
}

#[test]
fn a_stripped_program_s_function_is_cut_by_the_name_tf_prints() {
    let dir = tempdir();
    let program = workload("threads");
    let stripped = dir.path().join("threads_stripped");
    let ok = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&program)
        .status()
        .unwrap();
    assert!(ok.success());
    // a position-independent program: its file addresses are offsets from
    // where it is mapped, so helper() is named threads_stripped+0xADDRESS
    let name = format!("threads_stripped+{:#x}", symbol_address(&program, "helper"));
    let (plain, bare) = (dir.path().join("plain"), dir.path().join("bare"));
    trace_ok(&plain, &program, &["4"]);
    trace_ok(&bare, &stripped, &["4"]);
    let by_symbol = analyze_json(&plain, &["--warp", "4,8", "--unit", "call:helper"]);
    let by_name = analyze_json(&bare, &["--warp", "4,8", "--unit", &format!("call:{name}")]);
    assert_eq!(by_name["unit"], format!("call:{name}"));
    for w in [4, 8] {
        let (s, n) = (width(&by_symbol, w), width(&by_name, w));
        assert_eq!(figures(s).0, 4, "W={w}: one unit per helper() call");
        assert_eq!(figures(s), figures(n), "W={w}");
        let helper = function(n, &name);
        assert_eq!(
            helper["thread_instructions"],
            function(s, "helper")["thread_instructions"]
        );
    }
    // a name no code has is still refused, naming it
    let out = tf()
        .args([
            "analyze",
            bare.to_str().unwrap(),
            "--unit",
            "call:threads_stripped+0x7",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no function named threads_stripped+0x7"),
        "{err}"
    );
}
