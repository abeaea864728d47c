//! `tallrow load` and `tallrow verify`: argument handling and what they print.

use super::{LoadArgs, VerifyArgs};
use crate::generate::Generator;
use crate::load::{self, Options, Shard};
use crate::regions::report::{fmt_ratio, fmt_share};
use crate::report::{TextTable, thousands};
use crate::store::now_millis;
use crate::store::{Store, backend::Backend, hfile};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Worker threads: the requested count, or every core for 0.
pub fn threads(n: usize) -> usize {
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Most worker threads a command starts.
pub const MAX_THREADS: usize = 4096;

/// Worker threads per core above which a count must be forced.
const PER_CORE: usize = 64;

/// The worker threads `n` asks for (0: every core), refused above [`MAX_THREADS`] and, unless
/// `force`, above 64 per core; `what` names where `n` came from.
pub fn checked_threads(n: usize, force: bool, what: &str) -> anyhow::Result<usize> {
    let t = threads(n);
    if t > MAX_THREADS {
        bail!("{what} {t}: at most {MAX_THREADS} worker threads");
    }
    let cores = threads(0);
    if t > PER_CORE * cores && !force {
        bail!(
            "{what} {t}: more than {PER_CORE} worker threads per core on this machine's {cores} cores; pass --force-threads to start them anyway"
        );
    }
    Ok(t)
}

/// Loads `g`'s data into `store` and writes the load manifest under `reports`.
pub(super) fn load_recorded(
    store: &Arc<dyn Store>,
    g: &Generator,
    opts: &Options,
    file: &Path,
    reports: &Path,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<(load::Outcome, std::io::Result<PathBuf>)> {
    let started = now_millis();
    let tally = Arc::new(load::Tally::default());
    if let Some(m) = metrics {
        m.load(tally.clone());
    }
    let out = load::load_tallied(store.clone(), g, opts, &tally)?;
    let finished = now_millis();
    let manifest = load::write_manifest(
        reports,
        g.workload(),
        file,
        &store.identity(),
        opts,
        started,
        finished,
        g.plan_time().as_secs_f64(),
        &out,
    );
    Ok((out, manifest))
}

pub(super) fn load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let (w, backend) = args.target.parse()?;
    let hfile_dir = match &backend {
        Backend::Hfile(dir) => Some(dir.clone()),
        _ => None,
    };
    if hfile_dir.is_none() && (args.replace || args.split_from.is_some()) {
        bail!("--replace and --split-from apply to --backend hfile:DIR only");
    }
    let g = Generator::new(&w);
    let shard = args.shard.unwrap_or(Shard::ALL);
    let (store, hfiles): (Arc<dyn Store>, _) = match &hfile_dir {
        Some(dir) => {
            if args.no_bulk {
                bail!(
                    "--no-bulk: hfile:{} is written by the bulk pipeline only",
                    dir.display()
                );
            }
            hfile::prepare(dir, shard, &w.data_digest(), args.replace)?;
            let splits = match &args.split_from {
                Some(url) => live_splits(url, &g)?,
                None => Default::default(),
            };
            let h = hfile::HFiles::new(dir, shard, splits)?;
            (Arc::new(h.clone()), Some(h))
        }
        None => {
            let url = args.target.backend.as_deref().unwrap_or("embedded:");
            (backend.open().with_context(|| format!("cannot open {url}"))?, None)
        }
    };
    let live = args
        .live
        .start("load", &[("workload", w.name.clone()), ("backend", store.identity())])?;
    let result = load_with(&args, &g, store, live.as_ref().map(|l| &*l.metrics));
    if let Some(l) = live {
        l.finish();
    }
    let out = result?;
    if let Some(h) = hfiles {
        let m = h.manifest(
            &w.name,
            &args.target.workload.display().to_string(),
            &w.data_digest(),
            out.digest,
        );
        let path = hfile::manifest::path(h.dir(), shard);
        hfile::manifest::write(&path, &m).with_context(|| format!("cannot write {}", path.display()))?;
        let files: Vec<_> = m.tables.iter().flat_map(|t| &t.files).collect();
        let bytes: u64 = files.iter().map(|f| f.bytes).sum();
        let mut o = std::io::stdout().lock();
        writeln!(
            o,
            "HFiles: {} files, {:.1} MiB under {}; manifest {}",
            thousands(files.len() as u64),
            bytes as f64 / (1 << 20) as f64,
            h.dir().display(),
            path.display()
        )?;
        writeln!(
            o,
            "to load them into HBase: tallrow bulkload {} --backend hbase://HOST:PORT?api=thrift2",
            h.dir().display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the live tables of `url` begin their regions, for each of `g`'s tables.
fn live_splits(url: &str, g: &Generator) -> anyhow::Result<std::collections::BTreeMap<String, Vec<Vec<u8>>>> {
    let backend = Backend::parse(url, Path::new(".")).context("--split-from")?;
    if !matches!(backend, Backend::Hbase(_)) {
        bail!("--split-from {url}: expected an hbase:// URL");
    }
    let live = backend
        .open()
        .with_context(|| format!("--split-from: cannot open {url}"))?;
    let mut out = std::collections::BTreeMap::new();
    for t in g.tables() {
        let splits = live
            .regions(&t.name)
            .with_context(|| format!("--split-from {url}: the regions of table {}", t.name))?;
        out.insert(crate::store::canonical_table_name(&t.name)?, splits);
    }
    Ok(out)
}

/// Loads and prints what was loaded; fails when the load did.
fn load_with(
    args: &LoadArgs,
    g: &Generator,
    store: Arc<dyn Store>,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<load::Outcome> {
    let w = g.workload();
    let batch = args.batch.unwrap_or(w.load.batch);
    if !(1..=100_000).contains(&batch) {
        bail!("--batch: must be between 1 and 100000, got {batch}");
    }
    let opts = Options {
        threads: checked_threads(
            args.threads.unwrap_or(w.load.threads),
            args.force_threads,
            if args.threads.is_some() {
                "--threads"
            } else {
                "load.threads"
            },
        )?,
        batch,
        shard: args.shard.unwrap_or(Shard::ALL),
        progress: load::progress_wanted(),
        regions: args.regions.unwrap_or(w.load.regions),
        count_rows: !args.no_count,
        bulk: !args.no_bulk,
    };
    let (out, manifest) = load_recorded(&store, g, &opts, &args.target.workload, &args.reports, metrics)?;

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
    for (t, s) in &out.tables {
        let skew = skews.iter().find(|k| k.table == t.name());
        table.row(vec![
            t.name().into(),
            thousands(s.rows),
            out.rows_in(*t).map_or("-".into(), thousands),
            thousands(s.cells),
            format!("{:.1}", s.bytes as f64 / (1 << 20) as f64),
            rate(s.rows),
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
        rate(out.rows()),
        String::new(),
        String::new(),
        String::new(),
    ]);
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "{} {} (shard {}, {} users) into {}: {:.2} s writing, {:.2} s counting followers, {:.2} s counting rows; {} threads, batches of {}",
        if out.error.is_some() { "partly loaded" } else { "loaded" },
        w.name,
        opts.shard,
        thousands(w.data.users),
        store.identity(),
        secs,
        g.plan_time().as_secs_f64(),
        out.count_time.as_secs_f64(),
        opts.threads,
        opts.batch
    )?;
    write!(o, "{}", table.render())?;
    writeln!(
        o,
        "celebrities: {}  rows digest: {:032x}",
        thousands(out.celebrities as u64),
        out.digest
    )?;
    if !out.bulk.is_empty() {
        writeln!(
            o,
            "bulk-loaded (empty tables, written as sorted files at the end): {}",
            out.bulk.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        )?;
    }
    if let Ok(p) = &manifest {
        writeln!(o, "manifest: {}", p.display())?;
    }
    if let Some(e) = &out.error {
        bail!(
            "load failed after {} of {} blocks with {} row writes acknowledged: {e}",
            thousands(out.blocks_done),
            thousands(out.blocks_total),
            thousands(out.rows())
        );
    }
    if let Err(e) = manifest {
        bail!(
            "the load manifest could not be written under {}: {e} (the {} row writes acknowledged stay in the store)",
            args.reports.display(),
            thousands(out.rows())
        );
    }
    Ok(out)
}

pub(super) fn verify(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (w, store) = args.target.open()?;
    let g = Generator::new(&w);
    let opts = crate::verify::Options {
        sample: args.sample,
        threads: checked_threads(args.threads, args.force_threads, "--threads")?,
        show: args.show,
    };
    let report = crate::verify::verify(store.clone(), &g, &opts)?;
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "verified {} ({} users) against {}; {} users queried",
        w.name,
        thousands(w.data.users),
        store.identity(),
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
