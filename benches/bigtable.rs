//! The bigtable backend against Google's Bigtable emulator (`BIGTABLE_EMULATOR_HOST`, which
//! `scripts/bench.sh bigtable` sets after starting one), through the real binary:
//!
//! 1. Loads of the same rows into two instances of one emulator: `tallrow load` through the
//!    `bigtable` backend, and a plain loader written with Google's Python client
//!    (`scripts/bigtable_load.py`), fed the rows the generator emits, dumped to a file first.
//!    The same load into the embedded store is the reference measured in the same run.
//! 2. Action pages of 10 and 100 rows by cursor through the backend, and through the embedded
//!    store holding the same rows; a get of one row on each is the reference.
//!
//! The emulator keeps everything in memory, so the workload is a few hundred thousand rows.
//!
//! `cargo bench --bench bigtable -- [WORKLOAD] --python PATH [--samples N]`

mod shared;

use std::path::Path;
use std::sync::Arc;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::store::backend::Backend;
use tallrow::workload::Workload;

fn main() {
    let Some(shared::Args {
        workload,
        python,
        samples,
    }) = shared::Args::parse("benches/paging.toml", 2000, "google-cloud-bigtable")
    else {
        return;
    };
    let host = std::env::var("BIGTABLE_EMULATOR_HOST")
        .expect("BIGTABLE_EMULATOR_HOST: scripts/bench.sh bigtable starts the emulator and sets it");
    let w = Workload::from_file(&workload).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let project = "tallrow-bench";
    let pid = std::process::id();

    println!(
        "== loads of {} into the Bigtable emulator at {host}",
        workload.display()
    );
    let url = format!("bigtable://{project}/tallrow-{pid}");
    let (rows, tallrow) = shared::load(&workload, &url, &tmp.path().join("reports"));
    // The reference: the same load into the embedded store, in this run.
    let dir = tmp.path().join("embedded");
    let embedded_url = format!("embedded:{}", dir.display());
    let (embedded_rows, embedded) = shared::load(&workload, &embedded_url, &tmp.path().join("reports"));
    assert_eq!(embedded_rows, rows);

    let pid_instance = format!("python-{pid}");
    let (python_rate, calls) = shared::python_load(
        &python,
        "scripts/bigtable_load.py",
        &["--project", project, "--instance", &pid_instance],
        &w,
        tmp.path(),
        rows,
    );
    println!(
        "{} rows; tallrow load, 2 threads, batches of {}",
        thousands(rows),
        w.load.batch
    );
    println!(
        "tallrow, embedded store (reference)    {:>10} rows/s",
        thousands(embedded as u64)
    );
    println!(
        "tallrow, bigtable backend              {:>10} rows/s",
        thousands(tallrow as u64)
    );
    println!(
        "google-cloud-bigtable mutate_rows      {:>10} rows/s  ({} calls of up to 1,000 rows)",
        thousands(python_rate as u64),
        thousands(calls)
    );
    println!("bigtable / Python client {:.2}", tallrow / python_rate);
    println!("bigtable / embedded {:.2}", tallrow / embedded);

    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    let starts = shared::paging_starts(store.clone(), Arc::new(Generator::new(&w)), &w);
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor ({} users with 200+ actions; {samples} reads each)",
        starts.len()
    );
    let embedded_store = Backend::parse(&embedded_url, Path::new(".")).unwrap().open().unwrap();
    let (local_get, bigtable_get) = (
        shared::gets(&*embedded_store, &starts, samples),
        shared::gets(&*store, &starts, samples),
    );
    let local = shared::measure_pages(embedded_store, &w, &starts, samples);
    let pages = shared::measure_pages(store, &w, &starts, samples);
    println!(
        "1-row get: embedded p50 {:>9} p99 {:>9}   bigtable p50 {:>9} p99 {:>9}",
        fmt_ns(local_get.p50),
        fmt_ns(local_get.p99),
        fmt_ns(bigtable_get.p50),
        fmt_ns(bigtable_get.p99)
    );
    for (i, size) in [(1, 10), (2, 100)] {
        println!(
            "{size:>3} rows: embedded p50 {:>9} p99 {:>9}   bigtable p50 {:>9} p99 {:>9}",
            fmt_ns(local[i].p50),
            fmt_ns(local[i].p99),
            fmt_ns(pages[i].p50),
            fmt_ns(pages[i].p99)
        );
    }
}
