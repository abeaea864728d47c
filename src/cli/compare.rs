//! `tallrow compare`: runs side by side, one or several a side; the verdict on the terminal
//! and as `verdict.json` and `verdict.md` in a folder of its own; exits 1 on a regression.

use super::CompareArgs;
use crate::report::compare::compare as compare_reports;
use crate::report::run::RunData;
use crate::report::verdict::{self, Verdict};
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let (bdirs, cdirs): (Vec<PathBuf>, Vec<PathBuf>) = match (&args.baseline, &args.candidate) {
        (Some(b), Some(c)) => (vec![b.clone()], vec![c.clone()]),
        _ => (args.baselines.clone(), args.candidates.clone()),
    };
    let read = |dirs: &[PathBuf]| -> anyhow::Result<Vec<RunData>> {
        dirs.iter().map(|d| Ok(crate::report::read(d)?)).collect()
    };
    let (base, cand) = (read(&bdirs)?, read(&cdirs)?);
    let names = |dirs: &[PathBuf]| dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>();
    let mut out = std::io::stdout().lock();
    for (which, dirs, runs) in [("baseline", &bdirs, &base), ("candidate", &cdirs, &cand)] {
        for (dir, d) in dirs.iter().zip(runs) {
            let s = &d.summary;
            writeln!(
                out,
                "{which:>9}: {} ({} {}, {} threads, {}, against {})",
                dir.display(),
                s.workload.name,
                s.started,
                s.config.run.threads,
                s.config.run.describe_loop(),
                s.backend.identity
            )?;
        }
    }
    let (b, c): (Vec<&RunData>, Vec<&RunData>) = (base.iter().collect(), cand.iter().collect());
    let v = if b.len() >= 2 && c.len() >= 2 {
        let v = verdict::judge(&b, &c, &names(&bdirs), &names(&cdirs), &args.threshold);
        for w in &v.warnings {
            writeln!(out, "warning: {w}")?;
        }
        write!(out, "{}", v.table())?;
        v
    } else {
        // One run on a side: each figure's own test sees the noise within the one run, not
        // between runs; the last run of each side is compared.
        let (lb, lc) = (b[b.len() - 1], c[c.len() - 1]);
        let cmp = compare_reports(lb, lc, &args.threshold);
        let mut warnings = verdict::differences(&b, &c);
        warnings.push(format!(
            "one run {}: the noise between runs is unknown, and only a threshold's crossing is judged (give three runs a side, --baseline DIR... --candidate DIR...)",
            if b.len() == 1 && c.len() == 1 { "a side" } else { "on a side" }
        ));
        for w in &warnings {
            writeln!(out, "warning: {w}")?;
        }
        write!(out, "{}", cmp.table)?;
        Verdict {
            verdict: if cmp.crossed.is_empty() { "no regression" } else { "regression" },
            method: "one run a side: a percentile's change by a binomial test of the candidate's values beyond the baseline's percentile, the mean's by Welch's t-test of the two histograms, throughput's by Welch's t-test over the per-interval rates (p < 0.01), judged only against the thresholds".into(),
            baseline: names(&bdirs),
            candidate: names(&cdirs),
            thresholds: args.threshold.iter().map(ToString::to_string).collect(),
            warnings,
            regressions: cmp.crossed.clone(),
            figures: cmp.figures,
        }
    };
    if let Some(t) = crate::report::cluster::side_by_side(
        b[b.len() - 1].summary.events.as_ref(),
        c[c.len() - 1].summary.events.as_ref(),
    ) {
        write!(out, "{t}")?;
    }
    let dir = crate::report::run::folder(&args.reports, "compare", crate::store::now_millis());
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = serde_json::to_string_pretty(&v).expect("serializable");
    for (name, text) in [("verdict.json", json + "\n"), ("verdict.md", v.markdown())] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    for line in &v.regressions {
        writeln!(out, "REGRESSION: {line}")?;
    }
    writeln!(out, "verdict: {} ({})", v.verdict, dir.join("verdict.md").display())?;
    // A gate that could not judge what it was asked to does not pass.
    Ok(if v.verdict == "no regression" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
