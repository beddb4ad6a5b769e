//! The report's functions across warp widths, which of them get a page, and
//! the pages' file names.

use crate::{Error, Settings};
use std::collections::HashMap;
use tf_analyzer::results::{FunctionResult, Report, WidthResult};

/// Functions with at least this share of the warp instructions at one of the
/// user's widths get a page (all of them with `--all`).
pub const PAGE_THRESHOLD: f64 = 0.001;

/// One function, with its result at each width of the report.
#[derive(Clone, Debug)]
pub struct Function<'a> {
    /// Demangled name.
    pub name: &'a str,
    /// Module file name.
    pub module: &'a str,
    /// `file:line` of its entry, when known.
    pub place: Option<String>,
    /// Its result per entry of `Report::results` (None where it issued nothing).
    pub by_width: Vec<Option<&'a FunctionResult>>,
    /// Its page, relative to the report directory, when it has one.
    pub page: Option<String>,
}

impl Function<'_> {
    /// Its result at the report's result `k`.
    pub fn at(&self, k: usize) -> Option<&FunctionResult> {
        self.by_width[k]
    }
}

/// The report as the pages show it.
pub struct Catalogue<'a> {
    /// The analysis.
    pub report: &'a Report,
    /// Indices into `report.results` of the user's widths, in their order.
    pub shown: Vec<usize>,
    /// The index of the widest of the user's widths: the width the function
    /// table and the bar charts are for.
    pub main: usize,
    /// Every function, by warp instructions at the main width (most first).
    pub functions: Vec<Function<'a>>,
}

impl<'a> Catalogue<'a> {
    /// Indexes `report` for `settings`.
    pub fn new(report: &'a Report, settings: &Settings) -> Result<Catalogue<'a>, Error> {
        let shown = settings
            .widths
            .iter()
            .map(|&w| {
                report
                    .results
                    .iter()
                    .position(|r| r.warp_size == w)
                    .ok_or(Error::MissingWidth(w))
            })
            .collect::<Result<Vec<usize>, Error>>()?;
        let main = *shown
            .iter()
            .max_by_key(|&&k| report.results[k].warp_size)
            .ok_or(Error::MissingWidth(0))?;
        let mut index: HashMap<(&str, &str), usize> = HashMap::new();
        let mut functions: Vec<Function<'a>> = Vec::new();
        for (k, r) in report.results.iter().enumerate() {
            for f in &r.functions {
                let i = *index
                    .entry((f.name.as_str(), f.module.as_str()))
                    .or_insert_with(|| {
                        functions.push(Function {
                            name: &f.name,
                            module: &f.module,
                            place: f.file.as_ref().map(|file| match f.line {
                                Some(l) => format!("{file}:{l}"),
                                None => file.clone(),
                            }),
                            by_width: vec![None; report.results.len()],
                            page: None,
                        });
                        functions.len() - 1
                    });
                functions[i].by_width[k] = Some(f);
            }
        }
        let key = |f: &Function| {
            let main_insns = f.at(main).map_or(0, |r| r.warp_instructions);
            let most = shown
                .iter()
                .filter_map(|&k| f.at(k))
                .map(|r| r.warp_instructions)
                .max()
                .unwrap_or(0);
            (main_insns, most)
        };
        functions.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(b.name)));
        for (i, f) in functions.iter_mut().enumerate() {
            let big = shown
                .iter()
                .filter_map(|&k| f.by_width[k])
                .any(|r| r.share >= PAGE_THRESHOLD);
            if big || settings.all_functions {
                f.page = Some(format!("functions/{:04}-{}.html", i + 1, file_stem(f.name)));
            }
        }
        Ok(Catalogue {
            report,
            shown,
            main,
            functions,
        })
    }

    /// The results of the user's widths, in their order.
    pub fn shown_results(&self) -> impl Iterator<Item = (usize, &WidthResult)> {
        self.shown.iter().map(|&k| (k, &self.report.results[k]))
    }

    /// The result of the main width.
    pub fn main_result(&self) -> &WidthResult {
        &self.report.results[self.main]
    }
}

/// A file-name-safe form of a function name: letters, digits and `_`, at
/// most 48 characters (the page's number keeps names apart).
///
/// ```
/// assert_eq!(tf_reports::catalogue::file_stem("std::vector<int>::push_back"), "std__vector_int___push_back");
/// ```
pub fn file_stem(name: &str) -> String {
    name.chars()
        .take(48)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
