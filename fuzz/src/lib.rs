//! What tf's fuzz targets share.

/// The mutator of the targets that take a packed trace: libFuzzer's
/// mutations, then every checksum recomputed
/// (`tf_fuzz_harness::fix_checksums`), so that mutants get past the CRCs
/// into the decoders. The target depends on `libfuzzer-sys` and
/// `tf-fuzz-harness`.
#[macro_export]
macro_rules! checksummed_mutator {
    () => {
        libfuzzer_sys::fuzz_mutator!(|data: &mut [u8],
                                      size: usize,
                                      max_size: usize,
                                      _seed: u32| {
            let n = libfuzzer_sys::fuzzer_mutate(data, size, max_size);
            tf_fuzz_harness::fix_checksums(&mut data[..n]);
            n
        });
    };
}
