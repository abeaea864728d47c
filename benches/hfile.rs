//! HBase's own bulk load against the other ways of seeding empty HBase tables, the same
//! generated rows into the same tables (created with the same split points) of the HBase
//! `scripts/hbase.sh` runs (`scripts/bench.sh hfile` starts it when none runs):
//!
//! (a) `tallrow load --backend hfile:DIR` then `tallrow bulkload --no-count`: both commands'
//!     wall time, after which every row is readable (the row count, a scan of every table
//!     through Thrift2, is the check and untimed, as (b) and (c) are timed without theirs);
//! (b) a plain Java loader on HBase's native client (`BufferedMutator`, tests/hbase/src), the
//!     reference, only its writes timed;
//! (c) `tallrow load` through the Thrift2 gateway.
//!
//! Also the HFile write alone against the embedded store's bulk load of the same rows, the
//! HFile write's peak RSS, and gets and 10-row action pages (p50, through Thrift2) on the
//! tables (a) seeded against the same tables loaded by (c) and major-compacted. Each loaded
//! data set is checked with `tallrow verify`'s row counts (`bulkload` counts (a); (b) and (c)
//! count with a scan). Every round runs all of it; the figures are medians over the rounds
//! with their range.
//!
//! This drops the workload's tables wherever they are: run it against a scratch HBase.
//!
//! `cargo bench --bench hfile -- WORKLOAD [--regions N] [--rounds N] [--samples N]`

mod shared;

use shared::BIN;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::store::backend::Backend;
use tallrow::workload::Workload;

/// Wall time and peak RSS (KiB) of a command, which must succeed; its stdout.
fn timed(cmd: &mut Command, tmp: &Path) -> (f64, u64, String) {
    let rss = tmp.join("rss");
    let mut time = Command::new("/usr/bin/time");
    time.arg("-o")
        .arg(&rss)
        .args(["-f", "%M"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let started = Instant::now();
    let out = time.output().expect("run /usr/bin/time");
    let secs = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let kib = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok())
        .unwrap_or(0);
    (secs, kib, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The row writes/s of a load's summary (its "total" line).
fn rate_of(text: &str) -> f64 {
    let total = text.lines().find(|l| l.starts_with("total")).expect("a total line");
    total
        .split_whitespace()
        .nth(5)
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

fn native() -> Command {
    let mut cmd = Command::new("scripts/hbase.sh");
    cmd.args(["java", "dev.tallrow.bench.Native"]);
    cmd
}

/// One round's figures.
#[derive(Debug, Default, Clone, Copy)]
struct Round {
    embedded_rate: f64,
    hfile_rate: f64,
    hfile_rss_mib: f64,
    hfile_secs: f64,
    tool_secs: f64,
    bulkload_secs: f64,
    count_secs: f64,
    end_to_end: f64,
    native: f64,
    thrift2: f64,
    get_seeded: u64,
    page_seeded: u64,
    get_compacted: u64,
    page_compacted: u64,
}

fn main() {
    let Some(a) = shared::RoundsArgs::parse() else { return };
    let thrift2 = std::env::var("TALLROW_HBASE_THRIFT2")
        .expect("TALLROW_HBASE_THRIFT2: scripts/bench.sh hfile starts HBase and sets it");
    let url = format!("hbase://{thrift2}?api=thrift2");
    let w = Workload::from_file(&a.workload).unwrap_or_else(|e| panic!("{e}"));
    let g = Arc::new(Generator::new(&w));
    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let drop_tables = || {
        for t in &tables {
            let _ = store.delete_table(t);
        }
    };
    let regions = a.regions.to_string();
    println!(
        "== seeding {} ({} users) into HBase {} (standalone, loopback), {} regions a table, {} rounds",
        a.workload.display(),
        thousands(w.data.users),
        std::env::var("TALLROW_HBASE_VERSION").unwrap_or_default(),
        a.regions,
        a.rounds
    );
    let splits = tallrow::regions::split_points(&g, a.regions).unwrap();
    let mut rounds = Vec::new();
    let mut rows = 0;
    for round in 1..=a.rounds {
        let tmp = tempfile::tempdir().unwrap();
        let reports = tmp.path().join("reports");
        let mut r = Round::default();
        // The embedded store's bulk load of the same rows: the HFile write's reference.
        let (n, rate) = shared::load_with(
            &a.workload,
            &format!("embedded:{}", tmp.path().join("embedded").display()),
            &reports,
            &["--regions", &regions],
        );
        rows = n;
        r.embedded_rate = rate;
        std::fs::remove_dir_all(tmp.path().join("embedded")).unwrap();

        // (a) HFiles, then HBase's bulk load until every row is counted.
        drop_tables();
        let dir = tmp.path().join("hfiles");
        let mut load = Command::new(BIN);
        load.arg("load")
            .arg(&a.workload)
            .arg("--backend")
            .arg(format!("hfile:{}", dir.display()))
            .args(["--regions", &regions, "--reports"])
            .arg(&reports);
        let (secs, kib, out) = timed(&mut load, tmp.path());
        r.hfile_secs = secs;
        r.hfile_rss_mib = kib as f64 / 1024.0;
        r.hfile_rate = rate_of(&out);
        let mut bulk = Command::new(BIN);
        bulk.arg("bulkload").arg(&dir).args([
            "--backend",
            &url,
            "--hbase-cmd",
            "scripts/hbase.sh completebulkload",
            "--no-count",
        ]);
        let (secs, _, out) = timed(&mut bulk, tmp.path());
        r.bulkload_secs = secs;
        r.tool_secs = tool_seconds(&out);
        r.end_to_end = rows as f64 / (r.hfile_secs + r.bulkload_secs);
        // Every row is there: each table holds the rows its files do.
        let started = Instant::now();
        let manifest: tallrow::bulkload::manifest::Manifest =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bulkload.json")).unwrap()).unwrap();
        for t in &manifest.tables {
            let n = tallrow::store::count_rows(&*store, &t.name).unwrap();
            assert_eq!(n, t.rows, "{}: rows after the bulk load", t.name);
        }
        r.count_secs = started.elapsed().as_secs_f64();
        // Users with a page of actions after the cursor (a quarter into theirs).
        let starts = shared::paging_starts_of(store.clone(), g.clone(), &w, 16, 1000);
        assert!(starts.len() > 100, "{} users with 16 actions", starts.len());
        let (get, page) = shared::get_and_page_p50(store.clone(), &w, &starts, a.samples);
        (r.get_seeded, r.page_seeded) = (get, page);

        // (c) tallrow through Thrift2, then major-compacted for the reads.
        drop_tables();
        let (_, rate) = shared::load_with(&a.workload, &url, &reports, &["--regions", &regions]);
        r.thrift2 = rate;
        let status = native().arg("compact").args(&tables).status().unwrap();
        assert!(status.success(), "major compaction");
        let (get, page) = shared::get_and_page_p50(store.clone(), &w, &starts, a.samples);
        (r.get_compacted, r.page_compacted) = (get, page);

        // (b) The native client, into tables created with the same split points.
        drop_tables();
        for t in g.tables() {
            let s = splits.iter().find(|(s, _)| s.name() == t.name).map(|(_, s)| s.clone());
            store.create_table(&t.with_splits(s.unwrap_or_default())).unwrap();
        }
        let dump = shared::dump_rows(&w, tmp.path(), rows);
        let mut cmd = native();
        cmd.arg("load").arg(&dump);
        let (java, _) = shared::external_load(cmd, rows);
        r.native = java;
        drop_tables();
        println!(
            "round {round}: HFiles {} rows/s ({:.1} s, peak {:.0} MiB; embedded bulk {} rows/s), bulkload {:.1} s (tool runs {:.1} s added; count after {:.1} s), end to end {} rows/s | native {} rows/s | Thrift2 {} rows/s | get p50 {} against {}, page p50 {} against {}",
            thousands(r.hfile_rate as u64),
            r.hfile_secs,
            r.hfile_rss_mib,
            thousands(r.embedded_rate as u64),
            r.bulkload_secs,
            r.tool_secs,
            r.count_secs,
            thousands(r.end_to_end as u64),
            thousands(r.native as u64),
            thousands(r.thrift2 as u64),
            fmt_ns(r.get_seeded),
            fmt_ns(r.get_compacted),
            fmt_ns(r.page_seeded),
            fmt_ns(r.page_compacted)
        );
        rounds.push(r);
    }
    report(&rounds, rows);
}

/// The seconds the bulk-load tool runs took, added over every table (bulkload's "tool s"
/// column; they overlap, `--parallel` at a time).
fn tool_seconds(text: &str) -> f64 {
    let header = text.lines().find(|l| l.starts_with("table")).expect("a table");
    let cols: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    let at = cols.iter().position(|c| *c == "tool s").expect("a tool s column");
    text.lines()
        .skip_while(|l| !l.starts_with("table"))
        .skip(1)
        .map_while(|l| l.split_whitespace().nth(at)?.parse::<f64>().ok())
        .sum()
}

fn report(rounds: &[Round], rows: u64) {
    println!(
        "== {} rows; medians of {} rounds [range]",
        thousands(rows),
        rounds.len()
    );
    let line = |what: &str, f: &dyn Fn(&Round) -> f64, unit: &str| {
        let (m, lo, hi) = shared::spread(rounds, f);
        println!("{what:<58} {m:>12.2} {unit} [{lo:.2} .. {hi:.2}]");
    };
    line(
        "(a) HFile write + bulk-load tool, end to end",
        &|r| r.end_to_end,
        "rows/s",
    );
    line("(b) native BufferedMutator", &|r| r.native, "rows/s");
    line("(c) tallrow load, Thrift2", &|r| r.thrift2, "rows/s");
    line("(a) / (b), end to end (target >= 8)", &|r| r.end_to_end / r.native, "x");
    line("(a) / (c)", &|r| r.end_to_end / r.thrift2, "x");
    line("HFile write alone", &|r| r.hfile_rate, "rows/s");
    line(
        "HFile write / embedded bulk load (target >= 0.8)",
        &|r| r.hfile_rate / r.embedded_rate,
        "x",
    );
    line("HFile write: seconds (whole command)", &|r| r.hfile_secs, "s");
    line(
        "bulkload --no-count: seconds (whole command)",
        &|r| r.bulkload_secs,
        "s",
    );
    line(
        "bulk-load tool runs: seconds, added over the tables",
        &|r| r.tool_secs,
        "s",
    );
    line("row count of every table after (untimed above)", &|r| r.count_secs, "s");
    line("HFile write: peak RSS (target <= 512)", &|r| r.hfile_rss_mib, "MiB");
    let ns = |v: f64| fmt_ns(v as u64);
    for (what, seeded, compacted) in [
        (
            "1-row get p50",
            &(|r: &Round| r.get_seeded as f64) as &dyn Fn(&Round) -> f64,
            &(|r: &Round| r.get_compacted as f64) as &dyn Fn(&Round) -> f64,
        ),
        ("10-row page p50", &|r: &Round| r.page_seeded as f64, &|r: &Round| {
            r.page_compacted as f64
        }),
    ] {
        let (s, _, _) = shared::spread(rounds, seeded);
        let (c, _, _) = shared::spread(rounds, compacted);
        let (ratio, lo, hi) = shared::spread(rounds, |r| seeded(r) / compacted(r));
        println!(
            "{what}: bulk-loaded {} | Thrift2-loaded, major-compacted {} | ratio {ratio:.2} [{lo:.2} .. {hi:.2}] (target <= 1.2)",
            ns(s),
            ns(c)
        );
    }
}
