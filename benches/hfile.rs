//! HBase's own bulk load from HDFS against HBase's own client, the same generated rows into
//! the same tables (created with the same split points) of the HBase `scripts/hbase.sh`
//! runs on a real HDFS (`scripts/bench.sh hfile` starts it so when none runs):
//!
//! (a) `tallrow load --backend hfile:hdfs://...` then `tallrow bulkload hdfs://... --no-count`
//!     (handing the files over through HBase's RPC, as HBase's tool would): both commands'
//!     wall time, after which every row is readable (each table's row count,
//!     a scan through Thrift2, is the check and untimed, as (b) is timed without one);
//! (b) a plain Java loader on HBase's native client (`BufferedMutator`, tests/hbase/src), the
//!     reference, only its writes timed;
//! (c) for the record, the way without writing into HDFS: `tallrow load --backend hfile:DIR`
//!     on the local disk, `hdfs dfs -put` of DIR (`scripts/hdfs.sh put`), then `bulkload` of
//!     the copy: the three commands' wall time (the same files: `bulkload` checks their
//!     lengths against the manifest; (a)'s rows are the ones counted).
//!
//! Also the HFile write's peak RSS, and a load killed half way through its time (half the
//! whole load's wall time of the same round) and resumed, against the same load
//! uninterrupted (both `hfile:hdfs://`, checkpointing every 2 s): the resumed command's wall
//! time over the whole one's. `--resume-only` measures that alone; `--resume-native` measures
//! it for a load of batches through HBase's own RPC (`hbase://...?api=native`) instead;
//! `--resume-embedded` for one into the embedded store with `--no-bulk`, as a user times it
//! (rows counted after each load; no HBase needed). Every round runs all of it; the figures
//! are medians over the rounds with their range.
//!
//! This drops the workload's tables wherever they are: run it against a scratch HBase.
//!
//! `cargo bench --bench hfile -- WORKLOAD [--regions N] [--rounds N] [--resume-only] [--resume-native|--resume-embedded]`

mod shared;

use shared::BIN;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tallrow::generate::Generator;
use tallrow::report::thousands;
use tallrow::store::Store;
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

fn native() -> Command {
    let mut cmd = Command::new("scripts/hbase.sh");
    cmd.args(["java", "dev.tallrow.bench.Native"]);
    cmd
}

/// One round's figures.
#[derive(Debug, Default, Clone, Copy)]
struct Round {
    /// (a): the HFile write into HDFS, its peak RSS, the bulk load, and rows/s end to end.
    hfile_secs: f64,
    hfile_rss_mib: f64,
    bulkload_secs: f64,
    tool_secs: f64,
    end_to_end: f64,
    /// The untimed check that every row is readable.
    count_secs: f64,
    /// (b)
    native: f64,
    /// (c): the local write, the copy into HDFS, the bulk load, and rows/s end to end.
    local_secs: f64,
    put_secs: f64,
    local_bulkload_secs: f64,
    local_end_to_end: f64,
    /// The whole load and the resumed half, checkpointing every 2 s.
    whole_secs: f64,
    killed_at: f64,
    resumed_secs: f64,
}

/// `tallrow bulkload DIR --no-count` into `url`, through HBase's RPC: its wall time and the
/// hand-overs' seconds.
fn bulkload(dir: &str, url: &str, tmp: &Path) -> (f64, f64) {
    let mut bulk = Command::new(BIN);
    bulk.arg("bulkload").arg(dir).args(["--backend", url, "--no-count"]);
    let (secs, _, out) = timed(&mut bulk, tmp);
    (secs, tool_seconds(&out))
}

/// Every table holds the rows the files in `dir` (local or hdfs://) hold; the seconds the
/// counts took.
fn check_counts(store: &dyn Store, dir: &str) -> f64 {
    let started = Instant::now();
    let dir = tallrow::bulkload::fs::Location::parse(dir).unwrap().open().unwrap();
    for (_, m) in tallrow::bulkload::manifest::read_all(&dir).unwrap() {
        for t in &m.tables {
            let n = tallrow::store::count_rows(store, &t.name).unwrap();
            assert_eq!(n, t.rows, "{}: rows after the bulk load", t.name);
        }
    }
    started.elapsed().as_secs_f64()
}

fn hdfs(args: &[&str]) {
    let status = Command::new("scripts/hdfs.sh").args(args).status().unwrap();
    assert!(status.success(), "scripts/hdfs.sh {args:?}");
}

/// Starts `tallrow load ARGS`, kills it (SIGKILL) `after` its start, and returns the fraction
/// of its blocks its journal under `reports` had acknowledged then.
fn kill_after(args: &[String], reports: &Path, after: Duration) -> f64 {
    let mut child = Command::new(BIN)
        .arg("load")
        .args(args)
        .arg("--reports")
        .arg(reports)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the load ended before it was killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let path = tallrow::load::journal::path(reports, tallrow::load::Shard::ALL);
    let j = tallrow::load::journal::read(&path).unwrap().expect("a journal");
    j.acked() as f64 / j.header.blocks_total as f64
}

/// `tallrow load ARGS --resume` of the journal under `reports`, which must resume one: its
/// wall time and stdout.
fn resume_of(args: &[String], reports: &Path, tmp: &Path) -> (f64, String) {
    let mut load = Command::new(BIN);
    load.arg("load")
        .args(args)
        .arg("--reports")
        .arg(reports)
        .arg("--resume");
    let (secs, _, out) = timed(&mut load, tmp);
    assert!(out.contains("resumed the unfinished load"), "{out}");
    (secs, out)
}

/// A load into the embedded store with `--no-bulk`, whole, then killed at half its time and
/// resumed (each into a fresh directory), `a.rounds` rounds.
fn resume_embedded(a: &shared::RoundsArgs) {
    let w = Workload::from_file(&a.workload).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "== {} ({} users) into embedded: with --no-bulk, whole, then killed at half its time and resumed; {} rounds",
        a.workload.display(),
        thousands(w.data.users),
        a.rounds
    );
    let mut rounds = Vec::new();
    let mut rows = 0;
    for round in 1..=a.rounds {
        let tmp = tempfile::tempdir().unwrap();
        let args = |name: &str| -> Vec<String> {
            vec![
                a.workload.display().to_string(),
                "--backend".into(),
                format!("embedded:{}", tmp.path().join(name).display()),
                "--no-bulk".into(),
            ]
        };
        let mut r = Round::default();
        let mut load = Command::new(BIN);
        load.arg("load")
            .args(args("whole"))
            .arg("--reports")
            .arg(tmp.path().join("whole-reports"));
        let (secs, _, out) = timed(&mut load, tmp.path());
        (r.whole_secs, rows) = (secs, rows_of(&out));
        std::fs::remove_dir_all(tmp.path().join("whole")).unwrap();
        let journaled = tmp.path().join("resumed-reports");
        r.killed_at = kill_after(
            &args("resumed"),
            &journaled,
            Duration::from_secs_f64(r.whole_secs / 2.0),
        );
        let out;
        (r.resumed_secs, out) = resume_of(&args("resumed"), &journaled, tmp.path());
        let opening = out
            .split(" s opening")
            .next()
            .and_then(|t| t.rsplit(' ').next())
            .unwrap_or("?");
        println!(
            "round {round}: whole {:.1} s, killed at {:.1} s ({:.0}% of the blocks acknowledged), resumed {:.1} s ({opening} s opening the killed store)",
            r.whole_secs,
            r.whole_secs / 2.0,
            r.killed_at * 100.0,
            r.resumed_secs
        );
        rounds.push(r);
    }
    report(&rounds, rows, true);
}

fn main() {
    let Some(a) = shared::RoundsArgs::parse() else { return };
    if a.flags.iter().any(|f| f == "--resume-embedded") {
        resume_embedded(&a);
        return;
    }
    // `--resume-only`: the killed and resumed load against the whole one, nothing else.
    let resume_only = a.flags.iter().any(|f| f == "--resume-only");
    let resume_native = a.flags.iter().any(|f| f == "--resume-native");
    let native_url = std::env::var("TALLROW_HBASE_NATIVE")
        .expect("TALLROW_HBASE_NATIVE: scripts/bench.sh hfile starts HBase and sets it");
    let thrift2 = std::env::var("TALLROW_HBASE_THRIFT2")
        .expect("TALLROW_HBASE_THRIFT2: scripts/bench.sh hfile starts HBase and sets it");
    let namenode = std::env::var("TALLROW_HDFS")
        .expect("TALLROW_HDFS: scripts/bench.sh hfile starts HBase on HDFS (scripts/hbase.sh start --hdfs)");
    let url = format!("hbase://{thrift2}?api=thrift2");
    let w = Workload::from_file(&a.workload).unwrap_or_else(|e| panic!("{e}"));
    let g = Arc::new(Generator::new(&w));
    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let drop_tables = || shared::drop_tables(&*store, &tables);
    let regions = a.regions.to_string();
    println!(
        "== seeding {} ({} users) into HBase {} on HDFS ({namenode}, loopback), {} regions a table, {} rounds",
        a.workload.display(),
        thousands(w.data.users),
        std::env::var("TALLROW_HBASE_VERSION").unwrap_or_default(),
        a.regions,
        a.rounds
    );
    let splits = tallrow::regions::split_points(&g, a.regions).unwrap();
    let mut rounds = Vec::new();
    let mut rows = 0;
    let load_args = |target: &str, extra: &[&str]| -> Vec<String> {
        let mut v = vec![
            a.workload.display().to_string(),
            "--backend".into(),
            target.to_string(),
            "--regions".into(),
            regions.clone(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    for round in 1..=a.rounds {
        let tmp = tempfile::tempdir().unwrap();
        let reports = tmp.path().join("reports");
        let mut r = Round::default();
        let remote = |what: &str| format!("{namenode}/tmp/bench-{}-{round}-{what}", std::process::id());

        if !resume_only {
            // (a) HFiles straight into HDFS, then HBase's bulk load until every row is counted.
            drop_tables();
            let dir = remote("a");
            let mut load = Command::new(BIN);
            load.arg("load")
                .args(load_args(&format!("hfile:{dir}"), &[]))
                .arg("--reports")
                .arg(&reports);
            let (secs, kib, out) = timed(&mut load, tmp.path());
            r.hfile_secs = secs;
            r.hfile_rss_mib = kib as f64 / 1024.0;
            rows = rows_of(&out);
            (r.bulkload_secs, r.tool_secs) = bulkload(&dir, &native_url, tmp.path());
            r.end_to_end = rows as f64 / (r.hfile_secs + r.bulkload_secs);
            r.count_secs = check_counts(&*store, &dir);
            hdfs(&["rm", "-r", "-skipTrash", &dir]);

            // (c) The same written locally, copied into HDFS, then bulk-loaded.
            drop_tables();
            let local = tmp.path().join("hfiles");
            let mut load = Command::new(BIN);
            load.arg("load")
                .args(load_args(&format!("hfile:{}", local.display()), &[]))
                .arg("--reports")
                .arg(&reports);
            (r.local_secs, _, _) = timed(&mut load, tmp.path());
            let copy = remote("c");
            let mut put = Command::new("scripts/hdfs.sh");
            put.args(["put"]).arg(&local).arg(&copy);
            (r.put_secs, _, _) = timed(&mut put, tmp.path());
            std::fs::remove_dir_all(&local).unwrap();
            (r.local_bulkload_secs, _) = bulkload(&copy, &native_url, tmp.path());
            r.local_end_to_end = rows as f64 / (r.local_secs + r.put_secs + r.local_bulkload_secs);
            hdfs(&["rm", "-r", "-skipTrash", &copy]);

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
            std::fs::remove_file(&dump).unwrap();
            drop_tables();
        }

        // The same load whole, then killed half way through its time and resumed: HFiles
        // into HDFS, or with `--resume-native` batches through HBase's own RPC.
        let every = ["--checkpoint-every", "2s", "--no-count"];
        let (whole, resumed) = if resume_native {
            (native_url.clone(), native_url.clone())
        } else {
            (
                format!("hfile:{}", remote("whole")),
                format!("hfile:{}", remote("resumed")),
            )
        };
        let clean = |target: &str| match target.strip_prefix("hfile:") {
            Some(dir) => hdfs(&["rm", "-r", "-skipTrash", dir]),
            None => drop_tables(),
        };
        drop_tables();
        let mut load = Command::new(BIN);
        load.arg("load")
            .args(load_args(&whole, &every))
            .arg("--reports")
            .arg(tmp.path().join("whole"));
        let (secs, _, out) = timed(&mut load, tmp.path());
        (r.whole_secs, rows) = (secs, rows_of(&out));
        clean(&whole);
        let args = load_args(&resumed, &every);
        let journaled = tmp.path().join("resumed");
        r.killed_at = kill_after(&args, &journaled, Duration::from_secs_f64(r.whole_secs / 2.0));
        r.resumed_secs = resume_of(&args, &journaled, tmp.path()).0;
        clean(&resumed);

        if !resume_only {
            println!(
                "round {round}: (a) HFiles into HDFS {:.1} s (peak {:.0} MiB), bulkload {:.1} s (hand-overs {:.1} s added; count after {:.1} s), end to end {} rows/s | (b) native {} rows/s | (c) local {:.1} s + put {:.1} s + bulkload {:.1} s, {} rows/s",
                r.hfile_secs,
                r.hfile_rss_mib,
                r.bulkload_secs,
                r.tool_secs,
                r.count_secs,
                thousands(r.end_to_end as u64),
                thousands(r.native as u64),
                r.local_secs,
                r.put_secs,
                r.local_bulkload_secs,
                thousands(r.local_end_to_end as u64),
            );
        }
        println!(
            "round {round}: whole {:.1} s, killed at {:.1} s ({:.0}% of the blocks acknowledged), resumed {:.1} s",
            r.whole_secs,
            r.whole_secs / 2.0,
            r.killed_at * 100.0,
            r.resumed_secs
        );
        rounds.push(r);
    }
    report(&rounds, rows, resume_only);
}

/// The rows a load wrote, from its summary's "total" line.
fn rows_of(text: &str) -> u64 {
    let total = text.lines().find(|l| l.starts_with("total")).expect("a total line");
    total
        .split_whitespace()
        .nth(1)
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

/// The seconds the hand-overs took, added over every table (bulkload's "hand-over s"
/// column; they overlap, `--parallel` at a time).
fn tool_seconds(text: &str) -> f64 {
    let header = text.lines().find(|l| l.starts_with("table")).expect("a table");
    let cols: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    let at = cols
        .iter()
        .position(|c| *c == "hand-over s")
        .expect("a hand-over s column");
    text.lines()
        .skip_while(|l| !l.starts_with("table"))
        .skip(1)
        .map_while(|l| l.split_whitespace().nth(at)?.parse::<f64>().ok())
        .sum()
}

fn report(rounds: &[Round], rows: u64, resume_only: bool) {
    println!(
        "== {} rows; medians of {} rounds [range]",
        thousands(rows),
        rounds.len()
    );
    let line = |what: &str, f: &dyn Fn(&Round) -> f64, unit: &str| {
        let (m, lo, hi) = shared::spread(rounds, f);
        println!("{what:<62} {m:>12.2} {unit} [{lo:.2} .. {hi:.2}]");
    };
    if !resume_only {
        seeding(&line);
    }
    line("whole load: seconds", &|r| r.whole_secs, "s");
    line(
        "killed at half its time: fraction of blocks acknowledged",
        &|r| r.killed_at,
        "",
    );
    line("resumed load: seconds", &|r| r.resumed_secs, "s");
    line(
        "resumed / whole (target <= 0.6)",
        &|r| r.resumed_secs / r.whole_secs,
        "x",
    );
}

/// Prints one figure: what, how to take it from a round, its unit.
type Line<'a> = &'a dyn Fn(&str, &dyn Fn(&Round) -> f64, &str);

fn seeding(line: Line) {
    line(
        "(a) HFiles into HDFS + bulk load, end to end",
        &|r| r.end_to_end,
        "rows/s",
    );
    line("(b) native BufferedMutator", &|r| r.native, "rows/s");
    line(
        "(c) local HFiles + put + bulk load, end to end",
        &|r| r.local_end_to_end,
        "rows/s",
    );
    line(
        "(a) / (b), end to end (target >= 10)",
        &|r| r.end_to_end / r.native,
        "x",
    );
    line("(a) / (c)", &|r| r.end_to_end / r.local_end_to_end, "x");
    line("(a) HFile write into HDFS: seconds", &|r| r.hfile_secs, "s");
    line("(a) bulkload --no-count: seconds", &|r| r.bulkload_secs, "s");
    line(
        "(a) hand-overs through HBase's RPC: seconds, added over the tables",
        &|r| r.tool_secs,
        "s",
    );
    line("(a) row count of every table after (untimed)", &|r| r.count_secs, "s");
    line("(a) HFile write: peak RSS (target <= 512)", &|r| r.hfile_rss_mib, "MiB");
    line("(c) local HFile write: seconds", &|r| r.local_secs, "s");
    line("(c) hdfs dfs -put: seconds", &|r| r.put_secs, "s");
    line("(c) bulkload --no-count: seconds", &|r| r.local_bulkload_secs, "s");
}
