//! The index page's run table names the options that change the figures.

use super::*;

#[test]
fn the_run_table_says_whether_branches_were_predicated() {
    let t = traced("oddeven");
    let index = read(&t.report.join("index.html"));
    assert!(
        index.contains("<dt>--predicate</dt><dd>off</dd>"),
        "{index}"
    );
    let html = tempdir();
    run_ok(
        tf().arg("report")
            .arg(&t.trace)
            .arg("-o")
            .arg(html.path())
            .args(OPTIONS)
            .args(["--predicate", "6"]),
    );
    let index = read(&html.path().join("index.html"));
    assert!(
        index.contains("<dt>--predicate</dt><dd>arms of up to 6 instructions</dd>"),
        "{index}"
    );
}
