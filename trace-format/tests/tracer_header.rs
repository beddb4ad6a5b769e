//! The shared tracer header (`include/tf_tracer.h`: runtime table, name
//! matching, skip state machine) compiled as C and as C++, run on a
//! scripted thread (tests/c/skip_trace.c); the Rust reader must find the
//! lock and skip events, a task run inside a wait, and lazy binding's skip,
//! where FORMAT.md §6.4 and §7 put them.

use std::path::Path;
use std::process::Command;
use tf_trace::{Event, ExitHow, LockKind, SkipReason, Trace};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_skip_state_machine_places_lock_and_skip_events() {
    for (compiler, lang) in [("gcc", "c"), ("g++", "c++")] {
        let dir = std::env::temp_dir().join(format!("tf-skip-{lang}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("skip_trace");
        let r = Command::new(compiler)
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-x", lang])
            // GCC 12 cannot bound the code length of the records and warns
            // that a copy from the 16-byte code buffer may read past it.
            .arg("-Wno-stringop-overread")
            .arg(Path::new(CRATE).join("tests/c/skip_trace.c"))
            .arg("-I")
            .arg(Path::new(CRATE).join("include"))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
        assert!(
            r.status.success(),
            "{compiler}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let out = Command::new(&exe).arg(&dir).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // traced: main's 2 + 2 + 1 + 1 + 1 + 1, and inside the barrier
        // the runtime's call 3, the task 4 and the block it returns to 2;
        // PLT0's 2 and foo's 4; skipped: lock 3 + 2 + 1, unlock 4, trylock
        // 2, barrier 2 + 1, lazy binding 5 + 6 + 7 + 2 + 3
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "traced 23 skipped 38"
        );

        let trace = Trace::open(&dir).unwrap();
        let mut r = trace.read_thread(1).unwrap();
        let mut got = Vec::new();
        while let Some(ev) = r.next_event() {
            got.push(match ev.unwrap() {
                Event::Block(x) => format!("block {}", x.block),
                Event::Skip { reason, count } => format!("skip {reason:?} {count}"),
                Event::LockAcquire { kind, lock } => format!("acquire {kind:?} {lock:#x}"),
                Event::LockRelease { kind, lock } => format!("release {kind:?} {lock:#x}"),
                Event::ThreadStart { .. } => "start".into(),
                Event::ThreadExit { how } => format!("exit {how:?}"),
                other => format!("{other:?}"),
            });
        }
        let want = [
            "start".to_string(),
            "block 0".into(),
            format!("skip {:?} 6", SkipReason::LockRuntime),
            format!("acquire {:?} 0x5000", LockKind::Mutex),
            "block 4".into(),
            format!("release {:?} 0x5000", LockKind::Mutex),
            format!("skip {:?} 4", SkipReason::LockRuntime),
            "block 6".into(),
            // the failed trylock: skipped, no acquire
            format!("skip {:?} 2", SkipReason::LockRuntime),
            "block 8".into(),
            // the barrier's wait, but for the runtime's call of a task,
            // the task and where it returns to
            format!("skip {:?} 2", SkipReason::SyncWait),
            "block 10".into(),
            "block 11".into(),
            "block 12".into(),
            format!("skip {:?} 1", SkipReason::SyncWait),
            // foo's first call: from PLT0 straight to foo, the lazy
            // binding between them skipped (reason 4)
            "block 15".into(),
            "block 16".into(),
            format!("skip {:?} 23", SkipReason::Other),
            "block 22".into(),
            "block 14".into(),
            format!("exit {:?}", ExitHow::Ended),
        ];
        assert_eq!(got, want, "{compiler}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
