//! Whether tf's figures cover everything the tracer recorded, and the exit
//! status that follows: the one place where `tf info` and `tf analyze`
//! decide it.
//!
//! Every reason the figures cover less than the whole trace (damage named
//! with its file and byte offset, a missing thread file, a tracer that did
//! not finish, instructions read fewer than the manifest records) goes into
//! one [`Coverage`]; [`Coverage::exit_status`] prints them and gives
//! [`INCOMPLETE`] unless the user accepted a partial result
//! (`--allow-damaged`), which still prints every line.

use crate::summary::human;
use tf_analyzer::results::Report;
use tf_trace::Trace;

/// `tf info` and `tf analyze`: the trace is damaged or incomplete; what was
/// printed covers only part of it.
pub const INCOMPLETE: i32 = 3;

/// What was read of a trace, against what its manifest says was recorded,
/// and why the two may differ.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Instructions read from the thread streams.
    pub read: u64,
    /// Instructions the manifest records (none without a readable manifest).
    pub recorded: Option<u64>,
    /// One line per reason the figures are incomplete.
    pub reasons: Vec<String>,
}

/// The instructions `trace`'s manifest records, when the tracer finished
/// (the manifest of an unfinished run is the one written at start).
fn recorded(trace: Option<&Trace>) -> Option<u64> {
    trace?
        .manifest()
        .filter(|m| m.complete)
        .map(|m| m.traced_instructions)
}

impl Coverage {
    /// The coverage of `trace`, of which `read` instructions were read: the
    /// damage found while opening it and what its manifest says.
    pub fn of(trace: &Trace, read: u64) -> Coverage {
        let mut c = Coverage {
            read,
            recorded: recorded(Some(trace)),
            reasons: Vec::new(),
        };
        c.add_damage(trace.problems().iter().map(|p| p.to_string()));
        c.add(tf_analyzer::recorded::unrecorded(trace));
        c
    }

    /// The coverage of an analysis of `trace` (none for merged parts): what
    /// it read against the manifest, and what the report says of the
    /// trace's damage, of the run it holds and of the replay's own
    /// completeness (the JSON has the same lines). `tf analyze`, `tf report`
    /// and `tf export` decide their exit status with it alike.
    pub fn of_analysis(trace: Option<&Trace>, report: &Report) -> Coverage {
        let mut c = Coverage {
            read: report.traced_instructions(),
            recorded: recorded(trace),
            reasons: Vec::new(),
        };
        c.add_damage(report.damage.iter().cloned());
        c.add(report.unrecorded.iter().cloned());
        // Figures that leave recorded work out never pass for complete.
        c.add(report.incomplete.iter().cloned());
        c
    }

    /// Adds damage found while reading, one line each naming the file and
    /// byte offset.
    pub fn add_damage(&mut self, damage: impl IntoIterator<Item = String>) {
        self.reasons
            .extend(damage.into_iter().map(|d| format!("damaged: {d}")));
    }

    /// Adds other reasons the figures are incomplete (e.g. the analysis'
    /// own), one line each.
    pub fn add(&mut self, reasons: impl IntoIterator<Item = String>) {
        self.reasons
            .extend(reasons.into_iter().map(|r| format!("incomplete: {r}")));
    }

    /// The line that says how much of the recorded work was read, when it
    /// differs from what the manifest records.
    fn shortfall(&self) -> Option<String> {
        let recorded = self.recorded?;
        (self.read != recorded).then(|| {
            let share = if recorded > 0 {
                format!(" ({:.1}%)", 100.0 * self.read as f64 / recorded as f64)
            } else {
                String::new()
            };
            format!(
                "read {} of the {} instructions the manifest records{share}",
                human(self.read as f64),
                human(recorded as f64)
            )
        })
    }

    /// Whether the figures cover the whole trace.
    pub fn is_complete(&self) -> bool {
        self.reasons.is_empty() && self.shortfall().is_none()
    }

    /// Prints every reason on stderr with the share of the recorded work
    /// that was read, and returns the exit status: 0 when the figures cover
    /// the whole trace or `allow` (`--allow-damaged`) accepts less, else
    /// [`INCOMPLETE`].
    pub fn exit_status(&self, allow: bool) -> i32 {
        if self.is_complete() {
            return 0;
        }
        for r in &self.reasons {
            eprintln!("tf: {r}");
        }
        let how_much = self
            .shortfall()
            .unwrap_or_else(|| format!("read {} instructions", human(self.read as f64)));
        eprintln!("tf: incomplete: {how_much}; the figures cover only what was read");
        if allow {
            0
        } else {
            eprintln!(
                "tf: exit status {INCOMPLETE}: the trace is damaged or incomplete (--allow-damaged accepts it)"
            );
            INCOMPLETE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_only_without_reasons_and_with_all_read() {
        let mut c = Coverage {
            read: 10,
            recorded: Some(10),
            reasons: vec![],
        };
        assert!(c.is_complete());
        assert_eq!(c.exit_status(false), 0);
        c.read = 4;
        assert_eq!(
            c.shortfall().unwrap(),
            "read 4 of the 10 instructions the manifest records (40.0%)"
        );
        assert_eq!(c.exit_status(false), INCOMPLETE);
        assert_eq!(c.exit_status(true), 0);
        c.read = 10;
        c.add_damage(["t/thread-2.tfc: byte 48: chunk checksum mismatch".to_string()]);
        assert_eq!(
            c.reasons,
            ["damaged: t/thread-2.tfc: byte 48: chunk checksum mismatch"]
        );
        assert_eq!(c.exit_status(false), INCOMPLETE);
    }
}
