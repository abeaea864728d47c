//! `tallrow compare` over several runs a side: each figure of each operation judged against
//! the spread between runs and the noise within each, and the verdict as JSON and Markdown
//! for a CI system or a pull-request comment.
//!
//! A figure (throughput, mean, p50, p90, p99, p99.9 of an operation, or of all) is one value
//! per run, taken on a logarithmic scale: runs vary by a share rather than by an amount. Each
//! run's value is its side's level, plus a run-to-run effect (the same spread on both sides,
//! estimated from how far the runs of each side lie from their side's mean beyond what their
//! own noise explains), plus the run's own noise, which the run itself measures: from its
//! histogram, the standard error of its mean and the rank interval of a percentile; from
//! its per-interval rates, that of its throughput. The two levels are compared by Student's
//! t with the runs' degrees of freedom. Three runs that happen to agree therefore cannot
//! make a figure certain when each of them holds a few stalls that could as well have fallen
//! elsewhere, and a percentile a run has too few calls to place (fewer than
//! [`MIN_BEYOND`] beyond it) is not judged. The figures' p-values are then taken together by
//! Benjamini and Hochberg's procedure at [`ALPHA`]: when nothing changed, at most one
//! comparison in a hundred calls anything a change, however many operations the mix has,
//! while a change that moves many figures at once is seen with three runs a side. A change
//! is significant when the procedure keeps it and the candidate's median lies beyond every
//! baseline run, so that nothing inside the spread the baseline itself showed is called a
//! change. A regression is a significant change for the worse; where thresholds are given,
//! only of their figures and beyond their share. The largest latency (`max`) is shown, never
//! judged.

use super::compare::{Figure, Metric, Threshold};
use super::run::RunData;
use super::summary::{ALL, OpReport};
use super::{TextTable, fmt_ns};
use crate::stats::{Histogram, student_t};
use serde::Serialize;

/// The false discovery rate the figures are judged at, and so the share of comparisons of
/// identical builds that call anything a change.
pub const ALPHA: f64 = 0.01;

/// The verdict of a comparison of several runs a side.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `regression`, `no regression`, or `undecided` (a figure a threshold names could not be
    /// judged, and nothing else regressed).
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

/// The fewest values a run must hold beyond a percentile for the percentile to be judged:
/// with fewer, it is one of the run's few slowest calls, and where it falls among them is
/// chance (a run's p99.9 needs 10,000 calls, its p99 1,000).
pub const MIN_BEYOND: f64 = 10.0;

/// One run's figure as judged: the logarithm of its value and that logarithm's variance
/// within the run.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    ln: f64,
    within: f64,
}

/// The variance of the logarithm of a latency figure of `h` (`mean` or a percentile), as the
/// run's own values leave it; `Err` says why the figure cannot be judged.
fn latency_noise(h: &Histogram, figure: &'static str) -> Result<f64, String> {
    let n = h.len() as f64;
    if figure == "mean" {
        return Ok(if n >= 2.0 && h.mean() > 0.0 {
            (h.stdev() / n.sqrt() / h.mean()).powi(2)
        } else {
            0.0
        });
    }
    let q = super::compare::quantile(figure);
    let needed = (MIN_BEYOND / (1.0 - q)).round();
    if n < needed {
        return Err(format!(
            "too few calls ({} needs {} a run)",
            Metric::Latency(figure).label(),
            super::thousands(needed as u64)
        ));
    }
    // The percentile's rank give or take one standard deviation of a binomial count.
    let sd = (n * q * (1.0 - q)).sqrt();
    let at = |rank: f64| h.value_at_quantile((rank / n).clamp(0.0, 1.0)).max(1) as f64;
    let (lo, hi) = (at(n * q - sd), at(n * q + sd));
    Ok(((hi.ln() - lo.ln()) / 2.0).powi(2))
}

/// The variance of the logarithm of a run's throughput, from its per-interval rates (0 with
/// fewer than two).
fn throughput_noise(rates: &[f64]) -> f64 {
    let k = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / k.max(1.0);
    if k < 2.0 || mean <= 0.0 {
        return 0.0;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1.0);
    var / k / (mean * mean)
}

/// The two-sided p-value that two sides' levels differ, from their runs' estimates: each
/// run is its side's level, plus a run-to-run effect of one variance for both sides (the
/// spread around each side's mean beyond what the runs' own noise explains, never below 0),
/// plus its own noise; Student's t with the runs' degrees of freedom less two. (Counting
/// the runs' own noise for more degrees of freedom, by Satterthwaite's rule, called 2 to 3%
/// of simulated same-build comparisons changes at 1%: it does so exactly where the spread
/// between runs happens to come out near zero.) `None` with fewer than two runs a side.
fn levels_differ(b: &[Estimate], c: &[Estimate]) -> Option<f64> {
    if b.len() < 2 || c.len() < 2 {
        return None;
    }
    let mean = |s: &[Estimate]| s.iter().map(|e| e.ln).sum::<f64>() / s.len() as f64;
    let (mb, mc) = (mean(b), mean(c));
    let spread = |s: &[Estimate], m: f64| s.iter().map(|e| (e.ln - m).powi(2)).sum::<f64>();
    let own = |s: &[Estimate]| s.iter().map(|e| e.within).sum::<f64>();
    let (nb, nc) = (b.len() as f64, c.len() as f64);
    let df = nb + nc - 2.0;
    let expected_own = own(b) * (1.0 - 1.0 / nb) + own(c) * (1.0 - 1.0 / nc);
    let between = ((spread(b, mb) + spread(c, mc) - expected_own) / df).max(0.0);
    let se2 = between * (1.0 / nb + 1.0 / nc) + own(b) / (nb * nb) + own(c) / (nc * nc);
    if se2 <= 0.0 {
        return Some(if mb == mc { 1.0 } else { 0.0 });
    }
    Some(student_t((mc - mb) / se2.sqrt(), df))
}

/// The variance of one run's figure (log scale) as `b` and `c` show it: the run-to-run
/// variance [`levels_differ`] estimates, plus the runs' own noise on average.
fn run_variance(b: &[Estimate], c: &[Estimate]) -> f64 {
    let mean = |s: &[Estimate]| s.iter().map(|e| e.ln).sum::<f64>() / s.len() as f64;
    let spread = |s: &[Estimate], m: f64| s.iter().map(|e| (e.ln - m).powi(2)).sum::<f64>();
    let own = |s: &[Estimate]| s.iter().map(|e| e.within).sum::<f64>();
    let (nb, nc) = (b.len() as f64, c.len() as f64);
    let expected_own = own(b) * (1.0 - 1.0 / nb) + own(c) * (1.0 - 1.0 / nc);
    let between = ((spread(b, mean(b)) + spread(c, mean(c)) - expected_own) / (nb + nc - 2.0)).max(0.0);
    between + (own(b) + own(c)) / (nb + nc)
}

/// The `|t|` beyond which Student's t with `df` degrees of freedom has two-sided p below
/// `alpha`.
fn t_critical(alpha: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e6);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if student_t(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The power [`runs_needed`] is for: a change of the size asked is seen in four comparisons
/// of five (the normal quantile of 0.8).
const POWER_Z: f64 = 0.841_621_2;

/// The most runs a side [`runs_needed`] names.
pub const MAX_RUNS: usize = 50;

/// The fewest runs a side with which a change of `size` (a share: 0.1 for 10%) in a figure
/// whose runs vary by `variance` (log scale, [`run_variance`]) is significant at [`ALPHA`]
/// four times in five, as one figure alone; `None` past [`MAX_RUNS`].
pub fn runs_needed(variance: f64, size: f64) -> Option<usize> {
    let d = (1.0 + size.abs()).ln();
    (2..=MAX_RUNS).find(|&n| {
        let se = (2.0 * variance / n as f64).sqrt();
        se == 0.0 || d / se >= t_critical(ALPHA, 2.0 * n as f64 - 2.0) + POWER_Z
    })
}

/// Whether every candidate run lies beyond every baseline run, for the worse, by more than
/// `limit` (a share): a regression whatever the test says, as a person reading the runs
/// would call it.
fn separated(b: &[f64], c: &[f64], m: Metric, limit: f64) -> bool {
    let range = |v: &[f64]| v.iter().fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
    let ((blo, bhi), (clo, chi)) = (range(b), range(c));
    match m {
        Metric::Throughput => chi < blo * (1.0 - limit),
        Metric::Latency(_) => clo > bhi * (1.0 + limit),
    }
}

/// How many binomial standard deviations either side of a percentile's rank
/// [`percentile_bounds`] reaches: each end misses the run's true percentile one time in
/// twenty. Three candidate runs' lower ends all above the true value, or three baseline
/// runs' upper ends all below it, is then one chance in 8,000 each, and the same build is
/// told apart in none of the simulated comparisons; wider ends let a few stalls in one
/// baseline run hide a candidate 2 ms slower on every call.
const BOUNDS_Z: f64 = 1.645;

/// Where a run's percentile `q` lies, as its own calls place it: the values at its rank give
/// or take [`BOUNDS_Z`] standard deviations of a binomial count. The upper end is unbounded
/// where that rank passes the run's slowest call (too few calls to say how slow its
/// percentile could be), the lower 0 where it falls before the fastest.
fn percentile_bounds(h: &Histogram, q: f64) -> (f64, f64) {
    let n = h.len() as f64;
    let sd = (n * q * (1.0 - q)).sqrt();
    let (lo, hi) = (n * q - BOUNDS_Z * sd, n * q + BOUNDS_Z * sd);
    let at = |rank: f64| h.value_at_quantile((rank / n).clamp(0.0, 1.0)) as f64;
    (
        // The lower end rounds its rank down, the upper up (as a quantile's value does).
        if lo < 1.0 { 0.0 } else { at(lo.floor()) },
        if hi >= n { f64::INFINITY } else { at(hi) },
    )
}

/// The least share by which [`intervals_apart`] decides a gate's percentile, whatever the
/// threshold: a side's runs taken together ignore the spread between runs, and at no margin
/// the same build was told apart in 0.3% of simulated figures, at this one in none.
const APART_MIN: f64 = 0.10;

/// For a percentile the runs hold too few calls to judge by the test: `Some(true)` where
/// every candidate run's interval ([`percentile_bounds`]) lies above the baseline's, its
/// runs' calls taken together, by more than `limit` (a share); `Some(false)` where the
/// candidate's, its runs taken together, lies below every baseline run's by more than it;
/// `None` otherwise. A side's runs are taken together for the end a run alone cannot bound
/// (a p99 of 150 calls may lie above all of them; of 450, seldom), each run alone for the
/// other. So a p99 of runs of 50 calls of 2 ms is seen against baseline runs of hundreds at
/// 100 µs, which no person would call undecided.
fn intervals_apart(b: &[Histogram], c: &[Histogram], q: f64, limit: f64) -> Option<bool> {
    if b.is_empty() || c.is_empty() {
        return None;
    }
    let lowest = |runs: &[Histogram]| {
        runs.iter()
            .map(|h| percentile_bounds(h, q).0)
            .fold(f64::INFINITY, f64::min)
    };
    let together = |runs: &[Histogram]| {
        let mut all = crate::stats::histogram();
        for h in runs {
            all.add(h).expect("same bounds");
        }
        percentile_bounds(&all, q).1
    };
    let b_hi = together(b);
    if b_hi.is_finite() && lowest(c) > b_hi * (1.0 + limit) {
        return Some(true);
    }
    let c_hi = together(c);
    if c_hi.is_finite() && c_hi * (1.0 + limit) < lowest(b) {
        return Some(false);
    }
    None
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

/// A run's figure as judged, or why it cannot be.
fn estimate(d: &RunData, name: &str, m: Metric) -> Result<Estimate, String> {
    let o = op(d, name).expect("in the run");
    let v = value(o, m);
    if v <= 0.0 {
        return Err("not judged".into());
    }
    let within = match m {
        Metric::Throughput => throughput_noise(&o.interval_ops_per_s),
        Metric::Latency(f) => latency_noise(&d.responses(name).expect("in the run"), f)?,
    };
    Ok(Estimate { ln: v.ln(), within })
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
    // Each figure's values and p first; then which p-values Benjamini and Hochberg keep.
    struct Row {
        name: String,
        m: Metric,
        b: Vec<f64>,
        c: Vec<f64>,
        p: Option<f64>,
        unjudged: Option<String>,
        /// One run's variance (log scale), where judged.
        variance: Option<f64>,
        /// For a percentile too few calls place: whether every candidate run's interval
        /// lies beyond every baseline run's, for the worse (`true`) or the better.
        apart: Option<bool>,
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
            // Each run's estimate, or the first reason one of them cannot be judged.
            let (p, unjudged, variance) = if judged(m) {
                let side = |runs: &[&RunData]| runs.iter().map(|d| estimate(d, name, m)).collect::<Result<Vec<_>, _>>();
                match (side(baseline), side(candidate)) {
                    (Ok(eb), Ok(ec)) => (levels_differ(&eb, &ec), None, Some(run_variance(&eb, &ec))),
                    (Err(why), _) | (_, Err(why)) => (None, Some(why), None),
                }
            } else {
                (None, None, None)
            };
            // Only for a gate that names the figure, where otherwise the verdict would be
            // undecided; apart by the threshold, and by [`APART_MIN`] at least.
            let limit = thresholds.iter().find(|t| t.metric == m).map(|t| t.limit);
            let apart = match (m, limit) {
                (Metric::Latency(f), Some(limit))
                    if f != "mean" && unjudged.as_deref().is_some_and(|w| w.starts_with("too few calls")) =>
                {
                    let limit = limit.max(APART_MIN);
                    let hists = |runs: &[&RunData]| -> Vec<Histogram> {
                        runs.iter().map(|d| d.responses(name).expect("in the run")).collect()
                    };
                    intervals_apart(&hists(baseline), &hists(candidate), super::compare::quantile(f), limit)
                }
                _ => None,
            };
            rows.push(Row {
                name: name.clone(),
                m,
                b,
                c,
                p,
                unjudged,
                variance,
                apart,
            });
        }
    }
    let tested = rows.iter().filter(|r| r.p.is_some()).count();
    let cut = benjamini_hochberg(&rows.iter().filter_map(|r| r.p).collect::<Vec<_>>(), ALPHA);
    let mut figures = Vec::new();
    let mut regressions = Vec::new();
    let runs = baseline.len().min(candidate.len());
    // Thresholds whose change the runs vary too much to see: (figure, runs a side needed).
    let mut too_few_runs: Vec<(String, Option<usize>)> = Vec::new();
    for Row {
        name,
        m,
        b,
        c,
        p,
        unjudged,
        variance,
        apart,
    } in rows
    {
        let (bm, cm) = (median(&b), median(&c));
        let change = (bm > 0.0).then(|| cm / bm - 1.0);
        let worse = match m {
            Metric::Throughput => cm < bm,
            Metric::Latency(_) => cm > bm,
        };
        // Beyond every baseline run.
        let (lo, hi) = b.iter().fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        let outside = cm < lo || cm > hi;
        let significant = (p.is_some_and(|p| p <= cut) && outside) || apart.is_some();
        let limit = thresholds.iter().find(|t| t.metric == m).map(|t| t.limit);
        let beyond = match (limit, change) {
            (None, _) => true,
            (Some(l), Some(ch)) => match m {
                Metric::Throughput => -ch > l,
                Metric::Latency(_) => ch > l,
            },
            (Some(_), None) => cm > 0.0 && m != Metric::Throughput,
        };
        let separated = p.is_some() && limit.is_some_and(|l| separated(&b, &c, m, l));
        let verdict = if apart == Some(true) {
            "regression"
        } else if apart == Some(false) {
            "improvement"
        } else if let Some(why) = &unjudged {
            why.as_str()
        } else if p.is_none() {
            "not judged"
        } else if (significant && worse && beyond) || separated {
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
        // How many runs a side would see a change of the threshold's size (or, without one,
        // of the size the candidate moved, where it moved for the worse).
        let size = limit.or(change.filter(|_| worse));
        let needed = match (variance, size) {
            (Some(v), Some(size)) if verdict != "regression" && verdict != "improvement" => {
                match runs_needed(v, size) {
                    Some(n) if n <= runs => None,
                    Some(n) => Some(n),
                    None => Some(MAX_RUNS + 1),
                }
            }
            _ => None,
        };
        if let (Some(l), Some(v)) = (limit, variance)
            && verdict != "regression"
        {
            let n = runs_needed(v, l);
            if n.is_none_or(|n| n > runs) {
                too_few_runs.push((format!("{name} {}", m.label()), n));
            }
        }
        let show = |v: f64| match m {
            Metric::Throughput => format!("{v:.1}"),
            Metric::Latency(_) => fmt_ns(v as u64),
        };
        if verdict == "regression" {
            regressions.push(format!(
                "{name} {}: {} -> {} ({}, {})",
                m.label(),
                show(bm),
                show(cm),
                pct(change),
                match p {
                    Some(p) => format!("p={p:.1e}"),
                    None => "every run's interval apart".into(),
                }
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
            runs_needed: needed,
        });
    }
    let mut warnings = differences(baseline, candidate);
    // What the runs held too few calls to judge: asked for by a threshold, the comparison
    // cannot pass; otherwise the reader is told what longer runs would judge.
    let unjudged: Vec<String> = figures
        .iter()
        .filter(|f| f.verdict.starts_with("too few calls"))
        .map(|f| format!("{} {}", f.operation, f.figure))
        .collect();
    let undecided = !thresholds.is_empty() && !unjudged.is_empty();
    if !unjudged.is_empty() {
        warnings.push(format!(
            "too few calls to judge {} ({}): a percentile needs at least {MIN_BEYOND} calls beyond it in every run (p99 1,000 calls of the operation a run, p99.9 10,000); longer runs judge {}",
            unjudged.join(", "),
            if undecided { "asked for by a threshold, so the verdict is undecided" } else { "shown, not judged" },
            if unjudged.len() == 1 { "it" } else { "them" },
        ));
    }
    if !too_few_runs.is_empty() {
        let named: Vec<String> = too_few_runs
            .iter()
            .map(|(f, n)| match n {
                Some(n) => format!("{f} ({n})"),
                None => format!("{f} (more than {MAX_RUNS})"),
            })
            .collect();
        warnings.push(format!(
            "too few runs to see a change of the threshold's size in {}, with {runs} runs a side: the runs a side that would, four times in five, in brackets",
            named.join(", ")
        ));
    }
    if baseline.iter().chain(candidate).any(|d| writes(d)) {
        warnings.push(
            "the mix writes: each run changed the data the next one read; reload between runs (a fresh target, or `tallrow drop` and `load`) for runs on the same data".into(),
        );
    }
    Verdict {
        verdict: if !regressions.is_empty() {
            "regression"
        } else if undecided {
            "undecided"
        } else {
            "no regression"
        },
        method: format!(
            "Student's t on the logarithm of each run's figure ({} baseline and {} candidate runs), each run's own noise (its histogram, its per-interval rates) added to the spread between runs, the {tested} figures' p-values taken together by Benjamini and Hochberg's procedure at {ALPHA} (here p <= {cut:.1e}); significant where kept and the candidate's median lies beyond every baseline run; with a threshold, a regression too where every candidate run lies beyond every baseline run by more than it; a percentile a threshold names and the runs hold too few calls to test is decided only where every candidate run's interval (its rank give or take {BOUNDS_Z} binomial standard deviations) lies beyond the other side's runs' taken together by the threshold ({APART_MIN} at least)",
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

impl Figure {
    /// The verdict as shown, with the runs a side that would decide it.
    pub fn verdict_shown(&self) -> String {
        let size = |runs: usize| {
            if runs > MAX_RUNS {
                format!("more than {} runs a side", MAX_RUNS)
            } else {
                format!("{runs} runs a side")
            }
        };
        match self.runs_needed {
            Some(n) => format!("{} ({} would decide it)", self.verdict, size(n)),
            None => self.verdict.clone(),
        }
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
                f.verdict_shown(),
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
                    f.verdict_shown()
                }
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats;
    use crate::stats::sim::Sim;

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

    // The runs of a simulated operation, for the comparisons.
    impl Sim {
        /// One run of `n` calls on a shared machine: a body of about 15 µs, the whole run
        /// slower or faster by a few percent, and a share `stalls` of calls held 2 to 8 ms
        /// by a neighbour; the body `scale` times as slow, and every call `add_ns` longer.
        fn run(&mut self, n: usize, stalls: f64, scale: f64, add_ns: f64) -> Histogram {
            let level = 0.05 * self.normal();
            let mut h = stats::histogram();
            for _ in 0..n {
                let mut v = 15_000.0 * scale * (level + 0.3 * self.normal()).exp();
                if self.uniform() < stalls {
                    v += 2_000_000.0 + 6_000_000.0 * self.uniform();
                }
                stats::record(&mut h, (v + add_ns) as u64);
            }
            h
        }
    }

    fn estimates(runs: &[Histogram], figure: &'static str) -> Result<Vec<Estimate>, String> {
        runs.iter()
            .map(|h| {
                let v = if figure == "mean" {
                    h.mean()
                } else {
                    h.value_at_quantile(super::super::compare::quantile(figure)) as f64
                };
                Ok(Estimate {
                    ln: v.ln(),
                    within: latency_noise(h, figure)?,
                })
            })
            .collect()
    }

    /// The failure seen on a shared machine: three baseline runs without a stall, three of
    /// the same build each holding a few (156 calls of one operation a run), were called a
    /// regression of the mean at p = 1.1e-5 when only the spread between runs was weighed.
    #[test]
    fn a_few_stalls_in_every_run_of_one_side_are_noise_and_two_milliseconds_are_not() {
        let mut sim = Sim(0x9E37_79B9_7F4A_7C15);
        let base: Vec<Histogram> = (0..3).map(|_| sim.run(156, 0.0, 1.0, 0.0)).collect();
        let stalled: Vec<Histogram> = (0..3)
            .map(|_| {
                let mut h = sim.run(153, 0.0, 1.0, 0.0);
                for ms in [4, 6, 8] {
                    stats::record(&mut h, ms * 1_000_000);
                }
                h
            })
            .collect();
        let slow: Vec<Histogram> = (0..3).map(|_| sim.run(156, 0.0, 1.0, 2_000_000.0)).collect();
        let p = |a: &[Histogram], b: &[Histogram], f: &'static str| {
            levels_differ(&estimates(a, f).unwrap(), &estimates(b, f).unwrap()).unwrap()
        };
        // Spread alone says certain: the three means of each side agree closely.
        let ln_means = |runs: &[Histogram]| runs.iter().map(|h| h.mean().ln()).collect::<Vec<_>>();
        assert!(stats::welch(&ln_means(&base), &ln_means(&stalled)).unwrap() < 1e-3);
        // Each run's own noise says otherwise: three calls of 156 carry the mean.
        assert!(p(&base, &stalled, "mean") > 1e-3, "{}", p(&base, &stalled, "mean"));
        assert!(p(&base, &stalled, "p50") > 0.01);
        // Too few calls to place a p99 or a p99.9.
        assert_eq!(
            estimates(&stalled, "p999").unwrap_err(),
            "too few calls (p99.9 needs 10,000 a run)"
        );
        assert!(estimates(&stalled, "p99").is_err());
        for f in ["mean", "p50", "p90"] {
            assert!(p(&base, &slow, f) < 1e-6, "{f}: {}", p(&base, &slow, f));
        }
    }

    /// Same-build comparisons, three runs a side on a shared machine, simulated: each
    /// figure's p falls under 1% in about 1% of them (calibrated, not merely cautious), and a
    /// 25% slower body is seen in most.
    #[test]
    fn same_build_figures_fall_under_one_percent_one_time_in_a_hundred() {
        let mut sim = Sim(42);
        let trials = 1200;
        for figure in ["mean", "p50", "p90"] {
            let (mut false_alarms, mut seen) = (0, 0);
            for _ in 0..trials {
                let a: Vec<Histogram> = (0..3).map(|_| sim.run(1000, 0.01, 1.0, 0.0)).collect();
                let b: Vec<Histogram> = (0..3).map(|_| sim.run(1000, 0.01, 1.0, 0.0)).collect();
                let c: Vec<Histogram> = (0..3).map(|_| sim.run(1000, 0.01, 1.25, 0.0)).collect();
                let e = |runs: &[Histogram]| estimates(runs, figure).unwrap();
                false_alarms += (levels_differ(&e(&a), &e(&b)).unwrap() < 0.01) as u32;
                seen += (levels_differ(&e(&a), &e(&c)).unwrap() < 0.01) as u32;
            }
            let rate = f64::from(false_alarms) / f64::from(trials);
            // The figures docs/running.md quotes (`-- --nocapture` shows them).
            eprintln!(
                "{figure}: same build under 0.01 in {rate:.4}, 25% slower in {:.4}",
                f64::from(seen) / f64::from(trials)
            );
            assert!(rate <= 0.02, "{figure}: false alarms {rate}");
            // The mean is judged on the runs' degrees of freedom alone, cautious by design.
            if figure != "mean" {
                assert!(rate >= 0.002, "{figure}: too cautious to be calibrated, {rate}");
                assert!(
                    f64::from(seen) / f64::from(trials) > 0.5,
                    "{figure}: power {seen}/{trials}"
                );
            }
        }
    }

    /// The power to see a p99 25% slower, simulated with 3, 5 and 10 runs a side of 2,000
    /// calls (a few stalls among them): significant as one figure (p under [`ALPHA`], the
    /// candidate's median beyond every baseline run). docs/running.md quotes the rates
    /// (`-- --nocapture` shows them); more runs see it more often.
    #[test]
    fn a_p99_a_quarter_slower_is_seen_more_often_with_more_runs() {
        let mut sim = Sim(7);
        let trials = 300;
        let mut power = Vec::new();
        for runs in [3, 5, 10] {
            let (mut seen, mut alarms) = (0, 0);
            for _ in 0..trials {
                let side = |sim: &mut Sim, scale: f64| -> Vec<Histogram> {
                    (0..runs).map(|_| sim.run(2000, 0.002, scale, 0.0)).collect()
                };
                let (a, b, c) = (side(&mut sim, 1.0), side(&mut sim, 1.0), side(&mut sim, 1.25));
                let e = |h: &[Histogram]| estimates(h, "p99").unwrap();
                let judged = |x: &[Histogram], y: &[Histogram]| {
                    let p99 = |h: &Histogram| h.value_at_quantile(0.99) as f64;
                    let slower = median(&y.iter().map(p99).collect::<Vec<_>>());
                    levels_differ(&e(x), &e(y)).unwrap() < ALPHA && x.iter().all(|h| p99(h) < slower)
                };
                seen += judged(&a, &c) as u32;
                alarms += judged(&a, &b) as u32;
            }
            let (p, f) = (
                f64::from(seen) / f64::from(trials),
                f64::from(alarms) / f64::from(trials),
            );
            eprintln!("p99 25% slower, {runs} runs a side: seen in {p:.3}, same build called slower in {f:.3}");
            assert!(f <= 0.02, "{runs} runs: false alarms {f}");
            power.push(p);
        }
        assert!(power[0] <= power[1] && power[1] <= power[2], "{power:?}");
        assert!(power[2] >= 0.9, "ten runs a side: {power:?}");
    }

    /// More runs a side for a smaller change or noisier runs; two where the runs do not
    /// vary; none up to [`MAX_RUNS`] where they vary far more than the change.
    #[test]
    fn the_runs_a_side_a_change_needs_grow_with_the_noise_and_shrink_with_the_change() {
        let var = |sd: f64| (1.0 + sd).ln().powi(2);
        // Runs 10% apart (one standard deviation), a 25% change: six a side.
        assert_eq!(runs_needed(var(0.10), 0.25), Some(6));
        assert_eq!(runs_needed(0.0, 0.01), Some(2));
        let n = |sd: f64, size: f64| runs_needed(var(sd), size).unwrap_or(MAX_RUNS + 1);
        assert!(n(0.10, 0.10) > n(0.10, 0.25) && n(0.10, 0.25) > n(0.10, 0.50));
        assert!(n(0.20, 0.25) > n(0.10, 0.25) && n(0.10, 0.25) > n(0.05, 0.25));
        assert_eq!(runs_needed(var(1.0), 0.01), None);
        // Student's t at 4 degrees of freedom: 4.604 for a two-sided 1%.
        assert!((t_critical(0.01, 4.0) - 4.604).abs() < 1e-3);
    }

    #[test]
    fn every_candidate_run_beyond_every_baseline_run_by_the_threshold_is_separated() {
        let p99 = Metric::Latency("p99");
        let b = [100.0, 120.0, 140.0];
        assert!(separated(&b, &[160.0, 170.0, 300.0], p99, 0.10));
        assert!(
            !separated(&b, &[150.0, 170.0, 300.0], p99, 0.10),
            "one run within 10% of the slowest"
        );
        assert!(!separated(&b, &[60.0, 70.0, 80.0], p99, 0.10), "faster is not worse");
        let ops = Metric::Throughput;
        assert!(separated(&b, &[80.0, 85.0, 89.0], ops, 0.10));
        assert!(!separated(&b, &[80.0, 85.0, 95.0], ops, 0.10));
    }

    /// A percentile too few calls place, simulated: the same build's runs are never told
    /// apart by their intervals, while runs of 2 ms calls are told from runs of thousands of
    /// fast ones in nearly every figure, and in every comparison of ten operations, a
    /// baseline run with stalls of its own included. The rates are what docs/running.md
    /// quotes (`-- --nocapture` shows them).
    #[test]
    fn percentiles_too_few_calls_place_are_decided_only_when_every_run_is_apart() {
        let mut sim = Sim(11);
        let (comparisons, ops) = (100, 10);
        let q = 0.99;
        let (mut same, mut same_10, mut slow, mut noisy) = (0, 0, 0, 0);
        let (mut slow_any, mut noisy_any) = (0, 0);
        for _ in 0..comparisons {
            let (mut slow_seen, mut noisy_seen) = (false, false);
            for _ in 0..ops {
                // Runs of 60 to 900 calls of one operation: a p99 needs 1,000.
                let n = 60 + (sim.uniform() * 840.0) as usize;
                let side = |sim: &mut Sim, n: usize, stalls: f64, add: f64| -> Vec<Histogram> {
                    (0..3).map(|_| sim.run(n, stalls, 1.0, add)).collect()
                };
                let (a, b) = (side(&mut sim, n, 0.002, 0.0), side(&mut sim, n, 0.002, 0.0));
                assert!(latency_noise(&a[0], "p99").is_err(), "too few calls to test");
                same += intervals_apart(&a, &b, q, 0.0).is_some() as u32;
                same_10 += intervals_apart(&a, &b, q, 0.10).is_some() as u32;
                // The candidate 2 ms slower a call, so making 50 calls a run where the
                // baseline makes 1,500.
                let base = side(&mut sim, 1500, 0.002, 0.0);
                let slower = side(&mut sim, 50, 0.002, 2_000_000.0);
                let seen = intervals_apart(&base, &slower, q, 0.10) == Some(true);
                // One baseline run shares the machine: 0.3% of its calls held 2 to 8 ms.
                let mut shared = base.clone();
                shared[0] = sim.run(1500, 0.003, 1.0, 0.0);
                let seen_noisy = intervals_apart(&shared, &slower, q, 0.10) == Some(true);
                slow += seen as u32;
                noisy += seen_noisy as u32;
                slow_seen |= seen;
                noisy_seen |= seen_noisy;
            }
            slow_any += slow_seen as u32;
            noisy_any += noisy_seen as u32;
        }
        let figures = f64::from(comparisons * ops);
        let rate = |k: u32| f64::from(k) / figures;
        eprintln!(
            "p99 of too few calls, {figures} figures: same build apart in {:.4} (by 10%: {:.4}); 2 ms slower apart in {:.4}, with a noisy baseline run {:.4}; comparisons of {ops} operations with one apart: {slow_any} and {noisy_any} of {comparisons}",
            rate(same),
            rate(same_10),
            rate(slow),
            rate(noisy)
        );
        assert!(rate(same_10) == 0.0, "same build apart by 10% in {}", rate(same_10));
        assert!(rate(same) <= 0.01, "same build apart in {}", rate(same));
        assert!(rate(slow) >= 0.95, "2 ms slower apart in {}", rate(slow));
        assert!(rate(noisy) >= 0.9, "2 ms slower, noisy baseline: {}", rate(noisy));
        assert_eq!((slow_any, noisy_any), (comparisons, comparisons));
    }

    /// Whole comparisons without a threshold, simulated as `judge` decides them: six
    /// operations, three runs a side of 600 calls each (too few for a p99), every figure's
    /// p taken together by Benjamini and Hochberg, a change counted where kept and the
    /// candidate's median lies beyond every baseline run. The same build is
    /// called changed in at most one comparison in a hundred; a body 25% slower in three
    /// of four.
    /// docs/running.md quotes the rates (`-- --nocapture` shows them).
    #[test]
    fn same_build_comparisons_call_a_change_in_at_most_one_in_a_hundred() {
        let mut sim = Sim(2026);
        let (trials, ops, calls) = (200, 6, 600);
        let figures = ["mean", "p50", "p90"];
        let (mut alarms, mut seen) = (0, 0);
        for _ in 0..trials {
            let changed = |scale: f64, sim: &mut Sim| {
                let mut rows: Vec<(f64, Vec<f64>, f64)> = Vec::new();
                for _ in 0..ops {
                    let a: Vec<Histogram> = (0..3).map(|_| sim.run(calls, 0.002, 1.0, 0.0)).collect();
                    let b: Vec<Histogram> = (0..3).map(|_| sim.run(calls, 0.002, scale, 0.0)).collect();
                    for f in figures {
                        let value = |h: &Histogram| {
                            if f == "mean" {
                                h.mean()
                            } else {
                                h.value_at_quantile(super::super::compare::quantile(f)) as f64
                            }
                        };
                        let p = levels_differ(&estimates(&a, f).unwrap(), &estimates(&b, f).unwrap()).unwrap();
                        rows.push((
                            p,
                            a.iter().map(value).collect(),
                            median(&b.iter().map(value).collect::<Vec<_>>()),
                        ));
                    }
                    assert!(latency_noise(&a[0], "p99").is_err());
                }
                let cut = benjamini_hochberg(&rows.iter().map(|r| r.0).collect::<Vec<_>>(), ALPHA);
                rows.iter().any(|(p, base, cand)| {
                    *p <= cut && (base.iter().all(|v| v < cand) || base.iter().all(|v| v > cand))
                })
            };
            alarms += changed(1.0, &mut sim) as u32;
            seen += changed(1.25, &mut sim) as u32;
        }
        let rate = |k: u32| f64::from(k) / f64::from(trials);
        eprintln!(
            "whole comparisons of {ops} operations: the same build called changed in {:.3}, a body 25% slower in {:.3}",
            rate(alarms),
            rate(seen)
        );
        assert!(rate(alarms) <= 0.01, "same build: {}", rate(alarms));
        assert!(rate(seen) >= 0.7, "25% slower: {}", rate(seen));
    }

    #[test]
    fn a_percentile_interval_is_unbounded_above_past_the_slowest_call() {
        let mut h = stats::histogram();
        for v in 1..=50u64 {
            stats::record(&mut h, v * 1000);
        }
        let (lo, hi) = percentile_bounds(&h, 0.99);
        assert!(hi.is_infinite(), "a p99 of 50 calls could be slower than any of them");
        // 49.5 - 1.645 * 0.70: the 48th call or about.
        assert!((47_000.0..=48_100.0).contains(&lo), "{lo}");
        let (lo, hi) = percentile_bounds(&h, 0.5);
        assert!(lo >= 15_000.0 && hi <= 35_100.0 && lo < hi, "{lo}..{hi}");
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
