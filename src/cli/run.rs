//! `tallrow run`: its arguments, the measured run (or `--find-max`'s search), and what it
//! prints.

use super::RunArgs;
use crate::generate::Generator;
use crate::report::console::print_summary;
use crate::session::findmax::Search;
use crate::session::measure::Measure;
use crate::session::{self, until};
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub(super) fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    // Before any thread starts: Ctrl-C while measuring ends the run with its report.
    crate::run::interrupt::take_signals();
    let mut flags = args.settings.sets();
    flags.extend(super::regions_set(args.regions));
    let shard = args.shard.get()?;
    let backend_url = args.target.backend.clone().unwrap_or_default();
    let observe = crate::observe::choose(args.observe.as_deref(), &backend_url).map_err(anyhow::Error::msg)?;
    let (w, store) = args.target.open(&flags)?;
    args.settings.check(&w)?;
    let labels = args.settings.labels()?;
    if let Some(own) = &w.design
        && w.run.mix.is_empty()
    {
        bail!(
            "{}: the workload's own design declares no operations for `run` to measure (its [operations]); `load`, `verify` and `design explain` take it",
            own.file.display()
        );
    }
    if args.find_max && !w.run.stages.is_empty() {
        bail!("--find-max searches for a rate of its own: it cannot run the run's stages (run.stages or --stage)");
    }
    let mix: Vec<String> = w.run.mix.iter().map(|(op, _)| op.name().to_string()).collect();
    for t in &args.slo {
        t.check_scope(&mix).map_err(anyhow::Error::msg)?;
    }
    if let Some(at) = args.start_at {
        until(at, "")?;
    }
    let live = args.live.start(
        "run",
        &[
            ("workload", w.name.clone()),
            ("backend", store.identity()),
            ("shard", shard.to_string()),
        ],
    )?;
    let metrics = live.as_ref().map(|l| &*l.metrics);
    let g = Arc::new(Generator::new(&w));
    let url = args
        .target
        .backend
        .clone()
        .unwrap_or_else(|| format!("embedded:{}", w.default_data_dir().display()));
    let mut out = std::io::stdout().lock();
    let result = (|| -> anyhow::Result<ExitCode> {
        session::load::prepare(&g, &store, &args.target.workload, &args.reports, metrics, &mut out)?;
        if let Some(at) = args.start_at {
            let wait = until(at, " while loading")?;
            writeln!(
                out,
                "waiting {:.1} s, until {}, to start",
                wait.as_secs_f64(),
                humantime::format_rfc3339_millis(at)
            )?;
            std::thread::sleep(wait);
        }
        let measure = Measure {
            g: &g,
            store: &store,
            file: &args.target.workload,
            url: &url,
            shard,
            interval: args.settings.interval,
            targets: &args.slo,
            run: &w.run,
            metrics,
            observe: observe.as_deref(),
            labels: &labels,
        };
        if args.find_max {
            let search = Search {
                measure,
                step: args.step_duration,
                precision: args.precision,
                reports: &args.reports,
            };
            search.run(&mut out)?;
            return Ok(ExitCode::SUCCESS);
        }
        let data = measure.run(&mut out, |started| {
            Ok(crate::report::run::folder(&args.reports, &w.name, started))
        })?;
        print_summary(&mut out, &data.summary)?;
        if let Some(line) = &data.cluster {
            writeln!(out, "{line}")?;
        }
        for v in &data.summary.slos {
            writeln!(out, "target {}", v.line())?;
        }
        for st in &data.summary.stages {
            for v in &st.slos {
                writeln!(out, "target in stage {}: {}", st.stage, v.line())?;
            }
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
            .chain(data.summary.stages.iter().flat_map(|st| {
                st.slos.iter().filter(|v| !v.held).map(move |v| {
                    format!(
                        "{} in stage {} (measured {})",
                        v.target,
                        st.stage,
                        v.measured.as_deref().unwrap_or("nothing")
                    )
                })
            }))
            .collect();
        if !missed.is_empty() {
            let judged = data.summary.slos.len() * (1 + data.summary.stages.len());
            bail!("{} of {judged} targets missed: {}", missed.len(), missed.join("; "));
        }
        Ok(ExitCode::SUCCESS)
    })();
    if let Some(l) = live {
        l.finish();
    }
    result
}

/// `--precision`: a percentage (`5%`) or a fraction (`0.05`), from 0.1% to 50%.
pub(super) fn parse_precision(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("{s:?} is not a percentage like 5%"))?;
    if !(0.001..=0.5).contains(&value) {
        return Err(format!("{s:?} must be from 0.1% to 50%"));
    }
    Ok(value)
}

/// `--step-duration`: at least a second, so that a step measures more than noise.
pub(super) fn parse_step(s: &str) -> Result<Duration, String> {
    let d = crate::workload::parse_duration(s)?;
    if d < Duration::from_secs(1) {
        return Err(format!("{s:?}: a step must measure at least 1s"));
    }
    Ok(d)
}
