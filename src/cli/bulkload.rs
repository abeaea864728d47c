//! `tallrow bulkload`: argument handling and what it prints.

use super::BulkloadArgs;
use crate::report::{TextTable, thousands};
use crate::store::backend::Backend;
use anyhow::{Context, bail};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Tables handed over at once through HBase's RPC unless `--parallel` says.
const RPC_PARALLEL: usize = 16;

pub(super) fn bulkload(args: BulkloadArgs) -> anyhow::Result<ExitCode> {
    let backend = Backend::parse(&args.backend, Path::new(".")).context("--backend")?;
    if !matches!(backend, Backend::Hbase(_) | Backend::Native(_)) {
        bail!(
            "--backend {}: bulkload loads into HBase: expected hbase://QUORUM?api=native or hbase://HOST:PORT?api=thrift2",
            args.backend
        );
    }
    let store = backend
        .open()
        .with_context(|| format!("cannot open {}", args.backend))?;
    // HBase's own RPC where the store speaks it, unless the tool is asked for.
    let cmd = match (&args.hbase_cmd, store.loads_hfiles()) {
        (None, true) => None,
        (given, _) => {
            let line = given.as_deref().unwrap_or("hbase completebulkload");
            let words = shlex::split(line)
                .filter(|w| !w.is_empty())
                .with_context(|| format!("--hbase-cmd {line:?}: not words a shell would split (quotes unbalanced?)"))?;
            Some(words)
        }
    };
    let via = match &cmd {
        None => crate::bulkload::Via::Rpc,
        Some(words) => crate::bulkload::Via::Tool(words),
    };
    let quiet = !crate::load::progress_wanted();
    // A hand-over through the RPC is the servers' work, not ours: every table at once
    // (up to 16); a tool run is a JVM, one per core.
    let parallel = match (&via, args.parallel) {
        (crate::bulkload::Via::Rpc, 0) => RPC_PARALLEL,
        _ => crate::session::checked_threads(args.parallel, false, "--parallel")?,
    };
    let say = |line: &str| {
        if !quiet {
            eprintln!("tallrow: {line}");
        }
    };
    let dirs = args
        .dirs
        .iter()
        .map(|d| {
            let at = crate::bulkload::fs::Location::parse(d).map_err(anyhow::Error::msg)?;
            at.open().map_err(anyhow::Error::from)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let observe = crate::observe::choose(args.observe.as_deref(), &args.backend).map_err(anyhow::Error::msg)?;
    let observer = observe.as_deref().and_then(crate::session::observe);
    let started = std::time::Instant::now();
    let outcomes = crate::bulkload::run(&*store, &dirs, via, parallel, !args.no_count, &say)?;
    let took = started.elapsed();
    let observed = observer.map(|(o, since)| (o.finish(), since));
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "bulk-loaded {} into {} through {}",
        dirs.iter().map(|d| d.display()).collect::<Vec<_>>().join(", "),
        store.identity(),
        match via {
            crate::bulkload::Via::Rpc => "HBase's RPC".to_string(),
            crate::bulkload::Via::Tool(words) => words.join(" "),
        }
    )?;
    let mut table = TextTable::new(&[
        "table",
        "files",
        "MiB",
        "created",
        "hand-over s",
        "split by tool",
        "rows in files",
        "rows in table",
    ]);
    let mut wrong = Vec::new();
    for t in &outcomes {
        table.row(vec![
            t.name.clone(),
            thousands(t.files as u64),
            format!("{:.1}", t.bytes as f64 / (1 << 20) as f64),
            if t.created { "yes" } else { "no" }.into(),
            format!("{:.2}", t.load_time.as_secs_f64()),
            thousands(t.split_by_tool as u64),
            thousands(t.rows_expected),
            t.rows_found.map_or("-".into(), thousands),
        ]);
        match t.rows_found {
            Some(found) if found != t.rows_expected => wrong.push(format!(
                "{} holds {} rows, its HFiles {}",
                t.name,
                thousands(found),
                thousands(t.rows_expected)
            )),
            _ => {}
        }
    }
    write!(o, "{}", table.render())?;
    writeln!(
        o,
        "{} tables in {:.1} s, {} at a time{}",
        outcomes.len(),
        took.as_secs_f64(),
        parallel.min(outcomes.len()).max(1),
        if args.no_count {
            ""
        } else {
            ", each counted after its hand-over"
        }
    )?;
    if let Some((seen, since)) = &observed {
        writeln!(o, "{}", crate::report::cluster::line(seen))?;
        std::fs::create_dir_all(&args.reports).with_context(|| format!("cannot create {}", args.reports.display()))?;
        let name = crate::report::run::folder(&args.reports, "bulkload", *since as i64).with_extension("json");
        // The manifests name the tables as the cluster does.
        let files = crate::report::cluster::write_beside(&name, seen, *since as i64, "")?;
        writeln!(o, "cluster events: {}", files.display())?;
    }
    if !wrong.is_empty() {
        bail!("the tables do not hold what the HFiles do: {}", wrong.join("; "));
    }
    if args.no_count {
        writeln!(
            o,
            "handed over; rows not counted (--no-count): tallrow verify checks them"
        )?;
    } else {
        writeln!(o, "OK: every table holds the rows its HFiles do")?;
    }
    Ok(ExitCode::SUCCESS)
}
