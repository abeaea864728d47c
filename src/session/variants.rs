//! `keys compare`: a workload loaded and run once per key-design variant, each into a
//! target of its own, and the comparison folder ([`crate::report::keys`]).

use super::measure::Measure;
use super::{Context, Result, bail};
use crate::generate::Generator;
use crate::keys::{KeyOptions, Salt};
use crate::load::Shard;
use crate::report::keys::{KeysReport, LoadFigures, RunFigures, TableKeys, Variant};
use crate::store::{Store, backend::Backend, now_millis};
use crate::workload::{Keys, Workload};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A comparison to run.
pub struct Comparison<'a> {
    /// The workload file.
    pub file: &'a Path,
    /// The workload, validated with the command line's settings.
    pub workload: Workload,
    /// Whether the command line set `load.regions`; when not, a workload of unsplit tables
    /// is compared at 8 regions a table, where key designs differ.
    pub regions_given: bool,
    /// The variants asked for as NAME=SPEC; none: the default ones.
    pub variants: &'a [String],
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
    /// Folder the comparison folder goes under.
    pub reports: &'a Path,
}

/// The variants `keys compare` runs when none are given: (name, spec).
const DEFAULT_VARIANTS: [(&str, &str); 5] = [
    ("seed", "seed"),
    ("forward", "order=forward"),
    ("salt-none", "salt=none"),
    ("salt-hash", "salt=hash"),
    ("salt-16", "salt=16"),
];

/// A variant to load and run.
struct Plan {
    name: String,
    spec: String,
    keys: Keys,
}

/// The variants asked for, or the default ones less those that key `w`'s tables as an
/// earlier one does.
fn plans(w: &Workload, asked: &[String], out: &mut dyn Write) -> Result<Vec<Plan>> {
    let used = w.designs();
    if used.is_empty() {
        bail!(
            "{} writes no table keyed by a design ({}): its keys have no variants to compare",
            w.name,
            Keys::DESIGNS.join(", ")
        );
    }
    let effective = |k: &Keys| -> Vec<KeyOptions> { used.iter().filter_map(|d| k.design(d)).collect() };
    let mut plans: Vec<Plan> = Vec::new();
    if asked.is_empty() {
        for (name, spec) in DEFAULT_VARIANTS {
            let keys = Keys::from_spec(spec).expect("the default specs are valid");
            if let Some(same) = plans.iter().find(|p| effective(&p.keys) == effective(&keys)) {
                writeln!(
                    out,
                    "{name} left out: it keys {}'s tables as {} does",
                    w.name, same.name
                )?;
                continue;
            }
            plans.push(Plan {
                name: name.into(),
                spec: spec.into(),
                keys,
            });
        }
        return Ok(plans);
    }
    for arg in asked {
        let Some((name, spec)) = arg.split_once('=') else {
            bail!("--variant {arg:?}: not NAME=SPEC (e.g. fwd=order=forward)");
        };
        let name_ok = (1..=40).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && !name.starts_with('.');
        if !name_ok {
            bail!("--variant {arg:?}: the name must be 1-40 letters, digits, '-', '_' or '.', not starting with '.'");
        }
        if plans.iter().any(|p| p.name == name) {
            bail!("--variant {arg:?}: a variant named {name} is given twice");
        }
        let keys = Keys::from_spec(spec).map_err(|e| super::Error(format!("--variant {arg:?}: {e}")))?;
        plans.push(Plan {
            name: name.into(),
            spec: if spec.trim().is_empty() {
                "seed".into()
            } else {
                spec.into()
            },
            keys,
        });
    }
    Ok(plans)
}

/// Where an experiment of several data sets keeps them and its report.
pub struct Place {
    /// `--backend`, or the embedded store under `data/<name>`.
    pub url: String,
    /// It, parsed.
    pub backend: Backend,
    /// Whether each data set gets a store of its own ([`isolated`]).
    pub own: bool,
    /// When the experiment started (epoch ms).
    pub started: i64,
    /// Its report folder.
    pub dir: PathBuf,
}

impl Place {
    /// The place of the experiment `name` (`<workload>-keys`, `<workload>-sweep`).
    pub fn of(backend: Option<&str>, name: &str, reports: &Path) -> Result<Place> {
        let default_dir = PathBuf::from("data").join(name);
        let url = backend
            .map(String::from)
            .unwrap_or_else(|| format!("embedded:{}", default_dir.display()));
        let backend = Backend::parse(&url, &default_dir).context("--backend")?;
        let started = now_millis();
        Ok(Place {
            own: isolated(&backend),
            url,
            backend,
            started,
            dir: crate::report::run::folder(reports, name, started),
        })
    }
}

/// Where a variant's data goes: the embedded store in a directory of its own; a fresh
/// in-process store; or the shared remote backend. Also the variant's own directory.
pub fn per_variant(b: &Backend, name: &str) -> (Backend, Option<PathBuf>) {
    match b {
        Backend::Embedded(p) => (Backend::Embedded(p.join(name)), Some(p.join(name))),
        Backend::Delay(spec, inner) => {
            let (inner, dir) = per_variant(inner, name);
            (Backend::Delay(spec.clone(), Box::new(inner)), dir)
        }
        other => (other.clone(), None),
    }
}

/// Whether each variant gets a store of its own (and so tables tallrow may drop at will).
pub fn isolated(b: &Backend) -> bool {
    match b {
        Backend::Embedded(_) | Backend::Memory | Backend::Null => true,
        Backend::Delay(_, inner) => isolated(inner),
        Backend::Hbase(_) | Backend::Native(_) | Backend::Bigtable(_) | Backend::Hfile(_) => false,
    }
}

/// Drops the workload's tables where a variant is to be loaded. A store of the variant's
/// own must hold nothing else; a shared one's tables are dropped only with `--replace`.
pub fn clear(store: &dyn Store, g: &Generator, own: bool, replace: bool) -> Result<()> {
    let ours: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    for t in store.list_tables().context("listing the target's tables")? {
        if !ours.contains(&t.name) {
            if own {
                bail!(
                    "{} holds table {}, which {} does not write: keys compare loads each variant into a target of its own",
                    store.identity(),
                    t.name,
                    g.workload().name
                );
            }
            continue;
        }
        if !own && !replace {
            bail!(
                "{} already holds {}'s table {}: pass --replace to drop the workload's tables before each variant",
                store.identity(),
                g.workload().name,
                t.name
            );
        }
        store
            .delete_table(&t.name)
            .with_context(|| format!("dropping {} from {}", t.name, store.identity()))?;
    }
    Ok(())
}

/// Drops `g`'s tables from `store`, those it holds.
pub fn drop_tables(store: &dyn Store, g: &Generator) -> Result<()> {
    let have = store.list_tables().context("listing the target's tables")?;
    for t in g.tables() {
        if have.iter().any(|h| h.name == t.name) {
            store
                .delete_table(&t.name)
                .with_context(|| format!("dropping {} from {}", t.name, store.identity()))?;
        }
    }
    Ok(())
}

impl Comparison<'_> {
    /// Loads and runs every variant, printing as it goes, and writes the comparison folder;
    /// the report and its folder.
    pub fn run(&self, out: &mut dyn Write) -> Result<(KeysReport, PathBuf)> {
        let args = self;
        let mut w = self.workload.clone();
        if !self.regions_given && w.load.regions == 1 {
            w.load.regions = 8;
        }
        let regions = w.load.regions;
        let plans = plans(&w, self.variants, out)?;
        let Place {
            url,
            backend,
            own,
            started,
            dir,
        } = Place::of(args.backend, &format!("{}-keys", w.name), args.reports)?;
        writeln!(
            out,
            "comparing {} key variants of {} ({}), each table in {regions} regions: {}",
            plans.len(),
            w.name,
            args.file.display(),
            plans.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
        )?;

        let mut variants = Vec::with_capacity(plans.len());
        let mut config = None;
        for (i, plan) in plans.iter().enumerate() {
            let mut vw = w.clone();
            vw.keys = plan.keys;
            let g = Arc::new(Generator::new(&vw));
            let (vbackend, data_dir) = per_variant(&backend, &plan.name);
            let created = data_dir.as_ref().is_some_and(|d| !d.exists());
            let store = vbackend
                .open()
                .with_context(|| format!("variant {}: cannot open its store", plan.name))?;
            let store = crate::store::prefixed::over(store, &vw.storage.table_prefix);
            clear(&*store, &g, own, args.replace).with_context(|| format!("variant {}", plan.name))?;
            let vdir = dir.join(&plan.name);
            std::fs::create_dir_all(&vdir).with_context(|| format!("cannot create {}", vdir.display()))?;
            writeln!(out, "\n[{}/{}] {} ({}):", i + 1, plans.len(), plan.name, plan.spec)?;
            let loaded = super::load::into_folder(&store, &g, args.file, &vdir, out)
                .with_context(|| format!("variant {}", plan.name))?;
            let lo = &loaded.outcome;
            let secs = lo.write_time.as_secs_f64();
            let load = LoadFigures {
                row_writes: lo.rows(),
                seconds: secs,
                row_writes_per_s: lo.rows() as f64 / secs.max(1e-9),
                regions: crate::regions::report::skew(&lo.spread),
            };
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
                run: &g.workload().run,
                metrics: None,
                observe: observe.as_deref(),
            };
            let written = measure
                .run(out, |_| Ok(vdir.clone()))
                .with_context(|| format!("variant {}", plan.name))?;
            let s = &written.summary;
            writeln!(out, "  {}", crate::report::console::ran(s))?;
            if let Some(line) = &written.cluster {
                writeln!(out, "  {line}")?;
            }
            config.get_or_insert_with(|| s.config.clone());
            variants.push(Variant {
                name: plan.name.clone(),
                spec: plan.spec.clone(),
                folder: plan.name.clone(),
                backend: store.identity(),
                tables: table_keys(&g),
                load,
                run: RunFigures::of(s),
            });
            let last = i + 1 == plans.len();
            if !args.keep || (!own && !last) {
                drop_tables(&*store, &g).with_context(|| format!("variant {}", plan.name))?;
            }
            drop(store);
            if let (Some(d), true, false) = (&data_dir, created, args.keep) {
                std::fs::remove_dir_all(d).with_context(|| format!("cannot remove {}", d.display()))?;
                // The folder of the variants' folders goes too when this left it empty.
                if let Some(parent) = d.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
        }

        let mut report = KeysReport {
            format: crate::report::keys::FORMAT,
            tallrow: env!("CARGO_PKG_VERSION").into(),
            workload: w.name.clone(),
            file: args.file.display().to_string(),
            url,
            regions_asked: regions,
            started: crate::date::iso(started),
            config: config.expect("at least one variant ran"),
            variants,
            findings: Vec::new(),
        };
        report.find();
        report.write(&dir)?;
        Ok((report, dir))
    }
}

/// The key options of each table `g` writes that a design keys.
fn table_keys(g: &Generator) -> Vec<TableKeys> {
    let keys = g.workload().keys;
    g.written_tables()
        .into_iter()
        .filter_map(|t| {
            let design = t.design()?;
            let opts = keys.design(design)?;
            Some(TableKeys {
                table: t.name().into(),
                design: design.into(),
                keys: opts.to_string(),
                salt: match opts.salt {
                    Salt::None => "none".into(),
                    Salt::Hash => "hash".into(),
                    Salt::Buckets(n) => n.to_string(),
                },
                binary: t.binary_keys(),
            })
        })
        .collect()
}
