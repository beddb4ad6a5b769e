//! `pack DIR OUT`: writes a trace or export directory as one packed byte
//! string (a fuzz seed).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: pack DIR OUT");
        std::process::exit(2);
    }
    let packed = tf_fuzz_harness::pack(args[1].as_ref()).unwrap_or_else(|e| {
        eprintln!("pack: {}: {e}", args[1]);
        std::process::exit(1)
    });
    std::fs::write(&args[2], packed).unwrap_or_else(|e| {
        eprintln!("pack: {}: {e}", args[2]);
        std::process::exit(1)
    });
}
