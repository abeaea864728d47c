//! `tallrow history`: many runs' reports as series, one per operation and figure, grouped by
//! what makes runs comparable, each series' change points found as Apache Otava finds them
//! ([`crate::stats::changepoint`]), and the history as JSON, Markdown and a CSV that Otava
//! reads.
//!
//! Latencies and throughput are judged on their logarithm (runs vary by a share, not an
//! amount), the error share as it is. A change point's levels before and after are, for a
//! latency, the percentile of the segment's runs' histograms merged (not an average of
//! their percentiles); for throughput, the geometric mean of its runs; for the error share,
//! the mean.

use super::run::RunData;
use super::summary::ALL;
use crate::stats::changepoint;
use crate::stats::{Histogram, student_t};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The figures of each operation a history follows.
pub const FIGURES: [&str; 5] = ["throughput", "p50", "p99", "p99.9", "errors"];

/// `tallrow history`'s exit status when its gate fails.
pub const EXIT_REGRESSION: u8 = 4;

/// The fewest runs a group needs before its series are searched for change points.
pub const MIN_RUNS: usize = 3;

/// What makes runs comparable: runs that differ in any of these are never in one series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Key {
    /// The workload's name and the digest of its data.
    pub workload: String,
    /// The backend's kind (the scheme of its URL) and its software's version.
    pub backend: String,
    /// Host name, CPU model and cores.
    pub machine: String,
    /// tallrow's version.
    pub tallrow: String,
}

impl Key {
    fn of(d: &RunData) -> Key {
        let s = &d.summary;
        let kind = s.backend.url.split(':').next().unwrap_or_default();
        Key {
            workload: format!("{} {}", s.workload.name, s.workload.data_digest),
            backend: format!("{kind} ({})", s.backend.version),
            machine: format!("{} ({}, {} cores)", s.machine.hostname, s.machine.cpu, s.machine.cores),
            tallrow: s.tallrow.clone(),
        }
    }

    /// What differs between two keys, for the reader.
    fn differs(&self, other: &Key) -> String {
        let mut out = Vec::new();
        for (what, a, b) in [
            ("workload", &self.workload, &other.workload),
            ("backend", &self.backend, &other.backend),
            ("machine", &self.machine, &other.machine),
            ("tallrow", &self.tallrow, &other.tallrow),
        ] {
            if a != b {
                out.push(format!("{what} {a} / {b}"));
            }
        }
        out.join(", ")
    }
}

/// One run of a history.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Its report folder.
    pub dir: String,
    /// When it started (UTC).
    pub started: String,
    /// The same, in milliseconds since the epoch.
    pub started_ms: i64,
}

/// One operation's figure over the runs of a group: `None` where a run lacks the operation.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// The operation (`all` for every one).
    pub operation: String,
    /// One of [`FIGURES`].
    pub figure: &'static str,
    /// `ops/s`, `ns` or `share`.
    pub unit: &'static str,
    /// Per run of the group, in its order.
    pub values: Vec<Option<f64>>,
}

/// A change point of one series.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The operation.
    pub operation: String,
    /// The figure.
    pub figure: &'static str,
    /// The index, in the group's runs, of the first run after the change.
    pub run: usize,
    /// That run's report folder.
    pub dir: String,
    /// When it started.
    pub started: String,
    /// The level before (from the previous change point, or the first run).
    pub before: f64,
    /// The level after (up to the next change point, or the last run).
    pub after: f64,
    /// The change, a share (0.18 for 18% more).
    pub change: f64,
    /// Its 95% interval, a share each end.
    pub interval: (f64, f64),
    /// Student's t between the two segments, as the detection computed it.
    pub pvalue: f64,
    /// `regression` or `improvement`.
    pub verdict: &'static str,
    /// Whether one of its segments holds a single run.
    pub single: bool,
}

/// One group of comparable runs, in order, with its series and their change points.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// What its runs share.
    pub key: Key,
    /// Its runs, by start.
    pub runs: Vec<Run>,
    /// Every operation's figures.
    pub series: Vec<Series>,
    /// The change points, by run.
    pub changes: Vec<Change>,
    /// Change points with a single run on one side: a run unlike those beside it (a
    /// spike), or the last run so far (a change point once a run after it agrees). Otava
    /// reports them as change points; here they are shown apart and fail no gate.
    pub single_runs: Vec<Change>,
    /// Why its series were not searched, where they were not.
    pub unjudged: Option<String>,
}

/// A folder given that is not in the history, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Left {
    /// The folder.
    pub dir: String,
    /// Why.
    pub why: String,
}

/// A history.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// How change points were found, in a sentence.
    pub method: String,
    /// The detection's settings.
    pub window: usize,
    /// The largest p-value of a change point.
    pub max_pvalue: f64,
    /// The smallest change of a change point, a share.
    pub min_magnitude: f64,
    /// The groups, largest first.
    pub groups: Vec<Group>,
    /// What was left out.
    pub left_out: Vec<Left>,
    /// The CI gate's verdict, where one was asked for ([`History::gate`]).
    pub gate: Option<Gate>,
}

fn unit(figure: &str) -> &'static str {
    match figure {
        "throughput" => "ops/s",
        "errors" => "share",
        _ => "ns",
    }
}

fn op<'a>(d: &'a RunData, name: &str) -> Option<&'a super::summary::OpReport> {
    if name == ALL {
        return Some(&d.summary.all);
    }
    d.summary.ops.iter().find(|o| o.op == name)
}

/// A run's figure; `None` where it has no value to judge (a latency of no calls).
fn value(d: &RunData, name: &str, figure: &str) -> Option<f64> {
    let o = op(d, name)?;
    match figure {
        "throughput" => Some(o.ops_per_s),
        "errors" => Some(if o.count == 0 {
            0.0
        } else {
            o.errors as f64 / o.count as f64
        }),
        f => {
            let v = o.response.get(f)?;
            (v > 0.0).then_some(v)
        }
    }
}

/// Whether `figure` is judged on its logarithm.
fn logged(figure: &str) -> bool {
    figure != "errors"
}

/// The runs `dirs` name, read, grouped and searched: each folder that holds a report is a
/// run; others are left out with the reason.
pub fn history(dirs: &[PathBuf], o: &changepoint::Options) -> History {
    let mut left_out = Vec::new();
    let mut runs: Vec<(PathBuf, RunData)> = Vec::new();
    for dir in dirs {
        match super::read::find(std::slice::from_ref(dir)) {
            Ok(found) => {
                for d in found {
                    match super::read(&d) {
                        Ok(data) if data.summary.config.shard_count.is_some_and(|n| n > 1) => left_out.push(Left {
                            dir: d.display().to_string(),
                            why: "one shard's report: give the merged report (`tallrow report merge`)".into(),
                        }),
                        Ok(data) => runs.push((d, data)),
                        Err(e) => left_out.push(Left {
                            dir: d.display().to_string(),
                            why: e.to_string(),
                        }),
                    }
                }
            }
            Err(e) => left_out.push(Left {
                dir: dir.display().to_string(),
                why: e.to_string(),
            }),
        }
    }
    runs.sort_by(|a, b| (a.1.summary.started_ms, &a.0).cmp(&(b.1.summary.started_ms, &b.0)));
    let mut keyed: Vec<(Key, Vec<(PathBuf, RunData)>)> = Vec::new();
    for (dir, data) in runs {
        let key = Key::of(&data);
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push((dir, data)),
            None => keyed.push((key, vec![(dir, data)])),
        }
    }
    keyed.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let groups: Vec<Group> = keyed.into_iter().map(|(key, runs)| group(key, &runs, o)).collect();
    // Runs apart from the largest group are said to be, with what differs.
    if let Some(first) = groups.first() {
        for g in &groups[1..] {
            for r in &g.runs {
                left_out.push(Left {
                    dir: r.dir.clone(),
                    why: format!(
                        "not comparable with the largest group's runs ({}): in a group of its own",
                        first.key.differs(&g.key)
                    ),
                });
            }
        }
    }
    History {
        method: format!(
            "E-divisive means with Student's t, as Apache Otava 0.8.0: windows of {} runs, change points with p <= {} (the first pass at {}) and a change above {}; latencies and throughput on their logarithm",
            o.window,
            o.max_pvalue,
            if o.max_pvalue < 0.05 {
                o.max_pvalue * 10.0
            } else {
                o.max_pvalue * 2.0
            },
            o.min_magnitude
        ),
        window: o.window,
        max_pvalue: o.max_pvalue,
        min_magnitude: o.min_magnitude,
        groups,
        left_out,
        gate: None,
    }
}

fn group(key: Key, runs: &[(PathBuf, RunData)], o: &changepoint::Options) -> Group {
    let mut names: Vec<String> = Vec::new();
    for (_, d) in runs {
        for op in &d.summary.ops {
            if !names.contains(&op.op) {
                names.push(op.op.clone());
            }
        }
    }
    names.push(ALL.to_string());
    let mut series = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    let unjudged = (runs.len() < MIN_RUNS).then(|| {
        format!(
            "{} run{}: too few to find a change (at least {MIN_RUNS})",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        )
    });
    for name in &names {
        for figure in FIGURES {
            let values: Vec<Option<f64>> = runs.iter().map(|(_, d)| value(d, name, figure)).collect();
            if unjudged.is_none() {
                changes.extend(search(name, figure, &values, runs, o));
            }
            series.push(Series {
                operation: name.clone(),
                figure,
                unit: unit(figure),
                values,
            });
        }
    }
    changes.sort_by(|a, b| (a.run, &a.operation, a.figure).cmp(&(b.run, &b.operation, b.figure)));
    let (single_runs, changes): (Vec<Change>, Vec<Change>) = changes.into_iter().partition(|c| c.single);
    Group {
        key,
        runs: runs
            .iter()
            .map(|(dir, d)| Run {
                dir: dir.display().to_string(),
                started: d.summary.started.clone(),
                started_ms: d.summary.started_ms,
            })
            .collect(),
        series,
        changes,
        single_runs,
        unjudged,
    }
}

/// The change points of one series (the runs that have a value), as changes of the group.
fn search(
    name: &str,
    figure: &'static str,
    values: &[Option<f64>],
    runs: &[(PathBuf, RunData)],
    o: &changepoint::Options,
) -> Vec<Change> {
    // The runs with a value, and the value judged.
    let present: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .filter(|(_, v)| !logged(figure) || *v > 0.0)
        .collect();
    if present.len() < MIN_RUNS {
        return Vec::new();
    }
    let judged: Vec<f64> = present
        .iter()
        .map(|(_, v)| if logged(figure) { v.ln() } else { *v })
        .collect();
    let o = changepoint::Options {
        logarithms: logged(figure),
        ..*o
    };
    let cps = changepoint::change_points(&judged, &o);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cps.iter().map(|c| c.index))
        .chain(std::iter::once(judged.len()))
        .collect();
    cps.iter()
        .enumerate()
        .map(|(k, c)| {
            let (lo, at, hi) = (bounds[k], c.index, bounds[k + 2]);
            let segment = |from: usize, to: usize| present[from..to].iter().map(|(i, _)| *i).collect::<Vec<_>>();
            let (before, after) = (
                level(name, figure, &segment(lo, at), &judged[lo..at], runs),
                level(name, figure, &segment(at, hi), &judged[at..hi], runs),
            );
            let change = if before == 0.0 { 0.0 } else { after / before - 1.0 };
            let interval = interval(&judged[lo..at], &judged[at..hi], logged(figure), before, change);
            let worse = match figure {
                "throughput" => after < before,
                _ => after > before,
            };
            let run = present[at].0;
            Change {
                operation: name.to_string(),
                figure,
                run,
                dir: runs[run].0.display().to_string(),
                started: runs[run].1.summary.started.clone(),
                before,
                after,
                change,
                interval,
                pvalue: c.stats.pvalue,
                verdict: if worse { "regression" } else { "improvement" },
                single: at - lo < 2 || hi - at < 2,
            }
        })
        .collect()
}

/// A segment's level: a latency's percentile of its runs' histograms merged, throughput's
/// geometric mean, the error share's mean.
fn level(name: &str, figure: &str, runs_of: &[usize], judged: &[f64], runs: &[(PathBuf, RunData)]) -> f64 {
    let mean = judged.iter().sum::<f64>() / judged.len() as f64;
    match figure {
        "throughput" => mean.exp(),
        "errors" => mean,
        f => {
            let mut all: Option<Histogram> = None;
            for &i in runs_of {
                if let Some(h) = runs[i].1.responses(name) {
                    match &mut all {
                        Some(a) => a.add(&h).expect("same bounds"),
                        None => all = Some(h),
                    }
                }
            }
            match all {
                Some(h) if !h.is_empty() => h.value_at_quantile(super::compare::quantile(f)) as f64,
                _ => mean.exp(),
            }
        }
    }
}

/// The 95% interval of a change between two segments, as shares around `change` (the
/// change of the levels shown): its half-width from Student's t with the segments' pooled
/// variance, on the logarithm where the figure is judged so.
fn interval(before: &[f64], after: &[f64], log: bool, level_before: f64, change: f64) -> (f64, f64) {
    let (n1, n2) = (before.len() as f64, after.len() as f64);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let (m1, m2) = (mean(before), mean(after));
    let ss = |s: &[f64], m: f64| s.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let df = n1 + n2 - 2.0;
    let half = if df >= 1.0 {
        let pooled = (ss(before, m1) + ss(after, m2)) / df;
        t95(df) * (pooled * (1.0 / n1 + 1.0 / n2)).sqrt()
    } else {
        f64::INFINITY
    };
    if log {
        let d = (1.0 + change).ln();
        ((d - half).exp() - 1.0, (d + half).exp() - 1.0)
    } else if level_before == 0.0 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        (change - half / level_before, change + half / level_before)
    }
}

/// Student's t two-sided 5% point at `df` degrees of freedom.
fn t95(df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e3);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if student_t(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}%", x * 100.0)
    } else {
        "?".into()
    }
}

fn show(figure: &str, v: f64) -> String {
    match figure {
        "throughput" => format!("{v:.1} ops/s"),
        "errors" => format!("{:.2}%", v * 100.0),
        _ => super::fmt_ns(v as u64),
    }
}

impl History {
    /// The history on a terminal, or in a pull request: each group's runs and change points.
    pub fn markdown(&self) -> String {
        let mut s = String::from("## tallrow history\n\n");
        s.push_str(&format!("{}.\n", self.method));
        for g in &self.groups {
            s.push_str(&format!(
                "\n### {} on {}: {} runs, {} to {}\n\n",
                g.key.workload,
                g.key.backend,
                g.runs.len(),
                g.runs.first().map_or("", |r| r.started.as_str()),
                g.runs.last().map_or("", |r| r.started.as_str()),
            ));
            s.push_str(&format!("Machine {}, tallrow {}.\n\n", g.key.machine, g.key.tallrow));
            if let Some(why) = &g.unjudged {
                s.push_str(&format!("Not searched: {why}.\n"));
                continue;
            }
            for c in &g.single_runs {
                s.push_str(&format!(
                    "A single run apart (a spike, or a change point once a run after it agrees): {} {} at run {} ({}), {} -> {} ({}).\n",
                    c.operation,
                    c.figure,
                    c.run + 1,
                    c.started,
                    show(c.figure, c.before),
                    show(c.figure, c.after),
                    pct(c.change)
                ));
            }
            if g.changes.is_empty() {
                s.push_str("No change point.\n");
                continue;
            }
            if !g.single_runs.is_empty() {
                s.push('\n');
            }
            s.push_str("| run | started | operation | figure | before | after | change [95%] | p | verdict |\n");
            s.push_str("|---:|---|---|---|---:|---:|---:|---:|---|\n");
            for c in &g.changes {
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} [{}..{}] | {:.1e} | {} |\n",
                    c.run + 1,
                    c.started,
                    c.operation,
                    c.figure,
                    show(c.figure, c.before),
                    show(c.figure, c.after),
                    pct(c.change),
                    pct(c.interval.0),
                    pct(c.interval.1),
                    c.pvalue,
                    if c.verdict == "regression" {
                        "**regression**"
                    } else {
                        "improvement"
                    },
                ));
            }
        }
        if let Some(g) = &self.gate {
            s.push_str(&format!(
                "\n**Gate: {}.** A regression fails it where it starts within the last {} runs, is at least {} large, and has p <= {:.1e} (the p-value over the series searched).\n",
                g.verdict,
                g.within,
                pct(g.above).trim_start_matches('+'),
                g.pvalue
            ));
            for (what, list) in [("Fails it", &g.failing), ("Acknowledged", &g.acknowledged)] {
                for c in list.iter() {
                    s.push_str(&format!(
                        "- {what}: {} {} from run {} ({}): {} -> {} ({})\n",
                        c.operation,
                        c.figure,
                        c.run + 1,
                        c.dir,
                        show(c.figure, c.before),
                        show(c.figure, c.after),
                        pct(c.change)
                    ));
                }
            }
        }
        if !self.left_out.is_empty() {
            s.push_str("\nLeft out:\n\n");
            for l in &self.left_out {
                s.push_str(&format!("- {}: {}\n", l.dir, l.why));
            }
        }
        s
    }

    /// The largest group's series as a CSV Apache Otava reads as it is: a `time` column, the
    /// run's folder, and per operation and figure its value and, for the figures judged on
    /// their logarithm, a `.ln` column, the series Otava is to be given (a run without the
    /// operation leaves both empty).
    pub fn csv(&self) -> Option<String> {
        let g = self.groups.first()?;
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["time".to_string(), "run".to_string()];
        for s in &g.series {
            let name = format!("{}.{}", s.operation, s.figure);
            if logged(s.figure) {
                header.push(name.clone());
                header.push(format!("{name}.ln"));
            } else {
                header.push(name);
            }
        }
        w.write_record(&header).expect("in memory");
        for (i, r) in g.runs.iter().enumerate() {
            let mut row = vec![crate::date::iso(r.started_ms), r.dir.clone()];
            for s in &g.series {
                let v = s.values[i];
                row.push(v.map_or(String::new(), |v| format!("{v}")));
                if logged(s.figure) {
                    row.push(v.filter(|v| *v > 0.0).map_or(String::new(), |v| format!("{}", v.ln())));
                }
            }
            w.write_record(&row).expect("in memory");
        }
        Some(String::from_utf8(w.into_inner().expect("in memory")).expect("utf-8"))
    }
}

/// A change point a team has accepted: the report folder's name of the run it starts at,
/// the operation and the figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Acknowledged {
    /// The run's report folder name (its last path component).
    pub run: String,
    /// The operation.
    pub operation: String,
    /// The figure.
    pub figure: String,
}

/// Reads an acknowledgement file: one change point a line, `RUN OPERATION FIGURE` (the run
/// as its report folder's name), `#` to the end of a line a comment. Errors name the line.
pub fn acknowledged(path: &Path) -> Result<Vec<Acknowledged>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts[..] {
            [run, operation, figure] if FIGURES.contains(&figure) => out.push(Acknowledged {
                run: run.to_string(),
                operation: operation.to_string(),
                figure: figure.to_string(),
            }),
            [_, _, figure] => {
                return Err(format!(
                    "{}:{}: figure {figure:?} is not one of {}",
                    path.display(),
                    i + 1,
                    FIGURES.join(", ")
                ));
            }
            _ => {
                return Err(format!(
                    "{}:{}: a line names one change point as RUN OPERATION FIGURE (the run's report folder name), not {line:?}",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(out)
}

/// A CI gate's verdict on the largest group: the regressions that start within its last
/// runs, large enough, significant once the number of series searched is counted, and not
/// acknowledged.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    /// `regression` or `no regression`.
    pub verdict: &'static str,
    /// The last runs a regression must start in to fail the gate.
    pub within: usize,
    /// The smallest change that fails it, a share.
    pub above: f64,
    /// The largest p-value that fails it: `--p-value` over the series searched (Bonferroni),
    /// so that many operations' figures do not fail it by chance.
    pub pvalue: f64,
    /// The regressions that fail it.
    pub failing: Vec<Change>,
    /// Those acknowledged, which do not.
    pub acknowledged: Vec<Change>,
}

impl History {
    /// The gate over the largest group: a regression that starts within its last `within`
    /// runs, is at least `above` large and has p at most the p-value over the number of
    /// series searched fails it, unless `acked` names it.
    pub fn gate(&self, within: usize, above: f64, acked: &[Acknowledged]) -> Option<Gate> {
        let g = self.groups.first()?;
        let searched = g.series.len().max(1) as f64;
        let pvalue = self.max_pvalue / searched;
        let first = g.runs.len().saturating_sub(within);
        let name = |dir: &str| {
            Path::new(dir)
                .file_name()
                .map_or(dir.to_string(), |n| n.to_string_lossy().into_owned())
        };
        let (mut failing, mut acknowledged) = (Vec::new(), Vec::new());
        for c in &g.changes {
            if c.verdict != "regression" || c.run < first || c.change.abs() < above || c.pvalue > pvalue {
                continue;
            }
            let named = acked
                .iter()
                .any(|a| a.run == name(&c.dir) && a.operation == c.operation && a.figure == c.figure);
            if named {
                acknowledged.push(c.clone());
            } else {
                failing.push(c.clone());
            }
        }
        Some(Gate {
            verdict: if failing.is_empty() {
                "no regression"
            } else {
                "regression"
            },
            within,
            above,
            pvalue,
            failing,
            acknowledged,
        })
    }
}

/// Where a history's files go: `DIR/history-UTC/`.
pub fn folder(reports: &Path, now_ms: i64) -> PathBuf {
    super::run::folder(reports, "history", now_ms)
}
