//! `tallrow sweep`: its arguments and what it prints ([`crate::session::sweep`] runs it).

use super::SweepArgs;
use crate::session::sweep::Sweep;
use crate::workload::Set;
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn sweep(args: SweepArgs) -> anyhow::Result<ExitCode> {
    for v in &args.vary {
        let flag = match v.key.as_str() {
            "run.threads" => args.settings.threads.map(|_| "--threads"),
            "run.rate" => args.settings.rate.map(|_| "--rate"),
            "run.duration" => args.settings.duration.as_ref().map(|_| "--duration"),
            "run.warmup" => args.settings.warmup.as_ref().map(|_| "--warmup"),
            _ => None,
        };
        if let Some(flag) = flag {
            bail!("--vary {}: {flag} fixes what it varies", v.text);
        }
    }
    let sets: Vec<Set> = args.set.iter().cloned().chain(args.settings.sets()).collect();
    let labels = args.settings.labels()?;
    let mut out = std::io::stdout().lock();
    let (report, dir) = Sweep {
        file: &args.workload,
        vary: &args.vary,
        sets: &sets,
        force_threads: args.settings.force_threads,
        backend: args.backend.as_deref(),
        interval: args.settings.interval,
        labels: &labels,
        replace: args.replace,
        keep: args.keep,
        reports: &args.reports,
    }
    .run(&mut out)?;
    writeln!(out)?;
    write!(out, "{}", report.text_table().render())?;
    writeln!(out, "report: {}", dir.display())?;
    super::all_valid(report.points.iter().filter(|p| !p.valid).map(|p| p.folder.as_str()))
}
