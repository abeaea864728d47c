//! `run --find-max`: the highest open-loop rate at which every target holds and the run is
//! valid. A closed-loop probe measures what the store does flat out, which bounds the answer
//! from above; then measured steps bisect the rates below it until the highest rate that
//! held and the lowest that did not are within the precision of each other.

use super::measure::{Measure, Written};
use super::{Context, Result, bail};
use crate::report::findmax::{FindMax, Step};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Most steps a search runs after its probe: bisection halves the interval each time, so
/// 0.1% precision needs 10.
const MOST_STEPS: usize = 24;

/// A search: each step is `measure` at another rate, for `step` after the run's warm-up.
pub struct Search<'a> {
    /// What each step measures (its run's rate and length are the step's).
    pub measure: Measure<'a>,
    /// Measured length of a step.
    pub step: Duration,
    /// The answer is within this fraction of the lowest rate that failed.
    pub precision: f64,
    /// Folder the search's folder goes under.
    pub reports: &'a Path,
}

impl Search<'_> {
    /// Runs the search, printing a line per step; the search as written into its folder
    /// (`reports/<workload>-findmax-<UTC>/`), or an error when no rate held.
    pub fn run(&self, out: &mut dyn Write) -> Result<FindMax> {
        let (w, step, precision) = (self.measure.g.workload(), self.step, self.precision);
        let m = &self.measure;
        let started = crate::store::now_millis();
        let dir = crate::report::run::folder(self.reports, &format!("{}-findmax", w.name), started);
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        writeln!(
            out,
            "finding the highest rate at which {} holds: steps of {} after {} of warm-up, to within {}%",
            if m.targets.is_empty() {
                "the run (95% of operations on time)".to_string()
            } else {
                m.targets.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
            },
            humantime::format_duration(step),
            humantime::format_duration(m.run.warmup),
            precision * 100.0
        )?;
        let mut search = FindMax {
            workload: w.name.clone(),
            backend: m.store.identity(),
            started: crate::date::iso(started),
            threads: m.run.workers(),
            step_s: step.as_secs_f64(),
            warmup_s: m.run.warmup.as_secs_f64(),
            precision,
            targets: m.targets.iter().map(|t| t.to_string()).collect(),
            steps: Vec::new(),
            max_ops_per_s: None,
            best_step: None,
        };
        let measure = |rate: Option<f64>, out: &mut dyn Write, search: &mut FindMax| -> Result<bool> {
            let n = search.steps.len();
            let folder = match rate {
                None => format!("step-{n:02}-probe"),
                Some(r) => format!("step-{n:02}-{:.0}ops", r),
            };
            let mut run = m.run.clone();
            run.rate = rate;
            run.ops = None;
            run.duration = step;
            // Each step starts its live counters afresh (a counter reset, to Prometheus).
            let target = Measure { run: &run, ..*m };
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

        measure(None, out, &mut search)?;
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
        if measure(Some(ceiling), out, &mut search)? {
            lo = ceiling;
            search.best_step = Some(search.steps.len() - 1);
        } else {
            while hi - lo > precision * hi && search.steps.len() < MOST_STEPS + 1 {
                let mid = (lo + hi) / 2.0;
                // Below `precision` of the probe's rate, the answer would say nothing useful.
                if mid < ceiling * precision {
                    break;
                }
                if measure(Some(mid), out, &mut search)? {
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
        Ok(search)
    }
}
