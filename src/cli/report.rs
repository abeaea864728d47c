//! `tallrow report merge`: the reports of the shards of one run merged into one.

use super::MergeArgs;
use crate::report::console::print_summary;
use anyhow::{Context, bail};
use std::io::Write;
use std::process::ExitCode;

pub(super) fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let merged = crate::report::merge(&args.dirs, args.partial)?;
    let mut data = merged.data;
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
    if let Some(from) = &merged.observed_from {
        for f in ["events.csv", "cluster.csv"] {
            if from.join(f).exists() {
                std::fs::copy(from.join(f), dir.join(f))
                    .with_context(|| format!("copying {} into {}", from.join(f).display(), dir.display()))?;
            }
        }
    }
    let mut out = std::io::stdout().lock();
    print_summary(&mut out, &data.summary)?;
    if let Some(why) = &merged.regions_note {
        writeln!(out, "regions.csv not merged: {why}")?;
    }
    if !data.summary.missing_shards.is_empty() {
        writeln!(out, "partial: shard {} missing", data.summary.missing_shards.join(", "))?;
    }
    writeln!(
        out,
        "merged {} reports ({}) into {}",
        merged.dirs.len(),
        data.summary.config.shard,
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
