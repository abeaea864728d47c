//! `tallrow design explain`: its arguments and what it prints.

use super::DesignExplainArgs;
use crate::generate::Generator;
use crate::workload::Workload;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn explain(args: DesignExplainArgs) -> anyhow::Result<ExitCode> {
    let mut sets = args.set.clone();
    sets.extend(super::regions_set(args.regions));
    let w = Workload::from_file_with(&args.workload, &sets)?;
    let g = Generator::new(&w);
    let text = crate::design::explain::explain(&g, g.design(), w.load.regions, args.examples)?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
