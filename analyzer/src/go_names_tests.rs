use super::*;

/// A Go 1.18 table (magic 0xfffffff0) of two functions, `main.main` at
/// 0x1000 and `runtime.f` at 0x1040, the code ending at 0x1080.
fn table() -> Vec<u8> {
    let mut t = vec![0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8];
    let names = b"main.main\0runtime.f\0";
    let (names_at, pcln_at) = (72u64, 96u64);
    // nfunc, nfiles, textStart, funcnameOffset, cuOffset, filetabOffset,
    // pctabOffset, pclnOffset
    for w in [2, 0, 0x1000, names_at, 0, 0, 0, pcln_at] {
        t.extend(u64::to_le_bytes(w));
    }
    t.extend(names);
    t.resize(pcln_at as usize, 0);
    // functab: (entry offset, record offset) for each function and the end
    for (entry, record) in [(0u32, 24u32), (0x40, 32), (0x80, 0)] {
        t.extend(entry.to_le_bytes());
        t.extend(record.to_le_bytes());
    }
    // records: (entry offset, name offset)
    for (entry, name) in [(0u32, 0i32), (0x40, 10)] {
        t.extend(entry.to_le_bytes());
        t.extend(name.to_le_bytes());
    }
    t
}

#[test]
fn names_come_from_the_table_with_offsets_inside_functions() {
    let t = table();
    assert_eq!(find_header(&t), Some(0));
    let f = parse(&t, None, (0x1000, 0x1080)).expect("the table holds together");
    assert_eq!(f.name(0x1000).as_deref(), Some("main.main"));
    assert_eq!(f.name(0x103f).as_deref(), Some("main.main+0x3f"));
    assert_eq!(f.name(0x1044).as_deref(), Some("runtime.f+0x4"));
    assert_eq!(f.name(0x1080), None, "past the last function");
    assert_eq!(f.name(0xfff), None, "before the first");
}

#[test]
fn a_table_that_does_not_hold_together_names_nothing() {
    let t = table();
    // the code ends before the second function
    assert!(parse(&t, None, (0x1000, 0x1030)).is_none());
    // a name offset past the table
    let mut bad = t.clone();
    let at = bad.len() - 4;
    bad[at..].copy_from_slice(&1000i32.to_le_bytes());
    assert!(parse(&bad, None, (0x1000, 0x1080)).is_none());
    // cut short
    assert!(parse(&t[..100], None, (0x1000, 0x1080)).is_none());
    // another pointer size is no header
    let mut other = t;
    other[7] = 4;
    assert_eq!(find_header(&other), None);
}
