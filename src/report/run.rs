//! A run's report folder, `reports/<workload>-<UTC>/`:
//!
//! - `summary.json`: the effective configuration, workload digest, backend, machine, times,
//!   validity, and per operation its figures and compressed histograms (so `compare` and
//!   `report merge` can recompute any percentile);
//! - `ops.csv`: one row per operation (and `all`), latencies in microseconds;
//! - `timeseries.csv`: per interval and operation, throughput and p50/p99;
//! - `<op>.hgrm`: HdrHistogram's percentile distribution of the response times (and
//!   `all.hgrm`, every operation's together);
//! - `<op>.hlog`: HdrHistogram's interval log of the response times, one per operation;
//! - `latency.svg` and `index.html`: the percentile curves beside the table;
//! - `timeseries.svg`: throughput, p50 and p99 per interval and operation, in `index.html`
//!   under the table;
//! - `regions.csv` and `regions.svg`: rows and bytes written and read per region, and the
//!   heat map of regions against intervals (when the run counted them);
//! - `events.csv`, `cluster.csv` and `cluster.svg`: the run's stages and what the store or the
//!   cluster did meanwhile, and the region servers over time.

use super::Error;
use super::summary::{ALL, BackendInfo, ErrorCount, FORMAT, Machine, OpReport, RunConfig, RunSummary, WorkloadInfo};
use crate::observe::events::{Event, Kind, Phase};
use crate::run::{Interval, IntervalOp, Outcome};
use crate::stats::{self, Histogram, OpStats, Summary};

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Everything a report folder holds, in memory.
#[derive(Debug, Clone)]
pub struct RunData {
    /// `summary.json` (its `ops` and `all` are recomputed on writing).
    pub summary: RunSummary,
    /// Per operation (in `summary.ops` order), what was recorded.
    pub totals: Vec<OpStats>,
    /// Per operation, throughput to report (`None`: count / measured time).
    pub ops_per_s: Vec<Option<f64>>,
    /// The intervals.
    pub intervals: Vec<Interval>,
    /// Rows and bytes per region and interval, when counted.
    pub spread: Option<crate::store::counted::Spread>,
    /// What the cluster did meanwhile, when it was observed.
    pub cluster: Option<crate::observe::watch::Observed>,
    /// The run's own events (its stages), beside the cluster's.
    pub events: Vec<Event>,
}

/// The parts of a summary that come from outside the run.
pub struct Context<'a> {
    /// The workload.
    pub workload: &'a crate::workload::Workload,
    /// Its file.
    pub file: &'a Path,
    /// `--backend` as given.
    pub url: &'a str,
    /// The store.
    pub store: &'a dyn crate::store::Store,
    /// Effective settings.
    pub config: RunConfig,
}

impl RunData {
    /// The data of a finished run.
    pub fn from_run(out: &Outcome, cx: &Context) -> RunData {
        let w = cx.workload;
        let reason = out.invalid_reason();
        let mut summary = RunSummary {
            format: FORMAT,
            tallrow: env!("CARGO_PKG_VERSION").into(),
            workload: WorkloadInfo {
                name: w.name.clone(),
                file: cx.file.display().to_string(),
                data_digest: w.data_digest(),
                effective: serde_json::to_value(w).expect("a workload serializes"),
            },
            backend: BackendInfo {
                url: cx.url.to_string(),
                identity: cx.store.identity(),
                version: cx.store.version(),
            },
            machine: Machine::this(),
            config: cx.config.clone(),
            started: crate::date::iso(out.started_ms),
            finished: crate::date::iso(out.finished_ms),
            started_ms: out.started_ms,
            finished_ms: out.finished_ms,
            measured_s: out.measured.as_secs_f64(),
            open_loop: out.open_loop,
            valid: reason.is_none(),
            invalid_reason: reason,
            on_time_share: out.on_time_share(),
            ops: Vec::new(),
            all: empty_op(ALL),
            merged_from: Vec::new(),
            missing_shards: Vec::new(),
            regions: Vec::new(),
            slos: Vec::new(),
            retries: Default::default(),
            disturbed: Vec::new(),
            stopped_early: out.stopped_early,
            events: None,
            stages: stage_reports(out, &w.run),
            region_replication: None,
        };
        summary.ops = out
            .ops
            .iter()
            .map(|op| OpReport {
                writes: op.writes(),
                ..empty_op(op.name())
            })
            .collect();
        RunData {
            events: stage_events(&summary.stages, out.started_ms),
            summary,
            totals: out.totals.clone(),
            ops_per_s: vec![None; out.ops.len()],
            intervals: out.intervals.clone(),
            spread: None,
            cluster: None,
        }
    }

    /// The response times of operation `name` (of every operation together, for `all`);
    /// `None` where the run has no such operation.
    pub fn responses(&self, name: &str) -> Option<Histogram> {
        if name == ALL {
            let mut h = stats::histogram();
            for t in &self.totals {
                h.add(&t.response).expect("same bounds");
            }
            return Some(h);
        }
        let i = self.summary.ops.iter().position(|o| o.op == name)?;
        Some(self.totals[i].response.clone())
    }

    /// Every event of the run, its own and the cluster's, in time order.
    pub fn all_events(&self) -> Vec<Event> {
        let mut all = self.events.clone();
        if let Some(c) = &self.cluster {
            all.extend(c.events.iter().cloned());
        }
        all.sort_by_key(|e| e.at_ms);
        all
    }

    /// Recomputes `summary.ops` and `summary.all` from the totals and intervals.
    pub fn finish(&mut self) {
        let secs = self.summary.measured_s.max(1e-9);
        let open = self.summary.open_loop;
        let interval_rates = |pick: &dyn Fn(&Interval) -> u64| -> Vec<f64> {
            self.intervals
                .iter()
                .map(|iv| pick(iv) as f64 / iv.length.as_secs_f64().max(1e-9))
                .collect()
        };
        let mut all = OpStats::default();
        let mut all_rate = 0.0;
        let mut ops = Vec::with_capacity(self.totals.len());
        for (i, t) in self.totals.iter().enumerate() {
            all.add(t);
            let rate = self.ops_per_s[i].unwrap_or(t.ok() as f64 / secs);
            all_rate += rate;
            let (name, writes) = (self.summary.ops[i].op.clone(), self.summary.ops[i].writes);
            ops.push(OpReport {
                writes,
                ..op_report(&name, t, rate, open, interval_rates(&|iv| iv.ops[i].ok))
            });
        }
        self.summary.all = op_report(ALL, &all, all_rate, open, interval_rates(&|iv| iv.all.ok));
        if self.summary.config.run.consistency == crate::workload::Consistency::Timeline {
            // Every operation says what TIMELINE reads did, none stale included.
            for (o, t) in ops.iter_mut().zip(&self.totals).chain([(&mut self.summary.all, &all)]) {
                o.timeline.get_or_insert_with(|| super::summary::TimelineReads::of(t));
            }
        }
        self.summary.ops = ops;
        self.summary.disturbed = disturbances(&self.intervals);
    }

    /// Judges the run against `targets`: their verdicts go into the summary.
    pub fn judge(&mut self, targets: &[super::slo::Slo]) {
        self.finish();
        self.summary.slos = targets.iter().map(|t| t.verdict(&self.summary)).collect();
        for st in &mut self.summary.stages {
            // A stage at 0 asked for nothing: there is nothing to judge in it.
            if st.asked_ops_per_s.or(st.asked_threads).unwrap_or(0.0) > 0.0 {
                st.slos = targets.iter().map(|t| t.verdict_of(&st.ops, &st.all)).collect();
            }
        }
    }

    /// Writes the folder `dir` (created; must not exist yet).
    pub fn write(&mut self, dir: &Path) -> Result<(), Error> {
        self.finish();
        std::fs::create_dir_all(dir).map_err(|e| Error::at(dir, e))?;
        if let Some(spread) = &self.spread {
            self.summary.regions = crate::regions::report::skew(spread);
            write_file(&dir.join("regions.csv"), &crate::regions::report::csv(spread))?;
            // A merge has the shards' totals, not their intervals: no heat map over time.
            if self.summary.merged_from.is_empty() {
                let warmup = self.summary.config.run.warmup;
                let svg = crate::regions::report::heat_map(spread, warmup);
                write_file(&dir.join("regions.svg"), svg.as_bytes())?;
            }
        }
        let events = self.all_events();
        let started = self.summary.started_ms;
        if let Some(c) = &self.cluster {
            write_file(
                &dir.join("cluster.csv"),
                &super::cluster::cluster_csv(&c.samples, &c.jmx, started),
            )?;
        }
        if self.cluster.is_some() || !events.is_empty() {
            write_file(&dir.join("events.csv"), &super::cluster::events_csv(&events, started))?;
            self.summary.events = Some(super::cluster::counts(&events));
        }
        let s = &self.summary;
        let json = serde_json::to_string_pretty(s).expect("a summary serializes");
        write_file(&dir.join("summary.json"), (json + "\n").as_bytes())?;
        write_file(&dir.join("ops.csv"), &self.ops_csv())?;
        write_file(&dir.join("timeseries.csv"), &self.timeseries_csv())?;
        for (i, op) in s.ops.iter().enumerate() {
            write_file(
                &dir.join(format!("{}.hgrm", op.op)),
                super::hgrm::percentiles(&self.totals[i].response, 1_000_000.0).as_bytes(),
            )?;
            write_file(&dir.join(format!("{}.hlog", op.op)), &self.interval_log(i)?)?;
        }
        let mut all = stats::histogram();
        let mut curves: Vec<(String, Histogram)> = Vec::with_capacity(s.ops.len() + 1);
        for (o, t) in s.ops.iter().zip(&self.totals) {
            all.add(&t.response).expect("same bounds");
            curves.push((o.op.clone(), t.response.clone()));
        }
        // The table's `all` row links to it, as each operation's row to its own.
        write_file(
            &dir.join(format!("{ALL}.hgrm")),
            super::hgrm::percentiles(&all, 1_000_000.0).as_bytes(),
        )?;
        curves.push((ALL.to_string(), all));
        let writes: Vec<&str> = s.ops.iter().filter(|o| o.writes_op()).map(|o| o.op.as_str()).collect();
        let svg = super::plot::svg(&curves, &writes, &s.workload.name);
        write_file(&dir.join("latency.svg"), svg.as_bytes())?;
        let series: Vec<super::plot::Series> = s
            .ops
            .iter()
            .map(|o| o.op.clone())
            .chain([ALL.to_string()])
            .enumerate()
            .map(|(i, name)| super::plot::Series {
                points: self
                    .intervals
                    .iter()
                    .map(|iv| {
                        let o = iv.ops.get(i).unwrap_or(&iv.all);
                        let len = iv.length.as_secs_f64().max(1e-9);
                        (
                            (iv.start + iv.length).as_secs_f64(),
                            o.ok as f64 / len,
                            o.summary.p50,
                            o.summary.p99,
                        )
                    })
                    .collect(),
                name,
            })
            .collect();
        let t_max = self
            .intervals
            .last()
            .map(|iv| (iv.start + iv.length).as_secs_f64())
            .unwrap_or(0.0);
        let marks = super::cluster::marks(&events, s.started_ms, t_max);
        let svg = super::plot::timeseries(&series, &s.workload.name, &marks);
        write_file(&dir.join("timeseries.svg"), svg.as_bytes())?;
        let servers_svg = self
            .cluster
            .as_ref()
            .and_then(|c| super::servers::svg(c, s.started_ms, t_max, &marks, &s.workload.name));
        if let Some(svg) = &servers_svg {
            write_file(&dir.join("cluster.svg"), svg.as_bytes())?;
        }
        let cluster = self.cluster.as_ref().map(|c| {
            let ops: Vec<(String, u64)> = s.ops.iter().map(|o| (o.op.clone(), o.response.p99)).collect();
            super::plot::ClusterHtml {
                servers_svg: servers_svg.clone(),
                line: super::cluster::line(c),
                rose: super::cluster::rose(&self.intervals, &ops, c, s.started_ms, 3),
            }
        });
        let inline = (cluster.is_some() || !marks.is_empty()).then_some(svg.as_str());
        write_file(
            &dir.join("index.html"),
            super::plot::html(s, inline, cluster.as_ref()).as_bytes(),
        )?;
        Ok(())
    }

    fn ops_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let us = |ns: u64| format!("{:.3}", ns as f64 / 1000.0);
        w.write_record([
            "op",
            "count",
            "errors",
            "ops_per_s",
            "mean_us",
            "p50_us",
            "p90_us",
            "p99_us",
            "p999_us",
            "max_us",
            "service_p50_us",
            "service_p99_us",
            "late",
        ])
        .expect("writing to memory");
        for o in self.summary.ops.iter().chain([&self.summary.all]) {
            let r = &o.response;
            let (sp50, sp99) = o
                .service
                .map_or((String::new(), String::new()), |s| (us(s.p50), us(s.p99)));
            w.write_record([
                o.op.clone(),
                o.count.to_string(),
                o.errors.to_string(),
                format!("{:.2}", o.ops_per_s),
                format!("{:.3}", r.mean / 1000.0),
                us(r.p50),
                us(r.p90),
                us(r.p99),
                us(r.p999),
                us(r.max),
                sp50,
                sp99,
                o.late.to_string(),
            ])
            .expect("writing to memory");
        }
        w.into_inner().expect("writing to memory")
    }

    fn timeseries_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "start_s",
            "length_s",
            "op",
            "count",
            "errors",
            "ops_per_s",
            "p50_us",
            "p99_us",
            "max_us",
            "retries",
        ])
        .expect("writing to memory");
        let us = |ns: u64| format!("{:.3}", ns as f64 / 1000.0);
        for iv in &self.intervals {
            let len = iv.length.as_secs_f64().max(1e-9);
            let rows = self
                .summary
                .ops
                .iter()
                .map(|o| o.op.as_str())
                .zip(&iv.ops)
                .chain([(ALL, &iv.all)]);
            for (name, o) in rows {
                w.write_record([
                    format!("{:.3}", iv.start.as_secs_f64()),
                    format!("{:.3}", iv.length.as_secs_f64()),
                    name.to_string(),
                    o.ok.to_string(),
                    o.errors.to_string(),
                    format!("{:.2}", o.ok as f64 / len),
                    us(o.summary.p50),
                    us(o.summary.p99),
                    us(o.summary.max),
                    // On the `all` row: a retry belongs to no one operation.
                    match iv.retries {
                        Some(n) if name == ALL => n.to_string(),
                        _ => String::new(),
                    },
                ])
                .expect("writing to memory");
            }
        }
        w.into_inner().expect("writing to memory")
    }

    /// The interval log of operation `i`, in HdrHistogram's format: a start time, a base time
    /// (both the start of measurement), then one line per interval with its start (seconds
    /// since the base time), length, max (ms) and the V2 compressed histogram.
    fn interval_log(&self, i: usize) -> Result<Vec<u8>, Error> {
        let s = &self.summary;
        let mut out = Vec::new();
        let secs = s.started_ms as f64 / 1000.0;
        // The header as HdrHistogram's Java writer lays it out; its reader, and the Rust and
        // Python ones, take the interval timestamps as seconds since BaseTime.
        out.extend_from_slice(
            format!(
                "#tallrow {} response times of {} in ns; workload {}; backend {}\n\
                 #[StartTime: {secs:.3} (seconds since epoch), {}]\n\
                 #[BaseTime: {secs:.3} (seconds since epoch)]\n\
                 \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
                s.tallrow,
                s.ops[i].op,
                s.workload.name,
                s.backend.identity.replace('\n', " "),
                s.started,
            )
            .as_bytes(),
        );
        let fail = |e: String| Error::new(&format!("{}.hlog", s.ops[i].op), e);
        let mut ser = hdrhistogram::serialization::V2DeflateSerializer::new();
        let mut log = hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder::new()
            .with_max_value_divisor(1_000_000.0)
            .begin_log_with(&mut out, &mut ser)
            .map_err(|e| fail(e.to_string()))?;
        for iv in &self.intervals {
            let h = stats::decode(&iv.ops[i].histogram).map_err(fail)?;
            log.write_histogram(&h, iv.start, iv.length, None)
                .map_err(|e| fail(format!("{e:?}")))?;
        }
        Ok(out)
    }
}

/// Each stage's figures: its operations' totals, the rate or threads it asked for on
/// average, and the rate it achieved.
fn stage_reports(out: &Outcome, run: &crate::workload::Run) -> Vec<super::summary::StageReport> {
    out.stages
        .iter()
        .zip(&run.stages)
        .enumerate()
        .map(|(i, (st, asked))| {
            let before = i.checked_sub(1).map(|b| &run.stages[b]);
            let secs = (st.bounds.end - st.bounds.start).as_secs_f64().max(1e-9);
            let mut all = OpStats::default();
            let ops: Vec<OpReport> = out
                .ops
                .iter()
                .zip(&st.totals)
                .zip(&st.finished)
                .map(|((op, t), &n)| {
                    all.add(t);
                    OpReport {
                        writes: op.writes(),
                        ..op_report(op.name(), t, n as f64 / secs, out.open_loop, Vec::new())
                    }
                })
                .collect();
            stage_report(i + 1, (asked, before), st.bounds, ops, &all, out.open_loop)
        })
        .collect()
}

/// Stage `n`'s report (the stage asked, after the one before) from its operations' reports
/// and their sum `all`; its rate is theirs, the operations that finished within it.
pub(crate) fn stage_report(
    n: usize,
    (asked, before): (&crate::workload::Stage, Option<&crate::workload::Stage>),
    bounds: crate::run::profile::Bounds,
    ops: Vec<OpReport>,
    all: &OpStats,
    open: bool,
) -> super::summary::StageReport {
    // The level's mean over the stage: its two ends' mean, flat or ramping (a stage cut
    // short by a stop keeps the level asked over its whole length).
    let mean = (asked.from(before) + asked.level.value()) / 2.0;
    let achieved: f64 = ops.iter().map(|o| o.ops_per_s).sum();
    super::summary::StageReport {
        stage: n,
        asked: asked.describe(before),
        start_s: bounds.start.as_secs_f64(),
        end_s: bounds.end.as_secs_f64(),
        asked_ops_per_s: matches!(asked.level, crate::workload::Level::Rate(_)).then_some(mean),
        asked_threads: matches!(asked.level, crate::workload::Level::Threads(_)).then_some(mean),
        achieved_ops_per_s: achieved,
        all: op_report(ALL, all, achieved, open, Vec::new()),
        ops,
        slos: Vec::new(),
    }
}

/// A `stage` event at each stage's start and end.
pub(crate) fn stage_events(stages: &[super::summary::StageReport], started_ms: i64) -> Vec<Event> {
    let at = |s: f64| (started_ms + (s * 1000.0).round() as i64).max(0) as u64;
    let mut out = Vec::with_capacity(stages.len() * 2);
    for st in stages {
        for (phase, t) in [(Phase::Start, st.start_s), (Phase::End, st.end_s)] {
            out.push(Event {
                at_ms: at(t),
                kind: Kind::Stage,
                phase,
                table: String::new(),
                region: String::new(),
                server: String::new(),
                detail: format!("stage {}: {}", st.stage, st.asked),
                source: "run",
            });
        }
    }
    out
}

/// An operation's report from its totals, without intervals.
pub(crate) fn op_report_of(name: &str, t: &OpStats, rate: f64, open: bool) -> OpReport {
    op_report(name, t, rate, open, Vec::new())
}

pub(crate) fn empty_op(name: &str) -> OpReport {
    op_report(name, &OpStats::default(), 0.0, false, Vec::new())
}

fn op_report(name: &str, t: &OpStats, rate: f64, open: bool, interval_ops_per_s: Vec<f64>) -> OpReport {
    OpReport {
        op: name.to_string(),
        // Set by the callers that know the operation.
        writes: false,
        count: t.ok(),
        errors: t.failed(),
        errors_by_kind: t
            .errors
            .iter()
            .map(|(k, (n, first))| {
                (
                    k.clone(),
                    ErrorCount {
                        count: *n,
                        first: first.clone(),
                    },
                )
            })
            .collect(),
        late: t.late,
        ops_per_s: rate,
        response: Summary::of(&t.response),
        service: open.then(|| Summary::of(&t.service)),
        response_histogram: stats::encode(&t.response),
        service_histogram: open.then(|| stats::encode(&t.service)),
        interval_ops_per_s,
        timeline: t.stale.as_ref().map(|_| super::summary::TimelineReads::of(t)),
    }
}

/// Operations an interval must average, over the run, for one in which none finished to be
/// a silence rather than a pause of a slow schedule.
const SILENT_AFTER: f64 = 5.0;

/// The spans of consecutive intervals with failures, retries or no answer at all (where the
/// run averaged [`SILENT_AFTER`] operations an interval), each with the p99 of all
/// operations in it and the interval on either side.
pub fn disturbances(intervals: &[Interval]) -> Vec<super::summary::Disturbance> {
    let done = |iv: &Interval| iv.all.ok + iv.all.errors;
    let seconds: f64 = intervals.iter().map(|iv| iv.length.as_secs_f64()).sum();
    let rate = intervals.iter().map(done).sum::<u64>() as f64 / seconds.max(1e-3);
    // Silent: no answer where the run's mean rate expected several (a stopped run's last
    // interval is short, and may see none for that alone).
    let silent = |iv: &Interval| rate * iv.length.as_secs_f64() >= SILENT_AFTER && done(iv) == 0;
    let hit = |iv: &Interval| iv.all.errors > 0 || iv.retries.unwrap_or(0) > 0 || silent(iv);
    let mut out = Vec::new();
    let mut k = 0;
    while k < intervals.len() {
        if !hit(&intervals[k]) {
            k += 1;
            continue;
        }
        let first = k;
        while k < intervals.len() && hit(&intervals[k]) {
            k += 1;
        }
        let span = &intervals[first..k];
        let mut around = stats::histogram();
        for iv in &intervals[first.saturating_sub(1)..(k + 1).min(intervals.len())] {
            if let Ok(h) = stats::decode(&iv.all.histogram) {
                around.add(&h).expect("same bounds");
            }
        }
        let last = &span[span.len() - 1];
        out.push(super::summary::Disturbance {
            start_s: span[0].start.as_secs_f64(),
            end_s: (last.start + last.length).as_secs_f64(),
            retries: span.iter().map(|iv| iv.retries.unwrap_or(0)).sum(),
            errors: span.iter().map(|iv| iv.all.errors).sum(),
            count: span.iter().map(|iv| iv.all.ok + iv.all.errors).sum(),
            silent_s: span
                .iter()
                .filter(|iv| silent(iv))
                .map(|iv| iv.length.as_secs_f64())
                .sum(),
            p99_around_ns: Summary::of(&around).p99,
        });
    }
    out
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut f = std::fs::File::create(path).map_err(|e| Error::at(path, e))?;
    f.write_all(bytes).map_err(|e| Error::at(path, e))
}

/// A new folder `reports/<workload>-<UTC>` (with `-2`, `-3`, ... when taken).
pub fn folder(reports: &Path, name: &str, started_ms: i64) -> PathBuf {
    let stem = format!("{name}-{}", crate::date::compact(started_ms));
    let mut dir = reports.join(&stem);
    let mut n = 2;
    while dir.exists() {
        dir = reports.join(format!("{stem}-{n}"));
        n += 1;
    }
    dir
}

/// An interval's figures from its histogram and failure count (used when merging).
pub fn interval_op(errors: u64, h: &Histogram) -> IntervalOp {
    IntervalOp {
        ok: h.len(),
        errors,
        summary: Summary::of(h),
        histogram: stats::encode(h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// An interval of one second: `ms` as the response times that succeeded, `errors`
    /// failures, `retries` counted.
    fn interval(k: u32, ms: &[u64], errors: u64, retries: Option<u64>) -> Interval {
        let mut s = OpStats::default();
        for &m in ms {
            stats::record(&mut s.response, m * 1_000_000);
        }
        if errors > 0 {
            s.errors.insert("timeout".into(), (errors, "slow".into()));
        }
        Interval {
            start: Duration::from_secs(k as u64),
            length: Duration::from_secs(1),
            ops: vec![IntervalOp::of(&s)],
            all: IntervalOp::of(&s),
            retries,
        }
    }

    #[test]
    fn disturbances_are_the_runs_of_seconds_with_retries_or_errors() {
        let intervals = [
            interval(0, &[1; 49], 0, Some(0)),
            interval(1, &[50], 0, Some(3)),
            interval(2, &[900], 1, Some(2)),
            interval(3, &[2; 49], 0, Some(0)),
            interval(4, &[1; 10], 0, None),
            interval(5, &[1], 1, None),
        ];
        let d = disturbances(&intervals);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].start_s, d[0].end_s), (1.0, 3.0));
        assert_eq!((d[0].retries, d[0].errors, d[0].count), (5, 1, 3));
        // Around 1-3 s: seconds 0 to 3, 100 times of which the two slowest are 50 and 900 ms.
        let p99_ms = d[0].p99_around_ns / 1_000_000;
        assert!((49..=51).contains(&p99_ms), "{p99_ms} ms");
        assert_eq!((d[1].start_s, d[1].end_s), (5.0, 6.0));
        assert_eq!((d[1].retries, d[1].errors, d[1].count), (0, 1, 2));
        assert!(disturbances(&intervals[3..5]).is_empty());
    }

    #[test]
    fn seconds_with_no_answer_disturb_a_run_that_answers_every_second_and_not_a_slow_one() {
        let busy = [
            interval(0, &[1; 20], 0, Some(0)),
            interval(1, &[], 0, Some(0)),
            interval(2, &[], 0, Some(0)),
            interval(3, &[30_000; 2], 0, Some(1)),
            interval(4, &[1; 20], 0, Some(0)),
        ];
        let d = disturbances(&busy);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].start_s, d[0].end_s, d[0].silent_s), (1.0, 4.0, 2.0));
        assert_eq!((d[0].retries, d[0].count), (1, 2));
        // Four operations a second on average: a second without one is a pause, no silence.
        let slow = [
            interval(0, &[1; 6], 0, Some(0)),
            interval(1, &[], 0, Some(0)),
            interval(2, &[1; 6], 0, Some(0)),
        ];
        assert!(disturbances(&slow).is_empty());
        // A stopped run's last interval of 20 ms: one operation was due in it, none is no
        // silence; in 200 ms, eight were.
        let mut stopped = vec![interval(0, &[1; 40], 0, Some(0)), interval(1, &[], 0, Some(0))];
        stopped[1].length = Duration::from_millis(20);
        assert!(disturbances(&stopped).is_empty());
        stopped[1].length = Duration::from_millis(200);
        assert_eq!(disturbances(&stopped)[0].silent_s, 0.2);
    }
}
