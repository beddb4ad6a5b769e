//! Fuzz target: the trace reader (Trace::open, every thread read with addresses and for statistics) on a packed trace (see tf-fuzz-harness).
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};

// libFuzzer's mutations, then every checksum recomputed, so that mutants get
// past the CRCs into the decoders.
fuzz_mutator!(
    |data: &mut [u8], size: usize, max_size: usize, _seed: u32| {
        let n = libfuzzer_sys::fuzzer_mutate(data, size, max_size);
        tf_fuzz_harness::fix_checksums(&mut data[..n]);
        n
    }
);

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("tf-fuzz-{}", std::process::id()));
    tf_fuzz_harness::unpack(data, &dir).expect("a writable temporary directory");
    tf_fuzz_harness::read(&dir);
});
