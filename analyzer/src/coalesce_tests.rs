//! Tests of [`super`]: the coalescer's shortcuts count as gathering does.

use super::*;

/// The issue of `lanes`, each lane its accesses of `accesses` and `insns`
/// instructions.
fn lane_issues<'a>(
    lanes: &[usize],
    accesses: &'a [impl AsRef<[Access]>],
    insns: u32,
) -> Vec<LaneIssue<'a>> {
    (lanes.iter().zip(accesses))
        .map(|(&lane, a)| LaneIssue {
            lane,
            insns,
            first_op: 0,
            accesses: a.as_ref(),
        })
        .collect()
}

/// Lanes that access the same bytes, on their stacks (the same stack
/// pointer) or not: counted without gathering, as gathered and sorted.
#[test]
fn uniform_accesses_count_as_gathered_ones() {
    let mut next = crate::testutil::numbers(12345);
    let mut checked = 0;
    for _ in 0..4000 {
        let width = [4, 8, 12, 24, 32, 48, 64][next(7) as usize];
        let sp = 0x7fff_0000 + 8 * next(64);
        let stack = (0x7ffe_0000, 0x8000_0000);
        let lanes: Vec<usize> = (0..width).filter(|_| next(3) > 0).collect();
        if lanes.is_empty() {
            continue;
        }
        let addr = match next(3) {
            0 => 0x1000_0000 + next(4096),
            _ => sp - 512 + next(1024),
        };
        let size = [1, 2, 4, 8, 16, 32, 3][next(7) as usize];
        let access = [Access {
            operand: 0,
            size,
            write: false,
            addr,
        }];
        let issues: Vec<LaneIssue<'_>> = lanes
            .iter()
            .map(|&lane| LaneIssue {
                lane,
                insns: 1,
                first_op: 0,
                accesses: &access,
            })
            .collect();
        let mut c = Coalescer::new(width, vec![(stack, sp); width]);
        let mut gather = Gather::default();
        for l in &issues {
            gather.add(&access[0], l.lane, &c.stacks, width);
        }
        let got = c.uniform(&issues, 0);
        assert_eq!(
            got,
            Some(gather.counts()),
            "W={width} lanes {lanes:?} {addr:#x}+{size} sp {sp:#x}"
        );
        checked += 1;
    }
    assert!(checked > 3000);
}

/// `interleaved` gives, operand by operand, the interleaved sectors that
/// `requests` gives, at two widths that hold the same lanes: for one lane,
/// for lanes that all make every access (the same bytes from the same stack
/// pointer or not), and for lanes whose conditional operands are absent
/// here and there; and a lone lane counts alike at two widths when
/// `lone_counts_alike` says so.
#[test]
fn interleaved_alone_counts_as_requests_do() {
    let mut next = crate::testutil::numbers(4242);
    let block = crate::blocks::CBlock {
        address: 0x1000,
        end_address: 0x1010,
        n_insns: 3,
        n_ops: 3,
        function: 0,
        end: tf_trace::EndKind::Fallthrough,
        is_entry: false,
        is_cold: false,
        origin: (0, 0, 0),
    };
    let segments = Segments::new([], []);
    let (mut checked, mut alike) = ([0; 3], 0);
    for _ in 0..3000 {
        let width = [4, 8, 12, 32, 64][next(5) as usize];
        let n = 1 + next(width.min(6) as u64) as usize;
        let lanes: Vec<usize> = (0..width).filter(|_| next(2) == 0).take(n).collect();
        if lanes.is_empty() {
            continue;
        }
        let same = next(2) == 0;
        let sp = 0x7fff_0000u64;
        let stacks: Vec<_> = (0..width)
            .map(|l| {
                let lane_sp = if same { sp } else { sp + 0x100 * l as u64 };
                ((0x7ffe_0000, 0x8000_0000), lane_sp)
            })
            .collect();
        let all = next(3) > 0;
        let mut accesses: Vec<Vec<Access>> = Vec::new();
        for &l in &lanes {
            let mut mine = Vec::new();
            for j in 0..3u16 {
                if !all && next(3) == 0 {
                    continue; // an absent conditional operand
                }
                let addr = match (same, next(3)) {
                    (_, 0) => 0x1000_0000 + next(256),
                    (true, _) => sp - 64 + 8 * u64::from(j),
                    (false, _) => stacks[l].1 - 64 + next(128),
                };
                mine.push(Access {
                    operand: j,
                    size: [1, 4, 8, 16][next(4) as usize],
                    write: next(2) == 0,
                    addr,
                });
            }
            accesses.push(mine);
        }
        let issues = lane_issues(&lanes, &accesses, 3);
        let issue = Issue {
            cblock: 0,
            block: &block,
            function: 0,
            active: 0,
            counted: 0,
            predicated: 0,
            spinning: 0,
            warp_instructions: 3,
            thread_instructions: 3,
            lanes: &issues,
            serialized: None,
        };
        // Another width that holds the same lanes.
        let highest = *lanes.last().unwrap();
        let wider: Vec<usize> = [1, 2, 4, 8, 12, 16, 32, 64]
            .into_iter()
            .filter(|&w| w > highest)
            .collect();
        let other = wider[next(wider.len() as u64) as usize];
        let mut c = Coalescer::new(width, stacks.clone());
        let mut at_other = Coalescer::new(other, stacks);
        let (mut requests, mut other_requests) = (Vec::new(), Vec::new());
        c.requests(&issue, &segments, |r| requests.push(r));
        at_other.requests(&issue, &segments, |r| other_requests.push(r));
        assert_eq!(requests.len(), other_requests.len());
        for (r, o) in requests.iter().zip(&other_requests) {
            assert_eq!(
                c.interleaved(&issue, r.operand),
                r.interleaved,
                "W={width} lanes {lanes:?} operand {}",
                r.operand
            );
            assert_eq!(
                at_other.interleaved(&issue, r.operand),
                o.interleaved,
                "W={other} lanes {lanes:?} operand {}",
                r.operand
            );
            if lanes.len() == 1 && lone_counts_alike(width, other) {
                assert_eq!(r.interleaved, o.interleaved, "W={width} and {other}");
                alike += 1;
            }
        }
        checked[match (issues.len(), all) {
            (1, _) => 0,
            (_, true) => 1,
            _ => 2,
        }] += 1;
    }
    assert!(checked.iter().all(|&n| n > 300), "{checked:?}");
    assert!(alike > 300, "{alike}");
}

#[test]
fn lanes_apart_or_at_other_offsets_are_gathered() {
    let stack = (0x7ffe_0000, 0x8000_0000);
    let mut c = Coalescer::new(4, vec![(stack, 0x7fff_0000), (stack, 0x7fff_0100)]);
    let a = [Access {
        operand: 0,
        size: 8,
        write: false,
        addr: 0x7fff_0000 - 16,
    }];
    let b = [Access {
        addr: 0x7fff_0000 - 8,
        ..a[0]
    }];
    let lane = |lane, accesses| LaneIssue {
        lane,
        insns: 1,
        first_op: 0,
        accesses,
    };
    assert_eq!(
        c.uniform(&[lane(0, &a), lane(1, &a)], 0),
        None,
        "the same bytes at other offsets from the lanes' stack pointers"
    );
    let mut c = Coalescer::new(4, vec![(stack, 0x7fff_0000); 2]);
    assert_eq!(
        c.uniform(&[lane(0, &a), lane(1, &b)], 0),
        None,
        "other bytes"
    );
    assert!(c.uniform(&[lane(0, &a), lane(1, &a)], 0).is_some());
}

/// Sectors in order (counted in one pass) or not (sorted first): as many
/// distinct ones as sorting and removing repeats leaves.
#[test]
fn distinct_counts_as_sorting_and_deduplicating() {
    let mut next = crate::testutil::numbers(0x5eed);
    for _ in 0..20_000 {
        let n = next(40) as usize;
        let mut v: Vec<u64> = (0..n).map(|_| next(24)).collect();
        if next(2) == 0 {
            v.sort_unstable(); // in order, as lanes in lane order give them
        }
        let mut expected = v.clone();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(distinct(&mut v), expected.len() as u64, "{v:?}");
    }
}

/// Lanes on stacks of their own, or on one stack from other stack pointers,
/// at one offset from each lane's stack pointer (units of several threads
/// in the same frame): counted without gathering, as gathered and sorted;
/// at other offsets, or some lanes off their stacks, gathered.
#[test]
fn lanes_at_one_offset_from_their_stack_pointers_count_as_gathered() {
    let mut next = crate::testutil::numbers(0xfeed);
    let mut alike = 0;
    for _ in 0..4000 {
        let width = [4, 8, 12, 32, 64][next(5) as usize];
        // Lanes of up to three threads (64 kB stacks 1 MB apart), each
        // lane's stack pointer one of a few in its thread's stack.
        let stacks: Vec<_> = (0..width)
            .map(|_| {
                let lo = 0x7f00_0000 + 0x10_0000 * next(3);
                ((lo, lo + 0x1_0000), lo + 0x8000 + 8 * next(3))
            })
            .collect();
        let lanes: Vec<usize> = (0..width).filter(|_| next(3) > 0).collect();
        if lanes.len() < 2 {
            continue;
        }
        let offset = next(256).wrapping_sub(128);
        let size = [1, 2, 4, 8, 16, 32, 3][next(7) as usize];
        let accesses: Vec<[Access; 1]> = lanes
            .iter()
            .map(|&l| {
                let sp: u64 = stacks[l].1;
                let addr = match next(12) {
                    0 => sp.wrapping_add(next(256)).wrapping_sub(128), // another offset
                    1 => 0x1000_0000,                                  // off its stack
                    _ => sp.wrapping_add(offset),
                };
                [Access {
                    operand: 0,
                    size,
                    write: false,
                    addr,
                }]
            })
            .collect();
        let issues = lane_issues(&lanes, &accesses, 1);
        let mut c = Coalescer::new(width, stacks.clone());
        let mut gather = Gather::default();
        for l in &issues {
            gather.add(&l.accesses[0], l.lane, &c.stacks, width);
        }
        let gathered = gather.counts();
        let at_one_offset = issues.iter().all(|l| {
            let (stack, sp) = stacks[l.lane];
            let addr = l.accesses[0].addr;
            addr.wrapping_sub(sp) == offset && addr >= stack.0 && addr < stack.1
        });
        let got = c.uniform(&issues, 0);
        if at_one_offset {
            assert_eq!(
                got,
                Some(gathered),
                "W={width} lanes {lanes:?} {offset:#x}+{size}"
            );
            alike += usize::from(
                issues
                    .iter()
                    .any(|l| stacks[l.lane].1 != stacks[lanes[0]].1),
            );
        } else if let Some(counts) = got {
            assert_eq!(counts, gathered, "W={width} lanes {lanes:?}");
        }
    }
    assert!(alike > 500, "{alike}");
}
