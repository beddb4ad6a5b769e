//! Times decoding one thread of a trace, with addresses, as the replay
//! reads it: `decode_speed TRACE_DIR TID [ROUNDS]`. Prints ns per block
//! execution and a checksum of what was decoded (the same for any decoder
//! that reads the format right).
use std::process::ExitCode;
use std::time::Instant;
use tf_trace::{Event, Trace};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, tid, rounds) = match &args[..] {
        [d, t] => (d, t, "3"),
        [d, t, r] => (d, t, r.as_str()),
        _ => {
            eprintln!("usage: decode_speed TRACE_DIR TID [ROUNDS]");
            return ExitCode::from(2);
        }
    };
    let (Ok(tid), Ok(rounds)) = (tid.parse::<u64>(), rounds.parse::<u32>()) else {
        eprintln!("decode_speed: TID and ROUNDS must be numbers");
        return ExitCode::from(2);
    };
    match run(dir, tid, rounds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("decode_speed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &str, tid: u64, rounds: u32) -> Result<(), Box<dyn std::error::Error>> {
    let trace = Trace::open(dir)?;
    for _ in 0..rounds {
        let mut reader = trace.read_thread(tid)?;
        reader.set_validate(false);
        let start = Instant::now();
        let (mut n, mut sum) = (0u64, 0u64);
        while let Some(ev) = reader.next_event() {
            let Event::Block(x) = ev? else { continue };
            n += 1;
            sum = sum.rotate_left(3) ^ u64::from(x.block) ^ u64::from(x.insns) << 32;
            for a in x.accesses() {
                sum = sum.wrapping_add(a.addr);
            }
        }
        let ns = start.elapsed().as_secs_f64() * 1e9 / n.max(1) as f64;
        println!("{n} executions, {ns:.2} ns each, checksum {sum:016x}");
    }
    Ok(())
}
