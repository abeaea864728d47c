//! HFiles written as HBase writes them for a family, per codec: each codec with FAST_DIFF,
//! the same generated rows, against the same tables once HBase's own major compaction has
//! rewritten them (on the HBase `scripts/hbase.sh` runs; `scripts/bench.sh hfile` starts it
//! when none runs). For each codec:
//!
//! - each table's size on disk after `tallrow load --backend hfile:DIR` and `tallrow
//!   bulkload`, against a copy of it (a clone of its snapshot: the same descriptor and
//!   regions) once `scripts/hbase.sh compact` has major-compacted the copy (the store files
//!   each region holds, summed from HBase's root directory);
//! - gets of one row and pages of 10 actions by cursor (p50, through `api=native`) on the
//!   bulk-loaded tables against their compacted copies, in alternating passes so that the
//!   machine's drift falls on both alike;
//! - the HFile write's rate and peak RSS, against the write of uncompressed, unencoded files
//!   of the same rows in the same round.
//!
//! Every round runs all of it; the figures are medians over the rounds with their range.
//! This drops the workload's tables wherever they are: run it against a scratch HBase.
//!
//! `cargo bench --bench hfile_codecs -- WORKLOAD [--regions N] [--rounds N] [--samples N]`

mod shared;

use shared::BIN;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::SystemTime;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::stats::{self, Summary};
use tallrow::store::{self, Get, Row, RowMutation, Scan, Store, TableDescriptor, backend::Backend};
use tallrow::workload::Workload;

const CODECS: [&str; 5] = ["NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"];

/// What a table's compacted copy is named after.
const COPY: &str = "_compacted";

/// The store with each table's compacted copy in the table's place, for the same reads.
struct Copies(Arc<dyn Store>);

impl Store for Copies {
    fn identity(&self) -> String {
        self.0.identity()
    }
    fn create_table(&self, _: &TableDescriptor) -> store::Result<()> {
        unreachable!("the reads create nothing")
    }
    fn delete_table(&self, _: &str) -> store::Result<()> {
        unreachable!("the reads drop nothing")
    }
    fn list_tables(&self) -> store::Result<Vec<TableDescriptor>> {
        unreachable!("the reads list nothing")
    }
    fn describe_table(&self, table: &str) -> store::Result<TableDescriptor> {
        self.0.describe_table(&format!("{table}{COPY}"))
    }
    fn mutate(&self, _: &str, _: &[RowMutation]) -> store::Result<()> {
        unreachable!("the reads write nothing")
    }
    fn get(&self, table: &str, gets: &[Get]) -> store::Result<Vec<Option<Row>>> {
        self.0.get(&format!("{table}{COPY}"), gets)
    }
    fn scan(&self, table: &str, scan: &Scan) -> store::Result<Vec<Row>> {
        self.0.scan(&format!("{table}{COPY}"), scan)
    }
}

/// p50 of 1-row gets and of 10-row pages on the bulk-loaded tables and on their compacted
/// copies: a warming pass of each, then four recorded passes of each, the order swapped
/// every pass.
fn side_by_side(
    loaded: &Arc<dyn Store>,
    compacted: &Arc<dyn Store>,
    w: &Workload,
    starts: &[(i32, Vec<u8>)],
    samples: usize,
) -> ((u64, u64), (u64, u64)) {
    let mut h: [[stats::Histogram; 2]; 2] = std::array::from_fn(|_| std::array::from_fn(|_| stats::histogram()));
    let sides = [loaded, compacted];
    for pass in 0..5 {
        for turn in 0..2 {
            let side = (pass + turn) % 2;
            let [get, page] = &mut h[side];
            shared::gets_pass(&**sides[side], starts, samples, (pass > 0).then_some(get));
            shared::pages_pass(sides[side], w, starts, samples, (pass > 0).then_some(page));
        }
    }
    let p50 = |h: &stats::Histogram| Summary::of(h).p50;
    ((p50(&h[0][0]), p50(&h[1][0])), (p50(&h[0][1]), p50(&h[1][1])))
}

/// One HFile write: rows, rows/s (the load's "total" line) and peak RSS in MiB.
fn write(a: &shared::RoundsArgs, dir: &Path, reports: &Path, codec: &str, encoding: &str) -> (u64, f64, f64) {
    let rss = dir.with_extension("rss");
    let out = Command::new("/usr/bin/time")
        .arg("-o")
        .arg(&rss)
        .args(["-f", "%M", BIN, "load"])
        .arg(&a.workload)
        .arg("--backend")
        .arg(format!("hfile:{}", dir.display()))
        .args(["--regions", &a.regions.to_string(), "--reports"])
        .arg(reports)
        .args(["--set", &format!("storage.compression={codec}")])
        .args(["--set", &format!("storage.data_block_encoding={encoding}")])
        .output()
        .expect("run tallrow load");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "hfile write {codec}+{encoding}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = text.lines().find(|l| l.starts_with("total")).expect("a total line");
    let field = |i: usize| -> f64 {
        total
            .split_whitespace()
            .nth(i)
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    let (rows, rate) = (field(1) as u64, field(5));
    let kib: f64 = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok())
        .unwrap_or(0.0);
    (rows, rate, kib / 1024.0)
}

/// The store files each region of `table` holds in HBase's root directory: (bytes, mtime)
/// of every HFile under data/NS/TABLE/REGION/FAMILY (Hadoop's hidden .crc files left out).
fn store_files(root: &Path, table: &str) -> Vec<(u64, SystemTime)> {
    let (ns, name) = table.split_once(':').unwrap_or(("default", table));
    let mut files = Vec::new();
    let dir = root.join("data").join(ns).join(name);
    for region in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let region = region.unwrap().path();
        if !region.is_dir() || region.file_name().unwrap().to_string_lossy().starts_with('.') {
            continue;
        }
        for family in std::fs::read_dir(&region).unwrap() {
            let family = family.unwrap().path();
            let fname = family.file_name().unwrap().to_string_lossy().into_owned();
            if !family.is_dir() || fname.starts_with('.') || fname == "recovered.edits" {
                continue;
            }
            for f in std::fs::read_dir(&family).unwrap() {
                let f = f.unwrap();
                if f.file_name().to_string_lossy().starts_with('.') || !f.file_type().unwrap().is_file() {
                    continue;
                }
                let m = f.metadata().unwrap();
                files.push((m.len(), m.modified().unwrap()));
            }
        }
    }
    files
}

/// Bytes of `table`'s store files written at or after `since` (the files a compaction
/// requested then wrote; the ones it replaced wait for HBase's discharger).
fn bytes_since(root: &Path, table: &str, since: SystemTime) -> (u64, usize) {
    let files: Vec<_> = store_files(root, table)
        .into_iter()
        .filter(|(_, t)| *t >= since)
        .collect();
    (files.iter().map(|(b, _)| b).sum(), files.len())
}

/// One codec's figures in one round.
#[derive(Debug, Default, Clone)]
struct Codec {
    write_rate: f64,
    rss_mib: f64,
    /// Per table: bytes bulk-loaded, bytes after the major compaction.
    sizes: BTreeMap<String, (u64, u64)>,
    get: (u64, u64),
    page: (u64, u64),
}

impl Codec {
    fn total(&self) -> (u64, u64) {
        self.sizes.values().fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
    }
}

/// One round: the uncompressed, unencoded write's rate, then each codec.
#[derive(Debug, Default, Clone)]
struct Round {
    plain_rate: f64,
    plain_rss_mib: f64,
    codecs: Vec<Codec>,
}

fn main() {
    let Some(a) = shared::RoundsArgs::parse() else { return };
    let native = std::env::var("TALLROW_HBASE_NATIVE")
        .expect("TALLROW_HBASE_NATIVE: scripts/bench.sh hfile starts HBase and sets it");
    let root = PathBuf::from(std::env::var("TALLROW_HBASE_DIR").expect("TALLROW_HBASE_DIR")).join("hbase");
    let w = Workload::from_file(&a.workload).unwrap_or_else(|e| panic!("{e}"));
    let g = Arc::new(Generator::new(&w));
    let store = Backend::parse(&native, Path::new(".")).unwrap().open().unwrap();
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let copies: Vec<String> = tables.iter().map(|t| format!("{t}{COPY}")).collect();
    let compacted: Arc<dyn Store> = Arc::new(Copies(store.clone()));
    println!(
        "== {} ({} users) as HFiles per codec with FAST_DIFF, into HBase {} (loopback, 2 region servers), {} regions a table, {} rounds",
        a.workload.display(),
        thousands(w.data.users),
        std::env::var("TALLROW_HBASE_VERSION").unwrap_or_default(),
        a.regions,
        a.rounds
    );
    let mut rounds = Vec::new();
    let mut starts = Vec::new();
    let mut rows = 0;
    for round in 1..=a.rounds {
        let tmp = tempfile::tempdir().unwrap();
        let reports = tmp.path().join("reports");
        let mut r = Round::default();
        let plain = tmp.path().join("plain");
        (rows, r.plain_rate, r.plain_rss_mib) = write(&a, &plain, &reports, "NONE", "NONE");
        std::fs::remove_dir_all(&plain).unwrap();
        println!(
            "round {round}: NONE+NONE write {} rows/s, peak {:.0} MiB",
            thousands(r.plain_rate as u64),
            r.plain_rss_mib
        );
        for codec in CODECS {
            let mut c = Codec::default();
            let dir = tmp.path().join(codec);
            let n;
            (n, c.write_rate, c.rss_mib) = write(&a, &dir, &reports, codec, "FAST_DIFF");
            assert_eq!(n, rows, "{codec}: the same rows");
            shared::drop_tables(&*store, &tables);
            shared::drop_tables(&*store, &copies);
            let mut bulk = Command::new(BIN);
            bulk.arg("bulkload").arg(&dir).args([
                "--backend",
                &native,
                "--hbase-cmd",
                "scripts/hbase.sh completebulkload",
            ]);
            // The first round counts every table's rows against its files'.
            if round > 1 {
                bulk.arg("--no-count");
            }
            let out = bulk.output().expect("run tallrow bulkload");
            assert!(
                out.status.success(),
                "bulkload {codec}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::remove_dir_all(&dir).unwrap();
            let mut clone = Command::new("scripts/hbase.sh");
            clone.args(["java", "dev.tallrow.bench.Native", "clone"]);
            for (t, copy) in tables.iter().zip(&copies) {
                clone.args([t, copy]);
            }
            assert!(clone.status().unwrap().success(), "clone the tables");
            let requested = SystemTime::now();
            let status = Command::new("scripts/hbase.sh")
                .arg("compact")
                .args(&copies)
                .status()
                .unwrap();
            assert!(status.success(), "major compaction");
            for (t, copy) in tables.iter().zip(&copies) {
                let loaded: u64 = store_files(&root, t).iter().map(|(b, _)| b).sum();
                let (bytes, files) = bytes_since(&root, copy, requested);
                assert!(
                    files > 0 || loaded == 0,
                    "{copy}: no store file written by the compaction"
                );
                c.sizes.insert(t.clone(), (loaded, bytes));
            }
            if starts.is_empty() {
                // Users with a page of actions after the cursor (a quarter into theirs).
                starts = shared::paging_starts_of(store.clone(), g.clone(), &w, 16, 1000);
                assert!(starts.len() > 100, "{} users with 16 actions", starts.len());
            }
            (c.get, c.page) = side_by_side(&store, &compacted, &w, &starts, a.samples);
            let (l, m) = c.total();
            println!(
                "round {round}: {codec}+FAST_DIFF write {} rows/s (peak {:.0} MiB) | {:.1} MiB bulk-loaded, {:.1} MiB compacted ({:.3}) | get p50 {} against {}, page p50 {} against {}",
                thousands(c.write_rate as u64),
                c.rss_mib,
                l as f64 / (1 << 20) as f64,
                m as f64 / (1 << 20) as f64,
                l as f64 / m as f64,
                fmt_ns(c.get.0),
                fmt_ns(c.get.1),
                fmt_ns(c.page.0),
                fmt_ns(c.page.1)
            );
            r.codecs.push(c);
        }
        shared::drop_tables(&*store, &tables);
        shared::drop_tables(&*store, &copies);
        rounds.push(r);
    }
    report(&rounds, rows);
}

fn report(rounds: &[Round], rows: u64) {
    println!(
        "== {} rows; medians of {} rounds [range]",
        thousands(rows),
        rounds.len()
    );
    let at = |i: usize| move |r: &Round| r.codecs[i].clone();
    println!(
        "{:<8} {:>11} {:>24} {:>24} {:>22} {:>22} {:>22} {:>12}",
        "codec",
        "MiB loaded",
        "loaded / compacted",
        "worst table",
        "get p50 ratio",
        "page p50 ratio",
        "write / NONE+NONE",
        "peak MiB"
    );
    for (i, codec) in CODECS.iter().enumerate() {
        let c = at(i);
        let mib = shared::spread(rounds, |r| c(r).total().0 as f64 / (1 << 20) as f64);
        let size = shared::spread(rounds, |r| {
            let (l, m) = c(r).total();
            l as f64 / m as f64
        });
        // The table furthest from 1 (tables under 1 MiB left out: a file's fixed parts
        // dominate there).
        let worst = shared::spread(rounds, |r| {
            c(r).sizes
                .values()
                .filter(|(_, m)| *m >= 1 << 20)
                .map(|(l, m)| *l as f64 / *m as f64)
                .max_by(|x, y| (x - 1.0).abs().total_cmp(&(y - 1.0).abs()))
                .unwrap_or(1.0)
        });
        let get = shared::spread(rounds, |r| c(r).get.0 as f64 / c(r).get.1 as f64);
        let page = shared::spread(rounds, |r| c(r).page.0 as f64 / c(r).page.1 as f64);
        let rate = shared::spread(rounds, |r| c(r).write_rate / r.plain_rate);
        let rss = shared::spread(rounds, |r| c(r).rss_mib);
        let f = |(m, lo, hi): (f64, f64, f64), p: usize| format!("{m:.p$} [{lo:.p$}..{hi:.p$}]");
        println!(
            "{codec:<8} {:>11.1} {:>24} {:>24} {:>22} {:>22} {:>22} {:>12}",
            mib.0,
            f(size, 3),
            f(worst, 3),
            f(get, 2),
            f(page, 2),
            f(rate, 2),
            f(rss, 0)
        );
    }
    // Each table: MiB bulk-loaded (NONE) and bulk-loaded / compacted per codec.
    println!("per table, bulk-loaded / compacted (median):");
    print!("{:<24} {:>10}", "table", "MiB (NONE)");
    for codec in CODECS {
        print!(" {codec:>7}");
    }
    println!();
    for t in rounds[0].codecs[0].sizes.keys() {
        print!(
            "{t:<24} {:>10.2}",
            rounds[0].codecs[0].sizes[t].0 as f64 / (1 << 20) as f64
        );
        for i in 0..CODECS.len() {
            let (m, _, _) = shared::spread(rounds, |r| {
                let (l, c) = r.codecs[i].sizes[t];
                if c == 0 { f64::NAN } else { l as f64 / c as f64 }
            });
            if m.is_nan() {
                print!(" {:>7}", "-");
            } else {
                print!(" {m:>7.3}");
            }
        }
        println!();
    }
    let plain = shared::spread(rounds, |r| r.plain_rate);
    let plain_rss = shared::spread(rounds, |r| r.plain_rss_mib);
    println!(
        "NONE+NONE write {} rows/s [{} .. {}], peak {:.0} MiB [{:.0} .. {:.0}]",
        thousands(plain.0 as u64),
        thousands(plain.1 as u64),
        thousands(plain.2 as u64),
        plain_rss.0,
        plain_rss.1,
        plain_rss.2
    );
    let ns = |v: f64| fmt_ns(v as u64);
    for (i, codec) in CODECS.iter().enumerate() {
        let c = at(i);
        println!(
            "{codec}: get p50 {} loaded, {} compacted; page p50 {} loaded, {} compacted",
            ns(shared::spread(rounds, |r| c(r).get.0 as f64).0),
            ns(shared::spread(rounds, |r| c(r).get.1 as f64).0),
            ns(shared::spread(rounds, |r| c(r).page.0 as f64).0),
            ns(shared::spread(rounds, |r| c(r).page.1 as f64).0)
        );
    }
}
