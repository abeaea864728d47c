//! Reading a report folder back (for `compare` and `report merge`), and merging the reports
//! of the shards of one run into one.

use super::Error;
use super::run::{RunData, interval_op};
use super::summary::{ALL, RunSummary};
use crate::load::Shard;
use crate::run::Interval;
use crate::stats::{self, Histogram, OpStats};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A report folder's `summary.json` alone, its layout's version checked: what a reader of
/// many runs' figures needs (`tallrow history`), without their interval logs.
pub fn summary(dir: &Path) -> Result<RunSummary, Error> {
    let file = dir.join("summary.json");
    let text = std::fs::read_to_string(&file).map_err(|e| Error::at(&file, e))?;
    let summary: RunSummary = serde_json::from_str(&text).map_err(|e| Error::at(&file, e))?;
    if summary.format != super::summary::FORMAT {
        return Err(Error::at(
            &file,
            format!("format {} is not {}", summary.format, super::summary::FORMAT),
        ));
    }
    Ok(summary)
}

/// Reads the report folder `dir` (or the folder of a `summary.json` path).
pub fn read(dir: &Path) -> Result<RunData, Error> {
    let dir = if dir.file_name().is_some_and(|n| n == "summary.json") {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let file = dir.join("summary.json");
    let summary = summary(dir)?;
    let mut totals = Vec::with_capacity(summary.ops.len());
    for (i, o) in summary.ops.iter().enumerate() {
        totals.push(op_stats(o).map_err(|(f, e)| Error::at(&file, format!("ops[{i}] ({}).{f}: {e}", o.op)))?);
    }
    for st in &summary.stages {
        for o in &st.ops {
            op_stats(o).map_err(|(f, e)| Error::at(&file, format!("stages[{}].ops ({}).{f}: {e}", st.stage, o.op)))?;
        }
    }
    let (errors, retries) = interval_errors(&dir.join("timeseries.csv"))?;
    let mut per_op: Vec<Vec<(Duration, Duration, Histogram)>> = Vec::new();
    for o in &summary.ops {
        per_op.push(interval_log(&dir.join(format!("{}.hlog", o.op)))?);
    }
    let n = per_op.iter().map(Vec::len).max().unwrap_or(0);
    let mut intervals = Vec::with_capacity(n);
    for k in 0..n {
        let mut ops = Vec::with_capacity(per_op.len());
        let mut all = stats::histogram();
        let mut all_errors = 0;
        let (mut start, mut length) = (Duration::ZERO, Duration::ZERO);
        for (i, log) in per_op.iter().enumerate() {
            let name = &summary.ops[i].op;
            let Some((s, l, h)) = log.get(k) else {
                return Err(Error::at(
                    &dir.join(format!("{name}.hlog")),
                    format!("has {} intervals, other operations {n}", log.len()),
                ));
            };
            (start, length) = (*s, *l);
            let e = errors.get(&(k, name.clone())).copied().unwrap_or(0);
            all.add(h).expect("same bounds");
            all_errors += e;
            ops.push(interval_op(e, h));
        }
        intervals.push(Interval {
            start,
            length,
            ops,
            all: interval_op(all_errors, &all),
            retries: retries.get(&k).copied(),
        });
    }
    Ok(RunData {
        ops_per_s: summary.ops.iter().map(|o| Some(o.ops_per_s)).collect(),
        summary,
        totals,
        intervals,
        spread: None,
        cluster: None,
        events: Vec::new(),
    })
}

/// What a report says of one operation, as recorded: its histograms decoded, checked against
/// its count. An error names the field.
fn op_stats(o: &super::summary::OpReport) -> Result<OpStats, (&'static str, String)> {
    let response = stats::decode(&o.response_histogram).map_err(|e| ("response_histogram", e))?;
    if response.len() != o.count {
        return Err((
            "count",
            format!("{} disagrees with its histogram's {}", o.count, response.len()),
        ));
    }
    let service = match &o.service_histogram {
        Some(h) => stats::decode(h).map_err(|e| ("service_histogram", e))?,
        None => stats::histogram(),
    };
    Ok(OpStats {
        response,
        service,
        errors: o
            .errors_by_kind
            .iter()
            .map(|(k, e)| (k.clone(), (e.count, e.first.clone())))
            .collect(),
        late: o.late,
        stale: match &o.timeline {
            Some(t) => {
                let h = stats::decode(&t.stale_histogram).map_err(|e| ("timeline.stale_histogram", e))?;
                if h.len() != t.stale {
                    return Err((
                        "timeline.stale",
                        format!("{} disagrees with its histogram's {}", t.stale, h.len()),
                    ));
                }
                Some(h)
            }
            None => None,
        },
    })
}

/// The shards' stages added up, stage by stage: the operations due in each, the rates asked
/// and achieved (each shard ran every stage at its level).
fn add_up_stages(reports: &[RunData], open: bool) -> Vec<super::summary::StageReport> {
    let n = reports.iter().map(|r| r.summary.stages.len()).max().unwrap_or(0);
    (0..n)
        .filter_map(|k| {
            let parts: Vec<&super::summary::StageReport> =
                reports.iter().filter_map(|r| r.summary.stages.get(k)).collect();
            let first = *parts.first()?;
            let mut names: Vec<String> = Vec::new();
            let mut writes: Vec<bool> = Vec::new();
            let mut totals: Vec<OpStats> = Vec::new();
            let mut rates: Vec<f64> = Vec::new();
            for p in &parts {
                for o in &p.ops {
                    // Checked when the report was read.
                    let Ok(t) = op_stats(o) else { continue };
                    match names.iter().position(|n| *n == o.op) {
                        Some(j) => {
                            totals[j].add(&t);
                            rates[j] += o.ops_per_s;
                        }
                        None => {
                            names.push(o.op.clone());
                            writes.push(o.writes_op());
                            totals.push(t);
                            rates.push(o.ops_per_s);
                        }
                    }
                }
            }
            let mut all = OpStats::default();
            let ops = names
                .iter()
                .zip(&writes)
                .zip(&totals)
                .zip(&rates)
                .map(|(((name, &writes), t), &rate)| {
                    all.add(t);
                    super::summary::OpReport {
                        writes,
                        ..super::run::op_report_of(name, t, rate, open)
                    }
                })
                .collect();
            let sum = |f: &dyn Fn(&super::summary::StageReport) -> Option<f64>| -> Option<f64> {
                parts.iter().map(|p| f(p)).sum::<Option<f64>>()
            };
            Some(super::summary::StageReport {
                stage: first.stage,
                asked: first.asked.clone(),
                start_s: first.start_s,
                end_s: first.end_s,
                asked_ops_per_s: sum(&|p| p.asked_ops_per_s),
                asked_threads: sum(&|p| p.asked_threads),
                achieved_ops_per_s: rates.iter().sum(),
                all: super::run::op_report_of(super::summary::ALL, &all, rates.iter().sum(), open),
                ops,
                slos: Vec::new(),
            })
        })
        .collect()
}

/// Failures per (interval index, operation), and retries per interval index where counted,
/// from `timeseries.csv` (a report older than its `retries` column has none).
type IntervalCounts = (HashMap<(usize, String), u64>, HashMap<usize, u64>);

fn interval_errors(path: &Path) -> Result<IntervalCounts, Error> {
    let mut r = csv::Reader::from_path(path).map_err(|e| Error::at(path, e))?;
    let headers = r.headers().map_err(|e| Error::at(path, e))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::at(path, format!("no {name} column")))
    };
    let (c_start, c_op, c_err) = (col("start_s")?, col("op")?, col("errors")?);
    let c_retries = col("retries").ok();
    let (mut out, mut retries) = (HashMap::new(), HashMap::new());
    let mut index = 0usize;
    let mut last_start: Option<String> = None;
    for (line, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| Error::at(path, e))?;
        let at = |c: usize| rec.get(c).unwrap_or("");
        let start = at(c_start).to_string();
        if last_start.as_ref().is_some_and(|l| *l != start) {
            index += 1;
        }
        last_start = Some(start);
        let errors: u64 = at(c_err).parse().map_err(|_| {
            Error::at(
                path,
                format!("line {}: errors: {:?} is not a count", line + 2, at(c_err)),
            )
        })?;
        if at(c_op) != ALL {
            out.insert((index, at(c_op).to_string()), errors);
        } else if let Some(c) = c_retries.filter(|&c| !at(c).is_empty()) {
            let n: u64 = at(c)
                .parse()
                .map_err(|_| Error::at(path, format!("line {}: retries: {:?} is not a count", line + 2, at(c))))?;
            retries.insert(index, n);
        }
    }
    Ok((out, retries))
}

/// The intervals of an interval log: start (since the base time), length, histogram.
fn interval_log(path: &Path) -> Result<Vec<(Duration, Duration, Histogram)>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::at(path, e))?;
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        match entry {
            Ok(LogEntry::Interval(iv)) => {
                let h = stats::decode(iv.encoded_histogram()).map_err(|e| Error::at(path, e))?;
                out.push((iv.start_timestamp(), iv.duration(), h));
            }
            Ok(_) => {}
            Err(e) => return Err(Error::at(path, format!("not an interval log: {e:?}"))),
        }
    }
    Ok(out)
}

/// The report folders `paths` name: each path that holds a `summary.json` is one; any other
/// folder stands for every report folder under it (a folder of shards' reports), in path
/// order. A folder with none under it is an error.
pub fn find(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), Error> {
        if dir.join("summary.json").is_file() {
            out.push(dir.to_path_buf());
            return Ok(());
        }
        if depth == 0 {
            return Ok(());
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::at(dir, e))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        subs.sort();
        for sub in subs {
            walk(&sub, depth - 1, out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        let p = if p.file_name().is_some_and(|n| n == "summary.json") {
            p.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            p.clone()
        };
        if !p.is_dir() {
            return Err(Error::at(&p, "no such folder"));
        }
        let before = out.len();
        // A shard's report sits a few folders down at most (RUN/shards/INDEX/NAME-UTC).
        walk(&p, 4, &mut out)?;
        if out.len() == before {
            return Err(Error::at(&p, "no report folder (one holding a summary.json) in it"));
        }
    }
    Ok(out)
}

/// A report's shard; `None` for a merged report.
fn shard_of(s: &RunSummary) -> Option<Shard> {
    match (s.config.shard_index, s.config.shard_count) {
        (Some(index), Some(count)) if index < count => Some(Shard { index, count }),
        // Reports written before the index and count were recorded: `i/N`.
        _ => s.config.shard.parse().ok(),
    }
}

/// A report read for merging: its folder, its figures, its shard.
type Part = (PathBuf, RunData, Shard);

/// Checks that `parts` (at least one) are shards of one run (the same count, no index twice)
/// and orders them by index; returns the count and the shards missing.
fn shards(parts: &mut [Part]) -> Result<(u64, Vec<Shard>), Error> {
    let (first, count) = (parts[0].0.clone(), parts[0].2.count);
    for (k, (d, _, s)) in parts.iter().enumerate() {
        if s.count != count {
            return Err(Error::at(
                d,
                format!(
                    "shard {s} of a run in {} shards, but {} is of a run in {count}: not shards of one run",
                    s.count,
                    first.display()
                ),
            ));
        }
        if let Some((other, _, _)) = parts[..k].iter().find(|p| p.2 == *s) {
            return Err(Error::at(
                d,
                format!("shard {s} again (also {}): one report per shard", other.display()),
            ));
        }
    }
    parts.sort_by_key(|p| p.2.index);
    let missing = (0..count)
        .map(|index| Shard { index, count })
        .filter(|s| !parts.iter().any(|p| p.2 == *s))
        .collect();
    Ok((count, missing))
}

/// Merges the reports of the shards of one run: histograms and counts add up, throughputs add
/// up (the shards ran side by side), intervals align by their index, and so do the regions'
/// tallies (`regions.csv`) when every shard saw the same regions. Every report must be of the
/// same workload data and a shard of the same run; a shard missing is an error unless
/// `partial`, and the merged report then names it and is marked invalid. `dirs` are report
/// folders or folders of them ([`find`]).
pub fn merge(dirs: &[PathBuf], partial: bool) -> Result<Merged, Error> {
    let found = find(dirs)?;
    let mut items: Vec<Part> = Vec::with_capacity(found.len());
    for d in found {
        let r = read(&d)?;
        let Some(of) = shard_of(&r.summary) else {
            return Err(Error::at(
                &d,
                format!(
                    "a merged report ({}): merge the shards' own reports",
                    r.summary.config.shard
                ),
            ));
        };
        items.push((d, r, of));
    }
    let Some((d0, r0, _)) = items.first() else {
        return Err(Error::new("report merge", "no report folder given"));
    };
    for (d, r, _) in items.iter().skip(1) {
        if r.summary.workload.data_digest != r0.summary.workload.data_digest {
            return Err(Error::at(
                d,
                format!(
                    "workload data digest {} differs from {}'s {}: not shards of one run",
                    r.summary.workload.data_digest,
                    d0.display(),
                    r0.summary.workload.data_digest
                ),
            ));
        }
    }
    let (count, missing) = shards(&mut items)?;
    let named = |v: &[Shard]| v.iter().map(Shard::to_string).collect::<Vec<_>>();
    if !missing.is_empty() && !partial {
        let found: Vec<Shard> = items.iter().map(|r| r.2).collect();
        let place = dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::new(
            &place,
            format!(
                "shard {} missing (found {}): a shard failed or has not finished; --partial merges the shards found and records the missing",
                named(&missing).join(", "),
                if found.is_empty() {
                    "none".into()
                } else {
                    named(&found).join(", ")
                }
            ),
        ));
    }
    let regions = merge_regions(&items);
    // One observer's events, not each shard's of the same cluster: the first shard's that
    // watched (on Kubernetes, shard 0).
    let observed = items
        .iter()
        .find_map(|r| r.1.summary.events.clone().map(|e| (r.0.clone(), e)));
    let dirs: Vec<PathBuf> = items.iter().map(|r| r.0.clone()).collect();
    let reports: Vec<RunData> = items.into_iter().map(|r| r.1).collect();
    let mut data = add_up(&dirs, reports)?;
    data.summary.config.shard_index = None;
    data.summary.config.shard_count = Some(count);
    if !missing.is_empty() {
        data.summary.config.shard = format!("{} of {count} merged", dirs.len());
        let why = format!(
            "shard {} missing: the figures are of {} of {count} shards",
            named(&missing).join(", "),
            dirs.len()
        );
        data.summary.invalid_reason = Some(match data.summary.invalid_reason.take() {
            Some(r) => format!("{why}; {r}"),
            None => why,
        });
        data.summary.valid = false;
    }
    data.summary.missing_shards = named(&missing);
    data.summary.events = observed.as_ref().map(|(_, e)| e.clone());
    if observed.is_some() {
        // The observing shard's events.csv, copied whole, has the stages too.
        data.events.clear();
    }
    let regions_note = match regions {
        Ok(spread) => {
            data.spread = spread;
            None
        }
        Err(why) => Some(why),
    };
    Ok(Merged {
        data,
        dirs,
        regions_note,
        observed_from: observed.map(|(d, _)| d),
    })
}

/// A merged report and what went into it.
#[derive(Debug)]
pub struct Merged {
    /// The merged figures.
    pub data: RunData,
    /// The shards' report folders, by index.
    pub dirs: Vec<PathBuf>,
    /// Why no `regions.csv` was merged, when the shards had them but they do not add up.
    pub regions_note: Option<String>,
    /// The shard whose `events.csv` and `cluster.csv` the merge keeps, when one watched.
    pub observed_from: Option<PathBuf>,
}

/// The shards' `regions.csv` added up: `None` when no shard counted regions, `Err` saying
/// why not when some did but they cannot be added.
fn merge_regions(items: &[Part]) -> Result<Option<crate::store::counted::Spread>, String> {
    use crate::regions::report::{add_up, read_csv};
    let mut parts = Vec::new();
    for (d, r, _) in items {
        let path = d.join("regions.csv");
        match std::fs::read(&path) {
            Ok(bytes) => parts.push(read_csv(&bytes).map_err(|e| format!("{}: {e}", path.display()))?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !parts.is_empty() || !r.summary.regions.is_empty() {
                    return Err(format!("{} has no regions.csv", d.display()));
                }
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    if parts.len() != items.len() {
        return Err("not every shard's report has a regions.csv".into());
    }
    let column = Duration::from_secs_f64(items.iter().map(|r| r.1.summary.measured_s).fold(0.0, f64::max));
    add_up(&parts, column).map(Some)
}

/// Adds up reports already checked to be shards of one run.
fn add_up(dirs: &[PathBuf], reports: Vec<RunData>) -> Result<RunData, Error> {
    let first = &reports[0];
    let mut names: Vec<String> = Vec::new();
    let mut writes: Vec<bool> = Vec::new();
    for r in &reports {
        for o in &r.summary.ops {
            if !names.contains(&o.op) {
                names.push(o.op.clone());
                writes.push(o.writes_op());
            }
        }
    }
    let mut summary = first.summary.clone();
    let mut totals: Vec<OpStats> = names.iter().map(|_| OpStats::default()).collect();
    let mut rates = vec![0.0; names.len()];
    let n_intervals = reports.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    let mut hist: Vec<Vec<(Histogram, u64)>> = (0..n_intervals)
        .map(|_| names.iter().map(|_| (stats::histogram(), 0)).collect())
        .collect();
    let mut spans: Vec<(Duration, Duration)> = vec![(Duration::ZERO, Duration::ZERO); n_intervals];
    // Retries add up where any shard counted them.
    let mut interval_retries: Vec<Option<u64>> = vec![None; n_intervals];
    let mut reasons = Vec::new();
    let (mut threads, mut identities) = (0, Vec::<String>::new());
    let mut retries = std::collections::BTreeMap::new();
    for (d, r) in dirs.iter().zip(&reports) {
        let s = &r.summary;
        for (k, iv) in r.intervals.iter().enumerate() {
            if let Some(n) = iv.retries {
                *interval_retries[k].get_or_insert(0) += n;
            }
        }
        for (i, o) in s.ops.iter().enumerate() {
            let j = names.iter().position(|n| *n == o.op).expect("collected above");
            totals[j].add(&r.totals[i]);
            rates[j] += r.ops_per_s[i].unwrap_or(o.ops_per_s);
            for (k, iv) in r.intervals.iter().enumerate() {
                let h = stats::decode(&iv.ops[i].histogram).map_err(|e| Error::at(d, e))?;
                hist[k][j].0.add(&h).expect("same bounds");
                hist[k][j].1 += iv.ops[i].errors;
                spans[k] = (iv.start, spans[k].1.max(iv.length));
            }
        }
        summary.started_ms = summary.started_ms.min(s.started_ms);
        summary.finished_ms = summary.finished_ms.max(s.finished_ms);
        summary.measured_s = summary.measured_s.max(s.measured_s);
        if let Some(why) = &s.invalid_reason {
            reasons.push(format!("{}: {why}", d.display()));
        }
        threads += s.config.run.threads;
        for (kind, n) in &s.retries {
            *retries.entry(kind.clone()).or_default() += n;
        }
        if !identities.contains(&s.backend.identity) {
            identities.push(s.backend.identity.clone());
        }
    }
    summary.started = crate::date::iso(summary.started_ms);
    summary.finished = crate::date::iso(summary.finished_ms);
    summary.config.run.threads = threads;
    summary.retries = retries;
    summary.config.shard = format!("{} merged", reports.len());
    summary.backend.identity = identities.join("; ");
    summary.merged_from = dirs.iter().map(|d| d.display().to_string()).collect();
    // Recomputed from the added-up regions.csv when there is one (see `merge`).
    summary.regions = Vec::new();
    // A shard's verdicts judged its own figures, not the merged ones.
    summary.slos = Vec::new();
    summary.ops = names
        .iter()
        .zip(&writes)
        .map(|(n, &writes)| super::summary::OpReport {
            writes,
            ..super::run::empty_op(n)
        })
        .collect();
    summary.stages = add_up_stages(&reports, summary.open_loop);
    if summary.open_loop {
        let (late, total) = totals.iter().fold((0, 0), |(l, t), s| (l + s.late, t + s.total()));
        let share = if total == 0 {
            0.0
        } else {
            1.0 - late as f64 / total as f64
        };
        summary.on_time_share = Some(share);
        if share < crate::run::ON_TIME_MIN {
            reasons.push(format!(
                "together only {:.1}% of operations started within 1 s of schedule",
                share * 100.0
            ));
        }
    }
    summary.valid = reasons.is_empty();
    summary.invalid_reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    let intervals = hist
        .into_iter()
        .zip(spans)
        .zip(interval_retries)
        .map(|((ops, (start, length)), retries)| {
            let mut all = stats::histogram();
            let mut errors = 0;
            for (h, e) in &ops {
                all.add(h).expect("same bounds");
                errors += e;
            }
            Interval {
                start,
                length,
                ops: ops.iter().map(|(h, e)| interval_op(*e, h)).collect(),
                all: interval_op(errors, &all),
                retries,
            }
        })
        .collect();
    let (stages_of, started_ms) = (summary.stages.clone(), summary.started_ms);
    Ok(RunData {
        summary,
        totals,
        ops_per_s: rates.into_iter().map(Some).collect(),
        intervals,
        spread: None,
        cluster: None,
        events: super::run::stage_events(&stages_of, started_ms),
    })
}
