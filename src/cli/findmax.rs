//! `run --find-max`: the highest open-loop rate at which every `--slo` holds and the run is
//! valid. A closed-loop probe measures what the store does flat out, which bounds the answer
//! from above; then measured steps bisect the rates below it until the highest rate that
//! held and the lowest that did not are within `--precision` of each other.

use super::RunArgs;
use super::run::{Measure, Written};
use crate::generate::Generator;
use crate::load::Shard;
use crate::report::findmax::{FindMax, Step};
use crate::store::Store;
use crate::workload::Workload;
use anyhow::{Context, bail};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Most steps a search runs after its probe: bisection halves the interval each time, so
/// 0.1% precision needs 10.
const MOST_STEPS: usize = 24;

pub(super) fn find_max(
    args: &RunArgs,
    w: &Workload,
    g: &Arc<Generator>,
    store: &Arc<dyn Store>,
    url: &str,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<ExitCode> {
    let step = args.step_duration;
    let precision = args.precision;
    let started = crate::store::now_millis();
    let dir = crate::report::run::folder(&args.reports, &format!("{}-findmax", w.name), started);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "finding the highest rate at which {} holds: steps of {} after {} of warm-up, to within {}%",
        if args.slo.is_empty() {
            "the run (95% of operations on time)".to_string()
        } else {
            args.slo.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
        },
        humantime::format_duration(step),
        humantime::format_duration(w.run.warmup),
        precision * 100.0
    )?;
    let mut search = FindMax {
        workload: w.name.clone(),
        backend: store.identity(),
        started: crate::date::iso(started),
        threads: super::load::threads(w.run.threads),
        step_s: step.as_secs_f64(),
        warmup_s: w.run.warmup.as_secs_f64(),
        precision,
        targets: args.slo.iter().map(|t| t.to_string()).collect(),
        steps: Vec::new(),
        max_ops_per_s: None,
        best_step: None,
    };
    let measure = |rate: Option<f64>, out: &mut dyn Write, search: &mut FindMax| -> anyhow::Result<bool> {
        let n = search.steps.len();
        let folder = match rate {
            None => format!("step-{n:02}-probe"),
            Some(r) => format!("step-{n:02}-{:.0}ops", r),
        };
        let mut run = w.run.clone();
        run.rate = rate;
        run.ops = None;
        run.duration = step;
        let target = Measure {
            g,
            store,
            file: &args.target.workload,
            url,
            shard: args.shard.unwrap_or(Shard::ALL),
            interval: args.settings.interval,
            targets: &args.slo,
            run: &run,
            // Each step starts its counters afresh (a counter reset, to Prometheus).
            metrics,
        };
        let mut sink = Vec::new();
        let written: Written = target.run(&mut sink, |_| Ok(dir.join(&folder)))?;
        let s = &written.summary;
        let holds = s.valid && s.slos.iter().all(|v| v.held);
        let st = Step {
            folder: folder.clone(),
            target_ops_per_s: rate,
            achieved_ops_per_s: s.all.ops_per_s,
            valid: s.valid,
            invalid_reason: s.invalid_reason.clone(),
            holds,
            p99_ns: s.all.response.p99,
            verdicts: s.slos.clone(),
        };
        writeln!(
            out,
            "step {n}: {}, achieved {:.1} ops/s, {}{}{}",
            match rate {
                Some(r) => format!("open loop at {r:.1} ops/s"),
                None => "closed-loop probe".to_string(),
            },
            st.achieved_ops_per_s,
            match &st.invalid_reason {
                None => "valid".to_string(),
                Some(why) => format!("INVALID ({why})"),
            },
            st.verdicts
                .iter()
                .map(|v| format!("; {}", v.line()))
                .collect::<String>(),
            match rate {
                None => String::new(),
                Some(_) if holds => ": holds".to_string(),
                Some(_) => ": does not hold".to_string(),
            }
        )?;
        out.flush()?;
        search.steps.push(st);
        Ok(holds)
    };

    measure(None, &mut out, &mut search)?;
    let ceiling = search.steps[0].achieved_ops_per_s;
    if ceiling.is_nan() || ceiling <= 0.0 {
        search
            .write(&dir)
            .with_context(|| format!("cannot write {}", dir.display()))?;
        bail!(
            "the closed-loop probe completed no operations, so there is no rate to search (report: {})",
            dir.display()
        );
    }
    // The probe's rate itself first: a store that holds the targets flat out needs no search.
    let (mut lo, mut hi) = (0.0f64, ceiling);
    if measure(Some(ceiling), &mut out, &mut search)? {
        lo = ceiling;
        search.best_step = Some(search.steps.len() - 1);
    } else {
        while hi - lo > precision * hi && search.steps.len() < MOST_STEPS + 1 {
            let mid = (lo + hi) / 2.0;
            // Below `precision` of the probe's rate, the answer would say nothing useful.
            if mid < ceiling * precision {
                break;
            }
            if measure(Some(mid), &mut out, &mut search)? {
                lo = mid;
                search.best_step = Some(search.steps.len() - 1);
            } else {
                hi = mid;
            }
        }
    }
    search.max_ops_per_s = search.best_step.map(|_| lo);
    search
        .write(&dir)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    writeln!(out, "{}", search.answer())?;
    writeln!(out, "report: {}", dir.display())?;
    if search.best_step.is_none() {
        bail!(
            "no rate held the targets, down to {:.1} ops/s (report: {})",
            hi,
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
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
