//! The load manifest: a JSON record under `reports/` of what a load wrote, from which
//! workload, to which backend, and how long it took. [`Manifest`] is the file, written and
//! read back (`tallrow sweep` takes each point's table figures from it).

use super::{Options, Outcome};
use crate::workload::{Load, Workload};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A load manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `load`.
    pub kind: String,
    /// `complete`, `stopped` (by a signal, resumable) or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The workload's name.
    pub workload: String,
    /// Its file.
    pub file: String,
    /// Digest of everything that decides the data.
    pub data_digest: String,
    /// Digest of every row mutation written, as 32 hex digits.
    pub rows_digest: String,
    /// The workload's seed.
    pub seed: u64,
    /// Shard `i/N`.
    pub shard: String,
    /// Worker threads.
    pub threads: usize,
    /// Rows per store call.
    pub batch: usize,
    /// Regions each missing table was created with.
    pub regions_asked: usize,
    /// The store's identity.
    pub backend: String,
    /// Start (ISO 8601, UTC).
    pub started: String,
    /// End.
    pub finished: String,
    /// Seconds opening the store before the load (replaying its journal, for an embedded
    /// store that was not closed).
    #[serde(default)]
    pub open_seconds: f64,
    /// Seconds planning (counting followers) before writing.
    pub plan_seconds: f64,
    /// Seconds writing.
    pub write_seconds: f64,
    /// Of those, seconds leaving the store flushed once every row was acknowledged (an
    /// embedded store's memtables, so that the next open replays no journal).
    #[serde(default)]
    pub flush_seconds: f64,
    /// Seconds counting rows after writing.
    pub count_seconds: f64,
    /// Blocks of users written.
    pub blocks_done: u64,
    /// Blocks of the shard.
    pub blocks_total: u64,
    /// Users over the celebrity threshold.
    pub celebrities: usize,
    /// Per table.
    pub tables: BTreeMap<String, TableEntry>,
    /// All tables together.
    pub total: Total,
    /// Where the load continued an unfinished one (`load --resume`): what it took over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<Resumed>,
    /// The validated workload.
    pub effective: Workload,
}

/// What a resumed load took over from the unfinished one. Its counts and digest are the
/// whole load's, as if it had never stopped; its rates are of its own writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumed {
    /// The journal it continued.
    pub journal: String,
    /// Blocks the unfinished load had acknowledged: not written again.
    pub from_blocks: u64,
    /// Blocks it had started and not seen acknowledged when the journal was last written.
    pub in_flight: u64,
    /// Of those, the blocks this load wrote again (all of them, unless it failed too).
    pub rewritten: u64,
    /// Per table, the row writes taken over.
    pub row_writes_taken_over: BTreeMap<String, u64>,
}

/// What a load wrote into one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableEntry {
    /// Row mutations acknowledged (a row written by several counts each).
    pub row_writes: u64,
    /// Distinct rows in the table after the load, when counted.
    pub rows_in_table: Option<u64>,
    /// Written whole at the end by the backend's bulk load, not in batches.
    pub bulk: bool,
    /// Cells.
    pub cells: u64,
    /// Bytes of keys, qualifiers, values and timestamps.
    pub bytes: u64,
    /// Row writes per second of writing.
    pub row_writes_per_second: f64,
    /// Where the table was split when the load created it (keys as HBase's shell writes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_points: Option<Vec<String>>,
    /// Rows and bytes per region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<Vec<crate::regions::report::RegionEntry>>,
    /// The hottest region's share of the rows written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_hottest_share: Option<f64>,
    /// The hottest region's rows written over the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_max_mean: Option<f64>,
}

/// All tables together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Total {
    /// Row mutations acknowledged.
    pub row_writes: u64,
    /// Distinct rows in all tables, when every table was counted.
    pub rows_in_tables: Option<u64>,
    /// Cells.
    pub cells: u64,
    /// Bytes.
    pub bytes: u64,
    /// Row writes per second of writing.
    pub row_writes_per_second: f64,
}

impl Manifest {
    /// The manifest of a finished (or failed) load.
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        w: &Workload,
        file: &Path,
        backend: &str,
        l: &Load,
        opts: &Options,
        started_ms: i64,
        finished_ms: i64,
        plan_seconds: f64,
        out: &Outcome,
    ) -> Manifest {
        let secs = out.write_time.as_secs_f64();
        let rate = |rows: u64| if secs > 0.0 { (rows as f64 / secs).round() } else { 0.0 };
        // A resumed load's rate is of what it wrote itself.
        let before = |t: &str| {
            out.resumed
                .as_ref()
                .and_then(|r| r.row_writes_taken_over.get(t).copied())
                .unwrap_or(0)
        };
        let skews = crate::regions::report::skew(&out.spread);
        let mut tables = BTreeMap::new();
        for (t, s) in &out.tables {
            let skew = skews.iter().find(|s| s.table == t.name());
            tables.insert(
                t.name().to_string(),
                TableEntry {
                    row_writes: s.rows,
                    rows_in_table: out.rows_in(*t),
                    bulk: out.bulk.contains(t),
                    cells: s.cells,
                    bytes: s.bytes,
                    row_writes_per_second: rate(s.rows - before(t.name())),
                    split_points: out
                        .splits
                        .iter()
                        .find(|(s, _)| s == t)
                        .map(|(_, splits)| splits.iter().map(|k| crate::keys::to_string_binary(k)).collect()),
                    regions: out
                        .spread
                        .tables
                        .iter()
                        .find(|s| s.bounds.table == t.name())
                        .map(crate::regions::report::manifest_regions),
                    write_hottest_share: skew.and_then(|k| k.write_hottest_share),
                    write_max_mean: skew.and_then(|k| k.write_max_mean),
                },
            );
        }
        Manifest {
            kind: "load".into(),
            status: match out.error.as_deref() {
                None => "complete",
                Some(super::STOPPED) => "stopped",
                Some(_) => "failed",
            }
            .into(),
            error: out.error.clone(),
            workload: w.name.clone(),
            file: file.display().to_string(),
            data_digest: w.data_digest(),
            rows_digest: format!("{:032x}", out.digest),
            seed: w.seed,
            shard: opts.shard.to_string(),
            threads: l.workers(),
            batch: l.batch,
            regions_asked: l.regions,
            backend: backend.to_string(),
            started: crate::date::iso(started_ms),
            finished: crate::date::iso(finished_ms),
            open_seconds: out.open_time.as_secs_f64(),
            plan_seconds,
            write_seconds: secs,
            flush_seconds: out.flush_time.as_secs_f64(),
            count_seconds: out.count_time.as_secs_f64(),
            blocks_done: out.blocks_done,
            blocks_total: out.blocks_total,
            celebrities: out.celebrities,
            tables,
            total: Total {
                row_writes: out.rows(),
                rows_in_tables: (out.rows_in_table.len() == out.tables.len())
                    .then(|| out.rows_in_table.iter().map(|(_, n)| n).sum::<u64>()),
                cells: out.tables.iter().map(|(_, s)| s.cells).sum(),
                bytes: out.tables.iter().map(|(_, s)| s.bytes).sum(),
                row_writes_per_second: rate(
                    out.rows()
                        - out
                            .resumed
                            .as_ref()
                            .map_or(0, |r| r.row_writes_taken_over.values().sum::<u64>()),
                ),
            },
            resumed: out.resumed.clone(),
            effective: w.clone(),
        }
    }

    /// Reads a manifest back.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Writes `reports_dir/<workload>-load-<UTC>[-shard-i-of-N].json`; returns its path.
pub fn write_manifest(
    reports_dir: &Path,
    m: &Manifest,
    started_ms: i64,
    shard: super::Shard,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(reports_dir)?;
    let shard = if shard.count > 1 {
        format!("-shard-{}-of-{}", shard.index + 1, shard.count)
    } else {
        String::new()
    };
    let stem = format!("{}-load-{}{shard}", m.workload, crate::date::compact(started_ms));
    let mut path = reports_dir.join(format!("{stem}.json"));
    let mut n = 2;
    while path.exists() {
        path = reports_dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    let text = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    std::fs::write(&path, text + "\n")?;
    Ok(path)
}
