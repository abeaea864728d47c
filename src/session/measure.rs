//! One measured run: the mix run against a loaded store while rows are counted per region,
//! the live view on a terminal, and the report folder written.

use super::{Context, Result};
use crate::generate::Generator;
use crate::load::Shard;
use crate::observe::watch::Observer;
use crate::report::RunData;
use crate::report::run::Context as ReportContext;
use crate::report::summary::{RunConfig, RunSummary};
use crate::report::{fmt_ns, thousands};
use crate::run::{self, Interval};
use crate::store::{Store, counted};
use crate::workload::{Op, Run};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// A written run report and its folder.
pub struct Written {
    /// The summary as written.
    pub summary: RunSummary,
    /// The report folder.
    pub dir: std::path::PathBuf,
    /// What the cluster (or the embedded store) did, in one line, when it was told.
    pub cluster: Option<String>,
}

/// What one measured run works on.
pub struct Measure<'a> {
    /// The workload's data.
    pub g: &'a Arc<Generator>,
    /// The loaded store.
    pub store: &'a Arc<dyn Store>,
    /// The workload file.
    pub file: &'a std::path::Path,
    /// `--backend` as given.
    pub url: &'a str,
    /// Which random streams to draw from.
    pub shard: Shard,
    /// Reporting interval.
    pub interval: Duration,
    /// Latency targets the run is judged against.
    pub targets: &'a [crate::report::slo::Slo],
    /// The run: the workload's validated `[run]`, or a find-max step's.
    pub run: &'a Run,
    /// Live metrics to keep up to date.
    pub metrics: Option<&'a crate::metrics::Metrics>,
    /// The cluster to observe meanwhile (a URL of HBase's own RPC), if any.
    pub observe: Option<&'a str>,
    /// The run's labels (`--label`), kept in its settings.
    pub labels: &'a std::collections::BTreeMap<String, String>,
}

impl Measure<'_> {
    /// Runs the mix, counting rows per region, and writes the report into the folder
    /// `folder(start of measurement)` names.
    pub fn run(&self, out: &mut dyn Write, folder: impl FnOnce(i64) -> Result<std::path::PathBuf>) -> Result<Written> {
        let (g, store) = (self.g, self.store);
        // The report records the run as it ran: threads counted, this run's settings in
        // the effective workload as in the config.
        let mut r = self.run.clone();
        r.threads = r.workers();
        let mut w = g.workload().clone();
        w.run = r.clone();
        writeln!(
            out,
            "running {} against {}: {} threads, {}, {} warm-up, {}",
            w.name,
            store.identity(),
            r.threads,
            match r.ops {
                Some(n) => format!("{} operations", thousands(n)),
                None => format!("{:?}", r.duration),
            },
            format_args!("{:?}", r.warmup),
            r.describe_loop()
        )?;
        out.flush()?;
        let names: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
        store.set_consistency(r.read_consistency()).context("run.consistency")?;
        // What the header says of the copies read: the tables' own setting, not the
        // workload's, which a load may not have made them with.
        let replication = names
            .iter()
            .map(|n| store.describe_table(n).map(|d| d.region_replication))
            .collect::<std::result::Result<Vec<u32>, _>>()
            .ok()
            .and_then(|v| v.into_iter().max());
        let bounds = counted::bounds_of(&**store, &names).context("reading the tables' regions")?;
        let counted = Arc::new(counted::count(store.clone(), bounds, self.interval));
        let live = Live::new(&r, crate::load::progress_wanted());
        if let Some(m) = self.metrics {
            let names: Vec<&str> = r.mix.iter().map(|(op, _)| op.name()).collect();
            m.run_started(&names, std::time::Instant::now() + r.warmup);
        }
        let mut on_interval = |iv: &Interval, _: &[Op], stats: &[crate::stats::OpStats]| {
            live.interval(iv);
            if let Some(m) = self.metrics {
                m.interval(stats);
            }
        };
        let retried_before = store.retries();
        // The store's own flushes and compactions from here on (the load's are not the run's).
        let _ = store.take_events();
        // Started before the warm-up: its first answers are what the run starts from.
        let observer = self.observe.and_then(super::observe).map(|(o, _)| o);
        if let Some(m) = self.metrics {
            m.store(store.clone());
            if let Some(o) = &observer {
                m.observed(o.live());
            }
        }
        let outcome = run::run(
            counted.clone(),
            g.clone(),
            &r,
            self.shard,
            self.interval,
            &mut on_interval,
        )?;
        live.finish();
        // Whatever reads after the run (a verify) reads the primaries.
        let _ = store.set_consistency(crate::store::Consistency::Strong);
        let observed = observer.map(Observer::finish);
        let spread = Arc::into_inner(counted)
            .expect("the run's workers are done with the store")
            .layer
            .finish();
        let cx = ReportContext {
            workload: &w,
            file: self.file,
            url: self.url,
            store: &**store,
            config: RunConfig {
                run: r,
                interval_s: self.interval.as_secs_f64(),
                shard: self.shard.to_string(),
                shard_index: Some(self.shard.index),
                shard_count: Some(self.shard.count),
                labels: self.labels.clone(),
            },
        };
        let mut data = RunData::from_run(&outcome, &cx);
        data.summary.region_replication = replication;
        data.summary.retries = crate::report::retries_since(&retried_before, &store.retries());
        data.spread = Some(spread);
        data.events.extend(store.take_events());
        let cluster = observed
            .as_ref()
            .map(crate::report::cluster::line)
            .or_else(|| crate::report::cluster::store_line(&data.events));
        data.cluster = observed;
        // Tables named as regions.csv and the rest of the report name them.
        let prefix = &g.workload().storage.table_prefix;
        crate::report::cluster::by_schema(&mut data.events, prefix);
        if let Some(c) = &mut data.cluster {
            crate::report::cluster::by_schema(&mut c.events, prefix);
        }
        data.judge(self.targets);
        let dir = folder(outcome.started_ms)?;
        data.write(&dir)?;
        if let Some(m) = self.metrics {
            m.run_finished();
        }
        Ok(Written {
            summary: data.summary,
            dir,
            cluster,
        })
    }
}

/// The terminal's live view: a bar over the run and a line per interval; nothing in pipes.
struct Live {
    bar: Option<ProgressBar>,
    count_ops: bool,
}

impl Live {
    fn new(opts: &Run, show: bool) -> Live {
        if !show {
            return Live {
                bar: None,
                count_ops: false,
            };
        }
        let (len, template) = match opts.ops {
            Some(n) => (n, "{elapsed:>4} {bar:30.cyan/blue} {human_pos}/{human_len} ops  {msg}"),
            None => (
                (opts.warmup + opts.duration).as_secs().max(1),
                "{elapsed:>4} {bar:30.cyan/blue} {pos}/{len} s  {msg}",
            ),
        };
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(4)).with_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        if opts.ops.is_none() {
            bar.set_position(0);
            bar.set_message(format!("warming up for {:?}", opts.warmup));
            let (b, warmup, duration) = (bar.clone(), opts.warmup, opts.duration);
            // Time runs on whether or not an interval completes: a ticker moves the bar.
            std::thread::spawn(move || {
                let t0 = std::time::Instant::now();
                while !b.is_finished() {
                    b.set_position(t0.elapsed().as_secs().min((warmup + duration).as_secs()));
                    std::thread::sleep(Duration::from_millis(250));
                }
            });
        }
        Live {
            bar: Some(bar),
            count_ops: opts.ops.is_some(),
        }
    }

    fn interval(&self, iv: &Interval) {
        let Some(bar) = &self.bar else { return };
        let len = iv.length.as_secs_f64().max(1e-9);
        let s = &iv.all.summary;
        let line = format!(
            "[{:>6.1}s] {:>10} ops/s  p50 {:>9}  p99 {:>9}  max {:>9}  errors {}",
            (iv.start + iv.length).as_secs_f64(),
            thousands((iv.all.ok as f64 / len) as u64),
            fmt_ns(s.p50),
            fmt_ns(s.p99),
            fmt_ns(s.max),
            thousands(iv.all.errors)
        );
        bar.println(&line);
        if self.count_ops {
            bar.inc(iv.all.ok + iv.all.errors);
        }
        bar.set_message(String::new());
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
