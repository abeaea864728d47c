//! The terminal's renderings of a run summary: the end-of-run table and the one line a
//! sweep or comparison prints per run.

use super::summary::{OpReport, RunSummary, StageReport, TimelineReads};
use super::{TextTable, fmt_ns, thousands};
use crate::regions::report::{fmt_ratio, fmt_share};
use std::io::Write;

/// One line on a measured run: operations, time, rate, p50 and p99, and why it is invalid.
pub fn ran(s: &RunSummary) -> String {
    format!(
        "ran {} operations in {:.1} s: {:.1} ops/s, p50 {}, p99 {}{}",
        thousands(s.all.count + s.all.errors),
        s.measured_s,
        s.all.ops_per_s,
        fmt_ns(s.all.response.p50),
        fmt_ns(s.all.response.p99),
        s.invalid_reason
            .as_ref()
            .map(|why| format!("; INVALID: {why}"))
            .unwrap_or_default()
    )
}

/// A stage's heading: where it lies, what it asked and what it got.
pub fn stage_line(st: &StageReport) -> String {
    let asked = match (st.asked_ops_per_s, st.asked_threads) {
        (Some(r), _) => format!("asked {r:.1} ops/s, "),
        (None, Some(t)) => format!("{t:.1} threads on average, "),
        (None, None) => String::new(),
    };
    format!(
        "stage {} ({:.1}-{:.1} s, {}): {asked}achieved {:.1} ops/s",
        st.stage, st.start_s, st.end_s, st.asked, st.achieved_ops_per_s
    )
}

/// The end-of-run table, then each stage's.
pub fn print_summary(out: &mut dyn Write, s: &RunSummary) -> std::io::Result<()> {
    let columns = if s.open_loop { 12 } else { 10 };
    let mut table = TextTable::new(&OpReport::COLUMNS[..columns]);
    for o in s.ops.iter().chain([&s.all]) {
        table.row(o.cells());
    }
    writeln!(
        out,
        "{}: {} operations in {:.1} s against {}; {}",
        s.workload.name,
        thousands(s.all.count + s.all.errors),
        s.measured_s,
        s.backend.identity,
        s.reads()
    )?;
    write!(out, "{}", table.render())?;
    if s.timeline() {
        let mut t = TextTable::new(&TimelineReads::COLUMNS);
        for o in s.ops.iter().chain([&s.all]) {
            if let Some(tl) = &o.timeline {
                t.row(tl.cells(&o.op));
            }
        }
        writeln!(out, "timeline reads (stale: an answer a secondary replica gave):")?;
        write!(out, "{}", t.render())?;
    }
    for o in &s.ops {
        for (kind, e) in &o.errors_by_kind {
            writeln!(
                out,
                "{} failed {} times with {kind}, first: {}",
                o.op,
                thousands(e.count),
                e.first
            )?;
        }
    }
    for st in &s.stages {
        writeln!(out, "{}", stage_line(st))?;
        let mut table = TextTable::new(&OpReport::COLUMNS[..columns]);
        for o in st.ops.iter().chain([&st.all]) {
            table.row(o.cells());
        }
        write!(out, "{}", table.render())?;
    }
    if s.stopped_early {
        writeln!(
            out,
            "stopped early: these figures cover the {:.1} s it measured, not the {} asked for",
            s.measured_s,
            humantime::format_duration(s.config.run.duration)
        )?;
    }
    if let Some(line) = super::retries_line(&s.retries) {
        writeln!(out, "{line}")?;
    }
    const SHOWN: usize = 5;
    for d in s.disturbed.iter().take(SHOWN) {
        writeln!(
            out,
            "disturbed {:.0}-{:.0} s: {} retries, {} errors in {} operations{}; p99 around it {} (run {})",
            d.start_s,
            d.end_s,
            thousands(d.retries),
            thousands(d.errors),
            thousands(d.count),
            if d.silent_s > 0.0 {
                format!(", {:.0} s with no answer", d.silent_s)
            } else {
                String::new()
            },
            super::fmt_ns(d.p99_around_ns),
            super::fmt_ns(s.all.response.p99)
        )?;
    }
    if s.disturbed.len() > SHOWN {
        writeln!(
            out,
            "disturbed: {} more spans in summary.json",
            s.disturbed.len() - SHOWN
        )?;
    }
    if s.regions.iter().any(|r| r.rows_written + r.rows_read > 0) {
        let mut t = TextTable::new(&[
            "table",
            "regions",
            "rows written",
            "hottest",
            "max/mean",
            "rows read",
            "hottest",
            "max/mean",
        ]);
        for r in s.regions.iter().filter(|r| r.rows_written + r.rows_read > 0) {
            t.row(vec![
                r.table.clone(),
                r.regions.to_string(),
                thousands(r.rows_written),
                fmt_share(r.write_hottest_share),
                fmt_ratio(r.write_max_mean),
                thousands(r.rows_read),
                fmt_share(r.read_hottest_share),
                fmt_ratio(r.read_max_mean),
            ]);
        }
        writeln!(
            out,
            "regions (warm-up included; the hottest region's share of the rows, and its rows over the mean):"
        )?;
        write!(out, "{}", t.render())?;
    }
    match (&s.invalid_reason, s.on_time_share) {
        (Some(why), _) => writeln!(out, "INVALID: {why}")?,
        (None, Some(share)) => writeln!(
            out,
            "valid: {:.2}% of operations started within 1 s of schedule",
            share * 100.0
        )?,
        (None, None) => {}
    }
    Ok(())
}
