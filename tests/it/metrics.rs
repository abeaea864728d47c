//! `--metrics`: the Prometheus endpoint of `run`, `load` and `serve`, scraped while they work
//! and parsed by prometheus_client's own text parser (tests/scrape_metrics.py).

use super::common::{python, small_fixture};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The parsed exposition at `url`, or the parser's complaint.
fn scrape(python: &Path, url: &str) -> Result<Value, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scrape_metrics.py");
    let out = Command::new(python).arg(script).arg(url).output().unwrap();
    if !out.status.success() {
        return Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// How long a scrape takes on this machine now: the script's start and imports, timed
/// against a port nothing listens on (where it fails after them).
fn scrape_cost(python: &Path) -> Duration {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let refused = scrape(python, &format!("http://127.0.0.1:{port}/metrics"));
    assert!(refused.is_err(), "nothing listens on {port}");
    started.elapsed()
}

/// The value of sample `name` whose labels include `labels`.
fn value(doc: &Value, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    doc["samples"].as_array().unwrap().iter().find_map(|s| {
        let matches = s[0] == name && labels.iter().all(|(k, v)| s[1][*k] == *v);
        matches.then(|| s[2].as_f64().unwrap())
    })
}

/// A child process whose output lines arrive on channels.
struct Watched {
    child: Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Watched {
    fn spawn(dir: &Path, args: &[&str]) -> Watched {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tallrow"))
            .current_dir(dir)
            .env("CI", "1")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = |r: Box<dyn std::io::Read + Send>| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(r).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
            rx
        };
        let stdout = lines(Box::new(child.stdout.take().unwrap()));
        let stderr = lines(Box::new(child.stderr.take().unwrap()));
        Watched { child, stdout, stderr }
    }

    /// The first line of `rx` that `pick` takes something from. The two minutes only guard
    /// against a hang: nothing waited for takes more than seconds.
    fn wait_for<T>(rx: &mpsc::Receiver<String>, seen: &mut Vec<String>, pick: impl Fn(&str) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(t) = pick(&line) {
                        return t;
                    }
                    seen.push(line);
                }
                Err(_) => panic!("not seen; the output was:\n{}", seen.join("\n")),
            }
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run's /metrics parses while it loads and measures, and after its report is written
/// (while `--metrics-linger` keeps it up) every counter is the report's: operations and
/// latency counts per operation against summary.json, row writes, cells and bytes per table
/// against the load manifest.
#[test]
fn a_runs_metrics_parse_mid_run_and_end_with_the_reports_counts() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture().display().to_string();
    // The run measures long enough for scrapes to see it measuring many times over, however
    // slow scrapes are on this machine now: 4 s, or 20 scrapes' time.
    let duration = format!(
        "{}s",
        ((20.0 * scrape_cost(&python).as_secs_f64()).ceil() as u64).max(4)
    );
    let run = Watched::spawn(
        dir.path(),
        &[
            "run",
            &fixture,
            "--backend",
            "embedded:store",
            "--duration",
            &duration,
            "--warmup",
            "1s",
            "--interval",
            "200ms",
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "5m",
        ],
    );
    let mut seen = Vec::new();
    let url = Watched::wait_for(&run.stderr, &mut seen, |l| {
        l.strip_prefix("tallrow: metrics at ").map(str::to_string)
    });

    // Mid-run: every scrape parses; wait for one that shows measured operations. (The
    // deadline guards against a hang only.)
    let deadline = Instant::now() + Duration::from_secs(120);
    let mid = loop {
        let doc = scrape(&python, &url).unwrap_or_else(|e| panic!("mid-run: {e}"));
        let measuring = value(&doc, "tallrow_run_phase", &[("phase", "measure")]) == Some(1.0);
        let ops = value(&doc, "tallrow_operations_total", &[]).unwrap_or(0.0);
        if measuring && ops > 0.0 {
            break doc;
        }
        assert!(Instant::now() < deadline, "no measured operations seen: {doc}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(mid["families"]["tallrow_operation_latency_seconds"], "histogram");
    assert_eq!(mid["families"]["tallrow_operations"], "counter");
    assert_eq!(mid["families"]["tallrow_load_row_writes"], "counter");
    assert_eq!(
        value(&mid, "tallrow_info", &[("command", "run"), ("workload", "small")]),
        Some(1.0)
    );

    let report = Watched::wait_for(&run.stdout, &mut seen, |l| {
        l.strip_prefix("report: ").map(PathBuf::from)
    });
    let end = scrape(&python, &url).unwrap_or_else(|e| panic!("after the report: {e}"));
    assert_eq!(value(&end, "tallrow_run_phase", &[("phase", "done")]), Some(1.0));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(&report).join("summary.json")).unwrap()).unwrap();
    let ops = summary["ops"].as_array().unwrap();
    assert!(ops.len() >= 2, "{summary}");
    for op in ops {
        let name = op["op"].as_str().unwrap();
        let (count, errors) = (op["count"].as_f64().unwrap(), op["errors"].as_f64().unwrap());
        assert_eq!(
            value(&end, "tallrow_operations_total", &[("op", name)]),
            Some(count + errors),
            "{name}"
        );
        assert_eq!(
            value(&end, "tallrow_operation_latency_seconds_count", &[("op", name)]),
            Some(count),
            "{name}"
        );
        assert_eq!(
            value(
                &end,
                "tallrow_operation_latency_seconds_bucket",
                &[("op", name), ("le", "+Inf")]
            ),
            Some(count),
            "{name}"
        );
        for (kind, n) in op["errors_by_kind"].as_object().unwrap() {
            assert_eq!(
                value(&end, "tallrow_operation_errors_total", &[("op", name), ("kind", kind)]),
                n.as_f64(),
                "{name} {kind}"
            );
        }
        // Mid-run counts never exceed the final ones.
        let before = value(&mid, "tallrow_operations_total", &[("op", name)]).unwrap();
        assert!(before <= count + errors, "{name}: {before} then {}", count + errors);
    }

    let manifest = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the load manifest");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
    let tables = manifest["tables"].as_object().unwrap();
    assert!(!tables.is_empty());
    for (table, t) in tables {
        for (metric, field) in [
            ("tallrow_load_row_writes_total", "row_writes"),
            ("tallrow_load_cells_total", "cells"),
            ("tallrow_load_bytes_total", "bytes"),
        ] {
            assert_eq!(
                value(&end, metric, &[("table", table)]),
                t[field].as_f64(),
                "{table} {metric}"
            );
        }
    }
    let (done, total) = (
        value(&end, "tallrow_load_blocks_done", &[]).unwrap(),
        value(&end, "tallrow_load_blocks", &[]).unwrap(),
    );
    assert!(done == total && total > 0.0, "{done} of {total} blocks");
}

/// `serve --metrics` counts the calls a client makes, per method, and its connections.
#[test]
fn serve_metrics_count_calls_per_method() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut serve = Watched::spawn(
        dir.path(),
        &[
            "serve",
            "--data",
            data.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ],
    );
    let mut seen = Vec::new();
    let port = Watched::wait_for(&serve.stdout, &mut seen, |l| {
        l.strip_prefix("serving ")?
            .split("127.0.0.1:")
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse::<u16>()
            .ok()
    });
    let url = Watched::wait_for(&serve.stdout, &mut seen, |l| {
        l.strip_prefix("metrics at ").map(str::to_string)
    });

    // A load through the server: table creation, then batches of mutateRows.
    let fixture = small_fixture().display().to_string();
    let load = super::common::tallrow(
        dir.path(),
        &["load", &fixture, "--backend", &format!("hbase://127.0.0.1:{port}")],
    );
    assert_eq!(load.code, 0, "{}{}", load.stdout, load.stderr);
    let doc = scrape(&python, &url).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        value(&doc, "tallrow_info", &[("command", "serve"), ("api", "thrift1")]),
        Some(1.0)
    );
    let calls = |method: &str| value(&doc, "tallrow_serve_calls_total", &[("method", method)]).unwrap_or(0.0);
    assert!(calls("createTable") >= 1.0, "{doc}");
    assert!(calls("mutateRowsTs") + calls("mutateRows") >= 1.0, "{doc}");
    assert!(
        value(&doc, "tallrow_serve_connections_total", &[]).unwrap() >= 1.0,
        "{doc}"
    );
    let _ = serve.child.kill();
}

/// Every series the Grafana dashboard of deploy/kubernetes/monitoring/ queries is one that
/// tallrow exposes, with the labels it groups and filters by: the metric names from a real
/// run's scrape (a run that loads first serves the load's and the run's), the labels from
/// that scrape's samples and, for the failure counter a clean run has no sample of, from the
/// exposition of an interval with a failure. Labels the scrape adds (namespace, pod, ...)
/// and histogram buckets' `le` are allowed too.
#[test]
fn the_grafana_dashboard_queries_what_tallrow_exposes() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture().display().to_string();
    let run = Watched::spawn(
        dir.path(),
        &[
            "run",
            &fixture,
            "--backend",
            "memory:",
            "--ops",
            "200",
            "--warmup",
            "0s",
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "5m",
        ],
    );
    let mut seen = Vec::new();
    let url = Watched::wait_for(&run.stderr, &mut seen, |l| {
        l.strip_prefix("tallrow: metrics at ").map(str::to_string)
    });
    Watched::wait_for(&run.stdout, &mut seen, |l| l.strip_prefix("report: ").map(|_| ()));
    let doc = scrape(&python, &url).unwrap();
    drop(run);

    // Series name -> label names, from the scrape and from an interval with a failure.
    let mut labels: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for s in doc["samples"].as_array().unwrap() {
        let e = labels.entry(s[0].as_str().unwrap().to_string()).or_default();
        e.extend(s[1].as_object().unwrap().keys().cloned());
    }
    let m = tallrow::metrics::Metrics::new("run", &[]);
    m.run_started(&["timeline"], Instant::now());
    let mut failed = tallrow::stats::OpStats::default();
    failed.error("timeout", || "slow".into());
    m.interval(&[failed]);
    for line in m
        .render()
        .lines()
        .filter(|l| l.starts_with("tallrow_operation_errors_total{"))
    {
        let (name, rest) = line.split_once('{').unwrap();
        let e = labels.entry(name.to_string()).or_default();
        for pair in rest.split_once('}').unwrap().0.split(',') {
            e.insert(pair.split_once('=').unwrap().0.to_string());
        }
    }
    let families: Vec<String> = doc["families"].as_object().unwrap().keys().cloned().collect();
    let scraped = ["namespace", "pod", "container", "job", "instance", "endpoint"];

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/monitoring/tallrow-dashboard.json");
    let dash: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut exprs: Vec<String> = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    exprs.push(
        dash["templating"]["list"][1]["definition"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    assert!(exprs.len() >= 10, "{exprs:?}");
    let mut used = std::collections::BTreeSet::new();
    for e in &exprs {
        let idents: Vec<&str> = e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("tallrow_"))
            .collect();
        assert!(!idents.is_empty(), "{e}: queries no tallrow series");
        for name in &idents {
            let series = labels
                .get(*name)
                .unwrap_or_else(|| panic!("{e}: {name} is no series tallrow exposes ({families:?})"));
            used.insert(name.to_string());
            // Labels grouped by (`by (...)`) and matched (`{...}`) in this query.
            let mut wanted: Vec<String> = Vec::new();
            for part in e.split("by (").skip(1) {
                wanted.extend(part.split(')').next().unwrap().split(',').map(|l| l.trim().to_string()));
            }
            if let Some(m) = e.split(&format!("{name}{{")).nth(1) {
                for pair in m.split('}').next().unwrap().split(',') {
                    let key = pair.split(['=', '!']).next().unwrap().trim().to_string();
                    wanted.push(key);
                }
            }
            for l in wanted.iter().filter(|l| !l.is_empty()) {
                let ok =
                    series.contains(l) || scraped.contains(&l.as_str()) || (l == "le" && name.ends_with("_bucket"));
                assert!(ok, "{e}: {name} has no label {l} (it has {series:?})");
            }
        }
    }
    // What the issue asks the dashboard for: throughput per operation, percentiles from the
    // buckets, errors, load progress.
    for want in [
        "tallrow_operations_total",
        "tallrow_operation_latency_seconds_bucket",
        "tallrow_operation_errors_total",
        "tallrow_load_blocks_done",
        "tallrow_load_blocks",
    ] {
        assert!(used.contains(want), "the dashboard does not query {want}");
    }
    assert!(
        exprs
            .iter()
            .any(|e| e.contains("histogram_quantile(0.99, sum by (le, op)"))
    );
}
