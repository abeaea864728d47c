//! Loads: a workload's data into a store with its manifest written, the load a run does
//! into an empty target first, and the HFiles of `hfile:DIR` with their manifest.

use super::{Context, Result, bail};
use crate::bulkload::output as hfile;
use crate::generate::Generator;
use crate::load::{self, Manifest, Options, Outcome, Shard};
use crate::report::thousands;
use crate::store::backend::Backend;
use crate::store::{Store, now_millis};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A finished load and its manifest: written to the path, or why it could not be.
pub struct Recorded {
    /// What the loader did.
    pub outcome: Outcome,
    /// The manifest.
    pub manifest: Manifest,
    /// Where it was written.
    pub path: std::io::Result<PathBuf>,
}

/// Loads `g`'s data into `store` by its workload's `[load]` and writes the load manifest
/// under `reports`.
pub fn recorded(
    store: &Arc<dyn Store>,
    g: &Generator,
    opts: &Options,
    file: &Path,
    reports: &Path,
    metrics: Option<&crate::metrics::Metrics>,
) -> Result<Recorded> {
    journaled(store, g, opts, file, reports, metrics, None)
}

/// [`recorded`], journaling the blocks acknowledged under `reports` (`resume`: continuing
/// the unfinished load the journal records; refused in one line when it is another load).
pub fn journaled(
    store: &Arc<dyn Store>,
    g: &Generator,
    opts: &Options,
    file: &Path,
    reports: &Path,
    metrics: Option<&crate::metrics::Metrics>,
    resume: Option<bool>,
) -> Result<Recorded> {
    let w = g.workload();
    let started = now_millis();
    let tally = Arc::new(load::Tally::default());
    if let Some(m) = metrics {
        m.load(tally.clone());
    }
    let mut journal = None;
    // A reports folder that cannot be made keeps no journal: the load goes on, and the
    // manifest that cannot be written there either fails it at the end, in one line.
    let resume = resume.filter(|&r| r || std::fs::create_dir_all(reports).is_ok());
    if let Some(resume) = resume {
        let header = load::journal::Header {
            workload: w.name.clone(),
            data_digest: w.data_digest(),
            shard: opts.shard.to_string(),
            target: store.target(),
            blocks_total: opts.shard.len(g.blocks()),
        };
        let path = load::journal::path(reports, opts.shard);
        let start = load::journal::start(&path, &header, resume).map_err(super::Error)?;
        if let Some(note) = &start.note {
            eprintln!("tallrow: {note}");
        }
        if let Some(state) = start.replaced.as_ref().and_then(|o| o.bulk.as_ref()) {
            hfile::discard_checkpoint(state);
        }
        load::journal::keep_plan(&path, g);
        journal = Some((
            load::Journal::new(path, header, start.from.as_ref(), g.all_tables()),
            start.from,
        ));
    }
    let outcome = load::load_journaled(
        store.clone(),
        g,
        &w.load,
        opts,
        &tally,
        journal.as_ref().map(|(j, from)| (j, from.as_ref())),
    )?;
    let finished = now_millis();
    let manifest = Manifest::of(
        w,
        file,
        &store.identity(),
        &w.load,
        opts,
        started,
        finished,
        g.plan_time().as_secs_f64(),
        &outcome,
    );
    let path = load::write_manifest(reports, &manifest, started, opts.shard);
    Ok(Recorded {
        outcome,
        manifest,
        path,
    })
}

/// A whole load with counted rows and the backend's bulk load where it has one.
pub fn whole() -> Options {
    Options {
        shard: Shard::ALL,
        progress: load::progress_wanted(),
        count_rows: true,
        checkpoint: load::CHECKPOINT,
        bulk: true,
        opened: std::time::Duration::ZERO,
    }
}

/// Loads the workload when the target holds none of its tables, printing what was loaded;
/// refuses a target that holds some of them and lacks others (a load that never finished
/// creating them, or another workload's). Other tables are left alone: a shared cluster
/// holds them.
pub fn prepare(
    g: &Generator,
    store: &Arc<dyn Store>,
    file: &Path,
    reports: &Path,
    metrics: Option<&crate::metrics::Metrics>,
    out: &mut dyn Write,
) -> Result<()> {
    let w = g.workload();
    let have = store.list_tables().context("listing the target's tables")?;
    let names: Vec<&str> = have.iter().map(|t| t.name.as_str()).collect();
    let tables = g.tables();
    let missing: Vec<&str> = tables
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !names.contains(t))
        .collect();
    if missing.len() == tables.len() {
        let r = recorded(store, g, &whole(), file, reports, metrics)?;
        let rows = r.outcome.rows();
        if let Some(e) = &r.outcome.error {
            bail!("loading {} failed after {} row writes: {e}", w.name, thousands(rows));
        }
        let manifest = r.path.map_err(|e| {
            super::Error(format!(
                "the load manifest could not be written under {}: {e} (the {} row writes acknowledged stay in the store)",
                reports.display(),
                thousands(rows)
            ))
        })?;
        let secs = r.outcome.write_time.as_secs_f64();
        writeln!(
            out,
            "the target held none of the workload's tables: loaded {} row writes of {} in {:.1} s ({} row writes/s); manifest {}",
            thousands(rows),
            w.name,
            secs,
            thousands((rows as f64 / secs.max(1e-9)) as u64),
            manifest.display()
        )?;
        return Ok(());
    }
    if !missing.is_empty() {
        bail!(
            "{} holds some of {}'s tables but not {}: finish their load or drop them first",
            store.identity(),
            w.name,
            missing.join(", ")
        );
    }
    Ok(())
}

/// Opens `hfile:DIR` for shard `shard` of `g`'s data: prepares the directory (replacing
/// what it holds of this shard with `replace`) and splits each table as the live tables of
/// `split_from` are split, when given.
pub fn hfiles(
    dir: crate::bulkload::fs::Dir,
    g: &Generator,
    shard: Shard,
    replace: bool,
    resume: bool,
    split_from: Option<&str>,
) -> Result<hfile::HFiles> {
    hfile::prepare(&dir, shard, &g.workload().data_digest(), replace, resume)?;
    let splits = match split_from {
        Some(url) => live_splits(url, g)?,
        None => Default::default(),
    };
    Ok(hfile::HFiles::new(dir, shard, splits)?)
}

/// What `tallrow load` writes into, opened: the generator (which, continuing a load, reads
/// the followers that load counted, when they were kept), the store, and for `hfile:DIR`
/// the HFiles, whose manifest is written after the load.
pub struct Opened {
    /// The data's generator.
    pub g: Generator,
    /// Where the rows go.
    pub store: Arc<dyn Store>,
    /// The HFiles of an `hfile:` load.
    pub hfiles: Option<hfile::HFiles>,
    /// How long opening the store took.
    pub opened: std::time::Duration,
}

/// What a load asked for besides its workload and backend.
pub struct Asked<'a> {
    /// The backend's URL, as given (for errors).
    pub url: &'a str,
    /// The folder of the load's journal and manifest.
    pub reports: &'a Path,
    /// The shard loaded.
    pub shard: Shard,
    /// `--resume`.
    pub resume: bool,
    /// `--no-bulk`.
    pub no_bulk: bool,
    /// `--replace` (hfile: only).
    pub replace: bool,
    /// `--split-from` (hfile: only).
    pub split_from: Option<&'a str>,
}

/// Opens what a load of `w` writes into through `backend`.
pub fn open(w: &crate::workload::Workload, backend: &Backend, asked: &Asked) -> Result<Opened> {
    let hfile_dir = match backend {
        Backend::Hfile(dir) => Some(dir),
        _ => None,
    };
    if hfile_dir.is_none() && (asked.replace || asked.split_from.is_some()) {
        bail!("--replace and --split-from apply to --backend hfile:DIR only");
    }
    let journal = load::journal::path(asked.reports, asked.shard);
    let g = if asked.resume {
        Generator::with_plan_from(w, &load::journal::plan_path(&journal))
    } else {
        Generator::new(w)
    };
    let prefix = &w.storage.table_prefix;
    let Some(dir) = hfile_dir else {
        let t0 = std::time::Instant::now();
        let store = backend.open().with_context(|| format!("cannot open {}", asked.url))?;
        let store = crate::store::prefixed::over(store, prefix);
        return Ok(Opened {
            g,
            store,
            hfiles: None,
            opened: t0.elapsed(),
        });
    };
    if asked.no_bulk {
        bail!(
            "--no-bulk: hfile:{} is written by the bulk pipeline only",
            dir.display()
        );
    }
    let t0 = std::time::Instant::now();
    let dir = dir.open()?;
    // The files of the load a resume continues stay; the journal says which count.
    let resuming = asked.resume
        && load::journal::read(&journal)
            .ok()
            .flatten()
            .is_some_and(|j| j.bulk.is_some());
    let h = hfiles(dir, &g, asked.shard, asked.replace, resuming, asked.split_from)?;
    Ok(Opened {
        g,
        store: crate::store::prefixed::over(Arc::new(h.clone()), prefix),
        hfiles: Some(h),
        opened: t0.elapsed(),
    })
}

/// Where the live tables of `url` begin their regions, for each of `g`'s tables.
fn live_splits(url: &str, g: &Generator) -> Result<BTreeMap<String, Vec<Vec<u8>>>> {
    let backend = Backend::parse(url, Path::new(".")).context("--split-from")?;
    if !matches!(backend, Backend::Hbase(_) | Backend::Native(_)) {
        bail!("--split-from {url}: expected an hbase:// URL");
    }
    let live = backend
        .open()
        .with_context(|| format!("--split-from: cannot open {url}"))?;
    let mut out = BTreeMap::new();
    // Keyed as the HFiles are written: by the table's name on the cluster.
    let prefix = &g.workload().storage.table_prefix;
    for t in g.tables() {
        let name = crate::store::prefixed::physical(prefix, &crate::store::canonical_table_name(&t.name)?);
        let splits = live
            .regions(&name)
            .with_context(|| format!("--split-from {url}: the regions of table {name}"))?;
        out.insert(name, splits);
    }
    Ok(out)
}

/// Writes the HFiles' manifest of a finished load; returns it and its path.
pub fn hfiles_manifest(
    h: &hfile::HFiles,
    g: &Generator,
    file: &Path,
    shard: Shard,
    outcome: &Outcome,
) -> Result<(crate::bulkload::manifest::Manifest, String)> {
    let w = g.workload();
    let mut m = h.manifest(&w.name, &file.display().to_string(), &w.data_digest(), outcome.digest);
    m.table_prefix = w.storage.table_prefix.clone();
    let path = crate::bulkload::manifest::write(h.dir(), shard, &m)
        .with_context(|| format!("cannot write the manifest into {}", h.dir().display()))?;
    Ok((m, path))
}

/// Loads one data set of a sweep or comparison and writes its manifest as `dir/load.json`,
/// printing one line.
pub fn into_folder(
    store: &Arc<dyn Store>,
    g: &Generator,
    file: &Path,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<Recorded> {
    let mut r = recorded(store, g, &whole(), file, dir, None)?;
    let written = std::mem::replace(&mut r.path, Err(std::io::ErrorKind::NotFound.into()))
        .with_context(|| format!("the load manifest could not be written under {}", dir.display()))?;
    let target = dir.join("load.json");
    std::fs::rename(&written, &target).with_context(|| format!("cannot write {}", target.display()))?;
    r.path = Ok(target);
    let o = &r.outcome;
    if let Some(e) = &o.error {
        bail!("loading failed after {} row writes: {e}", thousands(o.rows()));
    }
    let secs = o.write_time.as_secs_f64();
    writeln!(
        out,
        "  loaded {} row writes into {} in {:.1} s ({} row writes/s)",
        thousands(o.rows()),
        store.identity(),
        secs,
        thousands((o.rows() as f64 / secs.max(1e-9)) as u64)
    )?;
    Ok(r)
}
