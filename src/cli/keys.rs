//! `tallrow keys`: encoding and decoding row keys, and `keys compare`, which loads and runs a
//! workload once per key-design variant and writes the comparison folder
//! ([`crate::report::keys`]).

use super::load::threads;
use super::run::{Measure, apply_overrides};
use super::{KeysCommand, KeysCompareArgs, VariantArgs};
use crate::generate::{Generator, Table};
use crate::keys::{self, KeyOptions, Layout, Order, Salt};
use crate::load::{self, Shard};
use crate::report::keys::{KeysReport, LoadFigures, RunFigures, TableKeys, Variant};
use crate::report::thousands;
use crate::store::{Store, backend::Backend, now_millis};
use crate::workload::{Keys, Workload};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

impl VariantArgs {
    fn options(&self, layout: Layout) -> anyhow::Result<KeyOptions> {
        let mut opts = layout.seed_options();
        if let Some(order) = &self.order {
            opts.order = match order.as_str() {
                "reverse" => Order::Reverse,
                "forward" => Order::Forward,
                other => bail!("--order: {other:?} is not reverse or forward"),
            };
        }
        if let Some(salt) = &self.salt {
            opts.salt = match salt.as_str() {
                "none" => Salt::None,
                "hash" => Salt::Hash,
                n => {
                    let n: u16 = n
                        .parse()
                        .ok()
                        .with_context(|| format!("--salt: {n:?} is not none, hash or a bucket count"))?;
                    Salt::Buckets(n).validate().context("--salt")?
                }
            };
        }
        Ok(opts)
    }
}

/// Runs `tallrow keys ...`.
pub(super) fn command(cmd: KeysCommand) -> anyhow::Result<ExitCode> {
    let (layout, key, opts) = match cmd {
        KeysCommand::Encode {
            layout,
            fields,
            variant,
        } => {
            let opts = variant.options(layout)?;
            let mut pairs = Vec::with_capacity(fields.len());
            for f in &fields {
                let Some((name, value)) = f.split_once('=') else {
                    bail!("{}: argument {f:?} is not field=value", layout.name());
                };
                pairs.push((name, value));
            }
            (layout, layout.encode(opts, &pairs)?, opts)
        }
        KeysCommand::Decode { layout, hex, variant } => {
            let opts = variant.options(layout)?;
            let key = keys::parse_hex(hex.trim()).map_err(|e| anyhow::anyhow!("{}: {e}", layout.name()))?;
            (layout, key, opts)
        }
        KeysCommand::Compare(args) => return compare(args),
    };
    let fields = layout.decode(opts, &key)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "hex: {}", keys::hex(&key))?;
    writeln!(out, "binary: {}", keys::to_string_binary(&key))?;
    for (name, value) in fields {
        writeln!(out, "{name}: {value}")?;
    }
    Ok(ExitCode::SUCCESS)
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
fn plans(w: &Workload, asked: &[String], out: &mut impl Write) -> anyhow::Result<Vec<Plan>> {
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
        let keys = Keys::from_spec(spec).map_err(|e| anyhow::anyhow!("--variant {arg:?}: {e}"))?;
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

/// Where a variant's data goes: the embedded store in a directory of its own; a fresh
/// in-process store; or the shared remote backend. Also the variant's own directory.
pub(super) fn per_variant(b: &Backend, name: &str) -> (Backend, Option<PathBuf>) {
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
pub(super) fn isolated(b: &Backend) -> bool {
    match b {
        Backend::Embedded(_) | Backend::Memory | Backend::Null => true,
        Backend::Delay(_, inner) => isolated(inner),
        Backend::Hbase(_) | Backend::Bigtable(_) | Backend::Hfile(_) => false,
    }
}

/// Drops the workload's tables where a variant is to be loaded. A store of the variant's
/// own must hold nothing else; a shared one's tables are dropped only with `--replace`.
pub(super) fn clear(store: &dyn Store, g: &Generator, own: bool, replace: bool) -> anyhow::Result<()> {
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

pub(super) fn drop_tables(store: &dyn Store, g: &Generator) -> anyhow::Result<()> {
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

fn compare(args: KeysCompareArgs) -> anyhow::Result<ExitCode> {
    let mut w = Workload::from_file(&args.workload)?;
    apply_overrides(&mut w, &args.settings)?;
    let regions = args
        .regions
        .unwrap_or(if w.load.regions > 1 { w.load.regions } else { 8 });
    let mut out = std::io::stdout().lock();
    let plans = plans(&w, &args.variants, &mut out)?;
    let default_dir = PathBuf::from("data").join(format!("{}-keys", w.name));
    let url = args
        .backend
        .clone()
        .unwrap_or_else(|| format!("embedded:{}", default_dir.display()));
    let backend = Backend::parse(&url, &default_dir).context("--backend")?;
    let own = isolated(&backend);
    let started = now_millis();
    let dir = crate::report::run::folder(&args.reports, &format!("{}-keys", w.name), started);
    writeln!(
        out,
        "comparing {} key variants of {} ({}), each table in {regions} regions: {}",
        plans.len(),
        w.name,
        args.workload.display(),
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
        clear(&*store, &g, own, args.replace).with_context(|| format!("variant {}", plan.name))?;
        let vdir = dir.join(&plan.name);
        std::fs::create_dir_all(&vdir).with_context(|| format!("cannot create {}", vdir.display()))?;
        writeln!(out, "\n[{}/{}] {} ({}):", i + 1, plans.len(), plan.name, plan.spec)?;
        let load = load_variant(&store, &g, regions, &args.workload, &vdir, &mut out)
            .with_context(|| format!("variant {}", plan.name))?;
        let measure = Measure {
            g: &g,
            store: &store,
            file: &args.workload,
            url: &url,
            shard: Shard::ALL,
            interval: args.settings.interval,
            targets: &[],
            run: &g.workload().run,
            metrics: None,
        };
        let written = measure
            .run(&mut out, |_| Ok(vdir.clone()))
            .with_context(|| format!("variant {}", plan.name))?;
        let s = &written.summary;
        writeln!(out, "  {}", super::run::ran(s))?;
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
        file: args.workload.display().to_string(),
        url,
        regions_asked: regions,
        started: crate::date::iso(started),
        config: config.expect("at least one variant ran"),
        variants,
        findings: Vec::new(),
    };
    report.find();
    report.write(&dir)?;
    writeln!(out)?;
    write!(out, "{}", report.text_table().render())?;
    for f in &report.findings {
        writeln!(out, "{}", f.text)?;
    }
    writeln!(out, "report: {}", dir.display())?;
    let invalid: Vec<&str> = report
        .variants
        .iter()
        .filter(|v| v.run.invalid_reason.is_some())
        .map(|v| v.name.as_str())
        .collect();
    if !invalid.is_empty() {
        bail!("the runs of {} are invalid (see their reports)", invalid.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads one variant and writes its manifest as `vdir/load.json`.
pub(super) fn load_variant(
    store: &Arc<dyn Store>,
    g: &Generator,
    regions: usize,
    file: &Path,
    vdir: &Path,
    out: &mut impl Write,
) -> anyhow::Result<LoadFigures> {
    let w = g.workload();
    let opts = load::Options {
        threads: threads(w.load.threads),
        batch: w.load.batch,
        shard: Shard::ALL,
        progress: load::progress_wanted(),
        regions,
        count_rows: true,
        bulk: true,
    };
    let (lout, manifest) = super::load::load_recorded(store, g, &opts, file, vdir, None)?;
    let manifest =
        manifest.with_context(|| format!("the load manifest could not be written under {}", vdir.display()))?;
    let target = vdir.join("load.json");
    std::fs::rename(&manifest, &target).with_context(|| format!("cannot write {}", target.display()))?;
    if let Some(e) = &lout.error {
        bail!("loading failed after {} row writes: {e}", thousands(lout.rows()));
    }
    let secs = lout.write_time.as_secs_f64();
    let rate = lout.rows() as f64 / secs.max(1e-9);
    writeln!(
        out,
        "  loaded {} row writes into {} in {:.1} s ({} row writes/s)",
        thousands(lout.rows()),
        store.identity(),
        secs,
        thousands(rate as u64)
    )?;
    Ok(LoadFigures {
        row_writes: lout.rows(),
        seconds: secs,
        row_writes_per_s: rate,
        regions: crate::regions::report::skew(&lout.spread),
    })
}

/// The key options of each table `g` writes that a design keys.
fn table_keys(g: &Generator) -> Vec<TableKeys> {
    let keys = g.workload().keys;
    Table::ALL
        .into_iter()
        .filter(|&t| g.writes(t))
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
