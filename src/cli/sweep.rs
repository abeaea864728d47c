//! `tallrow sweep`: the workload loaded and run at every combination of the `--vary` values,
//! into a fresh target wherever the data changes, and the sweep folder
//! ([`crate::report::sweep`]).

use super::keys::{clear, drop_tables, isolated, load_variant, per_variant};
use super::run::{Measure, apply_overrides};
use super::{SweepArgs, Vary};
use crate::generate::Generator;
use crate::load::Shard;
use crate::report::sweep::{Point, SweepReport, TableLoad};
use crate::store::{Store, backend::Backend, now_millis};
use crate::workload::{Set, Workload};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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

pub(super) fn sweep(args: SweepArgs) -> anyhow::Result<ExitCode> {
    for v in &args.vary {
        let flag = match v.key.as_str() {
            "run.threads" => args.settings.threads.map(|_| "--threads"),
            "run.rate" => args.settings.rate.map(|_| "--rate"),
            "run.duration" => args.settings.duration.map(|_| "--duration"),
            "run.warmup" => args.settings.warmup.map(|_| "--warmup"),
            _ => None,
        };
        if let Some(flag) = flag {
            bail!("--vary {}: {flag} fixes what it varies", v.text);
        }
    }
    let points = combinations(&args.vary);
    let base = Workload::from_file_with(&args.workload, &args.set)?;
    // Every point's workload, validated before anything runs.
    let mut workloads = Vec::with_capacity(points.len());
    for p in &points {
        let mut sets = args.set.clone();
        for (key, value) in p {
            sets.push(format!("{key}={value}").parse::<Set>().map_err(anyhow::Error::msg)?);
        }
        let mut w = Workload::from_file_with(&args.workload, &sets)?;
        apply_overrides(&mut w, &args.settings)?;
        workloads.push(w);
    }
    let default_dir = PathBuf::from("data").join(format!("{}-sweep", base.name));
    let url = args
        .backend
        .clone()
        .unwrap_or_else(|| format!("embedded:{}", default_dir.display()));
    let backend = Backend::parse(&url, &default_dir).context("--backend")?;
    let own = isolated(&backend);
    let started = now_millis();
    let dir = crate::report::run::folder(&args.reports, &format!("{}-sweep", base.name), started);
    let mut out = std::io::stdout().lock();
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
        file: args.workload.display().to_string(),
        url: url.clone(),
        started: crate::date::iso(started),
        varied: args.vary.iter().map(|v| v.key.clone()).collect(),
        points: Vec::new(),
    };
    let finish = |current: &mut Option<Loaded>, last: bool| -> anyhow::Result<()> {
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
        if fresh {
            finish(&mut current, false)?;
            data_sets += 1;
            let (pbackend, data_dir) = per_variant(&backend, &format!("data-{data_sets}"));
            let created = data_dir.as_ref().is_some_and(|d| !d.exists());
            let store = pbackend
                .open()
                .with_context(|| format!("{name}: cannot open its store"))?;
            clear(&*store, &g, own, args.replace).with_context(|| name.clone())?;
            let figures = load_variant(&store, &g, w.load.regions, &args.workload, &pdir, &mut out)
                .with_context(|| name.clone())?;
            loaded = Some(figures.row_writes_per_s);
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
        let measure = Measure {
            g: &g,
            store: &store,
            file: &args.workload,
            url: &url,
            shard: Shard::ALL,
            interval: args.settings.interval,
            targets: &[],
            run: &w.run,
            metrics: None,
        };
        let rdir = pdir.join("run");
        let written = measure
            .run(&mut out, |_| Ok(rdir.clone()))
            .with_context(|| name.clone())?;
        let s = &written.summary;
        writeln!(out, "  {}", super::run::ran(s))?;
        report.points.push(Point {
            folder: name.clone(),
            values: p.iter().map(|(_, v)| v.clone()).collect(),
            data_set: data_sets,
            load_rows_per_s: loaded,
            tables: if fresh {
                TableLoad::read(&pdir.join("load.json"))
            } else {
                Vec::new()
            },
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
    writeln!(out)?;
    write!(out, "{}", report.text_table().render())?;
    writeln!(out, "report: {}", dir.display())?;
    let invalid: Vec<&str> = report
        .points
        .iter()
        .filter(|p| !p.valid)
        .map(|p| p.folder.as_str())
        .collect();
    if !invalid.is_empty() {
        bail!("the runs of {} are invalid (see their reports)", invalid.join(", "));
    }
    Ok(ExitCode::SUCCESS)
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
