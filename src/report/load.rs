//! What `tallrow load` prints after a load: a line of what was loaded where and how long
//! it took, a table per table of the workload (row writes, rows, cells, MiB, rate, regions
//! and the hottest's share), the rows digest, the retries and the tables bulk-loaded.

use super::{TextTable, retries_line, thousands};
use crate::generate::Generator;
use crate::load::{Outcome, Shard};
use crate::regions::report::{fmt_ratio, fmt_share};
use std::collections::BTreeMap;
use std::io::Write;

/// Prints what `out` loaded of `g`'s workload (shard `shard`) into the store `identity`,
/// which retried `retries` calls by kind.
pub fn print(
    o: &mut dyn Write,
    g: &Generator,
    out: &Outcome,
    shard: Shard,
    identity: &str,
    retries: &BTreeMap<String, u64>,
) -> std::io::Result<()> {
    let w = g.workload();
    let secs = out.write_time.as_secs_f64();
    let rate = |rows: u64| {
        if secs > 0.0 {
            thousands((rows as f64 / secs) as u64)
        } else {
            "-".into()
        }
    };
    let skews = crate::regions::report::skew(&out.spread);
    let mut table = TextTable::new(&[
        "table",
        "row writes",
        "rows in table",
        "cells",
        "MiB",
        "row writes/s",
        "regions",
        "hottest region",
        "max/mean",
    ]);
    // Row writes count mutations; a row that several write (a follower list, an inbox) is
    // one row in the table, as a scan or `cbt count` sees it.
    // A resumed load's rates are of what it wrote itself.
    let taken_over = |t: &str| {
        out.resumed
            .as_ref()
            .map_or(0, |r| r.row_writes_taken_over.get(t).copied().unwrap_or(0))
    };
    for (t, s) in &out.tables {
        let skew = skews.iter().find(|k| k.table == t.name());
        table.row(vec![
            t.name().into(),
            thousands(s.rows),
            out.rows_in(*t).map_or("-".into(), thousands),
            thousands(s.cells),
            format!("{:.1}", s.bytes as f64 / (1 << 20) as f64),
            rate(s.rows - taken_over(t.name())),
            skew.map_or("-".into(), |k| k.regions.to_string()),
            fmt_share(skew.and_then(|k| k.write_hottest_share)),
            fmt_ratio(skew.and_then(|k| k.write_max_mean)),
        ]);
    }
    let cells: u64 = out.tables.iter().map(|(_, s)| s.cells).sum();
    let bytes: u64 = out.tables.iter().map(|(_, s)| s.bytes).sum();
    table.row(vec![
        "total".into(),
        thousands(out.rows()),
        if out.rows_in_table.len() == out.tables.len() {
            thousands(out.rows_in_table.iter().map(|(_, n)| n).sum())
        } else {
            "-".into()
        },
        thousands(cells),
        format!("{:.1}", bytes as f64 / (1 << 20) as f64),
        rate(out.rows() - out.tables.iter().map(|(t, _)| taken_over(t.name())).sum::<u64>()),
        String::new(),
        String::new(),
        String::new(),
    ]);
    writeln!(
        o,
        "{} {} (shard {}, {} users) into {}: {:.2} s opening, {:.2} s writing{}, {:.2} s {}, {:.2} s counting rows; {} threads, batches of {}",
        if out.error.is_some() { "partly loaded" } else { "loaded" },
        w.name,
        shard,
        thousands(w.data.users),
        identity,
        out.open_time.as_secs_f64(),
        secs,
        // Where the store has something to flush (the embedded one).
        if out.flush_time.as_secs_f64() >= 0.005 {
            format!(" ({:.2} s of it flushing)", out.flush_time.as_secs_f64())
        } else {
            String::new()
        },
        g.plan_time().as_secs_f64(),
        if g.plan_read() {
            "reading the followers counted before"
        } else {
            "counting followers"
        },
        out.count_time.as_secs_f64(),
        w.load.workers(),
        w.load.batch
    )?;
    if let Some(r) = &out.resumed {
        writeln!(
            o,
            "resumed the unfinished load in {}: {} of {} blocks acknowledged before were skipped; {} in flight when it stopped were written again",
            r.journal,
            thousands(r.from_blocks),
            thousands(out.blocks_total),
            thousands(r.rewritten)
        )?;
    }
    write!(o, "{}", table.render())?;
    writeln!(
        o,
        "celebrities: {}  rows digest: {:032x}",
        thousands(out.celebrities as u64),
        out.digest
    )?;
    if let Some(line) = retries_line(retries) {
        writeln!(o, "{line}")?;
    }
    if !out.bulk.is_empty() {
        writeln!(
            o,
            "bulk-loaded (empty tables, written as sorted files at the end): {}",
            out.bulk.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        )?;
    }
    Ok(())
}
