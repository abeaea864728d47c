//! Reading a report folder back (for `compare` and `report merge`), and merging the reports
//! of the shards of one run into one.

use super::Error;
use super::run::{RunData, interval_op};
use super::summary::{ALL, RunSummary};
use crate::run::Interval;
use crate::stats::{self, Histogram, OpStats};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Reads the report folder `dir` (or the folder of a `summary.json` path).
pub fn read(dir: &Path) -> Result<RunData, Error> {
    let dir = if dir.file_name().is_some_and(|n| n == "summary.json") {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let file = dir.join("summary.json");
    let text = std::fs::read_to_string(&file).map_err(|e| Error::at(&file, e))?;
    let summary: RunSummary = serde_json::from_str(&text).map_err(|e| Error::at(&file, e))?;
    if summary.format != super::summary::FORMAT {
        return Err(Error::at(
            &file,
            format!("format {} is not {}", summary.format, super::summary::FORMAT),
        ));
    }
    let mut totals = Vec::with_capacity(summary.ops.len());
    for (i, o) in summary.ops.iter().enumerate() {
        let field = |f: &str| format!("ops[{i}] ({}).{f}", o.op);
        let bad = |f: &str, e: String| Error::at(&file, format!("{}: {e}", field(f)));
        let response = stats::decode(&o.response_histogram).map_err(|e| bad("response_histogram", e))?;
        if response.len() != o.count {
            return Err(bad(
                "count",
                format!("{} disagrees with its histogram's {}", o.count, response.len()),
            ));
        }
        let service = match &o.service_histogram {
            Some(h) => stats::decode(h).map_err(|e| bad("service_histogram", e))?,
            None => stats::histogram(),
        };
        totals.push(OpStats {
            response,
            service,
            errors: o
                .errors_by_kind
                .iter()
                .map(|(k, e)| (k.clone(), (e.count, e.first.clone())))
                .collect(),
            late: o.late,
        });
    }
    let errors = interval_errors(&dir.join("timeseries.csv"))?;
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
        });
    }
    Ok(RunData {
        ops_per_s: summary.ops.iter().map(|o| Some(o.ops_per_s)).collect(),
        summary,
        totals,
        intervals,
        spread: None,
    })
}

/// Failures per (interval index, operation) from `timeseries.csv`.
fn interval_errors(path: &Path) -> Result<HashMap<(usize, String), u64>, Error> {
    let mut r = csv::Reader::from_path(path).map_err(|e| Error::at(path, e))?;
    let headers = r.headers().map_err(|e| Error::at(path, e))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::at(path, format!("no {name} column")))
    };
    let (c_start, c_op, c_err) = (col("start_s")?, col("op")?, col("errors")?);
    let mut out = HashMap::new();
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
        }
    }
    Ok(out)
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

/// Merges the reports of the shards of one run: histograms and counts add up, throughputs add
/// up (the shards ran side by side), intervals align by their index. Every report must be of
/// the same workload data.
pub fn merge(dirs: &[PathBuf]) -> Result<RunData, Error> {
    let mut reports = Vec::with_capacity(dirs.len());
    for d in dirs {
        reports.push(read(d)?);
    }
    let Some(first) = reports.first() else {
        return Err(Error::new("report merge", "no report folder given"));
    };
    for (d, r) in dirs.iter().zip(&reports).skip(1) {
        if r.summary.workload.data_digest != first.summary.workload.data_digest {
            return Err(Error::at(
                d,
                format!(
                    "workload data digest {} differs from {}'s {}: not shards of one run",
                    r.summary.workload.data_digest,
                    dirs[0].display(),
                    first.summary.workload.data_digest
                ),
            ));
        }
    }
    let mut names: Vec<String> = Vec::new();
    for r in &reports {
        for o in &r.summary.ops {
            if !names.contains(&o.op) {
                names.push(o.op.clone());
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
    let mut reasons = Vec::new();
    let (mut threads, mut identities) = (0, Vec::<String>::new());
    for (d, r) in dirs.iter().zip(&reports) {
        let s = &r.summary;
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
        if !identities.contains(&s.backend.identity) {
            identities.push(s.backend.identity.clone());
        }
    }
    summary.started = crate::date::iso(summary.started_ms);
    summary.finished = crate::date::iso(summary.finished_ms);
    summary.config.run.threads = threads;
    summary.config.shard = format!("{} merged", reports.len());
    summary.backend.identity = identities.join("; ");
    summary.merged_from = dirs.iter().map(|d| d.display().to_string()).collect();
    // Each shard's regions.csv stays with its shard; the merge does not add them up.
    summary.regions = Vec::new();
    // A shard's verdicts judged its own figures, not the merged ones.
    summary.slos = Vec::new();
    summary.ops = names.iter().map(|n| super::run::empty_op(n)).collect();
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
        .map(|(ops, (start, length))| {
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
            }
        })
        .collect();
    Ok(RunData {
        summary,
        totals,
        ops_per_s: rates.into_iter().map(Some).collect(),
        intervals,
        spread: None,
    })
}
