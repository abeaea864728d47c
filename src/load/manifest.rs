//! The load manifest: a JSON record under `reports/` of what a load wrote, from which
//! workload, to which backend, and how long it took.

use super::{Options, Outcome};
use crate::workload::Workload;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Writes `reports_dir/<workload>-load-<UTC>[-shard-i-of-N].json`; returns its path.
#[allow(clippy::too_many_arguments)]
pub fn write_manifest(
    reports_dir: &Path,
    w: &Workload,
    file: &Path,
    backend: &str,
    opts: &Options,
    started_ms: i64,
    finished_ms: i64,
    plan_seconds: f64,
    out: &Outcome,
) -> std::io::Result<PathBuf> {
    let secs = out.write_time.as_secs_f64();
    let rate = |rows: u64| if secs > 0.0 { rows as f64 / secs } else { 0.0 };
    let mut tables = Map::new();
    let skews = crate::regions::report::skew(&out.spread);
    for (t, s) in &out.tables {
        let mut entry = json!({
            "row_writes": s.rows,
            "rows_in_table": out.rows_in(*t),
            // Written whole at the end by the backend's bulk load, not in batches.
            "bulk": out.bulk.contains(t),
            "cells": s.cells,
            "bytes": s.bytes,
            "row_writes_per_second": rate(s.rows).round(),
        });
        if let Some((_, splits)) = out.splits.iter().find(|(s, _)| s == t) {
            let keys: Vec<String> = splits.iter().map(|k| crate::keys::to_string_binary(k)).collect();
            entry["split_points"] = json!(keys);
        }
        if let Some(spread) = out.spread.tables.iter().find(|s| s.bounds.table == t.name()) {
            entry["regions"] = crate::regions::report::manifest_regions(spread);
        }
        if let Some(skew) = skews.iter().find(|s| s.table == t.name()) {
            entry["write_hottest_share"] = json!(skew.write_hottest_share);
            entry["write_max_mean"] = json!(skew.write_max_mean);
        }
        tables.insert(t.name().to_string(), entry);
    }
    let total = json!({
        "row_writes": out.rows(),
        "rows_in_tables": (out.rows_in_table.len() == out.tables.len())
            .then(|| out.rows_in_table.iter().map(|(_, n)| n).sum::<u64>()),
        "cells": out.tables.iter().map(|(_, s)| s.cells).sum::<u64>(),
        "bytes": out.tables.iter().map(|(_, s)| s.bytes).sum::<u64>(),
        "row_writes_per_second": rate(out.rows()).round(),
    });
    let doc = json!({
        "kind": "load",
        "status": if out.error.is_some() { "failed" } else { "complete" },
        "error": out.error,
        "workload": w.name,
        "file": file.display().to_string(),
        "data_digest": w.data_digest(),
        "rows_digest": format!("{:032x}", out.digest),
        "seed": w.seed,
        "shard": opts.shard.to_string(),
        "threads": opts.threads,
        "batch": opts.batch,
        "regions_asked": opts.regions,
        "backend": backend,
        "started": crate::date::iso(started_ms),
        "finished": crate::date::iso(finished_ms),
        "plan_seconds": plan_seconds,
        "write_seconds": secs,
        "count_seconds": out.count_time.as_secs_f64(),
        "blocks_done": out.blocks_done,
        "blocks_total": out.blocks_total,
        "celebrities": out.celebrities,
        "tables": Value::Object(tables),
        "total": total,
        "effective": w,
    });
    std::fs::create_dir_all(reports_dir)?;
    let shard = if opts.shard.count > 1 {
        format!("-shard-{}-of-{}", opts.shard.index + 1, opts.shard.count)
    } else {
        String::new()
    };
    let stem = format!("{}-load-{}{shard}", w.name, crate::date::compact(started_ms));
    let mut path = reports_dir.join(format!("{stem}.json"));
    let mut n = 2;
    while path.exists() {
        path = reports_dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    std::fs::write(&path, text + "\n")?;
    Ok(path)
}
