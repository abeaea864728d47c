//! The bigtable backend against Google's Bigtable emulator (`BIGTABLE_EMULATOR_HOST`, which
//! `scripts/bench.sh bigtable` sets after starting one), through the real binary:
//!
//! 1. Loads of the same rows into two instances of one emulator: `tallrow load` through the
//!    `bigtable` backend, and a plain loader written with Google's Python client
//!    (`scripts/bigtable_load.py`), fed the rows the generator emits, dumped to a file first.
//! 2. Action pages of 10 and 100 rows by cursor through the backend.
//!
//! The emulator keeps everything in memory, so the workload is a few hundred thousand rows.
//!
//! `cargo bench --bench bigtable -- [WORKLOAD] --python PATH [--samples N]`

mod shared;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::store::Backend;
use tallrow::workload::Workload;

fn main() {
    // `cargo test --all-targets` runs benches without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut workload, mut python, mut samples) = (None, None, 2000usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--python" => python = args.next().map(PathBuf::from),
            "--samples" => samples = args.next().and_then(|v| v.parse().ok()).expect("a number"),
            other => workload = Some(PathBuf::from(other)),
        }
    }
    let workload = workload.unwrap_or_else(|| PathBuf::from("benches/paging.toml"));
    let python = python.expect("--python PATH: a Python with google-cloud-bigtable installed");
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

    let pid_instance = format!("python-{pid}");
    let (reference, calls) = shared::python_load(
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
        "tallrow, bigtable backend              {:>10} rows/s",
        thousands(tallrow as u64)
    );
    println!(
        "google-cloud-bigtable mutate_rows      {:>10} rows/s  ({} calls of up to 1,000 rows)",
        thousands(reference as u64),
        thousands(calls)
    );
    println!("tallrow / Python client {:.2}", tallrow / reference);

    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    let starts = shared::paging_starts(store.clone(), Arc::new(Generator::new(&w)), &w);
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor through the bigtable backend ({} users with 200+ actions; {samples} reads each)",
        starts.len()
    );
    let pages = shared::measure_pages(store, &w, &starts, samples);
    for (i, size) in [(1, 10), (2, 100)] {
        println!(
            "{size:>3} rows: p50 {:>9} p99 {:>9}",
            fmt_ns(pages[i].p50),
            fmt_ns(pages[i].p99)
        );
    }
}
