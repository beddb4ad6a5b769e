//! Measured against expected: errors, tolerances, and the statistics of a
//! set of comparisons (mean absolute error, Pearson's correlation).

use crate::expect::{Metric, Tolerance};

/// One figure of one function of one workload at one level and width.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The workload.
    pub workload: String,
    /// The function (`[units]` for all units together).
    pub function: String,
    /// The -O level (`O1`).
    pub level: String,
    /// The warp width.
    pub width: u32,
    /// The metric.
    pub metric: Metric,
    /// What tf measured (`None`: no such function, or no requests).
    pub measured: Option<f64>,
    /// What the expectations file says, if anything.
    pub expected: Option<f64>,
}

impl Row {
    /// The error against the expectation: percentage points for SIMT
    /// efficiency, a relative error (fraction) for sectors per request.
    /// `None` without an expectation; infinite when nothing was measured.
    ///
    /// ```
    /// use tf_validate::{compare::Row, expect::Metric};
    /// let row = |metric, measured, expected| Row {
    ///     workload: "w".into(), function: "f".into(), level: "O1".into(), width: 8,
    ///     metric, measured, expected,
    /// };
    /// assert!((row(Metric::Simt, Some(0.495), Some(0.5)).error().unwrap() - 0.5).abs() < 1e-9);
    /// assert!((row(Metric::Heap, Some(4.2), Some(4.0)).error().unwrap() - 0.05).abs() < 1e-9);
    /// assert_eq!(row(Metric::Heap, None, Some(4.0)).error(), Some(f64::INFINITY));
    /// assert_eq!(row(Metric::Heap, Some(4.0), None).error(), None);
    /// ```
    pub fn error(&self) -> Option<f64> {
        let expected = self.expected?;
        let Some(measured) = self.measured else {
            return Some(f64::INFINITY);
        };
        Some(if self.metric.is_sectors() {
            (measured - expected).abs() / expected
        } else {
            (measured - expected).abs() * 100.0
        })
    }

    /// Whether the row is within `tolerance` (`None` without an expectation).
    pub fn passes(&self, tolerance: &Tolerance) -> Option<bool> {
        let limit = if self.metric.is_sectors() {
            tolerance.sectors_rel
        } else {
            tolerance.simt_pp
        };
        // A small slack for the decimal rounding of the limits themselves.
        self.error().map(|e| e <= limit + 1e-9)
    }
}

/// Mean absolute error and the number of values it is over, from errors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// How many comparisons.
    pub count: usize,
    /// How many passed.
    pub passed: usize,
    /// Mean absolute error of SIMT efficiency, percentage points.
    pub simt_mae_pp: Option<f64>,
    /// Mean absolute relative error of sectors per request (fraction).
    pub sectors_mae_rel: Option<f64>,
}

impl Summary {
    /// Summarizes the rows that have an expectation.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a Row>, tolerance: &Tolerance) -> Summary {
        let mut s = Summary::default();
        let (mut simt, mut sectors) = (Vec::new(), Vec::new());
        for r in rows {
            let (Some(e), Some(pass)) = (r.error(), r.passes(tolerance)) else {
                continue;
            };
            s.count += 1;
            s.passed += usize::from(pass);
            if r.metric.is_sectors() {
                sectors.push(e);
            } else {
                simt.push(e);
            }
        }
        s.simt_mae_pp = mean(&simt);
        s.sectors_mae_rel = mean(&sectors);
        s
    }
}

/// The mean of `xs` (`None` when empty).
///
/// ```
/// assert_eq!(tf_validate::compare::mean(&[1.0, 2.0, 6.0]), Some(3.0));
/// assert_eq!(tf_validate::compare::mean(&[]), None);
/// ```
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Mean absolute error between paired values (`None` when empty).
///
/// ```
/// assert_eq!(tf_validate::compare::mae(&[(1.0, 2.0), (3.0, 1.0)]), Some(1.5));
/// ```
pub fn mae(pairs: &[(f64, f64)]) -> Option<f64> {
    let d: Vec<f64> = pairs.iter().map(|(a, b)| (a - b).abs()).collect();
    mean(&d)
}

/// Pearson's correlation coefficient of paired values; `None` with fewer
/// than two pairs or when either side is constant.
///
/// ```
/// use tf_validate::compare::pearson;
/// assert!((pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 6.5)]).unwrap() - 0.9986).abs() < 1e-3);
/// assert_eq!(pearson(&[(1.0, 2.0), (1.0, 3.0)]), None);
/// ```
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let (mx, my) = (mean(&xs)?, mean(&ys)?);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    let d = (sxx * syy).sqrt();
    (d > 0.0).then(|| sxy / d)
}

/// How well one set of figures follows another: the number of pairs, the
/// mean absolute difference and Pearson's r.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Agreement {
    /// How many pairs.
    pub count: usize,
    /// Mean absolute difference, in the figures' own unit.
    pub mae: Option<f64>,
    /// Pearson's correlation coefficient.
    pub pearson: Option<f64>,
}

impl Agreement {
    /// The agreement of `(tf, reference)` pairs.
    ///
    /// ```
    /// let a = tf_validate::compare::Agreement::of(&[(1.0, 2.0), (3.0, 3.0)]);
    /// assert_eq!((a.count, a.mae, a.pearson), (2, Some(0.5), Some(1.0)));
    /// ```
    pub fn of(pairs: &[(f64, f64)]) -> Agreement {
        Agreement {
            count: pairs.len(),
            mae: mae(pairs),
            pearson: pearson(pairs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: Metric, measured: Option<f64>, expected: Option<f64>) -> Row {
        Row {
            workload: "w".into(),
            function: "f".into(),
            level: "O1".into(),
            width: 8,
            metric,
            measured,
            expected,
        }
    }

    const TOL: Tolerance = Tolerance {
        simt_pp: 1.0,
        sectors_rel: 0.05,
    };

    #[test]
    fn tolerances_are_inclusive_and_missing_figures_fail() {
        assert_eq!(
            row(Metric::Simt, Some(0.99), Some(1.0)).passes(&TOL),
            Some(true)
        );
        assert_eq!(
            row(Metric::Simt, Some(0.985), Some(1.0)).passes(&TOL),
            Some(false)
        );
        assert_eq!(
            row(Metric::Stack, Some(8.4), Some(8.0)).passes(&TOL),
            Some(true)
        );
        assert_eq!(
            row(Metric::Stack, Some(8.41), Some(8.0)).passes(&TOL),
            Some(false)
        );
        assert_eq!(
            row(Metric::Stack, None, Some(8.0)).passes(&TOL),
            Some(false)
        );
        assert_eq!(row(Metric::Stack, Some(8.0), None).passes(&TOL), None);
    }

    #[test]
    fn summary_separates_efficiency_from_sectors() {
        let rows = [
            row(Metric::Simt, Some(0.98), Some(1.0)),
            row(Metric::Simt, Some(1.0), Some(1.0)),
            row(Metric::Heap, Some(4.4), Some(4.0)),
            row(Metric::Heap, Some(3.0), None),
        ];
        let s = Summary::of(&rows, &TOL);
        assert_eq!((s.count, s.passed), (3, 1));
        assert!((s.simt_mae_pp.unwrap() - 1.0).abs() < 1e-9);
        assert!((s.sectors_mae_rel.unwrap() - 0.1).abs() < 1e-9);
    }

    /// MAE and Pearson's r on numbers worked out by hand:
    /// x = 1, 2, 3, 4 and y = 2, 4, 5, 9: |x − y| = 1, 2, 2, 5, MAE 2.5;
    /// means 2.5 and 5, deviations (−1.5, −0.5, 0.5, 1.5) and (−3, −1, 0, 4),
    /// Σdxdy = 4.5 + 0.5 + 0 + 6 = 11, Σdx² = 5, Σdy² = 26,
    /// r = 11 / √130 = 0.964763.
    #[test]
    fn agreement_matches_hand_computed_figures() {
        let a = Agreement::of(&[(1.0, 2.0), (2.0, 4.0), (3.0, 5.0), (4.0, 9.0)]);
        assert_eq!(a.count, 4);
        assert!((a.mae.unwrap() - 2.5).abs() < 1e-12);
        assert!((a.pearson.unwrap() - 0.964_763).abs() < 1e-6);
        // Perfectly anti-correlated, constant difference 0 in the middle.
        let b = Agreement::of(&[(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]);
        assert!((b.mae.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((b.pearson.unwrap() + 1.0).abs() < 1e-12);
        // One side constant: no correlation, the MAE still stands.
        let c = Agreement::of(&[(1.0, 0.5), (1.0, 0.7)]);
        assert_eq!(c.pearson, None);
        assert!((c.mae.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(Agreement::of(&[]), Agreement::default());
    }
}
