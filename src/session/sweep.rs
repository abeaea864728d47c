//! `tallrow sweep`: the workload loaded and run at every combination of the varied values,
//! into a fresh target wherever the data changes, and the sweep folder
//! ([`crate::report::sweep`]).

use super::measure::Measure;
use super::variants::{Place, clear, drop_tables, per_variant};
use super::{Context, Result};
use crate::generate::Generator;
use crate::load::Shard;
use crate::report::sweep::{Point, SweepReport, TableLoad};
use crate::store::Store;
use crate::workload::{Set, Workload};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A sweep to run.
pub struct Sweep<'a> {
    /// The workload file.
    pub file: &'a Path,
    /// The fields varied.
    pub vary: &'a [Vary],
    /// Settings fixed for every point (`--set` and the flags lowered to it).
    pub sets: &'a [Set],
    /// Allow more than 64 worker threads per core.
    pub force_threads: bool,
    /// `--backend`, when given.
    pub backend: Option<&'a str>,
    /// Reporting interval of each run.
    pub interval: Duration,
    /// Each run's labels (`--label`).
    pub labels: &'a std::collections::BTreeMap<String, String>,
    /// Drop the workload's tables from a shared backend first.
    pub replace: bool,
    /// Keep the loaded data.
    pub keep: bool,
    /// Folder the sweep folder goes under.
    pub reports: &'a Path,
}

/// `--vary KEY=V1,V2,...`.
#[derive(Debug, Clone)]
pub struct Vary {
    /// The dotted key.
    pub key: String,
    /// Its values, as TOML text.
    pub values: Vec<String>,
    /// As given.
    pub text: String,
}

impl std::str::FromStr for Vary {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (key, values) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?} is not KEY=V1,V2,..., e.g. microblog.celebrity_threshold=0,100,1000"))?;
        let key = match key.trim() {
            k @ ("threads" | "rate" | "duration" | "warmup" | "skew") => format!("run.{k}"),
            k => k.to_string(),
        };
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(format!("{s:?}: an empty value"));
        }
        // Each value must make a setting; the workload checks it when the sweep starts.
        for v in &values {
            format!("{key}={v}").parse::<crate::workload::Set>()?;
        }
        Ok(Vary {
            key,
            values,
            text: s.to_string(),
        })
    }
}

/// Every combination of the values, the first `--vary` changing slowest.
fn combinations(varies: &[Vary]) -> Vec<Vec<(String, String)>> {
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for v in varies {
        points = points
            .into_iter()
            .flat_map(|p| {
                v.values.iter().map(move |value| {
                    let mut p = p.clone();
                    p.push((v.key.clone(), value.clone()));
                    p
                })
            })
            .collect();
    }
    points
}

impl Sweep<'_> {
    /// Runs every point, printing as it goes, and writes the sweep folder; the report and
    /// its folder.
    pub fn run(&self, out: &mut dyn Write) -> Result<(SweepReport, PathBuf)> {
        let args = self;
        let points = combinations(args.vary);
        let base = Workload::from_file_with(args.file, args.sets)?;
        // Every point's workload, validated before anything runs.
        let mut workloads = Vec::with_capacity(points.len());
        for p in &points {
            let mut sets = args.sets.to_vec();
            for (key, value) in p {
                sets.push(format!("{key}={value}").parse::<Set>().map_err(super::Error)?);
            }
            let w = Workload::from_file_with(args.file, &sets)?;
            super::checked_threads(w.run.threads, args.force_threads, "run.threads")?;
            super::checked_threads(w.load.threads, args.force_threads, "load.threads")?;
            super::check_rate(&w.run, "run.rate")?;
            workloads.push(w);
        }
        let Place {
            url,
            backend,
            own,
            started,
            dir,
        } = Place::of(args.backend, &format!("{}-sweep", base.name), args.reports)?;
        writeln!(
            out,
            "sweeping {} over {} points: {}",
            base.name,
            points.len(),
            args.vary
                .iter()
                .map(|v| v.text.as_str())
                .collect::<Vec<_>>()
                .join(" × ")
        )?;

        let mut current: Option<Loaded> = None;
        let mut data_sets = 0;
        let mut report = SweepReport {
            workload: base.name.clone(),
            file: args.file.display().to_string(),
            url: url.clone(),
            started: crate::date::iso(started),
            varied: args.vary.iter().map(|v| v.key.clone()).collect(),
            points: Vec::new(),
        };
        let finish = |current: &mut Option<Loaded>, last: bool| -> Result<()> {
            if let Some(Loaded {
                store,
                g,
                data_dir,
                created,
                ..
            }) = current.take()
            {
                if !args.keep || (!own && !last) {
                    drop_tables(&*store, &g)?;
                }
                drop(store);
                if let (Some(d), true, false) = (&data_dir, created, args.keep) {
                    std::fs::remove_dir_all(d).with_context(|| format!("cannot remove {}", d.display()))?;
                    if let Some(parent) = d.parent() {
                        let _ = std::fs::remove_dir(parent);
                    }
                }
            }
            Ok(())
        };
        for (i, (p, w)) in points.iter().zip(&workloads).enumerate() {
            let name = format!(
                "p{:02}-{}",
                i + 1,
                p.iter()
                    .map(|(k, v)| format!("{}={}", k.rsplit('.').next().unwrap_or(k), v))
                    .collect::<Vec<_>>()
                    .join("-")
                    .replace(['/', ' ', ',', '"', '\''], "_")
            );
            let pdir = dir.join(&name);
            std::fs::create_dir_all(&pdir).with_context(|| format!("cannot create {}", pdir.display()))?;
            writeln!(
                out,
                "\n[{}/{}] {}",
                i + 1,
                points.len(),
                p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
            )?;
            let digest = w.data_digest();
            let g = Arc::new(Generator::new(w));
            let fresh = current.as_ref().is_none_or(|c| c.digest != digest);
            let mut loaded = None;
            let mut tables = Vec::new();
            if fresh {
                finish(&mut current, false)?;
                data_sets += 1;
                let (pbackend, data_dir) = per_variant(&backend, &format!("data-{data_sets}"));
                let created = data_dir.as_ref().is_some_and(|d| !d.exists());
                let store = pbackend
                    .open()
                    .with_context(|| format!("{name}: cannot open its store"))?;
                let store = crate::store::prefixed::over(store, &g.workload().storage.table_prefix);
                clear(&*store, &g, own, args.replace).with_context(|| name.clone())?;
                let r = super::load::into_folder(&store, &g, args.file, &pdir, out).with_context(|| name.clone())?;
                loaded = Some(r.outcome.rows() as f64 / r.outcome.write_time.as_secs_f64().max(1e-9));
                tables = TableLoad::of(&r.manifest);
                current = Some(Loaded {
                    digest,
                    store,
                    g: g.clone(),
                    data_dir,
                    created,
                });
            } else {
                writeln!(out, "  the same data as the point before: not loaded again")?;
            }
            let store = current.as_ref().map(|c| c.store.clone()).expect("a data set is loaded");
            let observe = crate::observe::choose(None, &url).unwrap_or(None);
            let measure = Measure {
                g: &g,
                store: &store,
                file: args.file,
                url: &url,
                shard: Shard::ALL,
                interval: args.interval,
                labels: args.labels,
                targets: &[],
                run: &w.run,
                metrics: None,
                observe: observe.as_deref(),
            };
            let rdir = pdir.join("run");
            let written = measure.run(out, |_| Ok(rdir.clone())).with_context(|| name.clone())?;
            let s = &written.summary;
            writeln!(out, "  {}", crate::report::console::ran(s))?;
            if let Some(line) = &written.cluster {
                writeln!(out, "  {line}")?;
            }
            report.points.push(Point {
                folder: name.clone(),
                values: p.iter().map(|(_, v)| v.clone()).collect(),
                data_set: data_sets,
                load_rows_per_s: loaded,
                tables,
                ops: s
                    .ops
                    .iter()
                    .chain([&s.all])
                    .map(crate::report::sweep::OpFigures::of)
                    .collect(),
                valid: s.valid,
                invalid_reason: s.invalid_reason.clone(),
            });
        }
        finish(&mut current, true)?;
        report.write(&dir)?;
        Ok((report, dir))
    }
}

/// The data set loaded now: its digest, store, and directory when it has one of its own
/// (`created` when the sweep made it, so that it may remove it).
struct Loaded {
    digest: String,
    store: Arc<dyn Store>,
    g: Arc<Generator>,
    data_dir: Option<PathBuf>,
    created: bool,
}
