//! Fuzz target: the Accel-Sim export of a packed trace (see
//! tf-fuzz-harness) at warp width 32; what it writes must pass its own
//! check, however damaged the trace.
#![no_main]

use libfuzzer_sys::fuzz_target;

tf_fuzz::checksummed_mutator!();

fuzz_target!(|data: &[u8]| {
    let tmp = std::env::temp_dir();
    let dir = tmp.join(format!("tf-fuzz-export-{}", std::process::id()));
    let out = tmp.join(format!("tf-fuzz-export-out-{}", std::process::id()));
    tf_fuzz_harness::unpack(data, &dir).expect("a writable temporary directory");
    if let Some(problems) = tf_fuzz_harness::export(&dir, &out) {
        let errors: Vec<String> = (problems.iter().filter(|p| p.error))
            .map(|p| p.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "the export does not pass its check: {errors:#?}"
        );
    }
});
