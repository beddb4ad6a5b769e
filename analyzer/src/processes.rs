//! The processes a trace does not follow (FORMAT.md §7, `forked` and
//! `exec`): the children the program started, and the program that
//! replaced it, which `tf trace --follow-exec` traces into a trace of its
//! own under `DIR/execs` (FORMAT.md §2). What tf says about them, in the
//! words every command uses.

use std::path::{Path, PathBuf};
use tf_trace::{ByteString, Manifest, Trace};

/// The command of the `execve` that replaced the traced program, quoted as
/// a shell reads it; `None` when the trace ends where the program did.
///
/// ```
/// let mut m = tf_trace::Manifest::default();
/// assert_eq!(tf_analyzer::processes::exec_command(&m), None);
/// m.exec = vec!["/usr/bin/pigz".into(), "-c".into(), "big file".into()];
/// assert_eq!(
///     tf_analyzer::processes::exec_command(&m).unwrap(),
///     "/usr/bin/pigz -c 'big file'"
/// );
/// ```
pub fn exec_command(m: &Manifest) -> Option<String> {
    (!m.exec.is_empty()).then(|| quoted(&m.exec))
}

/// A command (a manifest's `command` or `exec`) quoted as a shell reads
/// it, so that it can be pasted back.
///
/// ```
/// let words = ["pigz".into(), "a b".into()];
/// assert_eq!(tf_analyzer::processes::quoted(&words), "pigz 'a b'");
/// ```
pub fn quoted(words: &[ByteString]) -> String {
    quoted_words(words.iter().map(|w| String::from_utf8_lossy(w.as_bytes())))
}

/// [`quoted`] for words already made text (a report's `command`).
///
/// ```
/// let words = vec!["sh".to_string(), "-c".into(), "exec pigz".into()];
/// assert_eq!(tf_analyzer::processes::quoted_words(&words), "sh -c 'exec pigz'");
/// ```
pub fn quoted_words(words: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    shell_words::join(words)
}

/// The traces of the programs that the run's `execve`s started, when
/// `tf trace --follow-exec` traced them: the directories `dir/execs/PID`
/// (`PID.N` for a process's N-th) that hold a manifest, by their start
/// time (in seconds), then process id and N. Empty when there are none.
///
/// ```no_run
/// // after `tf trace --follow-exec -o t -- ./run.sh`
/// for t in tf_analyzer::processes::followed(std::path::Path::new("t")) {
///     println!("{}", t.display()); // t/execs/4242, …
/// }
/// ```
pub fn followed(dir: &Path) -> Vec<PathBuf> {
    followed_manifests(dir)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// [`followed`], each trace with its manifest, read alone (without the
/// trace's block table): `None` where it is damaged.
///
/// ```no_run
/// // after `tf trace --follow-exec -o t -- ./run.sh`
/// let path = std::path::Path::new("t");
/// for (t, m) in tf_analyzer::processes::followed_manifests(path) {
///     println!("{}: {:?} instructions", t.display(), m.map(|m| m.traced_instructions));
/// }
/// ```
pub fn followed_manifests(dir: &Path) -> Vec<(PathBuf, Option<Manifest>)> {
    let Ok(entries) = std::fs::read_dir(dir.join("execs")) else {
        return Vec::new();
    };
    // by start time (in seconds), then process id and number
    let mut traces: Vec<(_, PathBuf, Option<Manifest>)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let manifest = match Manifest::read(&path) {
                Ok(None) => return None, // not a trace (yet)
                Ok(m) => m,
                Err(_) => None,
            };
            let start = manifest.as_ref().map_or(0, |m| m.start_time);
            let (pid, n) = followed_as(&path)?;
            Some(((start, pid, n), path, manifest))
        })
        .collect();
    traces.sort_by_key(|t| t.0);
    traces.into_iter().map(|(_, p, m)| (p, m)).collect()
}

/// The trace of the program that replaced the traced one, when the run's
/// `execve`s were followed, if it holds a manifest. The replacing program
/// keeps the process id: for the run's first program it is `DIR/execs/PID`;
/// for a followed one, `ROOT/execs/PID[.N]`, it is the process's next,
/// `ROOT/execs/PID.(N+1)`.
///
/// ```no_run
/// // after `tf trace --follow-exec -o t -- sh -c 'exec pigz big.tar'`
/// let trace = tf_trace::Trace::open("t").unwrap();
/// let pigz = tf_analyzer::processes::exec_trace(&trace).unwrap(); // t/execs/PID
/// assert!(tf_analyzer::processes::incomplete_reason(&trace).is_none());
/// ```
pub fn exec_trace(trace: &Trace) -> Option<PathBuf> {
    let m = trace.manifest().filter(|m| !m.exec.is_empty())?;
    // whole, so that a followed trace is known however it was named (".")
    let dir = trace.dir().canonicalize().ok()?;
    let path = match followed_as(&dir) {
        Some((pid, n)) if pid == m.pid => dir.with_file_name(format!("{pid}.{}", n + 1)),
        _ => dir.join("execs").join(m.pid.to_string()),
    };
    path.join("manifest").is_file().then_some(path)
}

/// The process id and number of a followed trace's directory, `execs/PID`
/// (number 1) or `execs/PID.N`; `None` for any other directory.
fn followed_as(dir: &Path) -> Option<(u64, u64)> {
    if dir.parent()?.file_name()? != "execs" {
        return None;
    }
    let name = dir.file_name()?.to_str()?;
    let (pid, n) = name.split_once('.').unwrap_or((name, "1"));
    Some((pid.parse().ok()?, n.parse().ok()?))
}

/// Why `trace` holds only part of its run: the program replaced itself
/// with another (`execve`), which ran untraced. `None` when it did not, or
/// when the new program's trace is beside it ([`exec_trace`]).
///
/// ```no_run
/// // after `tf trace -o t -- sh -c 'exec pigz big.tar'`
/// let trace = tf_trace::Trace::open("t").unwrap();
/// let why = tf_analyzer::processes::incomplete_reason(&trace).unwrap();
/// assert!(why.starts_with("the program replaced itself with /usr/bin/pigz big.tar (execve)"));
/// ```
pub fn incomplete_reason(trace: &Trace) -> Option<String> {
    let cmd = exec_command(trace.manifest()?)?;
    exec_trace(trace).is_none().then(|| {
        format!(
            "the program replaced itself with {cmd} (execve): the trace ends there, and what \
             that program ran is not in it; to analyze it, trace it directly (tf trace -- {cmd}) \
             or trace the run with --follow-exec"
        )
    })
}

/// How the traced program ended when it replaced itself with another
/// (`execve`), for the lines that say how the program ended: `None` when it
/// did not.
///
/// ```no_run
/// // after `tf trace --follow-exec -o t -- sh -c 'exec pigz big.tar'`
/// let trace = tf_trace::Trace::open("t").unwrap();
/// let end = tf_analyzer::processes::exec_end(&trace).unwrap();
/// assert!(end.starts_with("replaced itself with /usr/bin/pigz big.tar (execve): traced up to \
///                          there; the new program's trace is t/execs/"));
/// ```
pub fn exec_end(trace: &Trace) -> Option<String> {
    let cmd = exec_command(trace.manifest()?)?;
    let new = exec_trace(trace)
        .map(|t| format!("; the new program's trace is {}", t.display()))
        .unwrap_or_default();
    Some(format!(
        "replaced itself with {cmd} (execve): traced up to there{new}"
    ))
}

/// What the reader of `trace`'s figures must know about the processes of
/// its run: the children the program started, which are in no trace, and
/// the trace of the program that replaced it, when that was followed.
///
/// ```no_run
/// // after `tf trace -o t -- sh -c 'pigz big.tar; echo done'`
/// let trace = tf_trace::Trace::open("t").unwrap();
/// let w = tf_analyzer::processes::warnings(&trace);
/// assert!(w[0].starts_with("the program started 1 process of its own (fork)"));
/// ```
pub fn warnings(trace: &Trace) -> Vec<String> {
    let Some(m) = trace.manifest() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(new) = exec_trace(trace) {
        out.push(format!(
            "the program replaced itself with {} (execve): this trace ends there, and the new \
             program's trace is {}",
            exec_command(m).unwrap_or_default(),
            new.display()
        ));
    }
    let n = m.forked;
    if n > 0 {
        out.push(format!(
            "the program started {n} process{} of its own (fork), which its trace does not \
             follow: what {} ran is in no figure here; to analyze one, trace its command \
             directly{}",
            if n == 1 { "" } else { "es" },
            if n == 1 { "it" } else { "they" },
            if followed(trace.dir()).is_empty() {
                ""
            } else {
                " (the programs they executed have traces of their own under execs/)"
            }
        ));
    }
    out
}
