//! The cluster's side of a run in its report: `events.csv` and `cluster.csv` on the run's
//! time line (seconds from the start of measuring, and UTC), the count of events per kind
//! for `summary.json`, and the line the text table ends with.

use crate::observe::events::{Event, Kind, Phase};
use crate::observe::watch::{Observed, Sample};
use std::collections::{BTreeMap, HashMap};

fn utc(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string()
}

fn t_s(ms: u64, started_ms: i64) -> String {
    format!("{:.3}", (ms as i64 - started_ms) as f64 / 1000.0)
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

/// `cluster.csv`: a row per region server report. The columns only a server's `/jmx` has
/// (compactions queued, blocked updates, GC) are empty where it was not read.
pub fn cluster_csv(samples: &[Sample], started_ms: i64) -> Vec<u8> {
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
        "blocked_updates",
        "gc_ms",
    ])
    .expect("write to memory");
    let rate = |r: Option<f64>| r.map(|r| format!("{r:.1}")).unwrap_or_default();
    let mut rows: Vec<&Sample> = samples.iter().collect();
    rows.sort_by(|a, b| (a.at_ms, &a.server).cmp(&(b.at_ms, &b.server)));
    for s in rows {
        w.write_record([
            t_s(s.at_ms, started_ms),
            utc(s.at_ms),
            s.server.clone(),
            rate(s.read_per_s),
            rate(s.write_per_s),
            s.regions.to_string(),
            s.memstore_mib.to_string(),
            s.max_store_files.to_string(),
            s.compacting.to_string(),
            String::new(),
            String::new(),
            String::new(),
        ])
        .expect("write to memory");
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
    let n = counts(&seen.events);
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
    let mut open: HashMap<&str, u64> = HashMap::new();
    let mut by: BTreeMap<String, (u64, Option<(u64, String)>)> = BTreeMap::new();
    for e in seen.events.iter().filter(|e| e.kind == Kind::Compaction) {
        match e.phase {
            Phase::Start => {
                open.insert(&e.region, e.at_ms);
            }
            Phase::End => {
                let what = e.detail.split(',').next().unwrap_or("").trim().to_string();
                let entry = by.entry(what).or_default();
                entry.0 += 1;
                if let Some(from) = open.remove(e.region.as_str()) {
                    let took = e.at_ms.saturating_sub(from);
                    if entry.1.as_ref().is_none_or(|(t, _)| took > *t) {
                        entry.1 = Some((took, e.server.clone()));
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
        if let Some((took, server)) = longest {
            p.push_str(&format!(" (longest {:.1} s on {server})", *took as f64 / 1000.0));
        }
        parts.push(p);
    }
    if !open.is_empty() {
        parts.push(format!(
            "{} still running",
            plural(open.len() as u64, "compaction", "compactions")
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
    parts.push(format!("{} lost", plural(count(Kind::ServerDead), "server", "servers")));
    let mut out = format!("cluster: {}", parts.join(", "));
    if seen.failed_reads > 0 {
        out.push_str(&format!(
            " ({} of the observer's reads failed; the last: {})",
            seen.failed_reads,
            seen.last_error.as_deref().unwrap_or("")
        ));
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
    fn samples_are_rows_with_the_jmx_columns_empty() {
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
        let csv = String::from_utf8(cluster_csv(&[s], 1_000)).unwrap();
        assert_eq!(
            csv.lines().nth(1),
            Some("2.000,1970-01-01T00:00:03.000Z,rs1:16020,,1234.6,4,12,3,1,,,")
        );
    }
}
