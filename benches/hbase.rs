//! The hbase backend against real Apache HBase: the standalone instance `scripts/hbase.sh`
//! runs, reached through `TALLROW_HBASE_THRIFT1` (`scripts/bench.sh hbase` starts it when
//! none runs). Through the real binary:
//!
//! 1. Loads of the same generated rows into empty tables, each checked with `tallrow verify`
//!    and dropped before the next: `tallrow load` through the hbase backend (Thrift1, in both
//!    of its modes, and Thrift2), a happybase batch loader (`scripts/happybase_load.py`) on the same
//!    Thrift1 server, and a plain Java loader with HBase's native client (`BufferedMutator`,
//!    tests/hbase/src) on the region server itself, the reference. HBase's own
//!    `PerformanceEvaluation --nomapred sequentialWrite` writes as many rows of one cell, each
//!    as large as the mean row's values, as HBase's reference write rate.
//! 2. Action pages of 10 and 100 rows by cursor, and a get of one row, through the hbase
//!    backend and through the native client, over the rows the native loader left.
//! 3. Home timelines (seed 001) through Thrift1 and Thrift2, with their round trips.
//!
//! This drops the workload's tables wherever they are: run it against a scratch HBase.
//!
//! `cargo bench --bench hbase -- [WORKLOAD] --python PATH [--samples N]`

mod shared;

use shared::BIN;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use tallrow::generate::{Generator, Scratch, Sink, Table};
use tallrow::keys;
use tallrow::report::{fmt_ns, thousands};
use tallrow::run::ops::PAGE;
use tallrow::schema::microblog::Microblog;
use tallrow::schema::{self, actions};
use tallrow::stats::{self, Summary};
use tallrow::store::hbase::{Hbase, Hbase2, Spec};
use tallrow::store::{Mutation, RowMutation, Store, backend::Backend};
use tallrow::workload::Workload;

fn main() {
    let Some(shared::Args {
        workload,
        python,
        samples,
    }) = shared::Args::parse("benches/paging.toml", 2000, "happybase")
    else {
        return;
    };
    let thrift1 = std::env::var("TALLROW_HBASE_THRIFT1")
        .expect("TALLROW_HBASE_THRIFT1: scripts/bench.sh hbase starts HBase and sets it");
    let w = Workload::from_file(&workload).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let url = format!("hbase://{thrift1}");
    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    let g = Arc::new(Generator::new(&w));
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let drop_tables = || {
        for t in &tables {
            let _ = store.delete_table(t);
        }
    };
    let verify = |what: &str| {
        let out = Command::new(BIN)
            .arg("verify")
            .arg(&workload)
            .args(["--backend", &url])
            .output()
            .expect("run tallrow verify");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("OK: the store holds exactly"),
            "after {what}, verify: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let size = RowSize::of(&g);
    println!(
        "== loads of {} into HBase {} (standalone, loopback), into empty tables",
        workload.display(),
        std::env::var("TALLROW_HBASE_VERSION").unwrap_or_default()
    );
    println!(
        "{} rows, {} cells, {} bytes of values; tallrow load: {} threads, batches of {}",
        thousands(size.rows),
        thousands(size.cells),
        thousands(size.value_bytes),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        w.load.batch
    );

    drop_tables();
    let (rows, tallrow) = shared::load(&workload, &url, &reports);
    assert_eq!(rows, size.rows);
    verify("tallrow load");
    drop_tables();
    let compact = format!("{url}?transport=framed&protocol=compact");
    let thrift1_fc = std::env::var("TALLROW_HBASE_THRIFT1_FC").ok();
    let framed = thrift1_fc.map(|fc| {
        let url = compact.replace(&thrift1, &fc);
        let (_, rate) = shared::load(&workload, &url, &reports);
        verify("tallrow load, framed compact");
        drop_tables();
        rate
    });

    let thrift2 = std::env::var("TALLROW_HBASE_THRIFT2").ok().map(|addr| {
        let (_, rate) = shared::load(&workload, &format!("hbase://{addr}?api=thrift2"), &reports);
        verify("tallrow load, Thrift2");
        drop_tables();
        rate
    });

    let (host, port) = thrift1.rsplit_once(':').unwrap();
    let (happy, calls) = shared::python_load(
        &python,
        "scripts/happybase_load.py",
        &["--host", host, "--port", port, "--prefix", ""],
        &w,
        tmp.path(),
        rows,
    );
    verify("the happybase loader");
    drop_tables();

    let pe_rows = rows.max(1);
    let value_size = (size.value_bytes / pe_rows).max(1);
    let pe_table = format!("tallrow_pe_{}", std::process::id());
    let pe = performance_evaluation(pe_rows, value_size, &pe_table);
    let _ = store.delete_table(&pe_table);

    // Last, so that its rows stay for the pages.
    let dump = shared::dump_rows(&w, tmp.path(), rows);
    let mut cmd = native();
    cmd.arg("load").arg(&dump);
    let (java, _) = shared::external_load(cmd, rows);
    verify("the native loader");

    let ratio = |rate: f64| format!("{:.2}", rate / java);
    println!("{:<48} {:>10} rows/s  {:>5}", "", "", "/ native");
    println!(
        "{:<48} {:>10} rows/s  {:>5}",
        "native Java client, BufferedMutator",
        thousands(java as u64),
        ratio(java)
    );
    println!(
        "{:<48} {:>10} rows/s  {:>5}",
        "tallrow load, hbase backend (buffered binary)",
        thousands(tallrow as u64),
        ratio(tallrow)
    );
    if let Some(thrift2) = thrift2 {
        println!(
            "{:<48} {:>10} rows/s  {:>5}",
            "tallrow load, hbase backend (Thrift2)",
            thousands(thrift2 as u64),
            ratio(thrift2)
        );
    }
    if let Some(framed) = framed {
        println!(
            "{:<48} {:>10} rows/s  {:>5}",
            "tallrow load, hbase backend (framed compact)",
            thousands(framed as u64),
            ratio(framed)
        );
    }
    println!(
        "{:<48} {:>10} rows/s  {:>5}  ({} calls)",
        "happybase batch loader (buffered binary)",
        thousands(happy as u64),
        ratio(happy),
        thousands(calls)
    );
    println!(
        "{:<48} {:>10} rows/s  {:>5}  ({} rows of one {value_size}-byte cell)",
        "PerformanceEvaluation sequentialWrite, 1 client",
        thousands(pe as u64),
        ratio(pe),
        thousands(pe_rows)
    );

    pages(store.clone(), g.clone(), &w, samples, tmp.path());
    timelines(&g, &w, samples);
    drop_tables();
}

/// Home timelines (seed 001) of a page of posts through Thrift1 and Thrift2, with the round
/// trips each costs, counted by the backend, over the rows the native loader left.
fn timelines(g: &Generator, w: &Workload, samples: usize) {
    let spec = |var: &str, query: &str| {
        let addr = std::env::var(var).ok()?;
        Some(Spec::parse(&format!("{addr}{query}")).unwrap())
    };
    // Each API's name, its backend and its round-trip counter.
    type Counted = (&'static str, Arc<dyn Store>, Box<dyn Fn() -> u64>);
    let mut apis: Vec<Counted> = Vec::new();
    if let Some(s) = spec("TALLROW_HBASE_THRIFT1", "") {
        let store = Arc::new(Hbase::open(&s).unwrap());
        apis.push(("Thrift1", store.clone(), Box::new(move || store.round_trips())));
    }
    if let Some(s) = spec("TALLROW_HBASE_THRIFT2", "?api=thrift2") {
        let store = Arc::new(Hbase2::open(&s).unwrap());
        apis.push(("Thrift2", store.clone(), Box::new(move || store.round_trips())));
    }
    let cfg = g.microblog_config();
    let probe = Microblog::new(apis[0].1.clone(), cfg);
    let celebrities = probe.load_celebrities().unwrap();
    // Users whose timeline fills a page.
    let users: Vec<u64> = (1..=w.data.users)
        .filter(|&u| probe.timeline(u, PAGE, None).unwrap().len() == PAGE)
        .take(500)
        .collect();
    assert!(users.len() > 50, "{} users with a full timeline", users.len());
    println!(
        "== home timelines of {PAGE} posts ({} users with as many; inbox VERSIONS = {}; {samples} reads each)",
        users.len(),
        cfg.inbox_versions
    );
    for (api, store, trips) in apis {
        let dao = Microblog::new(store, cfg).with_celebrities(celebrities.clone());
        let mut h = stats::histogram();
        let mut counted = 0;
        // A first pass warms caches, connections and the backend's table descriptors.
        for pass in 0..2 {
            let before = trips();
            for i in 0..samples {
                let t = std::time::Instant::now();
                let n = dao.timeline(users[i % users.len()], PAGE, None).unwrap().len();
                let ns = t.elapsed().as_nanos() as u64;
                assert_eq!(n, PAGE);
                if pass == 1 {
                    stats::record(&mut h, ns);
                }
            }
            counted = trips() - before;
        }
        let s = Summary::of(&h);
        println!(
            "home timeline: hbase backend ({api}) p50 {:>9} p99 {:>9} | round trips per page {:.2}",
            fmt_ns(s.p50),
            fmt_ns(s.p99),
            counted as f64 / samples as f64
        );
    }
}

/// What the generator emits: rows, cells and bytes of values.
#[derive(Default)]
struct RowSize {
    rows: u64,
    cells: u64,
    value_bytes: u64,
}

impl Sink for RowSize {
    fn row(&mut self, _: Table, row: RowMutation) -> schema::Result<()> {
        self.rows += 1;
        for m in &row.mutations {
            if let Mutation::Put { value, .. } = m {
                self.cells += 1;
                self.value_bytes += value.len() as u64;
            }
        }
        Ok(())
    }
}

impl RowSize {
    fn of(g: &Generator) -> RowSize {
        let mut size = RowSize::default();
        let mut scratch = Scratch::default();
        for block in 0..g.blocks() {
            g.emit_block(block, &mut scratch, &mut size).unwrap();
        }
        size
    }
}

/// A native HBase client on the bench classpath (`scripts/hbase.sh java`).
fn native() -> Command {
    let mut cmd = Command::new("scripts/hbase.sh");
    cmd.args(["java", "dev.tallrow.bench.Native"]);
    cmd
}

/// HBase's own write reference: rows/s of `PerformanceEvaluation --nomapred sequentialWrite 1`.
fn performance_evaluation(rows: u64, value_size: u64, table: &str) -> f64 {
    let out = Command::new("scripts/hbase.sh")
        .args(["java", "org.apache.hadoop.hbase.PerformanceEvaluation", "--nomapred"])
        .arg(format!("--rows={rows}"))
        .arg(format!("--valueSize={value_size}"))
        .arg(format!("--table={table}"))
        .args(["sequentialWrite", "1"])
        .output()
        .expect("run PerformanceEvaluation");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "PerformanceEvaluation failed: {log}");
    // "Finished TestClient-0 in 737ms over 20000 rows"
    let line = log
        .lines()
        .find(|l| l.contains("Finished TestClient-0 in "))
        .unwrap_or_else(|| panic!("no result in PerformanceEvaluation's log: {log}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "in").unwrap();
    let ms: f64 = words[at + 1].trim_end_matches("ms").parse().unwrap();
    let done: f64 = words[at + 3].parse().unwrap();
    assert_eq!(done as u64, rows, "{line}");
    done / (ms / 1000.0)
}

/// Pages of 10 and 100 actions by cursor and a get of one row, through the hbase backend and
/// through the native client, from the same starts.
fn pages(store: Arc<dyn Store>, g: Arc<Generator>, w: &Workload, samples: usize, tmp: &Path) {
    let starts = shared::paging_starts(store.clone(), g, w);
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor ({} users with 200+ actions; {samples} reads each)",
        starts.len()
    );
    let mut lines = String::new();
    for (uid, cursor) in &starts {
        let mut prefix = Vec::new();
        keys::actions::user_prefix(w.keys.actions, *uid, &mut prefix);
        writeln!(lines, "{} {}", hex(cursor), hex(&keys::next_prefix(&prefix))).unwrap();
    }
    let file = tmp.join("starts.txt");
    std::fs::write(&file, lines).unwrap();

    let backend_get = shared::gets(&*store, &starts, samples);
    let backend = shared::measure_pages(store, w, &starts, samples);
    let out = native()
        .arg("pages")
        .arg(&file)
        .args([actions::TABLE, actions::FAMILY])
        .arg(String::from_utf8_lossy(actions::QUALIFIER).as_ref())
        .arg(samples.to_string())
        .output()
        .expect("run the native reader");
    assert!(
        out.status.success(),
        "the native reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let native = |kind: &str| -> Summary {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .unwrap_or_else(|| panic!("no {kind} line from the native reader: {text}"));
        let mut h = stats::histogram();
        for ns in line.split_whitespace().skip(1) {
            stats::record(&mut h, ns.parse().unwrap());
        }
        Summary::of(&h)
    };
    let rows = [
        ("1-row get", backend_get, native("get")),
        (" 10 rows", backend[1], native("10")),
        ("100 rows", backend[2], native("100")),
    ];
    for (what, ours, theirs) in rows {
        println!(
            "{what}: hbase backend (Thrift1) p50 {:>9} p99 {:>9} | native client p50 {:>9} p99 {:>9} | p50 ratio {:.2}",
            fmt_ns(ours.p50),
            fmt_ns(ours.p99),
            fmt_ns(theirs.p50),
            fmt_ns(theirs.p99),
            ours.p50 as f64 / theirs.p50 as f64
        );
    }
    if let Ok(addr) = std::env::var("TALLROW_HBASE_THRIFT2") {
        let t2 = Backend::parse(&format!("hbase://{addr}?api=thrift2"), Path::new("."))
            .unwrap()
            .open()
            .unwrap();
        let get = shared::gets(&*t2, &starts, samples);
        let pages = shared::measure_pages(t2, w, &starts, samples);
        for (what, ours, theirs) in [
            ("1-row get", get, native("get")),
            (" 10 rows", pages[1], native("10")),
            ("100 rows", pages[2], native("100")),
        ] {
            println!(
                "{what}: hbase backend (Thrift2) p50 {:>9} p99 {:>9} | p50 ratio to native {:.2}",
                fmt_ns(ours.p50),
                fmt_ns(ours.p99),
                ours.p50 as f64 / theirs.p50 as f64
            );
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
