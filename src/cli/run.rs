//! `tallrow run`, `tallrow compare` and `tallrow report merge`: argument handling and what
//! they print.

use super::load::{checked_threads, threads};
use super::{CompareArgs, MergeArgs, RunArgs, RunSettings};
use crate::generate::Generator;
use crate::load::{self, Shard};
use crate::regions::count::Counted;
use crate::regions::report::{fmt_ratio, fmt_share};
use crate::report::compare::compare;
use crate::report::run::Context;
use crate::report::summary::{OpReport, RunConfig, RunSummary};
use crate::report::{RunData, TextTable, fmt_ns, thousands};
use crate::run::{self, Interval, Options};
use crate::store::Store;
use crate::workload::{Arrival, Op, Skew, Workload};
use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub(super) fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (w, store) = args.target.open()?;
    let live = args
        .live
        .start("run", &[("workload", w.name.clone()), ("backend", store.identity())])?;
    let result = run_with(&args, w, store, live.as_ref().map(|l| &*l.metrics));
    if let Some(l) = live {
        l.finish();
    }
    result
}

fn run_with(
    args: &RunArgs,
    mut w: Workload,
    store: Arc<dyn Store>,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<ExitCode> {
    apply_overrides(&mut w, &args.settings)?;
    let mix: Vec<String> = w.run.mix.iter().map(|(op, _)| op.name().to_string()).collect();
    for t in &args.slo {
        t.check_scope(&mix).map_err(anyhow::Error::msg)?;
    }
    if let Some(at) = args.start_at {
        until(at, "")?;
    }
    let g = Arc::new(Generator::new(&w));
    let url = args
        .target
        .backend
        .clone()
        .unwrap_or_else(|| format!("embedded:{}", w.default_data_dir().display()));
    prepare_store(&w, &g, &store, args, metrics)?;
    if let Some(at) = args.start_at {
        let wait = until(at, " while loading")?;
        println!(
            "waiting {:.1} s, until {}, to start",
            wait.as_secs_f64(),
            humantime::format_rfc3339_millis(at)
        );
        std::thread::sleep(wait);
    }
    if args.find_max {
        return super::findmax::find_max(args, &w, &g, &store, &url, metrics);
    }
    let shard = args.shard.unwrap_or(Shard::ALL);
    let target = Measure {
        g: &g,
        store: &store,
        file: &args.target.workload,
        url: &url,
        shard,
        interval: args.settings.interval,
        targets: &args.slo,
        run: &w.run,
        metrics,
    };
    let mut out = std::io::stdout().lock();
    let data = target.run(&mut out, |started| {
        Ok(crate::report::run::folder(&args.reports, &w.name, started))
    })?;
    print_summary(&mut out, &data.summary)?;
    for v in &data.summary.slos {
        writeln!(out, "target {}", v.line())?;
    }
    writeln!(out, "report: {}", data.dir.display())?;
    if let Some(why) = &data.summary.invalid_reason {
        bail!("the run is invalid: {why}");
    }
    let missed: Vec<String> = data
        .summary
        .slos
        .iter()
        .filter(|v| !v.held)
        .map(|v| format!("{} (measured {})", v.target, v.measured.as_deref().unwrap_or("nothing")))
        .collect();
    if !missed.is_empty() {
        bail!(
            "{} of {} targets missed: {}",
            missed.len(),
            data.summary.slos.len(),
            missed.join("; ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// How long until `at`: refused when it has passed (`when` says during what) or is more
/// than a week away.
fn until(at: std::time::SystemTime, when: &str) -> anyhow::Result<Duration> {
    let shown = humantime::format_rfc3339_millis(at);
    match at.duration_since(std::time::SystemTime::now()) {
        Ok(wait) if wait > Duration::from_secs(7 * 24 * 3600) => {
            bail!("--start-at {shown}: more than a week away")
        }
        Ok(wait) => Ok(wait),
        Err(past) => bail!(
            "--start-at {shown}: passed {:.1} s ago{when}; a run that starts late would not measure the same period as its other shards",
            past.duration().as_secs_f64()
        ),
    }
}

/// One line on a measured run: operations, time, rate, p50 and p99, and why it is invalid.
pub(super) fn ran(s: &RunSummary) -> String {
    format!(
        "ran {} operations in {:.1} s: {:.1} ops/s, p50 {}, p99 {}{}",
        thousands(s.all.count + s.all.errors),
        s.measured_s,
        s.all.ops_per_s,
        fmt_ns(s.all.response.p50),
        fmt_ns(s.all.response.p99),
        s.invalid_reason
            .as_ref()
            .map(|why| format!("; INVALID: {why}"))
            .unwrap_or_default()
    )
}

/// A written run report and its folder.
pub(super) struct Written {
    /// The summary as written.
    pub summary: RunSummary,
    /// The report folder.
    pub dir: std::path::PathBuf,
}

/// What one measured run works on.
pub(super) struct Measure<'a> {
    /// The workload (its `[run]` with the command line's settings applied).
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
    /// The run settings: the workload's `[run]`, or a step's of `--find-max`.
    pub run: &'a crate::workload::Run,
    /// Live metrics to keep up to date.
    pub metrics: Option<&'a crate::metrics::Metrics>,
}

impl Measure<'_> {
    /// Runs the mix, counting rows per region, and writes the report into the folder
    /// `folder(start of measurement)` names.
    pub fn run(
        &self,
        out: &mut impl Write,
        folder: impl FnOnce(i64) -> anyhow::Result<std::path::PathBuf>,
    ) -> anyhow::Result<Written> {
        let (g, store) = (self.g, self.store);
        let w = g.workload();
        let r = self.run;
        let opts = Options {
            threads: threads(r.threads),
            duration: r.duration,
            ops: r.ops,
            rate: r.rate,
            arrival: r.arrival,
            warmup: r.warmup,
            interval: self.interval,
            stream: self.shard.index,
        };
        writeln!(
            out,
            "running {} against {}: {} threads, {}, {} warm-up, {}",
            w.name,
            store.identity(),
            opts.threads,
            match opts.ops {
                Some(n) => format!("{} operations", thousands(n)),
                None => format!("{:?}", opts.duration),
            },
            format_args!("{:?}", opts.warmup),
            match opts.rate {
                Some(rate) => format!("open loop at {rate} ops/s ({})", arrival_name(opts.arrival)),
                None => "closed loop".into(),
            }
        )?;
        out.flush()?;
        let names: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
        let bounds = Counted::bounds_of(&**store, &names).context("reading the tables' regions")?;
        let counted = Arc::new(Counted::new(store.clone(), bounds, opts.interval));
        let live = Live::new(&opts, load::progress_wanted());
        if let Some(m) = self.metrics {
            let names: Vec<&str> = r.mix.iter().map(|(op, _)| op.name()).collect();
            m.run_started(&names, std::time::Instant::now() + opts.warmup);
        }
        let mut on_interval = |iv: &Interval, _: &[Op], stats: &[crate::stats::OpStats]| {
            live.interval(iv);
            if let Some(m) = self.metrics {
                m.interval(stats);
            }
        };
        let outcome = run::run(counted.clone(), g.clone(), &r.mix, &opts, &mut on_interval)?;
        live.finish();
        let spread = Arc::into_inner(counted)
            .expect("the run's workers are done with the store")
            .finish();

        let config = RunConfig {
            threads: opts.threads,
            duration_s: opts.ops.is_none().then_some(opts.duration.as_secs_f64()),
            ops: opts.ops,
            rate: opts.rate,
            arrival: arrival_name(opts.arrival).into(),
            warmup_s: opts.warmup.as_secs_f64(),
            interval_s: opts.interval.as_secs_f64(),
            skew: skew_name(r.skew).into(),
            skew_exponent: r.skew_exponent,
            mix: r.mix.iter().map(|(op, wt)| (op.name().to_string(), *wt)).collect(),
            shard: self.shard.to_string(),
        };
        let cx = Context {
            workload: w,
            file: self.file,
            url: self.url,
            store: &**store,
            config,
        };
        let mut data = RunData::from_run(&outcome, &cx);
        data.spread = Some(spread);
        data.judge(self.targets);
        let dir = folder(outcome.started_ms)?;
        data.write(&dir)?;
        if let Some(m) = self.metrics {
            m.run_finished();
        }
        Ok(Written {
            summary: data.summary,
            dir,
        })
    }
}

/// The name a skew has in workload files and reports.
pub(super) fn skew_name(s: Skew) -> &'static str {
    match s {
        Skew::Zipf => "zipf",
        Skew::Latest => "latest",
        Skew::Uniform => "uniform",
    }
}

/// Command-line settings over the workload's `[run]`.
pub(super) fn apply_overrides(w: &mut Workload, args: &RunSettings) -> anyhow::Result<()> {
    let r = &mut w.run;
    if let Some(t) = args.threads {
        r.threads = t;
    }
    if let Some(d) = args.duration {
        r.duration = d;
        r.ops = None;
    }
    if let Some(n) = args.ops {
        if n == 0 {
            bail!("--ops: must be at least 1");
        }
        r.ops = Some(n);
    }
    if let Some(rate) = args.rate {
        if !(rate > 0.0 && rate <= 10_000_000.0) {
            bail!("--rate: must be above 0 and at most 10000000 operations/s, got {rate}");
        }
        r.rate = Some(rate);
    }
    if let Some(a) = &args.arrival {
        r.arrival = match a.as_str() {
            "fixed" => Arrival::Fixed,
            "poisson" => Arrival::Poisson,
            other => bail!("--arrival: {other:?} is not fixed or poisson"),
        };
    }
    if let Some(d) = args.warmup {
        r.warmup = d;
    }
    if r.ops.is_none() && r.duration.is_zero() {
        bail!("--duration: must be above zero");
    }
    if args.interval < Duration::from_millis(10) {
        bail!("--interval: must be at least 10ms");
    }
    let what = if args.threads.is_some() {
        "--threads"
    } else {
        "run.threads"
    };
    let workers = checked_threads(w.run.threads, args.force_threads, what)?;
    checked_threads(w.load.threads, args.force_threads, "load.threads")?;
    if let Some(rate) = w.run.rate {
        let what = if args.rate.is_some() { "--rate" } else { "run.rate" };
        check_rate(rate, workers, &w.run, what)?;
    }
    Ok(())
}

/// Refuses a rate that leaves a worker without an operation to schedule in the run's
/// duration, or that would take longer than a week for the run's `--ops`.
fn check_rate(rate: f64, workers: usize, r: &crate::workload::Run, what: &str) -> anyhow::Result<()> {
    match r.ops {
        None => {
            let secs = r.duration.as_secs_f64();
            let scheduled = rate * secs;
            if scheduled < workers as f64 {
                bail!(
                    "{what} {rate:?}: schedules {scheduled:.3} operations in the run's {:?}, fewer than one for each of its {workers} workers; at least {:.4} operations/s gives each one",
                    r.duration,
                    workers as f64 / secs
                );
            }
        }
        Some(n) => {
            let secs = n as f64 / rate;
            if secs > 7.0 * 24.0 * 3600.0 {
                bail!("{what} {rate:?}: {n} operations at that rate take {secs:.0} s, longer than a week");
            }
        }
    }
    Ok(())
}

/// Loads the workload when the target holds no table; refuses a target that holds other
/// tables than the workload's.
fn prepare_store(
    w: &Workload,
    g: &Generator,
    store: &Arc<dyn Store>,
    args: &RunArgs,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<()> {
    let have = store.list_tables().context("listing the target's tables")?;
    if have.is_empty() {
        let opts = load::Options {
            threads: threads(w.load.threads),
            batch: w.load.batch,
            shard: Shard::ALL,
            progress: load::progress_wanted(),
            regions: args.regions.unwrap_or(w.load.regions),
            count_rows: true,
            bulk: true,
        };
        let (out, manifest) =
            super::load::load_recorded(store, g, &opts, &args.target.workload, &args.reports, metrics)?;
        if let Some(e) = &out.error {
            bail!(
                "loading {} failed after {} row writes: {e}",
                w.name,
                thousands(out.rows())
            );
        }
        let manifest = manifest.map_err(|e| {
            anyhow::anyhow!(
                "the load manifest could not be written under {}: {e} (the {} row writes acknowledged stay in the store)",
                args.reports.display(),
                thousands(out.rows())
            )
        })?;
        let secs = out.write_time.as_secs_f64();
        println!(
            "the target was empty: loaded {} row writes of {} in {:.1} s ({} row writes/s){}",
            thousands(out.rows()),
            w.name,
            secs,
            thousands((out.rows() as f64 / secs.max(1e-9)) as u64),
            format_args!("; manifest {}", manifest.display())
        );
        return Ok(());
    }
    let names: Vec<&str> = have.iter().map(|t| t.name.as_str()).collect();
    for t in g.tables() {
        if !names.contains(&t.name.as_str()) {
            bail!(
                "table {} is missing from {}: the target holds other data; load the workload into an empty target",
                t.name,
                store.identity()
            );
        }
    }
    Ok(())
}

fn arrival_name(a: Arrival) -> &'static str {
    match a {
        Arrival::Fixed => "fixed",
        Arrival::Poisson => "poisson",
    }
}

/// The terminal's live view: a bar over the run and a line per interval; nothing in pipes.
struct Live {
    bar: Option<ProgressBar>,
    count_ops: bool,
}

impl Live {
    fn new(opts: &Options, show: bool) -> Live {
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

/// The end-of-run table.
pub(super) fn print_summary(out: &mut impl Write, s: &RunSummary) -> anyhow::Result<()> {
    let columns = if s.open_loop { 12 } else { 10 };
    let mut table = TextTable::new(&OpReport::COLUMNS[..columns]);
    for o in s.ops.iter().chain([&s.all]) {
        table.row(o.cells());
    }
    writeln!(
        out,
        "{}: {} operations in {:.1} s against {}",
        s.workload.name,
        thousands(s.all.count + s.all.errors),
        s.measured_s,
        s.backend.identity
    )?;
    write!(out, "{}", table.render())?;
    for o in &s.ops {
        for (kind, e) in &o.errors_by_kind {
            writeln!(
                out,
                "{} failed {} times with {kind}, first: {}",
                o.op,
                thousands(e.count),
                e.first
            )?;
        }
    }
    if s.regions.iter().any(|r| r.rows_written + r.rows_read > 0) {
        let mut t = TextTable::new(&[
            "table",
            "regions",
            "rows written",
            "hottest",
            "max/mean",
            "rows read",
            "hottest",
            "max/mean",
        ]);
        for r in s.regions.iter().filter(|r| r.rows_written + r.rows_read > 0) {
            t.row(vec![
                r.table.clone(),
                r.regions.to_string(),
                thousands(r.rows_written),
                fmt_share(r.write_hottest_share),
                fmt_ratio(r.write_max_mean),
                thousands(r.rows_read),
                fmt_share(r.read_hottest_share),
                fmt_ratio(r.read_max_mean),
            ]);
        }
        writeln!(
            out,
            "regions (warm-up included; the hottest region's share of the rows, and its rows over the mean):"
        )?;
        write!(out, "{}", t.render())?;
    }
    match (&s.invalid_reason, s.on_time_share) {
        (Some(why), _) => writeln!(out, "INVALID: {why}")?,
        (None, Some(share)) => writeln!(
            out,
            "valid: {:.2}% of operations started within 1 s of schedule",
            share * 100.0
        )?,
        (None, None) => {}
    }
    Ok(())
}

pub(super) fn compare_command(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let base = crate::report::read(&args.baseline)?;
    let cand = crate::report::read(&args.candidate)?;
    let c = compare(&base, &cand, &args.threshold);
    let mut out = std::io::stdout().lock();
    for (which, dir, s) in [
        ("baseline", &args.baseline, &base.summary),
        ("candidate", &args.candidate, &cand.summary),
    ] {
        writeln!(
            out,
            "{which:>9}: {} ({} {}, {} threads, {}, against {})",
            dir.display(),
            s.workload.name,
            s.started,
            s.config.threads,
            match s.config.rate {
                Some(r) => format!("{r} ops/s"),
                None => "closed loop".into(),
            },
            s.backend.identity
        )?;
    }
    for w in &c.warnings {
        writeln!(out, "warning: {w}")?;
    }
    write!(out, "{}", c.table)?;
    if c.crossed.is_empty() {
        if !args.threshold.is_empty() {
            writeln!(out, "no threshold crossed")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    for line in &c.crossed {
        writeln!(out, "REGRESSION: {line}")?;
    }
    Ok(ExitCode::FAILURE)
}

pub(super) fn merge_command(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let mut data = crate::report::merge(&args.dirs)?;
    let dir = match &args.out {
        Some(d) => {
            if d.exists() {
                bail!("--out: {} exists already", d.display());
            }
            d.clone()
        }
        None => crate::report::run::folder(
            std::path::Path::new("reports"),
            &format!("{}-merged", data.summary.workload.name),
            data.summary.started_ms,
        ),
    };
    data.write(&dir)?;
    let mut out = std::io::stdout().lock();
    print_summary(&mut out, &data.summary)?;
    writeln!(out, "merged {} reports into {}", args.dirs.len(), dir.display())?;
    Ok(ExitCode::SUCCESS)
}
