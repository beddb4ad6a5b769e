//! How much of its run a trace holds, in its manifest's word: why its
//! figures can cover less than the run even where every byte reads (a
//! tracer that did not finish, no manifest, a program that replaced itself
//! with another that was not traced). Damage is apart: the reader finds it.

use tf_trace::Trace;

/// One line per reason `trace` holds less than its run (empty when it
/// holds all of it), each naming the manifest or the program.
///
/// ```no_run
/// // a trace whose tracer was killed
/// let trace = tf_trace::Trace::open("t").unwrap();
/// assert_eq!(
///     tf_analyzer::recorded::unrecorded(&trace),
///     ["t/manifest: the tracer did not finish (the run crashed or was cut short): \
///       the trace may end early"]
/// );
/// ```
pub fn unrecorded(trace: &Trace) -> Vec<String> {
    let manifest = trace.dir().join("manifest");
    match trace.manifest() {
        // The manifest of an unfinished run is the one written at start.
        Some(m) if !m.complete => vec![format!(
            "{}: the tracer did not finish (the run crashed or was cut short): the trace may end early",
            manifest.display()
        )],
        Some(_) => crate::processes::incomplete_reason(trace).into_iter().collect(),
        None if !manifest.exists() => vec![format!(
            "{}: missing: how much was recorded is unknown",
            manifest.display()
        )],
        None => Vec::new(), // damaged: one of the trace's problems
    }
}
