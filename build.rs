//! Builds the Valgrind tool (`tracer-valgrind/`, through its Makefile) so that
//! the `tf` binary can embed it and `tf trace` works wherever Valgrind is
//! installed, with nothing else to install.
//!
//! When Valgrind's headers or static libraries are missing the build still
//! succeeds, without the tool: `tf trace` then says what to install.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let tracer = manifest_dir.join("tracer-valgrind");
    println!("cargo:rerun-if-changed=tracer-valgrind");
    println!("cargo:rerun-if-changed=trace-format/include");
    println!("cargo:rerun-if-env-changed=TF_NO_VALGRIND_TOOL");

    let tool = out.join("tf-amd64-linux");
    let preload = out.join("vgpreload_tf-amd64-linux.so");
    let _ = fs::remove_file(&tool);
    let _ = fs::remove_file(&preload);
    // Build the tool when Valgrind's development files are there; a tool
    // that fails to build then is an error, not a silent omission.
    let wanted = env::var_os("TF_NO_VALGRIND_TOOL").is_none()
        && std::path::Path::new("/usr/include/valgrind/pub_tool_basics.h").exists()
        && std::path::Path::new("/usr/lib/x86_64-linux-gnu/valgrind/libcoregrind-amd64-linux.a")
            .exists();
    if wanted {
        let status = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(&tracer)
            .arg(format!("O={}", out.display()))
            .status()
            .expect("run make (install it: apt-get install -y make)");
        assert!(
            status.success() && tool.exists() && preload.exists(),
            "building the Valgrind tool in tracer-valgrind/ failed"
        );
    } else {
        println!(
            "cargo:warning=tf is built without its Valgrind tool; `tf trace` will not work \
             (install valgrind and rebuild: apt-get install -y valgrind)"
        );
        fs::write(&tool, b"").expect("write an empty tool placeholder");
        fs::write(&preload, b"").expect("write an empty preload placeholder");
    }
    let mut bytes = fs::read(&tool).expect("read the tool");
    bytes.extend(fs::read(&preload).expect("read the preload library"));
    println!("cargo:rustc-env=TF_TOOL_PATH={}", tool.display());
    println!("cargo:rustc-env=TF_PRELOAD_PATH={}", preload.display());
    println!("cargo:rustc-env=TF_TOOL_HASH={:016x}", fnv1a(&bytes));
    println!(
        "cargo:rustc-env=TF_TOOL_VALGRIND_VERSION={}",
        valgrind_version()
    );
}

/// The Valgrind version the tool is built against (from the installed headers).
fn valgrind_version() -> String {
    let config = fs::read_to_string("/usr/include/valgrind/config.h").unwrap_or_default();
    config
        .lines()
        .find_map(|line| line.strip_prefix("#define VERSION "))
        .map(|v| v.trim().trim_matches('"').to_string())
        .unwrap_or_default()
}

/// A content hash, so that a changed tool gets a new install directory.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
