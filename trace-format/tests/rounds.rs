//! `ThreadReader::skip_rounds` against reading one event at a time: seeded
//! random loops of one to six blocks (operands strided, at an offset from
//! the one before, fixed, conditional, now and then mispredicted), entered
//! and left through other code, calls and events, under table sizes small
//! enough for entries to collide. A reader that skips must stand exactly
//! where a reader that reads stands: the same state (the whole prediction
//! state, as `ThreadReader::state` gives it) and the same events after.

mod common;

use common::{Rec, Rng, TempDir};
use std::collections::BTreeSet;
use tf_trace::{
    BlockDef, BlockExec, EndKind, Event, TableParams, ThreadReader, Trace, TraceWriter, Via,
    WriterOptions,
};

/// How an operand's address moves from one execution of its block to the
/// next.
#[derive(Clone, Copy)]
enum Pattern {
    Stride(u64, u64),
    AfterPrevious(u64),
    Fixed(u64),
}

struct Loop {
    blocks: Vec<(u32, Vec<(Pattern, bool)>)>,
}

fn random_loop(w: &mut TraceWriter, rng: &mut Rng, addr: &mut u64) -> Loop {
    let ends = [
        EndKind::Branch,
        EndKind::Jump,
        EndKind::Fallthrough,
        EndKind::IndirectJump,
        EndKind::Syscall,
    ];
    let n = 1 + rng.below(6);
    let mut blocks = Vec::new();
    for _ in 0..n {
        let mut def = BlockDef::new(*addr)
            .insn(3)
            .end(ends[rng.below(5) as usize]);
        *addr += 0x40;
        let mut ops = Vec::new();
        for _ in 0..rng.below(5) {
            let conditional = rng.chance(20);
            def = def.operand(
                [1, 4, 8, 16][rng.below(4) as usize],
                rng.chance(50),
                conditional,
            );
            let pattern = match rng.below(3) {
                0 => Pattern::Stride(rng.next() >> 20, rng.below(64).wrapping_sub(32)),
                1 => Pattern::AfterPrevious(rng.below(256).wrapping_sub(128)),
                _ => Pattern::Fixed(rng.next() >> 16),
            };
            ops.push((pattern, conditional));
        }
        blocks.push((w.block(&def).unwrap(), ops));
    }
    Loop { blocks }
}

/// The block executions written: block and addresses (`None`: absent).
type Written = Vec<(u32, Vec<Option<u64>>)>;

/// Runs `l` for `rounds` rounds from round `first`; every `noise` in a
/// hundred addresses is off its pattern, and conditional operands are
/// absent as often.
fn run_loop(
    t: &mut tf_trace::ThreadWriter<'_>,
    written: &mut Written,
    rng: &mut Rng,
    l: &Loop,
    first: u64,
    rounds: u64,
    noise: u64,
) {
    for i in first..first + rounds {
        for (id, ops) in &l.blocks {
            let mut prev = 0x7000u64;
            let addrs: Vec<Option<u64>> = ops
                .iter()
                .map(|&(pattern, conditional)| {
                    if conditional && rng.chance(noise) {
                        return None;
                    }
                    let mut a = match pattern {
                        Pattern::Stride(base, s) => base.wrapping_add(i.wrapping_mul(s)),
                        Pattern::AfterPrevious(d) => prev.wrapping_add(d),
                        Pattern::Fixed(a) => a,
                    };
                    if rng.chance(noise) {
                        a = a.wrapping_add(8 * (1 + rng.below(50)));
                    }
                    prev = a;
                    Some(a)
                })
                .collect();
            t.exec_opt(*id, &addrs).unwrap();
            written.push((*id, addrs));
        }
    }
}

/// Writes a random case into `dir`; returns its block executions.
fn write_case(dir: &std::path::Path, rng: &mut Rng) -> Written {
    let params = TableParams {
        addr_table_bits: [8, 9, 14][rng.below(3) as usize],
        succ_table_bits: [8, 12][rng.below(2) as usize],
        ret_stack_depth: [1, 8, 64][rng.below(3) as usize],
        run_prefix: true,
    };
    let chunk_target = [300, 4000, 1 << 20][rng.below(3) as usize];
    let mut w = TraceWriter::create_with(
        dir,
        WriterOptions {
            chunk_target,
            params,
        },
    )
    .unwrap();
    let mut addr = 0x40_0000;
    let loops: Vec<Loop> = (0..1 + rng.below(4))
        .map(|_| random_loop(&mut w, rng, &mut addr))
        .collect();
    let call = w
        .block(&BlockDef::new(addr).insn(5).write(8).end(EndKind::Call))
        .unwrap();
    let callee = w
        .block(
            &BlockDef::new(addr + 0x100)
                .insn(2)
                .read(8)
                .end(EndKind::Return),
        )
        .unwrap();
    let mut t = w.thread(1).unwrap();
    let mut written = Written::new();
    let mut round = 0;
    for _ in 0..4 + rng.below(12) {
        let l = &loops[rng.below(loops.len() as u64) as usize];
        let most = [3, 40, 400][rng.below(3) as usize];
        let rounds = 1 + rng.below(most);
        let noise = [0, 0, 1, 10][rng.below(4) as usize];
        run_loop(&mut t, &mut written, rng, l, round, rounds, noise);
        round += rounds;
        match rng.below(4) {
            0 => {
                let push = 0x7fff_0000 - 8 * rng.below(4);
                for (id, a) in [(call, push), (callee, 0x7fff_0000)] {
                    t.exec(id, &[a]).unwrap();
                    written.push((id, vec![Some(a)]));
                }
            }
            1 => t.syscall(1, 5).unwrap(),
            _ => {}
        }
    }
    w.finish().unwrap();
    written
}

/// The event a reader read last, comparable.
fn current(r: &ThreadReader<'_>) -> Option<Rec> {
    r.current().as_ref().map(Rec::of)
}

/// Reads the thread once event by event and once skipping rounds where it
/// can (at most a random number ahead); compares the two wherever the
/// skipping reader stands. Returns the events skipped, and the most at once.
fn compare(trace: &Trace, rng: &mut Rng, addresses: bool) -> (u64, u64) {
    let mut plain = trace.read_thread(1).unwrap();
    let mut skipping = trace.read_thread(1).unwrap();
    plain.set_addresses(addresses);
    skipping.set_addresses(addresses);
    let (mut skipped_in_all, mut longest) = (0, 0);
    let mut at = 0u64;
    loop {
        let more = skipping.advance().unwrap();
        assert_eq!(plain.advance().unwrap(), more);
        at += 1;
        if !more {
            return (skipped_in_all, longest);
        }
        let max = [1, 2, 5, 30, 1000][rng.below(5) as usize];
        let skipped = skipping.skip_rounds(max);
        let mut blocks_skipped = BTreeSet::new();
        for _ in 0..skipped {
            assert!(plain.advance().unwrap());
            if let Some(Event::Block(x)) = plain.current() {
                blocks_skipped.insert(x.block);
            }
        }
        if skipped > 0 {
            assert_round_left(&plain, blocks_skipped, max - skipped);
        }
        at += skipped;
        skipped_in_all += skipped;
        longest = longest.max(skipped);
        assert_eq!(skipping.state(), plain.state(), "state after event {at}");
        assert_eq!(current(&skipping), current(&plain), "event {at}");
    }
}

/// Every block of the executions just skipped runs again in the next
/// `before` events (read from `reader`, which stands after the skipped
/// ones), unless a record other than a run comes first: the reader that
/// skipped still sees each block of the loop at its place.
fn assert_round_left(reader: &ThreadReader<'_>, mut blocks: BTreeSet<u32>, before: u64) {
    let mut ahead = reader.try_clone().unwrap();
    for _ in 0..before {
        if blocks.is_empty() || !ahead.advance().unwrap() {
            break;
        }
        match ahead.current() {
            Some(Event::Block(x)) if x.via == Via::Run => blocks.remove(&x.block),
            _ => break,
        };
    }
    let last = ahead.current().as_ref().map(Rec::of);
    assert!(
        blocks.is_empty(),
        "{blocks:?} skipped, not seen again before {last:?}"
    );
}

#[test]
fn skipping_rounds_leaves_a_reader_where_reading_them_does() {
    let mut skipped = [(0u64, 0u64); 2];
    for seed in 0..150 {
        let mut rng = Rng(0x5eed_0000 + seed);
        let d = TempDir::new("rounds");
        write_case(d.path(), &mut rng);
        let trace = Trace::open(d.path()).unwrap();
        for (k, addresses) in [true, false].into_iter().enumerate() {
            let (all, longest) = compare(&trace, &mut rng, addresses);
            skipped[k] = (skipped[k].0 + all, skipped[k].1.max(longest));
        }
    }
    // The loops were skipped, not only read, and skips went past the end
    // of a run record (64 executions at most) into the next.
    let limit = 64;
    assert!(
        skipped
            .iter()
            .all(|&(all, longest)| all > 10_000 && longest > limit),
        "skipped {skipped:?}"
    );
}

/// A block execution as written: its block and its operands' addresses.
fn as_written(x: &BlockExec<'_>) -> (u32, Vec<Option<u64>>) {
    let mut addrs = vec![None; x.operands as usize];
    for a in x.accesses() {
        addrs[usize::from(a.operand)] = Some(a.addr);
    }
    (x.block, addrs)
}

/// The block executions `r` reads from here on.
fn read_rest(r: &mut ThreadReader<'_>) -> Written {
    let mut out = Written::new();
    while r.advance().unwrap() {
        if let Some(Event::Block(x)) = r.current() {
            out.push(as_written(&x));
        }
    }
    out
}

#[test]
fn runs_of_a_loop_read_as_written_and_resume_from_anywhere() {
    for seed in 0..100 {
        let mut rng = Rng(0xc0_0a5e + seed);
        let d = TempDir::new("rounds-written");
        let written = write_case(d.path(), &mut rng);
        let trace = Trace::open(d.path()).unwrap();
        let mut r = trace.read_thread(1).unwrap();
        let mut read = 0;
        while r.advance().unwrap() {
            if let Some(Event::Block(x)) = r.current() {
                assert_eq!(as_written(&x), written[read], "execution {read}");
                read += 1;
            }
            // A few times a case: a reader resumed here reads the rest.
            if rng.below(written.len() as u64) < 4 {
                if let Some(place) = r.state() {
                    let mut later = trace.read_thread(1).unwrap();
                    later.resume(&place).unwrap();
                    assert!(
                        read_rest(&mut later) == written[read..],
                        "resumed at {read}"
                    );
                }
            }
        }
        assert_eq!(read, written.len());
    }
}

#[test]
fn a_run_that_does_not_go_round_a_loop_is_read_not_skipped() {
    let d = TempDir::new("rounds-call");
    let mut w = TraceWriter::create(d.path()).unwrap();
    // A loop whose round calls a function: the return stack changes every
    // round, so it is not skipped (calls and returns end a round).
    let call = w
        .block(&BlockDef::new(0x1000).insn(5).write(8).end(EndKind::Call))
        .unwrap();
    let callee = w
        .block(&BlockDef::new(0x2000).insn(2).read(8).end(EndKind::Return))
        .unwrap();
    let mut t = w.thread(1).unwrap();
    for i in 0..100u64 {
        t.exec(call, &[0x7000 - 8 * (i % 2)]).unwrap();
        t.exec(callee, &[0x7000]).unwrap();
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let mut r = trace.read_thread(1).unwrap();
    let mut events = 0;
    while r.advance().unwrap() {
        events += 1;
        assert_eq!(r.skip_rounds(1000), 0, "skipped at event {events}");
        if let Some(Event::Block(_)) = r.current() {
        } else {
            panic!("only blocks were written");
        }
    }
    assert_eq!(events, 200);
}
