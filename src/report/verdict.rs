//! `tallrow compare` over several runs a side: each figure of each operation judged against
//! the spread between runs, and the verdict as JSON and Markdown for a CI system or a
//! pull-request comment.
//!
//! A figure (throughput, mean, p50, p90, p99, p99.9 of an operation, or of all) is one value
//! per run. Its test is Welch's t-test on the logarithms of those values, a side's runs being
//! its samples: runs vary by a share rather than by an amount, and Welch's test does not take
//! the two sides' spreads to be equal. The figures' p-values are then taken together by
//! Benjamini and Hochberg's procedure at [`ALPHA`]: when nothing changed, at most one
//! comparison in a hundred calls anything a change, however many operations the mix has,
//! while a change that moves many figures at once is seen with three runs a side. A change
//! is significant when the procedure keeps it and the candidate's median lies beyond every
//! baseline run, so that nothing inside the spread the baseline itself showed is called a
//! change. A regression is a significant change for the worse; where thresholds are given,
//! only of their figures and beyond their share. The largest latency (`max`) is shown, never
//! judged: one value a run.

use super::compare::{Figure, Metric, Threshold};
use super::run::RunData;
use super::summary::{ALL, OpReport};
use super::{TextTable, fmt_ns};
use crate::stats::welch;
use serde::Serialize;

/// The false discovery rate the figures are judged at, and so the share of comparisons of
/// identical builds that call anything a change.
pub const ALPHA: f64 = 0.01;

/// The verdict of a comparison of several runs a side.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `regression` or `no regression`.
    pub verdict: &'static str,
    /// How figures were judged, in a sentence.
    pub method: String,
    /// The baseline's report folders.
    pub baseline: Vec<String>,
    /// The candidate's report folders.
    pub candidate: Vec<String>,
    /// Thresholds given, as `p99=10%`.
    pub thresholds: Vec<String>,
    /// What differs between or within the sides, and what the comparison cannot see.
    pub warnings: Vec<String>,
    /// The regressions, one line each.
    pub regressions: Vec<String>,
    /// Every figure.
    pub figures: Vec<Figure>,
}

/// The median of `v` (not empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn value(o: &OpReport, m: Metric) -> f64 {
    match m {
        Metric::Throughput => o.ops_per_s,
        Metric::Latency(n) => o.response.get(n).unwrap_or(0.0),
    }
}

fn op<'a>(d: &'a RunData, name: &str) -> Option<&'a OpReport> {
    if name == ALL {
        return Some(&d.summary.all);
    }
    d.summary.ops.iter().find(|o| o.op == name)
}

/// What differs between the two sides, or among one side's runs, that a reader must know.
pub fn differences(baseline: &[&RunData], candidate: &[&RunData]) -> Vec<String> {
    let mut out = Vec::new();
    let all = || baseline.iter().chain(candidate);
    for (which, runs) in [("baseline", baseline), ("candidate", candidate)] {
        for d in runs {
            if let Some(why) = &d.summary.invalid_reason {
                out.push(format!("a {which} run is invalid: {why}"));
            }
        }
    }
    let mut differ = |what: &str, get: &dyn Fn(&RunData) -> String| {
        let seen: Vec<String> = all().map(|d| get(d)).collect();
        let mut distinct = seen.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() > 1 {
            out.push(format!("the runs differ in {what}: {}", distinct.join(" / ")));
        }
    };
    differ("workload", &|d| d.summary.workload.name.clone());
    differ("data (the workload's data digest)", &|d| {
        format!("{} {}", d.summary.workload.name, d.summary.workload.data_digest)
    });
    differ("backend", &|d| d.summary.backend.identity.clone());
    differ("threads and loop", &|d| {
        format!(
            "{} threads, {}",
            d.summary.config.run.threads,
            d.summary.config.run.describe_loop()
        )
    });
    out
}

/// Compares several runs a side; `baseline_dirs` and `candidate_dirs` name them. Both sides
/// hold at least two runs.
pub fn judge(
    baseline: &[&RunData],
    candidate: &[&RunData],
    baseline_dirs: &[String],
    candidate_dirs: &[String],
    thresholds: &[Threshold],
) -> Verdict {
    assert!(baseline.len() >= 2 && candidate.len() >= 2, "two runs a side at least");
    let mut names: Vec<String> = Vec::new();
    for d in baseline.iter().chain(candidate) {
        for o in &d.summary.ops {
            if !names.contains(&o.op) {
                names.push(o.op.clone());
            }
        }
    }
    names.push(ALL.to_string());
    // Judged: every figure but max of every operation every run has.
    let judged =
        |m: Metric| m != Metric::Latency("max") && (thresholds.is_empty() || thresholds.iter().any(|t| t.metric == m));
    let in_every = |name: &str| baseline.iter().chain(candidate).all(|d| op(d, name).is_some());
    let tested = names.iter().filter(|n| in_every(n)).count() * Metric::ALL.iter().filter(|m| judged(**m)).count();
    // Each figure's values and p first; then which p-values Benjamini and Hochberg keep.
    struct Row {
        name: String,
        m: Metric,
        b: Vec<f64>,
        c: Vec<f64>,
        p: Option<f64>,
    }
    let mut rows = Vec::new();
    for name in &names {
        if !in_every(name) {
            continue;
        }
        for m in Metric::ALL {
            let b: Vec<f64> = baseline
                .iter()
                .map(|d| value(op(d, name).expect("in every run"), m))
                .collect();
            let c: Vec<f64> = candidate
                .iter()
                .map(|d| value(op(d, name).expect("in every run"), m))
                .collect();
            let positive = b.iter().chain(&c).all(|v| *v > 0.0);
            let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
            let p = (judged(m) && positive).then(|| welch(&ln(&b), &ln(&c))).flatten();
            rows.push(Row {
                name: name.clone(),
                m,
                b,
                c,
                p,
            });
        }
    }
    let cut = benjamini_hochberg(&rows.iter().filter_map(|r| r.p).collect::<Vec<_>>(), ALPHA);
    let mut figures = Vec::new();
    let mut regressions = Vec::new();
    for Row { name, m, b, c, p } in rows {
        let (bm, cm) = (median(&b), median(&c));
        let change = (bm > 0.0).then(|| cm / bm - 1.0);
        let worse = match m {
            Metric::Throughput => cm < bm,
            Metric::Latency(_) => cm > bm,
        };
        // Beyond every baseline run.
        let (lo, hi) = b.iter().fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        let outside = cm < lo || cm > hi;
        let significant = p.is_some_and(|p| p <= cut) && outside;
        let limit = thresholds.iter().find(|t| t.metric == m).map(|t| t.limit);
        let beyond = match (limit, change) {
            (None, _) => true,
            (Some(l), Some(ch)) => match m {
                Metric::Throughput => -ch > l,
                Metric::Latency(_) => ch > l,
            },
            (Some(_), None) => cm > 0.0 && m != Metric::Throughput,
        };
        let verdict = if p.is_none() {
            "not judged"
        } else if significant && worse && beyond {
            "regression"
        } else if significant && !worse {
            "improvement"
        } else if worse && beyond && limit.is_some() {
            "beyond the threshold but within the noise"
        } else if significant {
            "worse, within the threshold"
        } else {
            "within the noise"
        };
        let show = |v: f64| match m {
            Metric::Throughput => format!("{v:.1}"),
            Metric::Latency(_) => fmt_ns(v as u64),
        };
        if verdict == "regression" {
            regressions.push(format!(
                "{name} {}: {} -> {} ({}, p={:.1e})",
                m.label(),
                show(bm),
                show(cm),
                pct(change),
                p.unwrap_or(0.0)
            ));
        }
        figures.push(Figure {
            operation: name,
            figure: m.label(),
            unit: if m == Metric::Throughput { "ops/s" } else { "ns" },
            baseline_runs: b,
            candidate_runs: c,
            baseline: bm,
            candidate: cm,
            change,
            p,
            significant,
            verdict: verdict.to_string(),
        });
    }
    let mut warnings = differences(baseline, candidate);
    if baseline.iter().chain(candidate).any(|d| writes(d)) {
        warnings.push(
            "the mix writes: each run changed the data the next one read; reload between runs (a fresh target, or `tallrow drop` and `load`) for runs on the same data".into(),
        );
    }
    Verdict {
        verdict: if regressions.is_empty() {
            "no regression"
        } else {
            "regression"
        },
        method: format!(
            "Welch's t-test on the logarithm of each run's figure ({} baseline and {} candidate runs), the {tested} figures' p-values taken together by Benjamini and Hochberg's procedure at {ALPHA} (here p <= {cut:.1e}); significant where kept and the candidate's median lies beyond every baseline run",
            baseline.len(),
            candidate.len(),
        ),
        baseline: baseline_dirs.to_vec(),
        candidate: candidate_dirs.to_vec(),
        thresholds: thresholds.iter().map(Threshold::to_string).collect(),
        warnings,
        regressions,
        figures,
    }
}

/// The largest p-value Benjamini and Hochberg's procedure keeps among `ps` at false
/// discovery rate `q`; 0 where it keeps none.
fn benjamini_hochberg(ps: &[f64], q: f64) -> f64 {
    let mut sorted = ps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let m = sorted.len() as f64;
    sorted
        .iter()
        .enumerate()
        .filter(|(i, p)| **p <= (*i as f64 + 1.0) / m * q)
        .map(|(_, p)| *p)
        .fold(0.0, f64::max)
}

/// Whether the run's mix has an operation that writes.
fn writes(d: &RunData) -> bool {
    d.summary.config.run.mix.iter().any(|(op, w)| *w > 0.0 && op.writes())
}

fn pct(change: Option<f64>) -> String {
    match change {
        Some(c) if c.abs() < 0.0005 => "=".into(),
        Some(c) => format!("{:+.1}%", c * 100.0),
        None => "n/a".into(),
    }
}

impl Verdict {
    /// The terminal's table: per operation and figure, each side's median and range, the
    /// change, p and the verdict.
    pub fn table(&self) -> String {
        let mut t = TextTable::new(&["operation", "figure", "baseline", "candidate", "change", "p", "verdict"]);
        let mut last = "";
        for f in &self.figures {
            t.row(vec![
                if f.operation == last {
                    String::new()
                } else {
                    f.operation.clone()
                },
                f.figure.into(),
                f.side(&f.baseline_runs, f.baseline),
                f.side(&f.candidate_runs, f.candidate),
                pct(f.change),
                f.p.map_or("-".into(), |p| format!("{p:.1e}")),
                f.verdict.clone(),
            ]);
            last = &f.operation;
        }
        t.render()
    }

    /// The verdict as Markdown: a heading with the verdict, how it was judged, the
    /// regressions and warnings, and the figures of every operation.
    pub fn markdown(&self) -> String {
        let mut s = format!("## tallrow compare: {}\n\n", self.verdict);
        s.push_str(&format!(
            "Baseline: {} runs ({}). Candidate: {} runs ({}).\n\n{}.\n\n",
            self.baseline.len(),
            self.baseline.join(", "),
            self.candidate.len(),
            self.candidate.join(", "),
            self.method
        ));
        if !self.thresholds.is_empty() {
            s.push_str(&format!("Thresholds: {}.\n\n", self.thresholds.join(", ")));
        }
        for r in &self.regressions {
            s.push_str(&format!("- **Regression**: {r}\n"));
        }
        for w in &self.warnings {
            s.push_str(&format!("- Warning: {w}\n"));
        }
        if !self.regressions.is_empty() || !self.warnings.is_empty() {
            s.push('\n');
        }
        s.push_str(
            "| operation | figure | baseline median [range] | candidate median [range] | change | p | verdict |\n",
        );
        s.push_str("|---|---|---:|---:|---:|---:|---|\n");
        for f in &self.figures {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                f.operation,
                f.figure,
                f.side(&f.baseline_runs, f.baseline),
                f.side(&f.candidate_runs, f.candidate),
                pct(f.change),
                f.p.map_or("-".into(), |p| format!("{p:.1e}")),
                if f.verdict == "regression" {
                    "**regression**".to_string()
                } else {
                    f.verdict.clone()
                }
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benjamini_hochberg_keeps_the_p_values_under_its_rising_line() {
        // m = 4, q = 0.05: the line is 0.0125, 0.025, 0.0375, 0.05.
        assert_eq!(benjamini_hochberg(&[0.01, 0.02, 0.5, 0.03], 0.05), 0.03);
        // Step-up: 0.03 is above its point of the line, but 0.036 is under its own, and
        // everything below 0.036 is kept with it.
        assert_eq!(benjamini_hochberg(&[0.01, 0.03, 0.036, 0.5], 0.05), 0.036);
        assert_eq!(benjamini_hochberg(&[0.02, 0.03, 0.04, 0.5], 0.05), 0.0);
        assert_eq!(benjamini_hochberg(&[0.03, 0.9], 0.05), 0.0);
        assert_eq!(benjamini_hochberg(&[], 0.05), 0.0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
