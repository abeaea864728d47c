//! `tallrow serve` under load, all through the real binary and one `serve` process per part:
//!
//! 1. Loads of the same rows: `tallrow load` into the embedded store directly (the
//!    reference), `tallrow load` through the `hbase` backend into `serve`, and a happybase
//!    batch loader (`scripts/happybase_load.py`) into the same `serve`, fed the rows the
//!    generator emits, dumped to a file first.
//! 2. Action pages of 10 and 100 rows by cursor, read from one data directory directly and
//!    then through `serve`.
//!
//! `cargo bench --bench thrift -- WORKLOAD --python PATH [--samples N]`

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;
use tallrow::generate::{Generator, Scratch, Sink, Table};
use tallrow::report::{fmt_ns, thousands};
use tallrow::run::{Ctx, ops};
use tallrow::schema::{self, actions::Actions};
use tallrow::stats::{self, Summary};
use tallrow::store::{Backend, Mutation, RowMutation, Store, embedded::Embedded};
use tallrow::workload::Workload;

// The same allocator as the binary, for the in-process reads.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BIN: &str = env!("CARGO_BIN_EXE_tallrow");

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

/// Rows and rows/s from `tallrow load`'s summary line.
fn load(workload: &Path, backend: &str, reports: &Path) -> (u64, f64) {
    let out = Command::new(BIN)
        .arg("load")
        .arg(workload)
        .args(["--backend", backend, "--reports"])
        .arg(reports)
        .output()
        .expect("run tallrow load");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tallrow load {backend} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = text
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("no total line in {text}"));
    let fields: Vec<&str> = total.split_whitespace().collect();
    let number = |s: &str| s.replace(',', "").parse::<f64>().unwrap();
    (number(fields[1]) as u64, number(fields[4]))
}

/// Writes every generated row as the happybase loader reads it (little-endian):
/// tables: `u32 n`, then per table `u16 len, name, u16 families`, per family `u16 len, name,
/// u32 versions`; then per row `u8 table, u32 len, key, u32 cells`, per cell `u16 len,
/// family, u32 len, qualifier, i64 timestamp (i64::MIN for none), u32 len, value`.
struct Dump<W: Write> {
    out: W,
    rows: u64,
}

fn put_bytes<W: Write>(w: &mut W, len_width: usize, b: &[u8]) -> std::io::Result<()> {
    match len_width {
        2 => w.write_all(&(b.len() as u16).to_le_bytes())?,
        _ => w.write_all(&(b.len() as u32).to_le_bytes())?,
    }
    w.write_all(b)
}

impl<W: Write> Sink for Dump<W> {
    fn row(&mut self, table: Table, row: RowMutation) -> schema::Result<()> {
        let w = &mut self.out;
        let mut write = || -> std::io::Result<()> {
            w.write_all(&[table.index() as u8])?;
            put_bytes(w, 4, &row.row)?;
            w.write_all(&(row.mutations.len() as u32).to_le_bytes())?;
            for m in &row.mutations {
                let Mutation::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } = m
                else {
                    panic!("the generator only puts");
                };
                put_bytes(w, 2, family.as_bytes())?;
                put_bytes(w, 4, qualifier)?;
                w.write_all(&timestamp.unwrap_or(i64::MIN).to_le_bytes())?;
                put_bytes(w, 4, value)?;
            }
            Ok(())
        };
        write().expect("write the dump");
        self.rows += 1;
        Ok(())
    }
}

fn dump(g: &Generator, path: &Path) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let tables = g.tables();
    out.write_all(&(Table::ALL.len() as u32).to_le_bytes()).unwrap();
    for t in Table::ALL {
        let desc = tables.iter().find(|d| d.name == t.name());
        put_bytes(&mut out, 2, t.name().as_bytes()).unwrap();
        let families = desc.map_or(&[][..], |d| d.families.as_slice());
        out.write_all(&(families.len() as u16).to_le_bytes()).unwrap();
        for f in families {
            put_bytes(&mut out, 2, f.name.as_bytes()).unwrap();
            out.write_all(&f.max_versions.to_le_bytes()).unwrap();
        }
    }
    let mut d = Dump { out, rows: 0 };
    let mut scratch = Scratch::default();
    for block in 0..g.blocks() {
        g.emit_block(block, &mut scratch, &mut d).unwrap();
    }
    d.out.flush().unwrap();
    d.rows
}

fn loads(workload: &Path, python: &Path, tmp: &Path) {
    let w = Workload::from_file(workload).unwrap_or_else(|e| panic!("{e}"));
    let reports = tmp.join("reports");
    println!("== loads of {} through tallrow serve", workload.display());
    let (rows, embedded) = load(
        workload,
        &format!("embedded:{}", tmp.join("direct").display()),
        &reports,
    );
    let served = Served::start(&tmp.join("served"));
    let (hrows, hbase) = load(workload, &served.url(), &reports);
    assert_eq!(rows, hrows);

    let rows_file = tmp.join("rows.bin");
    let dumped = dump(&Generator::new(&w), &rows_file);
    assert_eq!(dumped, rows, "the dump holds the loaded rows");
    let out = Command::new(python)
        .arg("scripts/happybase_load.py")
        .args(["--port", &served.port.to_string(), "--prefix", "hb", "--dump"])
        .arg(&rows_file)
        .output()
        .expect("run the happybase loader");
    assert!(
        out.status.success(),
        "happybase loader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "rows N cells N calls N seconds S"
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> f64 {
        let mut it = text.split_whitespace();
        it.position(|t| t == name).expect("field");
        it.next().unwrap().parse().unwrap()
    };
    assert_eq!(field("rows") as u64, rows);
    let happy = field("rows") / field("seconds");

    println!(
        "{} rows; tallrow load, 2 threads, batches of {}",
        thousands(rows),
        w.load.batch
    );
    println!(
        "embedded store, direct             {:>10} rows/s",
        thousands(embedded as u64)
    );
    println!(
        "hbase backend into serve           {:>10} rows/s",
        thousands(hbase as u64)
    );
    println!(
        "happybase batch loader into serve  {:>10} rows/s  ({} calls)",
        thousands(happy as u64),
        thousands(field("calls") as u64)
    );
    println!(
        "hbase / happybase {:.1} (target >= 10); hbase / embedded {:.2} (target >= 0.7)",
        hbase / happy,
        hbase / embedded
    );
}

fn paging(samples: usize, tmp: &Path) {
    let path = Path::new("benches/paging.toml");
    let w = Workload::from_file(path).unwrap();
    let data = tmp.join("paging");
    let (rows, _) = load(path, &format!("embedded:{}", data.display()), &tmp.join("reports"));
    let g = Arc::new(Generator::new(&w));

    // Users with at least 200 actions, each read from a cursor a quarter of the way in.
    let embedded: Arc<dyn Store> = Arc::new(Embedded::open(&data).unwrap());
    let ctx = Ctx::new(embedded.clone(), g.clone()).unwrap();
    let mut scratch = ops::Scratch::new(0);
    let starts: Vec<(i32, Vec<u8>)> = (1..=w.data.users)
        .filter_map(|u| {
            let keys = ctx.action_keys(u, &mut scratch);
            (keys.len() >= 200).then(|| (u as i32, keys[keys.len() / 4].clone()))
        })
        .collect();
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor ({} users with 200+ actions, {} rows; {samples} reads each)",
        starts.len(),
        thousands(rows)
    );
    let measure = |store: Arc<dyn Store>| -> Vec<Summary> {
        // The reference: one call that does no work, a round trip (getClusterId via serve).
        let mut trip = stats::histogram();
        for _ in 0..samples {
            let t = Instant::now();
            std::hint::black_box(store.version());
            stats::record(&mut trip, t.elapsed().as_nanos() as u64);
        }
        let dao = Actions::new(store, w.keys.actions);
        let sizes = [10usize, 100];
        let mut hist: Vec<_> = sizes.iter().map(|_| stats::histogram()).collect();
        // A first pass warms caches and connections.
        for pass in 0..2 {
            for i in 0..samples {
                let (uid, cursor) = &starts[i % starts.len()];
                for (h, &size) in hist.iter_mut().zip(&sizes) {
                    let t = Instant::now();
                    let n = dao.page_after(*uid, Some(cursor), size).unwrap().items.len();
                    let ns = t.elapsed().as_nanos() as u64;
                    assert_eq!(n, size);
                    if pass == 1 {
                        stats::record(h, ns);
                    }
                }
            }
        }
        std::iter::once(&trip).chain(&hist).map(Summary::of).collect()
    };
    let direct = measure(embedded);
    drop(ctx);
    let served = Served::start(&data);
    let thrift = measure(Backend::parse(&served.url(), Path::new(".")).unwrap().open().unwrap());
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
    // `cargo test --all-targets` runs benches without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut workload, mut python, mut samples) = (None, None, 3000usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--python" => python = args.next().map(PathBuf::from),
            "--samples" => samples = args.next().and_then(|v| v.parse().ok()).expect("a number"),
            other => workload = Some(PathBuf::from(other)),
        }
    }
    let workload = workload.unwrap_or_else(|| PathBuf::from("workloads/quickstart.toml"));
    let python = python.expect("--python PATH: a Python with happybase installed");
    let tmp = tempfile::tempdir().unwrap();
    loads(&workload, &python, tmp.path());
    paging(samples, tmp.path());
}
