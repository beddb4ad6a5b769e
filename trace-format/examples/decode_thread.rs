//! Decodes one thread of a trace with the addresses of its memory operands,
//! unchecked, as `tf analyze`'s lanes read it once the first pass has run,
//! and prints how many block executions, instructions and accesses it
//! holds. A program to count the decoder's instructions per block
//! execution with, under Valgrind's cachegrind (a count that does not vary
//! from run to run, where timings do):
//!
//! ```text
//! cargo build --release -p tf-trace --example decode_thread
//! valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes \
//!     target/release/examples/decode_thread TRACE_DIR TID
//! ```

use std::process::ExitCode;

use tf_trace::{Event, Trace};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, tid] = &args[..] else {
        eprintln!("usage: decode_thread TRACE_DIR TID");
        return ExitCode::from(2);
    };
    let Ok(tid) = tid.parse::<u64>() else {
        eprintln!("decode_thread: thread id {tid:?} is not a number");
        return ExitCode::from(2);
    };
    match decode(dir, tid) {
        Ok((blocks, insns, accesses)) => {
            println!("thread {tid}: {blocks} block executions, {insns} instructions, {accesses} accesses");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("decode_thread: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Block executions, instructions and accesses of thread `tid`.
fn decode(dir: &str, tid: u64) -> tf_trace::Result<(u64, u64, u64)> {
    let trace = Trace::open(dir)?;
    let mut r = trace.read_thread(tid)?;
    r.set_validate(false);
    r.set_check_ahead(false);
    let (mut blocks, mut insns, mut accesses) = (0u64, 0u64, 0u64);
    // as the replay's lanes read it: an event at a time, read in place (a
    // chunk that does not decode ends the reading with its error)
    while r.advance()? {
        if let Some(Event::Block(x)) = r.current() {
            blocks += 1;
            insns += u64::from(x.insns);
            for a in x.accesses() {
                // every address is read, as a replay reads it
                std::hint::black_box(a.addr);
                accesses += 1;
            }
        }
    }
    Ok((blocks, insns, accesses))
}
