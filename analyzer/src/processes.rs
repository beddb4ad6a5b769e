//! The processes a trace does not follow (FORMAT.md §7, `forked` and
//! `exec`): the children the program started, and the program that
//! replaced it. What tf says about them, in the words every command uses.

use tf_trace::Manifest;

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
    if m.exec.is_empty() {
        return None;
    }
    let words = m.exec.iter().map(|w| String::from_utf8_lossy(w.as_bytes()));
    Some(shell_words::join(words))
}

/// Why a trace holds only part of its run: the program replaced itself
/// with another (`execve`), which ran untraced. `None` when it did not.
///
/// ```
/// let mut m = tf_trace::Manifest::default();
/// m.exec = vec!["/usr/bin/pigz".into(), "big.tar".into()];
/// let why = tf_analyzer::processes::exec_reason(&m).unwrap();
/// assert!(why.starts_with("the program replaced itself with /usr/bin/pigz big.tar (execve)"));
/// assert!(why.ends_with("(tf trace -- /usr/bin/pigz big.tar)"));
/// ```
pub fn exec_reason(m: &Manifest) -> Option<String> {
    let cmd = exec_command(m)?;
    Some(format!(
        "the program replaced itself with {cmd} (execve): the trace ends there, and what that \
         program ran is not in it; to analyze it, trace it directly (tf trace -- {cmd})"
    ))
}

/// The warning for a program that started processes of its own, which the
/// trace does not follow; `None` when it started none.
///
/// ```
/// let mut m = tf_trace::Manifest::default();
/// assert_eq!(tf_analyzer::processes::fork_warning(&m), None);
/// m.forked = 2;
/// assert!(tf_analyzer::processes::fork_warning(&m)
///     .unwrap()
///     .starts_with("the program started 2 processes of its own (fork)"));
/// ```
pub fn fork_warning(m: &Manifest) -> Option<String> {
    let n = m.forked;
    (n > 0).then(|| {
        format!(
            "the program started {n} process{} of its own (fork), which tf does not trace: what \
             {} ran is in no figure; to analyze one, trace its command directly",
            if n == 1 { "" } else { "es" },
            if n == 1 { "it" } else { "they" },
        )
    })
}
