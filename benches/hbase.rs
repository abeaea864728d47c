//! The hbase backend against real Apache HBase: the instance `scripts/hbase.sh` runs (two
//! region servers on loopback), reached through `TALLROW_HBASE_THRIFT1` (`scripts/bench.sh hbase` starts it when
//! none runs). Through the real binary:
//!
//! 1. Loads of the same generated rows into empty tables, each checked with `tallrow verify`
//!    and dropped before the next: `tallrow load` through the hbase backend (Thrift1, in both
//!    of its modes, and Thrift2), a happybase batch loader (`scripts/happybase_load.py`) on the same
//!    Thrift1 server, and a plain Java loader with HBase's native client (`BufferedMutator`,
//!    tests/hbase/src) on the same machine, the reference. HBase's own
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

use std::path::Path;
use std::sync::Arc;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::run::ops::PAGE;
use tallrow::schema::microblog::Microblog;
use tallrow::store::hbase::{Hbase, Hbase2, Spec};
use tallrow::store::{Store, backend::Backend};
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
    let drop_tables = || shared::drop_tables(&*store, &tables);
    let verify = |what: &str| shared::verify(&workload, &url, what);
    let size = shared::RowSize::of(&g);
    println!(
        "== loads of {} into HBase {} (two region servers, loopback), into empty tables",
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
    let pe = shared::performance_evaluation(pe_rows, value_size, &pe_table);
    let _ = store.delete_table(&pe_table);

    // Last, so that its rows stay for the pages.
    let dump = shared::dump_rows(&w, tmp.path(), rows);
    let mut cmd = shared::java();
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
        let (s, per_page) = shared::time_timelines(&dao, &users, samples, &*trips);
        println!(
            "home timeline: hbase backend ({api}) p50 {:>9} p99 {:>9} | round trips per page {:.2}",
            fmt_ns(s.p50),
            fmt_ns(s.p99),
            per_page
        );
    }
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
    let backend_get = shared::gets(&*store, &starts, samples);
    let backend = shared::measure_pages(store, w, &starts, samples);
    let [java_get, java_10, java_100] = shared::java_pages(w, &starts, samples, tmp);
    let native = |kind: &str| match kind {
        "get" => java_get,
        "10" => java_10,
        _ => java_100,
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
