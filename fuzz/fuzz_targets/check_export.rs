//! Fuzz target: the export validator (`tf export --check`) on a packed
//! Accel-Sim trace directory (see tf-fuzz-harness).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("tf-fuzz-check-{}", std::process::id()));
    tf_fuzz_harness::unpack(data, &dir).expect("a writable temporary directory");
    tf_fuzz_harness::check_export(&dir);
});
