//! The report as a whole: a browser renders its tables and plots, and it
//! is the same, byte for byte, on one core and on several.

use super::*;

/// Runs headless Chromium on `page`: its DOM after scripts ran, and a
/// screenshot written to `png`.
fn chromium(page: &Path, png: &Path) -> String {
    let profile = tempdir();
    let base = |cmd: &mut Command| {
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    };
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut dump = Command::new("chromium");
    base(&mut dump);
    let out = dump
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium is installed (scripts/setup.sh: apt-get install -y chromium)");
    assert!(out.status.success(), "chromium --dump-dom {url} failed");
    let mut shot = Command::new("chromium");
    base(&mut shot);
    let status = shot
        .arg("--window-size=1400,2600")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "chromium --screenshot {url} failed"
    );
    assert!(
        std::fs::metadata(png).unwrap().len() > 10_000,
        "{} is empty",
        png.display()
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn chromium_renders_the_tables_and_plots() {
    let t = traced("triangle");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let index = t.report.join("index.html");
    let dom = chromium(&index, &shots.join("index.png"));
    // The sortable table's script ran without breaking the page, and every
    // function row and plot is in the rendered DOM.
    for name in ["body", "worker"] {
        assert!(
            dom.contains(&format!("<tr data-fn=\"{name}\">")),
            "row {name}"
        );
    }
    assert!(dom.contains("<table class=\"sortable functions\">"));
    assert_eq!(
        dom.matches("<svg").count(),
        4,
        "sweep, shares, memory, skipped"
    );
    assert!(dom.contains("warp width W (lanes)") && dom.contains("SIMT efficiency (%)"));
    let page = page_of(&t.report, &read(&index), "worker");
    let dom = chromium(&page, &shots.join("function-worker.png"));
    for w in [8, 16, 32] {
        assert!(dom.contains(&format!("<tr data-w=\"{w}\">")), "W = {w} row");
    }
    assert!(dom.contains("<tr data-block="), "the block table");
    assert!(dom.contains("<tr data-line="), "the line table");
    assert!(dom.contains("class=\"cfg-block\""), "the CFG's blocks");
    assert_eq!(dom.matches("<svg").count(), 2, "the sweep and the CFG");
    eprintln!("screenshots in {}", shots.display());
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The warps of a report end in any order on several cores, and their
/// figures are gathered in that order; no page may depend on it (the
/// dynamic CFG's layout once depended on the order of its edges).
#[test]
fn the_report_is_the_same_on_one_core_and_on_several() {
    let dir = tempdir();
    let trace = dir.path().join("trace");
    trace_ok(&trace, &workload("omp_bfs"), &[]);
    let pages = |threads: &str| {
        let html = dir.path().join(format!("html-{threads}"));
        let mut report = tf();
        report.env("RAYON_NUM_THREADS", threads);
        run_ok(report.arg("report").arg(&trace).arg("-o").arg(&html));
        files_under(&html)
    };
    let one = pages("1");
    assert!(one.len() > 3, "a report of several pages");
    for threads in ["2", "4"] {
        let several = pages(threads);
        let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&one), names(&several));
        for (a, b) in one.iter().zip(&several) {
            assert!(a.1 == b.1, "{} differs on {threads} cores", a.0.display());
        }
    }
}
