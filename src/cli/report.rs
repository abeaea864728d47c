//! `tallrow report merge`: the reports of the shards of one run merged into one.

use super::MergeArgs;
use crate::report::console::print_summary;
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
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
