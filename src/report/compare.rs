//! `tallrow compare`: two runs side by side, per operation the change in throughput and in
//! each percentile, whether it is significant, and whether it crosses a threshold.
//!
//! Each figure has its test: a percentile, a binomial test of how many candidate values lie
//! beyond the baseline's percentile; the mean, Welch's t-test from the two histograms;
//! throughput, Welch's t-test over the per-interval rates; the max, none. "Significant" means
//! p < 0.01. A threshold is crossed when the candidate is worse than the baseline by
//! more than the given share and the difference is significant (or cannot be tested, with
//! fewer than two values a side): an operation seen a handful of times does not fail CI on
//! noise, and a real shift of any operation does.

use super::run::RunData;
use super::summary::{ALL, OpReport};
use super::{TextTable, fmt_ns, thousands};
use crate::stats::{self, quantile_shift, welch, welch_histograms};
use serde::Serialize;
use std::str::FromStr;

/// p-value below which a difference is called significant.
pub const ALPHA: f64 = 0.01;

/// What a threshold limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Successful operations per second (a drop is a regression).
    Throughput,
    /// A latency figure: `mean`, `p50`, `p90`, `p99`, `p999`, `max` (a rise is a regression).
    Latency(&'static str),
}

impl Metric {
    /// Every figure, in the order tables show them.
    pub const ALL: [Metric; 7] = [
        Metric::Throughput,
        Metric::Latency("mean"),
        Metric::Latency("p50"),
        Metric::Latency("p90"),
        Metric::Latency("p99"),
        Metric::Latency("p999"),
        Metric::Latency("max"),
    ];

    /// The figure's name as tables show it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Throughput => "ops/s",
            Metric::Latency("p999") => "p99.9",
            Metric::Latency(n) => n,
        }
    }
}

/// `--threshold METRIC=PERCENT`, e.g. `p99=10%` or `throughput=5%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// The figure.
    pub metric: Metric,
    /// The largest change allowed, as a fraction (0.1 for 10%).
    pub limit: f64,
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.metric {
            Metric::Throughput => "throughput",
            Metric::Latency(n) => n,
        };
        write!(f, "{name}={}%", self.limit * 100.0)
    }
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?} is not METRIC=PERCENT, e.g. p99=10%"))?;
        let metric = match name.trim() {
            "throughput" | "ops" | "ops/s" => Metric::Throughput,
            "mean" => Metric::Latency("mean"),
            "p50" => Metric::Latency("p50"),
            "p90" => Metric::Latency("p90"),
            "p99" => Metric::Latency("p99"),
            "p999" | "p99.9" => Metric::Latency("p999"),
            "max" => Metric::Latency("max"),
            other => {
                return Err(format!(
                    "unknown metric {other:?}: expected throughput, mean, p50, p90, p99, p99.9 or max"
                ));
            }
        };
        let pct: f64 = value
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("{value:?} is not a percentage, e.g. 10%"))?;
        if !(0.0..=10_000.0).contains(&pct) {
            return Err(format!("{value:?} must be between 0% and 10000%"));
        }
        Ok(Threshold {
            metric,
            limit: pct / 100.0,
        })
    }
}

/// One figure of one operation, both sides.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// The operation (`all` for every operation together).
    pub operation: String,
    /// `ops/s`, `mean`, `p50`, `p90`, `p99`, `p99.9` or `max`.
    pub figure: &'static str,
    /// `ops/s` or `ns`.
    pub unit: &'static str,
    /// Each baseline run's value, in the order given.
    pub baseline_runs: Vec<f64>,
    /// Each candidate run's value.
    pub candidate_runs: Vec<f64>,
    /// The median of the baseline runs.
    pub baseline: f64,
    /// The median of the candidate runs.
    pub candidate: f64,
    /// `candidate / baseline - 1` of the medians; `None` from a baseline of zero.
    pub change: Option<f64>,
    /// The two-sided p of the figure's test (see [`super::verdict`]); `None` where not tested.
    pub p: Option<f64>,
    /// Whether the change is significant (see the module's doc).
    pub significant: bool,
    /// `regression`, `improvement`, `within the noise`, `beyond the threshold but within
    /// the noise`, `not judged`, `too few calls (...)`.
    pub verdict: String,
    /// Runs a side that would see a change of the threshold's size (or, without one, of the
    /// size the candidate moved for the worse) four times in five, where more than were
    /// given; `MAX_RUNS + 1` where no count up to `report::verdict::MAX_RUNS` would.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_needed: Option<usize>,
}

impl Figure {
    /// One side as shown: its median and the range of its runs.
    pub(super) fn side(&self, runs: &[f64], median: f64) -> String {
        let (lo, hi) = runs
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
        if self.unit == "ns" {
            format!(
                "{} [{}..{}]",
                fmt_ns(median as u64),
                fmt_ns(lo as u64),
                fmt_ns(hi as u64)
            )
        } else {
            format!("{median:.1} [{lo:.1}..{hi:.1}]")
        }
    }
}

/// The result of a comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The side-by-side table.
    pub table: String,
    /// The thresholds crossed, one line each.
    pub crossed: Vec<String>,
    /// Every figure, as a verdict lists them (one run a side).
    pub figures: Vec<Figure>,
}

/// Compares `candidate` against `baseline`.
pub fn compare(baseline: &RunData, candidate: &RunData, thresholds: &[Threshold]) -> Comparison {
    let (b, c) = (&baseline.summary, &candidate.summary);
    let mut names: Vec<&str> = b.ops.iter().map(|o| o.op.as_str()).collect();
    for o in &c.ops {
        if !names.contains(&o.op.as_str()) {
            names.push(&o.op);
        }
    }
    names.push(ALL);
    let find = |d: &'_ RunData, name: &str| -> Option<(OpReport, stats::Histogram)> {
        let report = if name == ALL {
            d.summary.all.clone()
        } else {
            d.summary.ops.iter().find(|o| o.op == name)?.clone()
        };
        Some((report, d.responses(name)?))
    };
    let mut table = TextTable::new(&[
        "operation",
        "figure",
        "baseline",
        "candidate",
        "change",
        "significant",
        "threshold",
    ]);
    let mut crossed = Vec::new();
    let mut figures = Vec::new();
    for name in names {
        let (Some((bo, bh)), Some((co, ch))) = (find(baseline, name), find(candidate, name)) else {
            let side = if find(baseline, name).is_some() {
                "baseline"
            } else {
                "candidate"
            };
            table.row(vec![name.into(), format!("only in the {side}"), String::new()]);
            continue;
        };
        for (k, m) in Metric::ALL.into_iter().enumerate() {
            let (bv, cv, shown) = match m {
                Metric::Throughput => (
                    bo.ops_per_s,
                    co.ops_per_s,
                    (format!("{:.1}", bo.ops_per_s), format!("{:.1}", co.ops_per_s)),
                ),
                Metric::Latency(n) => {
                    let (x, y) = (bo.response.get(n).unwrap_or(0.0), co.response.get(n).unwrap_or(0.0));
                    (x, y, (fmt_ns(x as u64), fmt_ns(y as u64)))
                }
            };
            let change = (bv > 0.0).then(|| cv / bv - 1.0);
            let mut verdict = String::new();
            let p = match m {
                Metric::Throughput => welch(&bo.interval_ops_per_s, &co.interval_ops_per_s),
                Metric::Latency("mean") => welch_histograms(&bh, &ch),
                Metric::Latency("max") => None,
                Metric::Latency(n) => quantile_shift(&bh, &ch, quantile(n)),
            };
            let significant = p.is_none_or(|p| p < ALPHA);
            let mut judged = "within the threshold";
            for t in thresholds.iter().filter(|t| t.metric == m) {
                let beyond = match (m, change) {
                    (Metric::Throughput, Some(ch)) => -ch > t.limit,
                    (Metric::Latency(_), Some(ch)) => ch > t.limit,
                    // From nothing to something: only a rise in latency counts.
                    (Metric::Latency(_), None) => cv > 0.0,
                    (Metric::Throughput, None) => false,
                };
                let limit = format!(
                    "{}{:.0}%",
                    if m == Metric::Throughput { "-" } else { "+" },
                    t.limit * 100.0
                );
                if beyond && !significant {
                    verdict = format!("beyond {limit}, not significant");
                    judged = "beyond the threshold but within the noise";
                } else if beyond {
                    verdict = format!("CROSSED ({limit})");
                    judged = "regression";
                    crossed.push(format!(
                        "{name} {}: {} -> {} ({}) crosses {limit}",
                        m.label(),
                        shown.0,
                        shown.1,
                        pct(change)
                    ));
                } else {
                    verdict = format!("ok ({limit})");
                }
            }
            let better = match m {
                Metric::Throughput => cv > bv,
                Metric::Latency(_) => cv < bv,
            };
            let sig = match p {
                Some(p) if p < ALPHA => format!("yes, {} (p={p:.1e})", if better { "better" } else { "worse" }),
                Some(p) => format!("no (p={p:.2})"),
                None => "-".into(),
            };
            figures.push(Figure {
                operation: name.to_string(),
                figure: m.label(),
                unit: if m == Metric::Throughput { "ops/s" } else { "ns" },
                baseline_runs: vec![bv],
                candidate_runs: vec![cv],
                baseline: bv,
                candidate: cv,
                change,
                p,
                significant: p.is_some_and(|p| p < ALPHA),
                verdict: if thresholds.iter().any(|t| t.metric == m) {
                    judged.to_string()
                } else {
                    "not judged".to_string()
                },
                runs_needed: None,
            });
            table.row(vec![
                if k == 0 { name.to_string() } else { String::new() },
                m.label().into(),
                shown.0,
                shown.1,
                pct(change),
                sig,
                verdict,
            ]);
        }
        let errors_change = if bo.errors == co.errors {
            "=".into()
        } else {
            format!("{:+}", co.errors as i64 - bo.errors as i64)
        };
        table.row(vec![
            String::new(),
            "errors".into(),
            thousands(bo.errors),
            thousands(co.errors),
            errors_change,
            String::new(),
            String::new(),
        ]);
    }
    Comparison {
        table: table.render(),
        crossed,
        figures,
    }
}

/// The quantile of a percentile's name.
pub(super) fn quantile(name: &str) -> f64 {
    match name {
        "p50" => 0.5,
        "p90" => 0.9,
        "p99" => 0.99,
        _ => 0.999,
    }
}

fn pct(change: Option<f64>) -> String {
    match change {
        Some(c) if c.abs() < 0.0005 => "=".into(),
        Some(c) => format!("{:+.1}%", c * 100.0),
        None => "n/a".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse() {
        assert_eq!(
            "p99=10%".parse::<Threshold>().unwrap(),
            Threshold {
                metric: Metric::Latency("p99"),
                limit: 0.1
            }
        );
        assert_eq!("p99.9=5".parse::<Threshold>().unwrap().metric, Metric::Latency("p999"));
        assert_eq!("throughput=5%".parse::<Threshold>().unwrap().metric, Metric::Throughput);
        assert!("p98=1%".parse::<Threshold>().unwrap_err().contains("unknown metric"));
        assert!("p99".parse::<Threshold>().unwrap_err().contains("METRIC=PERCENT"));
        assert!("p99=ten".parse::<Threshold>().unwrap_err().contains("percentage"));
        assert!("p99=-1%".parse::<Threshold>().unwrap_err().contains("between"));
    }
}
