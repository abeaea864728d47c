//! The cluster's side of a run in its report: `events.csv` and `cluster.csv` on the run's
//! time line (seconds from the start of measuring, and UTC), the count of events per kind
//! for `summary.json`, and the line the text table ends with.

use crate::observe::events::{Event, Kind, Phase};
use crate::observe::watch::{JmxSample, Observed, Sample};
use std::collections::{BTreeMap, HashMap};

fn utc(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string()
}

fn t_s(ms: u64, started_ms: i64) -> String {
    format!("{:.3}", (ms as i64 - started_ms) as f64 / 1000.0)
}

/// Names each event's table as the workload's reports name it everywhere else
/// (`regions.csv`, the tables' figures): without the `storage.table_prefix` that keeps it
/// apart on the cluster. The cluster's own name stays in the region's; a table without the
/// prefix (another workload's) keeps its name.
pub fn by_schema(events: &mut [Event], prefix: &str) {
    if prefix.is_empty() {
        return;
    }
    for e in events {
        if let Some(t) = crate::store::prefixed::logical(prefix, &e.table) {
            e.table = t;
        }
    }
}

/// `events.csv`: `t_s,utc,kind,table,region,server,detail,source`, in time order. An event
/// that spans time has two rows, their details beginning `start` and `end`.
pub fn events_csv(events: &[Event], started_ms: i64) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["t_s", "utc", "kind", "table", "region", "server", "detail", "source"])
        .expect("write to memory");
    for e in events {
        let detail = match (e.phase, e.detail.is_empty()) {
            (Phase::At, _) => e.detail.clone(),
            (Phase::Start, true) => "start".into(),
            (Phase::End, true) => "end".into(),
            (Phase::Start, false) => format!("start, {}", e.detail),
            (Phase::End, false) => format!("end, {}", e.detail),
        };
        w.write_record([
            t_s(e.at_ms, started_ms).as_str(),
            &utc(e.at_ms),
            e.kind.name(),
            &e.table,
            &e.region,
            &e.server,
            &detail,
            e.source,
        ])
        .expect("write to memory");
    }
    w.into_inner().expect("flush to memory")
}

/// `cluster.csv`: a row per region server report, and one per read of a server's `/jmx`, in
/// time order. A report's row leaves the columns only `/jmx` has (queues, blocked updates,
/// GC, JVM pauses) empty; a `/jmx` row leaves the report's empty, and its counters (blocked
/// updates, GC, pauses: since the read before) empty on a server's first read.
pub fn cluster_csv(samples: &[Sample], jmx: &[JmxSample], started_ms: i64) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "t_s",
        "utc",
        "server",
        "reads_per_s",
        "writes_per_s",
        "regions",
        "memstore_mib",
        "most_store_files",
        "compactions_running",
        "compactions_queued",
        "flushes_queued",
        "rpc_queued",
        "blocked_updates_ms",
        "blocked_requests",
        "gc_ms",
        "jvm_pauses",
    ])
    .expect("write to memory");
    let rate = |r: Option<f64>| r.map(|r| format!("{r:.1}")).unwrap_or_default();
    let count = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
    let mut rows: Vec<(u64, &str, Vec<String>)> = Vec::with_capacity(samples.len() + jmx.len());
    for s in samples {
        let mut row = vec![
            rate(s.read_per_s),
            rate(s.write_per_s),
            s.regions.to_string(),
            s.memstore_mib.to_string(),
            s.max_store_files.to_string(),
            s.compacting.to_string(),
        ];
        row.extend(std::iter::repeat_n(String::new(), 7));
        rows.push((s.at_ms, &s.server, row));
    }
    for j in jmx {
        let mut row = vec![String::new(); 6];
        row.extend([
            j.compactions_queued.to_string(),
            j.flushes_queued.to_string(),
            j.rpc_queued.to_string(),
            count(j.blocked_updates_ms),
            count(j.blocked_requests),
            count(j.gc_ms),
            count(j.pauses),
        ]);
        rows.push((j.at_ms, &j.server, row));
    }
    rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (at, server, row) in rows {
        let mut record = vec![t_s(at, started_ms), utc(at), server.to_string()];
        record.extend(row);
        w.write_record(&record).expect("write to memory");
    }
    w.into_inner().expect("flush to memory")
}

/// Events per kind, for `summary.json`: a span counts once (its start, or its end when it
/// began before the observer looked).
pub fn counts(events: &[Event]) -> BTreeMap<String, u64> {
    let mut started: HashMap<(Kind, &str, &str), u64> = HashMap::new();
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for e in events {
        let key = (e.kind, e.region.as_str(), e.server.as_str());
        match e.phase {
            Phase::Start => *started.entry(key).or_default() += 1,
            Phase::End => match started.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    continue;
                }
                _ => {}
            },
            Phase::At => {}
        }
        *out.entry(e.kind.name().to_string()).or_default() += 1;
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The line after the text table, e.g. `cluster: 2 splits, 1 move, 3 major compactions
/// (longest 12.4 s on rs2:16020), 0 servers lost`.
pub fn line(seen: &Observed) -> String {
    let mut out = format!("cluster: {}", tally(&seen.events, true));
    if seen.failed_reads > 0 {
        out.push_str(&format!(
            " ({} of the observer's reads failed; the last: {})",
            seen.failed_reads,
            seen.last_error.as_deref().unwrap_or("")
        ));
    }
    out
}

/// The line after the text table for a store that tells its own flushes and compactions
/// (the embedded one), e.g. `store: 4 flushes, 1 major compaction (longest 0.8 s on
/// weibo:inbox)`; `None` when `events` has none.
pub fn store_line(events: &[Event]) -> Option<String> {
    let own: Vec<Event> = events.iter().filter(|e| e.source == "store").cloned().collect();
    (!own.is_empty()).then(|| format!("store: {}", tally(&own, false)))
}

/// The events counted in words; `servers`: with the servers lost (a cluster's).
fn tally(events: &[Event], servers: bool) -> String {
    let n = counts(events);
    let count = |k: Kind| n.get(k.name()).copied().unwrap_or(0);
    let mut parts = Vec::new();
    for (kind, one, many) in [
        (Kind::Split, "split", "splits"),
        (Kind::Merge, "merge", "merges"),
        (Kind::Move, "move", "moves"),
        (Kind::Assign, "assign", "assigns"),
        (Kind::Flush, "flush", "flushes"),
    ] {
        if count(kind) > 0 {
            parts.push(plural(count(kind), one, many));
        }
    }
    // Compactions by kind (their ends say major or minor), each with its longest: an end
    // paired with its region's start; one still running at the end is counted apart.
    let mut open: HashMap<(&str, &str, &str), u64> = HashMap::new();
    let mut by: BTreeMap<String, (u64, Option<(u64, String)>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == Kind::Compaction) {
        let key = (e.table.as_str(), e.region.as_str(), e.server.as_str());
        match e.phase {
            Phase::Start => {
                open.insert(key, e.at_ms);
            }
            Phase::End => {
                let what = e.detail.split(',').next().unwrap_or("").trim().to_string();
                let entry = by.entry(what).or_default();
                entry.0 += 1;
                if let Some(from) = open.remove(&key) {
                    let took = e.at_ms.saturating_sub(from);
                    if entry.1.as_ref().is_none_or(|(t, _)| took > *t) {
                        // Where: the server, or the table where there is none (the embedded store).
                        let at = if e.server.is_empty() { &e.table } else { &e.server };
                        entry.1 = Some((took, at.clone()));
                    }
                }
            }
            Phase::At => {}
        }
    }
    for (what, (count, longest)) in &by {
        let mut p = format!(
            "{count} {what} {}",
            if *count == 1 { "compaction" } else { "compactions" }
        );
        if let Some((took, at)) = longest {
            p.push_str(&format!(" (longest {:.1} s on {at})", *took as f64 / 1000.0));
        }
        parts.push(p);
    }
    if !open.is_empty() {
        parts.push(format!(
            "{} still running",
            plural(open.len() as u64, "compaction", "compactions")
        ));
    }
    if count(Kind::WritesBlocked) > 0 {
        parts.push(format!(
            "writes blocked {}",
            plural(count(Kind::WritesBlocked), "time", "times")
        ));
    }
    if count(Kind::ServerJoined) > 0 {
        parts.push(format!(
            "{} joined",
            plural(count(Kind::ServerJoined), "server", "servers")
        ));
    }
    if count(Kind::MasterChanged) > 0 {
        parts.push(plural(count(Kind::MasterChanged), "master change", "master changes"));
    }
    if servers {
        parts.push(format!("{} lost", plural(count(Kind::ServerDead), "server", "servers")));
    }
    parts.join(", ")
}

/// Writes `events.csv` and `cluster.csv` beside a load's manifest (`NAME.json`) as
/// `NAME-events.csv` and `NAME-cluster.csv`, their times from `started_ms` and tables named
/// without `prefix` ([`by_schema`]); the first's path.
pub fn write_beside(
    manifest: &std::path::Path,
    seen: &Observed,
    started_ms: i64,
    prefix: &str,
) -> Result<std::path::PathBuf, super::Error> {
    let stem = manifest.with_extension("");
    let name = |suffix: &str| {
        let mut p = stem.clone().into_os_string();
        p.push(suffix);
        std::path::PathBuf::from(p)
    };
    let (events, cluster) = (name("-events.csv"), name("-cluster.csv"));
    let mut named = seen.events.clone();
    by_schema(&mut named, prefix);
    std::fs::write(&events, events_csv(&named, started_ms)).map_err(|e| super::Error::at(&events, e))?;
    std::fs::write(&cluster, cluster_csv(&seen.samples, &seen.jmx, started_ms))
        .map_err(|e| super::Error::at(&cluster, e))?;
    Ok(events)
}

/// Two runs' events per kind side by side, for `compare`: a row per kind either has, `-`
/// for a run not observed; None when neither was.
pub fn side_by_side(
    baseline: Option<&BTreeMap<String, u64>>,
    candidate: Option<&BTreeMap<String, u64>>,
) -> Option<String> {
    if baseline.is_none() && candidate.is_none() {
        return None;
    }
    let mut kinds: Vec<&String> = baseline.iter().chain(candidate.iter()).flat_map(|m| m.keys()).collect();
    kinds.sort();
    kinds.dedup();
    let cell = |m: Option<&BTreeMap<String, u64>>, k: &str| match m {
        None => "-".to_string(),
        Some(m) => m.get(k).copied().unwrap_or(0).to_string(),
    };
    let mut t = super::TextTable::new(&["cluster events", "baseline", "candidate"]);
    if kinds.is_empty() {
        t.row(vec!["none".into(), cell(baseline, ""), cell(candidate, "")]);
    }
    for k in kinds {
        t.row(vec![k.clone(), cell(baseline, k), cell(candidate, k)]);
    }
    Some(t.render())
}

/// An event drawn on the time plot: a band from its start to its end, or a line at a moment
/// (`from_s == to_s`), in seconds from the start of measuring, with its words for a tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Start.
    pub from_s: f64,
    /// End.
    pub to_s: f64,
    /// Its kind's name.
    pub kind: &'static str,
    /// What, where, when.
    pub text: String,
}

fn where_of(e: &Event) -> String {
    let mut parts = Vec::new();
    for (what, v) in [("table", &e.table), ("region", &e.region), ("on", &e.server)] {
        if !v.is_empty() {
            parts.push(format!("{what} {v}"));
        }
    }
    parts.join(", ")
}

/// The events as marks: a start paired with its end (same kind, region and server) is a
/// band; a start never ended runs to `t_max`; an end never started, and a moment, a line.
pub fn marks(events: &[Event], started_ms: i64, t_max: f64) -> Vec<Mark> {
    let at = |ms: u64| (ms as i64 - started_ms) as f64 / 1000.0;
    let mut open: HashMap<(Kind, &str, &str), Vec<&Event>> = HashMap::new();
    let mut out = Vec::new();
    let text = |e: &Event, detail: &str| {
        let mut t = format!("{} ({})", e.kind.name(), where_of(e));
        if !detail.is_empty() {
            t.push_str(": ");
            t.push_str(detail);
        }
        t
    };
    for e in events {
        if e.kind == Kind::Stage {
            // A stage is a line where it begins: bands over the whole run would hide the rest.
            if e.phase != Phase::End {
                out.push(Mark {
                    from_s: at(e.at_ms),
                    to_s: at(e.at_ms),
                    kind: e.kind.name(),
                    text: e.detail.clone(),
                });
            }
            continue;
        }
        let key = (e.kind, e.region.as_str(), e.server.as_str());
        match e.phase {
            Phase::Start => open.entry(key).or_default().push(e),
            Phase::End => {
                let from = open.get_mut(&key).and_then(|v| v.pop());
                let detail = match from {
                    // An end that repeats its start's words (a compaction's family) says it once.
                    Some(s) if !s.detail.is_empty() && !e.detail.contains(&s.detail) => {
                        format!("{}; {}", s.detail, e.detail)
                    }
                    _ => e.detail.clone(),
                };
                out.push(Mark {
                    from_s: from.map(|s| at(s.at_ms)).unwrap_or(at(e.at_ms)),
                    to_s: at(e.at_ms),
                    kind: e.kind.name(),
                    text: text(e, &detail),
                });
            }
            Phase::At => out.push(Mark {
                from_s: at(e.at_ms),
                to_s: at(e.at_ms),
                kind: e.kind.name(),
                text: text(e, &e.detail),
            }),
        }
    }
    for e in open.into_values().flatten() {
        out.push(Mark {
            from_s: at(e.at_ms),
            to_s: t_max.max(at(e.at_ms)),
            kind: e.kind.name(),
            text: text(e, &format!("{}; not ended", e.detail)),
        });
    }
    out.sort_by(|a, b| a.from_s.total_cmp(&b.from_s));
    out
}

/// One of an operation's worst seconds of p99, with what the cluster did then.
#[derive(Debug, Clone, PartialEq)]
pub struct Rose {
    /// The operation.
    pub op: String,
    /// The interval's start and end (s from the start of measuring).
    pub from_s: f64,
    /// See `from_s`.
    pub to_s: f64,
    /// Its p99 (ns), and the whole run's.
    pub p99_ns: u64,
    /// See `p99_ns`.
    pub run_p99_ns: u64,
    /// The events in it or the interval before it (spans that overlap them).
    pub events: Vec<String>,
    /// The region servers' figures reported in it or the interval before, one line each.
    pub signals: Vec<String>,
}

/// Per operation, its `worst` intervals by p99 (those with operations), each with the
/// events and the region servers' figures of that interval and the one before.
pub fn rose(
    intervals: &[crate::run::Interval],
    ops: &[(String, u64)],
    seen: &Observed,
    started_ms: i64,
    worst: usize,
) -> Vec<Rose> {
    let t_max = intervals
        .last()
        .map(|iv| (iv.start + iv.length).as_secs_f64())
        .unwrap_or(0.0);
    let marks = marks(&seen.events, started_ms, t_max);
    let mut out = Vec::new();
    for (i, (op, run_p99)) in ops.iter().enumerate() {
        let mut by: Vec<(usize, u64)> = intervals
            .iter()
            .enumerate()
            .filter_map(|(k, iv)| iv.ops.get(i).filter(|o| o.ok > 0).map(|o| (k, o.summary.p99)))
            .collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for &(k, p99) in by.iter().take(worst) {
            let iv = &intervals[k];
            let (from, to) = (iv.start.as_secs_f64(), (iv.start + iv.length).as_secs_f64());
            let window = (from - iv.length.as_secs_f64(), to);
            let events = marks
                .iter()
                .filter(|m| m.from_s <= window.1 && m.to_s >= window.0)
                .map(|m| format!("{:.1} s {}", m.from_s, m.text))
                .collect();
            let mut signals: Vec<String> = Vec::new();
            let mut servers: Vec<&str> = seen.samples.iter().map(|s| s.server.as_str()).collect();
            servers.sort_unstable();
            servers.dedup();
            for server in servers {
                let here: Vec<&Sample> = seen
                    .samples
                    .iter()
                    .filter(|s| s.server == server)
                    .filter(|s| {
                        let t = (s.at_ms as i64 - started_ms) as f64 / 1000.0;
                        t >= window.0 && t <= window.1 + 3.0
                    })
                    .collect();
                if here.is_empty() {
                    continue;
                }
                let most = |f: &dyn Fn(&Sample) -> f64| here.iter().map(|s| f(s)).fold(0.0f64, f64::max);
                let mut line = format!(
                    "{server}: {:.0} reads/s, {:.0} writes/s, memstore {:.0} MiB, {:.0} store files at most, {:.0} compacting",
                    most(&|s| s.read_per_s.unwrap_or(0.0)),
                    most(&|s| s.write_per_s.unwrap_or(0.0)),
                    most(&|s| s.memstore_mib as f64),
                    most(&|s| f64::from(s.max_store_files)),
                    most(&|s| f64::from(s.compacting)),
                );
                // Its /jmx read that covers the window (reads are 10 s apart): the first at or
                // after the window's start.
                let jmx = seen.jmx.iter().find(|j| {
                    let t = (j.at_ms as i64 - started_ms) as f64 / 1000.0;
                    j.server == server && t >= window.0 && t <= window.1 + 10.0
                });
                if let Some(j) = jmx {
                    line.push_str(&format!(
                        "; queued {} compactions, {} flushes, {} calls",
                        j.compactions_queued, j.flushes_queued, j.rpc_queued
                    ));
                    if let (Some(blocked), Some(gc)) = (j.blocked_updates_ms, j.gc_ms) {
                        line.push_str(&format!(
                            "; updates blocked {:.1} s and GC {gc} ms in the 10 s to {:.0} s",
                            blocked as f64 / 1000.0,
                            (j.at_ms as i64 - started_ms) as f64 / 1000.0
                        ));
                    }
                }
                signals.push(line);
            }
            out.push(Rose {
                op: op.clone(),
                from_s: from,
                to_s: to,
                p99_ns: p99,
                run_p99_ns: *run_p99,
                events,
                signals,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at_ms: u64, kind: Kind, phase: Phase, region: &str, server: &str, detail: &str) -> Event {
        Event {
            at_ms,
            kind,
            phase,
            table: "useractions".into(),
            region: region.into(),
            server: server.into(),
            detail: detail.into(),
            source: "status",
        }
    }

    fn sample() -> Vec<Event> {
        vec![
            ev(1_000, Kind::Compaction, Phase::End, "r0", "rs1:1", "minor, 2.0 s"),
            ev(10_000, Kind::Split, Phase::Start, "r1", "rs1:1", "into a and b"),
            ev(11_500, Kind::Split, Phase::End, "r1", "rs1:1", "success, 1.5 s"),
            ev(12_000, Kind::Compaction, Phase::Start, "a", "rs2:2", "family f"),
            ev(13_000, Kind::Compaction, Phase::Start, "b", "rs2:2", "family f"),
            ev(14_000, Kind::Compaction, Phase::Start, "c", "rs1:1", "family f"),
            ev(15_000, Kind::Compaction, Phase::End, "b", "rs2:2", "major, 2.0 s"),
            ev(24_400, Kind::Compaction, Phase::End, "a", "rs2:2", "major, 12.4 s"),
            ev(25_000, Kind::Flush, Phase::At, "a", "rs2:2", "sequence id 9"),
        ]
    }

    #[test]
    fn events_are_rows_on_the_runs_time_line() {
        let csv = String::from_utf8(events_csv(&sample()[1..3], 5_000)).unwrap();
        assert_eq!(
            csv,
            "t_s,utc,kind,table,region,server,detail,source\n\
             5.000,1970-01-01T00:00:10.000Z,split,useractions,r1,rs1:1,\"start, into a and b\",status\n\
             6.500,1970-01-01T00:00:11.500Z,split,useractions,r1,rs1:1,\"end, success, 1.5 s\",status\n"
        );
    }

    /// Events of the workload's tables lose the prefix the cluster's names carry; others'
    /// tables and server events stay as they are.
    #[test]
    fn events_name_the_workloads_tables_as_its_schema_does() {
        let mut events = sample()[..3].to_vec();
        events[0].table = "weibo:t1_inbox".into();
        events[1].table = "t1_useractions".into();
        events[2].table = "other".into();
        let mut server = events[2].clone();
        server.table = String::new();
        events.push(server);
        by_schema(&mut events, "t1_");
        let tables: Vec<&str> = events.iter().map(|e| e.table.as_str()).collect();
        assert_eq!(tables, ["weibo:inbox", "useractions", "other", ""]);
        // Without a prefix the cluster's names are the schema's.
        let mut same = sample();
        by_schema(&mut same, "");
        assert_eq!(same, sample());
    }

    #[test]
    fn a_span_counts_once_and_the_line_names_the_longest_compaction() {
        let events = sample();
        let n = counts(&events);
        let want: BTreeMap<String, u64> = [("compaction", 4), ("flush", 1), ("split", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(n, want);
        let seen = Observed {
            events,
            ..Default::default()
        };
        assert_eq!(
            line(&seen),
            "cluster: 1 split, 1 flush, 2 major compactions (longest 12.4 s on rs2:2), 1 minor compaction, 1 compaction still running, 0 servers lost"
        );
        let quiet = Observed {
            failed_reads: 2,
            last_error: Some("the cluster's status: timed out".into()),
            ..Default::default()
        };
        assert_eq!(
            line(&quiet),
            "cluster: 0 servers lost (2 of the observer's reads failed; the last: the cluster's status: timed out)"
        );
    }

    #[test]
    fn reports_and_jmx_reads_are_rows_each_with_the_others_columns_empty() {
        let s = Sample {
            at_ms: 3_000,
            server: "rs1:16020".into(),
            read_per_s: None,
            write_per_s: Some(1234.56),
            regions: 4,
            memstore_mib: 12,
            max_store_files: 3,
            compacting: 1,
        };
        let first = JmxSample {
            at_ms: 2_500,
            server: "rs1:16020".into(),
            compactions_queued: 2,
            flushes_queued: 1,
            rpc_queued: 7,
            blocked_updates_ms: None,
            blocked_requests: None,
            gc_ms: None,
            pauses: None,
        };
        let second = JmxSample {
            at_ms: 12_500,
            blocked_updates_ms: Some(1_200),
            blocked_requests: Some(35),
            gc_ms: Some(80),
            pauses: Some(0),
            ..first.clone()
        };
        let csv = String::from_utf8(cluster_csv(&[s], &[second, first], 1_000)).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(
            rows[0],
            "t_s,utc,server,reads_per_s,writes_per_s,regions,memstore_mib,most_store_files,compactions_running,\
             compactions_queued,flushes_queued,rpc_queued,blocked_updates_ms,blocked_requests,gc_ms,jvm_pauses"
        );
        assert_eq!(
            rows[1..],
            [
                "1.500,1970-01-01T00:00:02.500Z,rs1:16020,,,,,,,2,1,7,,,,",
                "2.000,1970-01-01T00:00:03.000Z,rs1:16020,,1234.6,4,12,3,1,,,,,,,",
                "11.500,1970-01-01T00:00:12.500Z,rs1:16020,,,,,,,2,1,7,1200,35,80,0",
            ]
        );
    }

    #[test]
    fn spans_are_bands_and_moments_lines_on_the_runs_time_line() {
        let m = marks(&sample(), 5_000, 30.0);
        let got: Vec<(f64, f64, &str)> = m.iter().map(|m| (m.from_s, m.to_s, m.kind)).collect();
        assert_eq!(
            got,
            [
                (-4.0, -4.0, "compaction"),
                (5.0, 6.5, "split"),
                (7.0, 19.4, "compaction"),
                (8.0, 10.0, "compaction"),
                (9.0, 30.0, "compaction"),
                (20.0, 20.0, "flush"),
            ]
        );
        assert_eq!(
            m[1].text,
            "split (table useractions, region r1, on rs1:1): into a and b; success, 1.5 s"
        );
        assert_eq!(
            m[4].text,
            "compaction (table useractions, region c, on rs1:1): family f; not ended"
        );
    }

    #[test]
    fn the_worst_seconds_name_the_events_of_them_and_the_second_before() {
        use crate::run::{Interval, IntervalOp};
        use std::time::Duration;
        let iv = |k: u64, p99: u64| {
            let op = IntervalOp {
                ok: 10,
                errors: 0,
                summary: crate::stats::Summary {
                    p99,
                    ..Default::default()
                },
                histogram: String::new(),
            };
            Interval {
                start: Duration::from_secs(k),
                length: Duration::from_secs(1),
                ops: vec![op.clone()],
                all: op,
                retries: None,
            }
        };
        let intervals = [iv(0, 1_000_000), iv(1, 2_000_000), iv(2, 2_000_000), iv(3, 9_000_000)];
        let seen = Observed {
            events: sample()[1..3].to_vec(),
            samples: vec![Sample {
                at_ms: 12_000,
                server: "rs1:1".into(),
                read_per_s: Some(100.0),
                write_per_s: None,
                regions: 2,
                memstore_mib: 12,
                max_store_files: 4,
                compacting: 1,
            }],
            ..Default::default()
        };
        // Measuring began at 8 s: the split ran from 2.0 to 3.5 s, the report ended at 4 s.
        let r = rose(&intervals, &[("get".into(), 1_500_000)], &seen, 8_000, 2);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].from_s, r[0].to_s, r[0].p99_ns, r[0].run_p99_ns),
            (3.0, 4.0, 9_000_000, 1_500_000)
        );
        assert_eq!(
            r[0].events,
            ["2.0 s split (table useractions, region r1, on rs1:1): into a and b; success, 1.5 s"]
        );
        assert_eq!(
            r[0].signals,
            ["rs1:1: 100 reads/s, 0 writes/s, memstore 12 MiB, 4 store files at most, 1 compacting"]
        );
        // Of the two at 2 ms, the earlier; the split began as it ended.
        assert_eq!((r[1].from_s, r[1].events.len()), (1.0, 1));
        let quiet = rose(&intervals[..1], &[("get".into(), 1)], &seen, 8_000, 3);
        // Nothing happened by its end; the report that ended at 4 s covers from 1 s.
        assert_eq!((quiet.len(), quiet[0].events.len(), quiet[0].signals.len()), (1, 0, 1));
    }

    #[test]
    fn two_runs_events_side_by_side() {
        let base: BTreeMap<String, u64> = [("split".to_string(), 2), ("flush".to_string(), 1)].into();
        let cand: BTreeMap<String, u64> = [("compaction".to_string(), 3)].into();
        let t = side_by_side(Some(&base), Some(&cand)).unwrap();
        let rows: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(rows[0], ["cluster", "events", "baseline", "candidate"]);
        assert_eq!(
            rows[1..],
            [["compaction", "0", "3"], ["flush", "1", "0"], ["split", "2", "0"]]
        );
        let t = side_by_side(None, Some(&BTreeMap::new())).unwrap();
        assert_eq!(
            t.lines().nth(1).unwrap().split_whitespace().collect::<Vec<_>>(),
            ["none", "-", "0"]
        );
        assert_eq!(side_by_side(None, None), None);
    }
}
