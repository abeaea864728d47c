//! `tallrow compare`: two run reports side by side; exits 1 when a threshold is crossed.

use super::CompareArgs;
use crate::report::compare::compare as compare_reports;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let base = crate::report::read(&args.baseline)?;
    let cand = crate::report::read(&args.candidate)?;
    let c = compare_reports(&base, &cand, &args.threshold);
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
            s.config.run.threads,
            s.config.run.describe_loop(),
            s.backend.identity
        )?;
    }
    for w in &c.warnings {
        writeln!(out, "warning: {w}")?;
    }
    write!(out, "{}", c.table)?;
    if let Some(t) = crate::report::cluster::side_by_side(base.summary.events.as_ref(), cand.summary.events.as_ref()) {
        write!(out, "{t}")?;
    }
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
