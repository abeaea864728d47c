//! `tallrow serve` under load, all through the real binary and one `serve` process per part:
//!
//! 1. Loads of the same rows: `tallrow load` into the embedded store directly, in batches
//!    (the reference: the write path `serve` takes) and in bulk, `tallrow load` through the `hbase` backend into `serve`, and a happybase
//!    batch loader (`scripts/happybase_load.py`) into the same `serve`, fed the rows the
//!    generator emits, dumped to a file first.
//! 2. Action pages of 10 and 100 rows by cursor, read from one data directory directly and
//!    then through `serve`.
//!
//! `cargo bench --bench thrift -- WORKLOAD --python PATH [--samples N]`

mod shared;

use shared::BIN;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::store::{Store, backend::Backend, embedded::Embedded};
use tallrow::workload::Workload;

// The same allocator as the binary, for the in-process reads.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A `tallrow serve` child, killed when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    fn start(data: &Path) -> Served {
        let mut child = Command::new(BIN)
            .args(["serve", "--data"])
            .arg(data)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start tallrow serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Served { child, port }
    }

    fn url(&self) -> String {
        format!("hbase://127.0.0.1:{}", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn loads(workload: &Path, python: &Path, tmp: &Path) {
    let w = Workload::from_file(workload).unwrap_or_else(|e| panic!("{e}"));
    let reports = tmp.join("reports");
    println!("== loads of {} through tallrow serve", workload.display());
    let (rows, embedded) = shared::load_with(
        workload,
        &format!("embedded:{}", tmp.join("direct").display()),
        &reports,
        &["--no-bulk"],
    );
    let (_, bulk) = shared::load(workload, &format!("embedded:{}", tmp.join("bulk").display()), &reports);
    let served = Served::start(&tmp.join("served"));
    let (hrows, hbase) = shared::load(workload, &served.url(), &reports);
    assert_eq!(rows, hrows);

    let port = served.port.to_string();
    let (happy, calls) = shared::python_load(
        python,
        "scripts/happybase_load.py",
        &["--port", &port, "--prefix", "hb"],
        &w,
        tmp,
        rows,
    );

    println!(
        "{} rows; tallrow load, 2 threads, batches of {}",
        thousands(rows),
        w.load.batch
    );
    println!(
        "embedded store, direct, batches    {:>10} rows/s",
        thousands(embedded as u64)
    );
    println!(
        "embedded store, direct, bulk load  {:>10} rows/s",
        thousands(bulk as u64)
    );
    println!(
        "hbase backend into serve           {:>10} rows/s",
        thousands(hbase as u64)
    );
    println!(
        "happybase batch loader into serve  {:>10} rows/s  ({} calls)",
        thousands(happy as u64),
        thousands(calls)
    );
    println!(
        "hbase / happybase {:.1} (target >= 10); hbase / embedded in batches {:.2} (target >= 0.7); hbase / embedded bulk {:.2}",
        hbase / happy,
        hbase / embedded,
        hbase / bulk
    );
}

fn paging(samples: usize, tmp: &Path) {
    let path = Path::new("benches/paging.toml");
    let w = Workload::from_file(path).unwrap();
    let data = tmp.join("paging");
    let (rows, _) = shared::load(path, &format!("embedded:{}", data.display()), &tmp.join("reports"));
    let g = Arc::new(Generator::new(&w));

    let embedded: Arc<dyn Store> = Arc::new(Embedded::open(&data).unwrap());
    let starts = shared::paging_starts(embedded.clone(), g, &w);
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor ({} users with 200+ actions, {} rows; {samples} reads each)",
        starts.len(),
        thousands(rows)
    );
    let direct = shared::measure_pages(embedded, &w, &starts, samples);
    let served = Served::start(&data);
    let thrift = shared::measure_pages(
        Backend::parse(&served.url(), Path::new(".")).unwrap().open().unwrap(),
        &w,
        &starts,
        samples,
    );
    println!(
        "one round trip (getClusterId): p50 {:>9} p99 {:>9}",
        fmt_ns(thrift[0].p50),
        fmt_ns(thrift[0].p99)
    );
    for (i, size) in [(1, 10), (2, 100)] {
        println!(
            "{size:>3} rows: embedded p50 {:>9} p99 {:>9} | hbase via serve p50 {:>9} p99 {:>9}",
            fmt_ns(direct[i].p50),
            fmt_ns(direct[i].p99),
            fmt_ns(thrift[i].p50),
            fmt_ns(thrift[i].p99)
        );
    }
}

fn main() {
    let Some(shared::Args {
        workload,
        python,
        samples,
    }) = shared::Args::parse("workloads/quickstart.toml", 3000, "happybase")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    loads(&workload, &python, tmp.path());
    paging(samples, tmp.path());
}
