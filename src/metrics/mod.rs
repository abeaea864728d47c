//! Live metrics: what `load`, `run` and `serve` have done so far, in Prometheus's text
//! exposition format, served at `/metrics` by [`http::Exporter`] while they work.
//!
//! Each command registers what it has: a load its per-table [`crate::load::Tally`], a run
//! the cumulative figures of every reporting interval finished so far (so that the counters
//! at the end are the report's own), the server its calls per method. Rendering reads them
//! under short locks; nothing is recorded per operation here.

pub mod http;

use crate::generate::Table;
use crate::load::Tally;
use crate::stats::OpStats;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Upper bounds of the latency histograms' buckets, in seconds (then `+Inf`).
const BUCKETS: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Most method names counted apart (each service has fewer than 100 methods).
const MAX_METHODS: usize = 256;

/// Everything one process exposes.
#[derive(Default)]
pub struct Metrics {
    info: Vec<(&'static str, String)>,
    load: Mutex<Option<Arc<Tally>>>,
    run: Mutex<Option<Run>>,
    serve: Serve,
    /// The store worked on, for its retries by kind.
    store: Mutex<Option<Arc<dyn crate::store::Store>>>,
    /// What the cluster's observer has seen so far.
    observed: Mutex<Option<Arc<crate::observe::watch::Live>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// A run's figures: per operation, every finished interval added up.
struct Run {
    ops: Vec<(String, OpStats)>,
    measure_from: Instant,
    done: bool,
}

#[derive(Default)]
struct Serve {
    calls: RwLock<BTreeMap<String, AtomicU64>>,
    connections: AtomicU64,
    connections_total: AtomicU64,
}

impl Metrics {
    /// Metrics of `command`; `info` labels `tallrow_info` (workload, backend, ...).
    pub fn new(command: &str, info: &[(&'static str, String)]) -> Metrics {
        let mut all = vec![
            ("command", command.to_string()),
            ("version", env!("CARGO_PKG_VERSION").to_string()),
        ];
        all.extend(info.iter().cloned());
        Metrics {
            info: all,
            ..Metrics::default()
        }
    }

    /// A load starts; its tally is read at every scrape from now on.
    pub fn load(&self, tally: Arc<Tally>) {
        *self.load.lock().expect("metrics lock") = Some(tally);
    }

    /// The store the work goes to: its retries by kind are read at every scrape.
    pub fn store(&self, store: Arc<dyn crate::store::Store>) {
        *self.store.lock().expect("metrics lock") = Some(store);
    }

    /// The cluster is watched meanwhile: what its observer has seen is read at every scrape.
    pub fn observed(&self, live: Arc<crate::observe::watch::Live>) {
        *self.observed.lock().expect("metrics lock") = Some(live);
    }

    /// A run of `ops` starts; measurement begins at `measure_from` (after the warm-up).
    pub fn run_started(&self, ops: &[&str], measure_from: Instant) {
        *self.run.lock().expect("metrics lock") = Some(Run {
            ops: ops.iter().map(|op| (op.to_string(), OpStats::default())).collect(),
            measure_from,
            done: false,
        });
    }

    /// One reporting interval of the run is finished: `stats` per operation, in the order
    /// [`Metrics::run_started`] named them.
    pub fn interval(&self, stats: &[OpStats]) {
        if let Some(run) = self.run.lock().expect("metrics lock").as_mut() {
            for ((_, total), s) in run.ops.iter_mut().zip(stats) {
                total.add(s);
            }
        }
    }

    /// The run is measured and reported.
    pub fn run_finished(&self) {
        if let Some(run) = self.run.lock().expect("metrics lock").as_mut() {
            run.done = true;
        }
    }

    /// The server took a call of `method`.
    pub fn call(&self, method: &str) {
        if let Some(n) = self.serve.calls.read().expect("metrics lock").get(method) {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // The name comes from the client: a hostile one must not grow the table without
        // bound, so past the first names, and for names no service method has, "other".
        let mut calls = self.serve.calls.write().expect("metrics lock");
        let plausible = method.len() <= 64 && method.bytes().all(|b| b.is_ascii_alphanumeric());
        let key = if plausible && calls.len() < MAX_METHODS {
            method
        } else {
            "other"
        };
        calls
            .entry(key.to_string())
            .or_insert_with(|| AtomicU64::new(0))
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A client connected (`true`) or its connection closed (`false`).
    pub fn connection(&self, open: bool) {
        if open {
            self.serve.connections.fetch_add(1, Ordering::Relaxed);
            self.serve.connections_total.fetch_add(1, Ordering::Relaxed);
        } else {
            self.serve.connections.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The text exposition of everything registered so far.
    pub fn render(&self) -> String {
        let mut out = String::new();
        family(&mut out, "tallrow_info", "gauge", "What this process is.");
        let labels: Vec<(&str, &str)> = self.info.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(&mut out, "tallrow_info", &labels, 1.0);
        if let Some(tally) = self.load.lock().expect("metrics lock").clone() {
            render_load(&mut out, &tally);
        }
        if let Some(run) = self.run.lock().expect("metrics lock").as_ref() {
            render_run(&mut out, run);
        }
        if let Some(store) = self.store.lock().expect("metrics lock").clone() {
            render_retries(&mut out, &store.retries());
        }
        if let Some(live) = self.observed.lock().expect("metrics lock").clone() {
            render_observed(&mut out, &live);
        }
        self.render_serve(&mut out);
        out
    }

    fn render_serve(&self, out: &mut String) {
        let calls = self.serve.calls.read().expect("metrics lock");
        if calls.is_empty() && self.serve.connections_total.load(Ordering::Relaxed) == 0 {
            return;
        }
        family(out, "tallrow_serve_calls_total", "counter", "Calls taken, per method.");
        for (method, n) in calls.iter() {
            sample(
                out,
                "tallrow_serve_calls_total",
                &[("method", method)],
                n.load(Ordering::Relaxed) as f64,
            );
        }
        family(
            out,
            "tallrow_serve_connections_open",
            "gauge",
            "Client connections open.",
        );
        sample(
            out,
            "tallrow_serve_connections_open",
            &[],
            self.serve.connections.load(Ordering::Relaxed) as f64,
        );
        family(
            out,
            "tallrow_serve_connections_total",
            "counter",
            "Client connections accepted.",
        );
        sample(
            out,
            "tallrow_serve_connections_total",
            &[],
            self.serve.connections_total.load(Ordering::Relaxed) as f64,
        );
    }
}

fn render_load(out: &mut String, tally: &Tally) {
    let tables: Vec<Table> = tally.tables();
    let per_table = |out: &mut String, name: &str, help: &str, of: &dyn Fn(Table) -> u64| {
        family(out, name, "counter", help);
        for &t in &tables {
            sample(out, name, &[("table", t.name())], of(t) as f64);
        }
    };
    per_table(
        out,
        "tallrow_load_row_writes_total",
        "Row mutations the store acknowledged, per table (a row written by several mutations counts each).",
        &|t| tally.row_writes(t),
    );
    per_table(
        out,
        "tallrow_load_cells_total",
        "Cells acknowledged, per table.",
        &|t| tally.cells(t),
    );
    per_table(
        out,
        "tallrow_load_bytes_total",
        "Bytes of keys, qualifiers, values and timestamps acknowledged, per table.",
        &|t| tally.bytes(t),
    );
    let (done, total) = tally.blocks();
    family(
        out,
        "tallrow_load_blocks_done",
        "gauge",
        "Blocks of users generated and written.",
    );
    sample(out, "tallrow_load_blocks_done", &[], done as f64);
    family(out, "tallrow_load_blocks", "gauge", "Blocks of users the load writes.");
    sample(out, "tallrow_load_blocks", &[], total as f64);
}

fn render_retries(out: &mut String, retries: &[(String, u64)]) {
    family(
        out,
        "tallrow_retries_total",
        "counter",
        "Calls (or a batch's actions) the client tried again after an error it could retry, per error kind.",
    );
    for (kind, n) in retries {
        sample(out, "tallrow_retries_total", &[("kind", kind)], *n as f64);
    }
}

fn render_observed(out: &mut String, live: &crate::observe::watch::Live) {
    family(
        out,
        "tallrow_cluster_events_total",
        "counter",
        "What the cluster did while watched (splits, moves, flushes, compactions, servers lost and joined, masters changed), per kind; a span counts at its start.",
    );
    for (kind, n) in live.events() {
        sample(out, "tallrow_cluster_events_total", &[("kind", kind)], n as f64);
    }
    family(
        out,
        "tallrow_cluster_jmx_reads_total",
        "counter",
        "Reads of the region servers' /jmx that answered.",
    );
    sample(out, "tallrow_cluster_jmx_reads_total", &[], live.jmx_reads() as f64);
    family(
        out,
        "tallrow_cluster_failed_reads_total",
        "counter",
        "Reads of the cluster's status, procedures or /jmx that failed.",
    );
    sample(
        out,
        "tallrow_cluster_failed_reads_total",
        &[],
        live.failed_reads() as f64,
    );
}

fn render_run(out: &mut String, run: &Run) {
    let phase = if run.done {
        "done"
    } else if Instant::now() < run.measure_from {
        "warmup"
    } else {
        "measure"
    };
    family(
        out,
        "tallrow_run_phase",
        "gauge",
        "1 for the phase the run is in: warmup (not counted), measure, done.",
    );
    for p in ["warmup", "measure", "done"] {
        sample(
            out,
            "tallrow_run_phase",
            &[("phase", p)],
            f64::from(u8::from(p == phase)),
        );
    }
    family(
        out,
        "tallrow_operations_total",
        "counter",
        "Measured operations, succeeded or failed, per operation (counted per finished reporting interval).",
    );
    for (op, s) in &run.ops {
        sample(out, "tallrow_operations_total", &[("op", op)], s.total() as f64);
    }
    family(
        out,
        "tallrow_operation_errors_total",
        "counter",
        "Failed measured operations, per operation and error kind.",
    );
    for (op, s) in &run.ops {
        for (kind, (n, _)) in &s.errors {
            sample(
                out,
                "tallrow_operation_errors_total",
                &[("op", op), ("kind", kind)],
                *n as f64,
            );
        }
    }
    let name = "tallrow_operation_latency_seconds";
    family(
        out,
        name,
        "histogram",
        "Response time of the measured operations that succeeded (from the scheduled start under a rate), per operation.",
    );
    for (op, s) in &run.ops {
        let h = &s.response;
        let mut counts = [0u64; BUCKETS.len()];
        for v in h.iter_recorded() {
            let seconds = h.lowest_equivalent(v.value_iterated_to()) as f64 / 1e9;
            if let Some(i) = BUCKETS.iter().position(|&b| seconds <= b) {
                counts[i] += v.count_at_value();
            }
        }
        let mut cumulative = 0;
        for (b, n) in BUCKETS.iter().zip(counts) {
            cumulative += n;
            let le = b.to_string();
            sample(
                out,
                &format!("{name}_bucket"),
                &[("op", op), ("le", &le)],
                cumulative as f64,
            );
        }
        sample(
            out,
            &format!("{name}_bucket"),
            &[("op", op), ("le", "+Inf")],
            h.len() as f64,
        );
        sample(
            out,
            &format!("{name}_sum"),
            &[("op", op)],
            h.mean() * h.len() as f64 / 1e9,
        );
        sample(out, &format!("{name}_count"), &[("op", op)], h.len() as f64);
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", help.replace('\\', "\\\\").replace('\n', "\\n"));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let v = v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
            let _ = write!(out, "{k}=\"{v}\"");
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::record;

    #[test]
    fn histograms_are_cumulative_and_labels_escaped() {
        let m = Metrics::new("run", &[("workload", "a \"b\"\\c".into())]);
        m.run_started(&["get"], Instant::now());
        let mut s = OpStats::default();
        for ns in [40_000u64, 1_000_000, 1_000_000, 3_000_000_000, 20_000_000_000] {
            record(&mut s.response, ns);
        }
        s.error("timeout", || "slow".into());
        m.interval(&[s]);
        let text = m.render();
        assert!(text.contains(r#"workload="a \"b\"\\c""#), "{text}");
        for line in [
            r#"tallrow_operations_total{op="get"} 6"#,
            r#"tallrow_operation_errors_total{op="get",kind="timeout"} 1"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="0.00005"} 1"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="0.0005"} 1"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="0.001"} 3"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="2.5"} 3"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="5"} 4"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="10"} 4"#,
            r#"tallrow_operation_latency_seconds_bucket{op="get",le="+Inf"} 5"#,
            r#"tallrow_operation_latency_seconds_count{op="get"} 5"#,
            r#"tallrow_run_phase{phase="measure"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }

    /// Retries by kind and what the observer counted, each a counter with its labels.
    #[test]
    fn retries_and_cluster_events_are_counters() {
        let mut out = String::new();
        render_retries(&mut out, &[("NotServingRegion".into(), 3), ("connection".into(), 1)]);
        render_observed(&mut out, &crate::observe::watch::Live::default());
        for line in [
            "# TYPE tallrow_retries_total counter",
            r#"tallrow_retries_total{kind="NotServingRegion"} 3"#,
            r#"tallrow_retries_total{kind="connection"} 1"#,
            "# TYPE tallrow_cluster_events_total counter",
            "tallrow_cluster_jmx_reads_total 0",
            "tallrow_cluster_failed_reads_total 0",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} in\n{out}");
        }
    }

    #[test]
    fn a_client_cannot_grow_the_method_table() {
        let m = Metrics::new("serve", &[]);
        m.call("getRow");
        m.call("getRow");
        m.call(&"x".repeat(65));
        m.call("made-up-name");
        for i in 0..1000 {
            m.call(&format!("madeUp{i}"));
        }
        m.call("getRow");
        let text = m.render();
        assert!(
            text.contains("tallrow_serve_calls_total{method=\"getRow\"} 3\n"),
            "{text}"
        );
        let other = 2 + 1000 - (MAX_METHODS - 2);
        assert!(
            text.contains(&format!("tallrow_serve_calls_total{{method=\"other\"}} {other}\n")),
            "{text}"
        );
        assert_eq!(text.matches("tallrow_serve_calls_total{").count(), MAX_METHODS);
    }
}
