//! `tallrow load`: its arguments, the load, and what it prints.

use super::LoadArgs;
use crate::generate::Generator;
use crate::load::{self, Options};
use crate::report::thousands;
use crate::session;
use crate::store::Store;
use crate::workload::Set;
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

impl LoadArgs {
    /// The flags that stand for `[load]` fields, lowered to settings.
    fn sets(&self) -> Vec<Set> {
        let int = |n: usize| Some(toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)));
        let mut out = Vec::new();
        if let Some(n) = self.threads {
            out.push(Set::flag("--threads", n, "load.threads", int(n)));
        }
        if let Some(n) = self.batch {
            out.push(Set::flag("--batch", n, "load.batch", int(n)));
        }
        out.extend(super::regions_set(self.regions));
        out
    }
}

pub(super) fn load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    // Before any thread starts: Ctrl-C while the load writes stops it, resumable.
    crate::run::interrupt::take_signals();
    let (w, backend) = args.target.parse(&args.sets())?;
    session::checked_threads(
        w.load.threads,
        args.force_threads,
        if args.threads.is_some() {
            "--threads"
        } else {
            "load.threads"
        },
    )?;
    let shard = args.shard.get()?;
    let session::load::Opened {
        g,
        store,
        hfiles,
        opened,
    } = session::load::open(
        &w,
        &backend,
        &session::load::Asked {
            url: args.target.backend.as_deref().unwrap_or("embedded:"),
            reports: &args.reports,
            shard,
            resume: args.resume,
            no_bulk: args.no_bulk,
            replace: args.replace,
            split_from: args.split_from.as_deref(),
        },
    )?;
    let live = args.live.start(
        "load",
        &[
            ("workload", w.name.clone()),
            ("backend", store.identity()),
            ("shard", shard.to_string()),
        ],
    )?;
    let result = load_with(&args, &g, store, opened, live.as_ref().map(|l| &*l.metrics));
    if let Some(l) = live {
        l.finish();
    }
    let out = result?;
    if out.error.as_deref() == Some(load::STOPPED) {
        return Ok(ExitCode::from(130));
    }
    if let Some(h) = hfiles {
        let (m, path) = session::load::hfiles_manifest(&h, &g, &args.target.workload, shard, &out)?;
        let files: Vec<_> = m.tables.iter().flat_map(|t| &t.files).collect();
        let bytes: u64 = files.iter().map(|f| f.bytes).sum();
        let mut o = std::io::stdout().lock();
        writeln!(
            o,
            "HFiles: {} files, {:.1} MiB under {}; manifest {}",
            thousands(files.len() as u64),
            bytes as f64 / (1 << 20) as f64,
            h.dir().display(),
            path
        )?;
        writeln!(
            o,
            "to load them into HBase: tallrow bulkload {} --backend hbase://QUORUM?api=native (or hbase://HOST:PORT?api=thrift2)",
            h.dir().display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads and prints what was loaded; fails when the load did.
fn load_with(
    args: &LoadArgs,
    g: &Generator,
    store: Arc<dyn Store>,
    opened: std::time::Duration,
    metrics: Option<&crate::metrics::Metrics>,
) -> anyhow::Result<load::Outcome> {
    let opts = Options {
        shard: args.shard.get()?,
        progress: load::progress_wanted(),
        count_rows: !args.no_count,
        checkpoint: args.checkpoint_every,
        bulk: !args.no_bulk,
        opened,
    };
    let observe = crate::observe::choose(args.observe.as_deref(), args.target.backend.as_deref().unwrap_or(""))
        .map_err(anyhow::Error::msg)?;
    let observer = observe.as_deref().and_then(session::observe);
    if let Some(m) = metrics {
        m.store(store.clone());
        if let Some((o, _)) = &observer {
            m.observed(o.live());
        }
    }
    let stoppable = crate::run::interrupt::stoppable(
        "the load sends no more batches, waits for those in flight and journals what was acknowledged: `tallrow load --resume` continues it",
    );
    let r = session::load::journaled(
        &store,
        g,
        &opts,
        &args.target.workload,
        &args.reports,
        metrics,
        Some(args.resume),
    )?;
    drop(stoppable);
    let observed = observer.map(|(o, since)| (o.finish(), since));
    let out = &r.outcome;

    let mut o = std::io::stdout().lock();
    crate::report::load::print(
        &mut o,
        g,
        out,
        opts.shard,
        &store.identity(),
        &store.retries().into_iter().collect(),
    )?;
    if let Some((seen, since)) = &observed {
        writeln!(o, "{}", crate::report::cluster::line(seen))?;
        if let Ok(p) = &r.path {
            let prefix = &g.workload().storage.table_prefix;
            let files = crate::report::cluster::write_beside(p, seen, *since as i64, prefix)?;
            writeln!(o, "cluster events: {}", files.display())?;
        }
    }
    if let Ok(p) = &r.path {
        writeln!(o, "manifest: {}", p.display())?;
    }
    if out.error.as_deref() == Some(load::STOPPED) {
        // Stopped as asked: what it wrote is journaled, and the manifest says how far.
        eprintln!(
            "tallrow: the load stopped after {} of {} blocks with {} row writes acknowledged; `tallrow load {} --resume` with the same settings continues it",
            thousands(out.blocks_done),
            thousands(out.blocks_total),
            thousands(out.rows()),
            args.target.workload.display()
        );
        return Ok(r.outcome);
    }
    if let Some(e) = &out.error {
        bail!(
            "load failed after {} of {} blocks with {} row writes acknowledged: {e}",
            thousands(out.blocks_done),
            thousands(out.blocks_total),
            thousands(out.rows())
        );
    }
    if let Err(e) = &r.path {
        bail!(
            "the load manifest could not be written under {}: {e} (the {} row writes acknowledged stay in the store)",
            args.reports.display(),
            thousands(out.rows())
        );
    }
    Ok(r.outcome)
}
