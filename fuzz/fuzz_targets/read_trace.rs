//! Fuzz target: the trace reader (Trace::open, every thread read with addresses and for statistics) on a packed trace (see tf-fuzz-harness).
#![no_main]

use libfuzzer_sys::fuzz_target;

tf_fuzz::checksummed_mutator!();

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("tf-fuzz-{}", std::process::id()));
    tf_fuzz_harness::unpack(data, &dir).expect("a writable temporary directory");
    tf_fuzz_harness::read(&dir);
});
