//! `tallrow verify`: its arguments, the check, and what it prints.

use super::VerifyArgs;
use crate::generate::Generator;
use crate::report::{TextTable, thousands};
use crate::session;
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn verify(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let opening = std::time::Instant::now();
    let (w, store) = args.target.open(&[])?;
    // An embedded store left unflushed replays its journal here.
    let opened = opening.elapsed();
    let g = Generator::new(&w);
    let opts = crate::verify::Options {
        sample: args.sample,
        threads: session::checked_threads(args.threads, args.force_threads, "--threads")?,
        show: args.show,
    };
    let report = crate::verify::verify(store.clone(), &g, &opts)?;
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "verified {} ({} users) against {} (opened in {:.2} s); {} users queried",
        w.name,
        thousands(w.data.users),
        store.identity(),
        opened.as_secs_f64(),
        thousands(report.sampled)
    )?;
    let mut table = TextTable::new(&["table", "expected", "found", "missing", "unexpected", "mismatched"]);
    for (t, c) in &report.tables {
        table.row(vec![
            t.name().into(),
            thousands(c.expected),
            thousands(c.found),
            thousands(c.missing),
            thousands(c.unexpected),
            thousands(c.mismatched),
        ]);
    }
    write!(o, "{}", table.render())?;
    if !report.checks.is_empty() {
        let mut checks = TextTable::new(&["query check", "passed", "failed"]);
        for (name, passed, failed) in &report.checks {
            checks.row(vec![name.to_string(), thousands(*passed), thousands(*failed)]);
        }
        write!(o, "{}", checks.render())?;
    }
    for d in &report.differences {
        writeln!(o, "{d}")?;
    }
    if report.ok() {
        writeln!(o, "OK: the store holds exactly the workload's data")?;
        return Ok(ExitCode::SUCCESS);
    }
    let shown = report.differences.len() as u64;
    bail!(
        "{} differences{}",
        thousands(report.difference_count),
        if shown < report.difference_count {
            format!(" ({} shown; --show N for more)", thousands(shown))
        } else {
            String::new()
        }
    )
}
