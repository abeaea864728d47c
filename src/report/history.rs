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

use super::summary::ALL;
use super::summary::RunSummary;
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

/// What a history reads of a run: its summary alone, its histograms decoded only where a
/// segment's level needs them, so that a long history holds little in memory.
struct RunData {
    summary: RunSummary,
}

impl RunData {
    /// The response times of operation `name` (`all` for every one), where its histogram
    /// reads.
    fn responses(&self, name: &str) -> Option<Histogram> {
        crate::stats::decode(&op(self, name)?.response_histogram).ok()
    }
}

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
    /// Its value of the history's key (`--key`), where one orders the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl Run {
    /// How the run is named to the reader: its key's value, or its start.
    pub fn name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.started)
    }
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
    /// Its value of the history's key, where one orders the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
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

impl Change {
    /// How its run is named to the reader: its key's value, or its start.
    pub fn name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.started)
    }
}

/// A drift: a series that moves by about the same share each run, over the runs of the
/// last window, rather than by steps.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    /// The operation.
    pub operation: String,
    /// The figure.
    pub figure: &'static str,
    /// The first and last runs of the line (indexes in the group's runs).
    pub runs: (usize, usize),
    /// The line's level at its first run and at its last.
    pub from: f64,
    /// See `from`.
    pub to: f64,
    /// The change each run, a share (for the error share, an amount), with its 95% interval.
    pub per_run: f64,
    /// See `per_run`.
    pub per_run_interval: (f64, f64),
    /// The change from the first run to the last, a share.
    pub change: f64,
    /// Student's t of the slope.
    pub pvalue: f64,
    /// `regression` or `improvement`.
    pub verdict: &'static str,
    /// The runs where the change-point search cut the drift into steps (not reported as
    /// change points: the line tells the series better).
    pub steps: Vec<usize>,
    /// The run folder of its last run.
    pub dir: String,
}

impl Drift {
    /// The drift in a sentence, its runs named as `runs` name them.
    pub fn line(&self, runs: &[Run]) -> String {
        let per = |x: f64| {
            if self.figure == "errors" {
                format!("{:+.3} points", x * 100.0)
            } else {
                pct(x)
            }
        };
        format!(
            "{} {} drifts {} a run [{}..{}] over runs {} to {} ({} to {}): {} -> {} ({}), p={:.1e}: {}",
            self.operation,
            self.figure,
            per(self.per_run),
            per(self.per_run_interval.0),
            per(self.per_run_interval.1),
            self.runs.0 + 1,
            self.runs.1 + 1,
            runs.get(self.runs.0).map_or("", Run::name),
            runs.get(self.runs.1).map_or("", Run::name),
            show(self.figure, self.from),
            show(self.figure, self.to),
            pct(self.change),
            self.pvalue,
            self.verdict
        )
    }
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
    /// Series that drift: a line through their last runs fits them better than their
    /// segments' levels, and its slope is significant.
    pub drifts: Vec<Drift>,
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
    /// The label or setting runs are ordered by (`--key`); none: their start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
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

/// A run's value of `key`: its `--label` of that name, or else the setting of that name
/// (a dotted path into its `config`, as `threads` or `rate`).
fn key_value(d: &RunData, key: &str) -> Option<String> {
    if let Some(v) = d.summary.config.labels.get(key) {
        return Some(v.clone());
    }
    let mut v = serde_json::to_value(&d.summary.config).ok()?;
    for part in key.split('.') {
        v = v.get(part)?.clone();
    }
    match v {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A run's folder, its data and its key's value.
type Labelled = (PathBuf, RunData, String);

/// A version's numbers (`v1.2.10`, `2026-11-03`, `41`), where `text` is one.
fn version(text: &str) -> Option<Vec<u64>> {
    let t = text.strip_prefix(['v', 'V']).unwrap_or(text);
    t.split(['.', '-', '_'])
        .map(|p| {
            (!p.is_empty() && p.len() <= 19 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect()
}

/// The order of runs (given by start) by their key's `values`, as indexes into them: by
/// number where every value is one, as versions or dates where every value is one, and
/// otherwise (commits, names) in the order each value was first run; runs of one value stay
/// together, by start.
fn key_order(values: &[&str]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    let numbers: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let versions: Option<Vec<Vec<u64>>> = values.iter().map(|v| version(v)).collect();
    if let Some(n) = numbers {
        order.sort_by(|a, b| n[*a].total_cmp(&n[*b]));
    } else if let Some(v) = versions {
        order.sort_by(|a, b| v[*a].cmp(&v[*b]));
    } else {
        let first = |v: &str| values.iter().position(|w| *w == v).expect("its own value");
        order.sort_by_key(|i| first(values[*i]));
    }
    order
}

/// The runs `dirs` name, read, grouped and searched: each folder that holds a report is a
/// run; others are left out with the reason. Runs are ordered by their start, or by `key`
/// ([`key_order`]), where one is given; a run without it is left out.
pub fn history(dirs: &[PathBuf], o: &changepoint::Options, key: Option<&str>) -> History {
    let mut left_out = Vec::new();
    let mut runs: Vec<(PathBuf, RunData)> = Vec::new();
    for dir in dirs {
        match super::read::find(std::slice::from_ref(dir)) {
            Ok(found) => {
                for d in found {
                    match super::read::summary(&d).map(|summary| RunData { summary }) {
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
    let mut labelled: Vec<Labelled> = Vec::new();
    for (dir, data) in runs {
        match key.map(|k| key_value(&data, k)) {
            None => labelled.push((dir, data, String::new())),
            Some(Some(v)) => labelled.push((dir, data, v)),
            Some(None) => left_out.push(Left {
                dir: dir.display().to_string(),
                why: format!(
                    "no label or setting {} to order it by (`tallrow run --label {}=VALUE` gives one)",
                    key.unwrap_or_default(),
                    key.unwrap_or_default()
                ),
            }),
        }
    }
    if key.is_some() {
        let values: Vec<&str> = labelled.iter().map(|r| r.2.as_str()).collect();
        let order = key_order(&values);
        let mut slots: Vec<Option<Labelled>> = labelled.into_iter().map(Some).collect();
        labelled = order.into_iter().map(|i| slots[i].take().expect("each once")).collect();
    }
    let mut keyed: Vec<(Key, Vec<Labelled>)> = Vec::new();
    for (dir, data, label) in labelled {
        let key = Key::of(&data);
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push((dir, data, label)),
            None => keyed.push((key, vec![(dir, data, label)])),
        }
    }
    keyed.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let labelled = key.is_some();
    let groups: Vec<Group> = keyed
        .into_iter()
        .map(|(k, runs)| {
            let labels: Vec<Option<String>> = runs.iter().map(|r| labelled.then(|| r.2.clone())).collect();
            let runs: Vec<(PathBuf, RunData)> = runs.into_iter().map(|(d, r, _)| (d, r)).collect();
            group(k, &runs, &labels, o)
        })
        .collect();
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
        key: key.map(str::to_string),
        groups,
        left_out,
        gate: None,
    }
}

fn group(key: Key, runs: &[(PathBuf, RunData)], labels: &[Option<String>], o: &changepoint::Options) -> Group {
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
    let mut drifts: Vec<Drift> = Vec::new();
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
                let (found, drift) = search(name, figure, &values, runs, labels, o);
                changes.extend(found);
                drifts.extend(drift);
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
            .zip(labels)
            .map(|((dir, d), label)| Run {
                dir: dir.display().to_string(),
                started: d.summary.started.clone(),
                started_ms: d.summary.started_ms,
                label: label.clone(),
            })
            .collect(),
        series,
        changes,
        single_runs,
        drifts,
        unjudged,
    }
}

/// The change points of one series (the runs that have a value), as changes of the group.
fn search(
    name: &str,
    figure: &'static str,
    values: &[Option<f64>],
    runs: &[(PathBuf, RunData)],
    labels: &[Option<String>],
    o: &changepoint::Options,
) -> (Vec<Change>, Option<Drift>) {
    // The runs with a value, and the value judged.
    let present: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .filter(|(_, v)| !logged(figure) || *v > 0.0)
        .collect();
    if present.len() < MIN_RUNS {
        return (Vec::new(), None);
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
    let mut drift = drift(name, figure, &present, &judged, &bounds, &o);
    let changes: Vec<Change> = cps
        .iter()
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
                label: labels[run].clone(),
                before,
                after,
                change,
                interval,
                pvalue: c.stats.pvalue,
                verdict: if worse { "regression" } else { "improvement" },
                single: at - lo < 2 || hi - at < 2,
            }
        })
        .collect();
    // Within a drift, the change points are its steps, not changes of their own.
    let Some(d) = &mut drift else {
        return (changes, None);
    };
    d.dir = runs[d.runs.1].0.display().to_string();
    let (steps, changes): (Vec<Change>, Vec<Change>) = changes.into_iter().partition(|c| c.run > d.runs.0);
    d.steps = steps.iter().map(|c| c.run).collect();
    (changes, drift)
}

/// The drift of one series over its last `o.window` runs, where there is one: the least-
/// squares line through them has a slope with p at most `o.max_pvalue`, moves the series by
/// at least `o.min_magnitude` over those runs, and leaves less unexplained than the levels
/// of the segments between the change points (`bounds`) do, so that a step is not called
/// a drift.
fn drift(
    name: &str,
    figure: &'static str,
    present: &[(usize, f64)],
    judged: &[f64],
    bounds: &[usize],
    o: &changepoint::Options,
) -> Option<Drift> {
    let from = judged.len().saturating_sub(o.window);
    let (xs, ys): (Vec<f64>, &[f64]) = (
        present[from..].iter().map(|(i, _)| *i as f64).collect(),
        &judged[from..],
    );
    let n = ys.len() as f64;
    if ys.len() < MIN_RUNS + 1 {
        return None;
    }
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = sxy / sxx;
    let line = |x: f64| my + slope * (x - mx);
    let sse_line: f64 = xs.iter().zip(ys).map(|(x, y)| (y - line(*x)).powi(2)).sum();
    // The segments' levels, over the same runs.
    let mut sse_steps = 0.0;
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0].max(from), w[1].max(from));
        if hi > lo {
            let seg = &judged[lo..hi];
            let m = seg.iter().sum::<f64>() / seg.len() as f64;
            sse_steps += seg.iter().map(|y| (y - m).powi(2)).sum::<f64>();
        }
    }
    let se = (sse_line / (n - 2.0) / sxx).sqrt();
    let pvalue = if se > 0.0 {
        student_t(slope / se, n - 2.0)
    } else if slope != 0.0 {
        0.0
    } else {
        1.0
    };
    let (x0, x1) = (xs[0], xs[xs.len() - 1]);
    let level = |v: f64| if logged(figure) { v.exp() } else { v };
    let (a, b) = (level(line(x0)), level(line(x1)));
    let change = if a == 0.0 { 0.0 } else { b / a - 1.0 };
    if pvalue > o.max_pvalue || change.abs() < o.min_magnitude || sse_line >= sse_steps {
        return None;
    }
    let half = t95(n - 2.0) * se;
    let share = |d: f64| if logged(figure) { d.exp() - 1.0 } else { d };
    let worse = match figure {
        "throughput" => slope < 0.0,
        _ => slope > 0.0,
    };
    Some(Drift {
        operation: name.to_string(),
        figure,
        runs: (present[from].0, present[present.len() - 1].0),
        from: a,
        to: b,
        per_run: share(slope),
        per_run_interval: (share(slope - half), share(slope + half)),
        change,
        pvalue,
        verdict: if worse { "regression" } else { "improvement" },
        steps: Vec::new(),
        dir: String::new(),
    })
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
        let by = self.key.as_ref().map_or(String::new(), |k| format!("{k} "));
        for g in &self.groups {
            s.push_str(&format!(
                "\n### {} on {}: {} runs, {by}{} to {}\n\n",
                g.key.workload,
                g.key.backend,
                g.runs.len(),
                g.runs.first().map_or("", Run::name),
                g.runs.last().map_or("", Run::name),
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
                    c.name(),
                    show(c.figure, c.before),
                    show(c.figure, c.after),
                    pct(c.change)
                ));
            }
            if g.changes.is_empty() {
                s.push_str("No change point.\n");
            } else {
                if !g.single_runs.is_empty() {
                    s.push('\n');
                }
                s.push_str(&format!(
                    "| run | {} | operation | figure | before | after | change [95%] | p | verdict |\n",
                    self.key.as_deref().unwrap_or("started")
                ));
                s.push_str("|---:|---|---|---|---:|---:|---:|---:|---|\n");
                for c in &g.changes {
                    s.push_str(&format!(
                        "| {} | {} | {} | {} | {} | {} | {} [{}..{}] | {:.1e} | {} |\n",
                        c.run + 1,
                        c.name(),
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
            if !g.drifts.is_empty() {
                s.push('\n');
            }
            for d in &g.drifts {
                s.push_str(&format!("- {}\n", d.line(&g.runs)));
            }
        }
        if let Some(g) = &self.gate {
            if let Some(why) = &g.why {
                s.push_str(&format!(
                    "\n**Gate: undecided.** Over {}: {why}; it fails nothing until there are runs enough to search.\n",
                    g.group
                ));
            } else {
                s.push_str(&format!(
                "\n**Gate: {}.** Over {}. A regression fails it where it starts within the last {} runs (a drift goes on to the last), is at least {} large, and has p <= {:.1e} (the p-value over the series searched).\n",
                g.verdict,
                g.group,
                g.within,
                pct(g.above).trim_start_matches('+'),
                g.pvalue
            ));
            }
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
            let runs = self.groups.get(g.index).map_or(&[][..], |g| &g.runs[..]);
            for (what, list) in [
                ("Fails it", &g.failing_drifts),
                ("Acknowledged", &g.acknowledged_drifts),
            ] {
                for d in list.iter() {
                    s.push_str(&format!("- {what}: {} (to {})\n", d.line(runs), d.dir));
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
        header.extend(self.key.clone());
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
            if self.key.is_some() {
                row.push(r.name().to_string());
            }
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

/// A CI gate's verdict on the newest run's group: the regressions that start within its last
/// runs, large enough, significant once the number of series searched is counted, and not
/// acknowledged.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    /// `regression`, `no regression`, or `undecided` where the group has too few runs to
    /// be searched (it then fails nothing).
    pub verdict: &'static str,
    /// The group it judges (the newest run's): its workload and backend.
    pub group: String,
    /// Why it is undecided, where it is.
    pub why: Option<String>,
    /// The group's place in the history's groups.
    #[serde(skip)]
    pub index: usize,
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
    /// The drifts that fail it: regressions that go on to the last run, at least `above`
    /// over their runs, with p at most `pvalue`.
    pub failing_drifts: Vec<Drift>,
    /// Those acknowledged (a line naming any run the drift covers), which do not.
    pub acknowledged_drifts: Vec<Drift>,
}

impl History {
    /// The gate over the largest group: a regression that starts within its last `within`
    /// runs, is at least `above` large and has p at most the p-value over the number of
    /// series searched fails it, unless `acked` names it.
    pub fn gate(&self, within: usize, above: f64, acked: &[Acknowledged]) -> Option<Gate> {
        // The newest run's group: the question is whether the latest runs regressed, and
        // runs of an older version or another machine do not answer it.
        let (index, g) = self
            .groups
            .iter()
            .enumerate()
            .max_by_key(|(_, g)| g.runs.iter().map(|r| r.started_ms).max())?;
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
        let (mut failing_drifts, mut acknowledged_drifts) = (Vec::new(), Vec::new());
        for d in &g.drifts {
            if d.verdict != "regression" || d.change.abs() < above || d.pvalue > pvalue {
                continue;
            }
            let named = acked.iter().any(|a| {
                a.operation == d.operation
                    && a.figure == d.figure
                    && g.runs[d.runs.0..=d.runs.1].iter().any(|r| a.run == name(&r.dir))
            });
            if named {
                acknowledged_drifts.push(d.clone());
            } else {
                failing_drifts.push(d.clone());
            }
        }
        Some(Gate {
            verdict: if g.unjudged.is_some() {
                "undecided"
            } else if failing.is_empty() && failing_drifts.is_empty() {
                "no regression"
            } else {
                "regression"
            },
            group: format!("{} on {}", g.key.workload, g.key.backend),
            why: g.unjudged.clone(),
            index,
            within,
            above,
            pvalue,
            failing,
            acknowledged,
            failing_drifts,
            acknowledged_drifts,
        })
    }
}

/// Where a history's files go: `DIR/history-UTC/`.
pub fn folder(reports: &Path, now_ms: i64) -> PathBuf {
    super::run::folder(reports, "history", now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sim::Sim;

    #[test]
    fn runs_are_ordered_by_number_version_or_first_run() {
        assert_eq!(key_order(&["10", "9", "2.5"]), vec![2, 1, 0]);
        // Versions and dates by their numbers, not as text.
        assert_eq!(key_order(&["v1.2.10", "v1.2.9", "v1.10.0"]), vec![1, 0, 2]);
        assert_eq!(key_order(&["2026-11-10", "2026-11-09", "2026-12-01"]), vec![1, 0, 2]);
        // Commits as they were first run, the reruns of one beside it.
        assert_eq!(
            key_order(&["9f1c", "3a2b", "9f1c", "77d0", "3a2b"]),
            vec![0, 2, 1, 4, 3]
        );
        // One name among numbers: all by first run.
        assert_eq!(key_order(&["2", "1", "rc1"]), vec![0, 1, 2]);
    }

    /// 24 runs' logarithms: `level`, times `1 + step` from run 12, times `1 + drift` a run,
    /// with a normal noise of sd `sd` (a share).
    fn series(sim: &mut Sim, step: f64, drift: f64, sd: f64) -> Vec<f64> {
        (0..24)
            .map(|i| {
                let stepped = if i >= 12 { (1.0 + step).ln() } else { 0.0 };
                (1e6f64).ln() + stepped + (1.0 + drift).ln() * f64::from(i) + sd * sim.normal()
            })
            .collect()
    }

    fn drift_of(judged: &[f64], o: &changepoint::Options) -> Option<Drift> {
        let present: Vec<(usize, f64)> = judged.iter().enumerate().map(|(i, v)| (i, v.exp())).collect();
        let o = changepoint::Options { logarithms: true, ..*o };
        let cps = changepoint::change_points(judged, &o);
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cps.iter().map(|c| c.index))
            .chain(std::iter::once(judged.len()))
            .collect();
        drift("op", "p50", &present, judged, &bounds, &o)
    }

    #[test]
    fn a_drift_is_found_with_its_rate_and_a_step_or_noise_is_not_one() {
        let o = changepoint::Options::default();
        let mut sim = Sim(0x9e37_79b9_7f4a_7c15);
        let trials = 500;
        let (mut drifts, mut steps, mut flats, mut within) = (0, 0, 0, 0);
        for _ in 0..trials {
            // 3% a run with 2% noise: about doubled over 24 runs.
            if let Some(d) = drift_of(&series(&mut sim, 0.0, 0.03, 0.02), &o) {
                drifts += 1;
                assert_eq!(d.verdict, "regression");
                assert_eq!(d.runs, (0, 23));
                within += (d.per_run_interval.0 <= 0.03 && 0.03 <= d.per_run_interval.1) as u32;
            }
            steps += drift_of(&series(&mut sim, 0.3, 0.0, 0.02), &o).is_some() as u32;
            flats += drift_of(&series(&mut sim, 0.0, 0.0, 0.02), &o).is_some() as u32;
        }
        let rate = |k: u32| f64::from(k) / f64::from(trials);
        eprintln!(
            "24 runs, {trials} series each: a 3% drift a run found in {:.3} (its rate within the interval in {:.3}); a 30% step called a drift in {:.3}; no change called one in {:.3}",
            rate(drifts),
            rate(within) / rate(drifts).max(1e-9),
            rate(steps),
            rate(flats)
        );
        assert!(rate(drifts) >= 0.99, "{}", rate(drifts));
        assert!(f64::from(within) >= 0.9 * f64::from(drifts), "{within} of {drifts}");
        assert!(rate(steps) <= 0.01, "{}", rate(steps));
        assert!(rate(flats) <= 0.01, "{}", rate(flats));
    }
}
