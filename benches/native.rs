//! `api=native` against HBase's own Java client, on the HBase `scripts/hbase.sh` runs (two
//! region servers on loopback; `scripts/bench.sh native` starts it when none runs). Through
//! the real binary, the same generated rows, each into empty tables, each round in an order
//! rotated by three loaders from the round before:
//!
//! 1. HBase's Java client at its best, the reference (tests/hbase/src/.../bench/Native.java,
//!    `serve`): one JVM that holds the rows in memory before any clock starts and stays warm
//!    from one untimed load before the first round; 1, 2 and 4 writer threads, each with a
//!    `BufferedMutator` per table, with 2 MB (HBase's default) and 8 MB write buffers: six
//!    loads a round, the round's fastest its reference; checked with `tallrow verify` once a
//!    round;
//! 2. HBase's `PerformanceEvaluation --nomapred sequentialWrite 1`, as many rows of one cell,
//!    each as large as the mean row's values;
//! 3. `tallrow load` through `api=native`, verified;
//! 4. `tallrow load` through the Thrift2 gateway, verified.
//!
//! Rates are per round, as ratios to that round's best Java configuration; the figures are
//! the medians of the rounds with their ranges. Client CPU per row: tallrow's whole process
//! (generating the rows included) against the best Java configuration's CPU while writing.
//! Then, over the rows the Java loader left: gets and pages of 10 and 100
//! actions by cursor through `api=native` and through the Java client in the loader's warm
//! JVM, in three rounds alternating which reads first, and home timelines through
//! `api=native` with their round trips.
//!
//! This drops the workload's tables: run it against a scratch HBase.
//!
//! `cargo bench --bench native -- [WORKLOAD] [--samples N] [--rounds N]` (`--rounds 0`: the reads
//! alone, over one untimed Java load)

mod shared;

use std::path::Path;
use std::sync::Arc;
use tallrow::generate::Generator;
use tallrow::report::{fmt_ns, thousands};
use tallrow::run::ops::PAGE;
use tallrow::schema::microblog::Microblog;
use tallrow::store::backend::Backend;
use tallrow::workload::Workload;

// The same allocator as the binary: the reads through `api=native` are timed in this
// process, and allocate per cell.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Default)]
struct Round {
    /// Per configuration of [`shared::JAVA_CONFIGS`]: rows/s and CPU seconds writing.
    java: Vec<(f64, f64)>,
    pe: f64,
    native: f64,
    native_cpu: f64,
    thrift2: f64,
}
impl Round {
    /// The best Java configuration's index: the round's reference.
    fn best(&self) -> usize {
        (0..self.java.len())
            .max_by(|&a, &b| self.java[a].0.total_cmp(&self.java[b].0))
            .unwrap()
    }
    fn reference(&self) -> f64 {
        self.java[self.best()].0
    }
}

fn main() {
    // `cargo test --all-targets` runs benches without --bench: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut workload, mut samples, mut rounds) = ("benches/paging.toml".to_string(), 2000usize, 3usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--samples" => samples = args.next().and_then(|n| n.parse().ok()).expect("--samples N"),
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).expect("--rounds N"),
            _ => workload = a,
        }
    }
    let workload = Path::new(&workload).to_path_buf();
    let native_url = std::env::var("TALLROW_HBASE_NATIVE")
        .expect("TALLROW_HBASE_NATIVE: scripts/bench.sh native starts HBase and sets it");
    let thrift2_url = format!(
        "hbase://{}?api=thrift2",
        std::env::var("TALLROW_HBASE_THRIFT2").expect("TALLROW_HBASE_THRIFT2")
    );
    let w = Workload::from_file(&workload).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let store = Backend::parse(&native_url, Path::new(".")).unwrap().open().unwrap();
    let g = Arc::new(Generator::new(&w));
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let drop_tables = || shared::drop_tables(&*store, &tables);
    let verify = |what: &str| shared::verify(&workload, &native_url, what);
    let size = shared::RowSize::of(&g);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "== loads of {} into HBase {} (two region servers, loopback), into empty tables, {rounds} rounds",
        workload.display(),
        std::env::var("TALLROW_HBASE_VERSION").unwrap_or_default()
    );
    println!(
        "{} rows, {} cells, {} bytes of values; {cores} cores; tallrow load: {} threads, batches of {}",
        thousands(size.rows),
        thousands(size.cells),
        thousands(size.value_bytes),
        w.load.workers(),
        w.load.batch
    );
    let dump = shared::dump_rows(&w, tmp.path(), size.rows);
    let pe_rows = size.rows.max(1);
    let value_size = (size.value_bytes / pe_rows).max(1);
    let pe_table = format!("tallrow_pe_{}", std::process::id());
    // The reference at its best: the rows in memory before any clock starts, one JVM that
    // stays warm, every configuration tried each round, and one untimed load first.
    let mut java = shared::JavaLoader::start(&dump, size.rows);
    drop_tables();
    java.load(2, 8);
    drop_tables();

    #[derive(Clone, Copy, PartialEq)]
    enum Loader {
        Java(u32, u32),
        Pe,
        Native,
        Thrift2,
    }
    let loaders: Vec<Loader> = shared::JAVA_CONFIGS
        .iter()
        .map(|&(t, b)| Loader::Java(t, b))
        .chain([Loader::Pe, Loader::Native, Loader::Thrift2])
        .collect();
    let mut done: Vec<Round> = Vec::new();
    for round in 1..=rounds {
        let mut r = Round {
            java: vec![(0.0, 0.0); shared::JAVA_CONFIGS.len()],
            ..Round::default()
        };
        // Each round starts with another loader.
        let mut order = loaders.clone();
        order.rotate_left((round - 1) * 3 % loaders.len());
        let mut java_verified = false;
        for l in order {
            match l {
                Loader::Java(threads, mb) => {
                    let i = shared::JAVA_CONFIGS.iter().position(|&c| c == (threads, mb)).unwrap();
                    r.java[i] = java.load(threads, mb);
                    if !java_verified {
                        verify("the Java loader");
                        java_verified = true;
                    }
                }
                Loader::Pe => {
                    r.pe = shared::performance_evaluation(pe_rows, value_size, &pe_table);
                    let _ = store.delete_table(&pe_table);
                }
                Loader::Native => {
                    let cpu = shared::ChildCpu::start();
                    let (rows, rate) = shared::load(&workload, &native_url, &reports);
                    r.native_cpu = cpu.seconds();
                    assert_eq!(rows, size.rows);
                    r.native = rate;
                    verify("tallrow load, api=native");
                }
                Loader::Thrift2 => {
                    let (_, rate) = shared::load(&workload, &thrift2_url, &reports);
                    r.thrift2 = rate;
                    verify("tallrow load, Thrift2");
                }
            }
            drop_tables();
        }
        let (bt, bm) = shared::JAVA_CONFIGS[r.best()];
        println!(
            "round {round}: Java best {} rows/s ({bt} threads, {bm} MB; {:.2} CPU-s writing), PE {} rows/s, native {} rows/s ({:.2} CPU-s), Thrift2 {} rows/s",
            thousands(r.reference() as u64),
            r.java[r.best()].1,
            thousands(r.pe as u64),
            thousands(r.native as u64),
            r.native_cpu,
            thousands(r.thrift2 as u64)
        );
        done.push(r);
    }
    // `--rounds 0`: the reads alone, over one untimed Java load.
    if !done.is_empty() {
        summarize(&done, size.rows);
    }

    // The pages read what a load left: the Java loader's, untimed.
    java.load(2, 8);
    pages(store.clone(), g.clone(), &w, samples, tmp.path(), &mut java);
    timelines(&native_url, &g, &w, samples);
    drop_tables();
}

/// The loads' medians and ranges, as ratios to each round's best Java configuration.
fn summarize(done: &[Round], rows: u64) {
    let rounds = done.len();
    let per_row_us = |cpu: f64| cpu / rows as f64 * 1e6;
    let line = |what: &str, rate: &dyn Fn(&Round) -> f64| {
        let rates = shared::Spread::of(done.iter().map(rate));
        let ratios = shared::Spread::of(done.iter().map(|r| rate(r) / r.reference()));
        println!(
            "{what:<44} {:>9} rows/s ({} to {})  {:.2}x ({:.2} to {:.2})",
            thousands(rates.median as u64),
            thousands(rates.min as u64),
            thousands(rates.max as u64),
            ratios.median,
            ratios.min,
            ratios.max
        );
    };
    println!(
        "== loads, medians of {rounds} rounds (ranges), as ratios to the best Java configuration of the same round"
    );
    line("Java client, best configuration (reference)", &|r| r.reference());
    for (i, (t, b)) in shared::JAVA_CONFIGS.iter().enumerate() {
        line(&format!("Java client, {t} threads, {b} MB buffers"), &|r| r.java[i].0);
    }
    line("PerformanceEvaluation sequentialWrite, 1", &|r| r.pe);
    line("tallrow load, api=native", &|r| r.native);
    line("tallrow load, Thrift2", &|r| r.thrift2);
    let cpu = |what: &str, f: &dyn Fn(&Round) -> f64| {
        let s = shared::Spread::of(done.iter().map(|r| per_row_us(f(r))));
        let ratio = shared::Spread::of(done.iter().map(|r| f(r) / r.java[r.best()].1));
        println!(
            "{what:<44} {:>6.2} µs/row ({:.2} to {:.2})  {:.2}x of the best Java configuration writing ({:.2} to {:.2})",
            s.median, s.min, s.max, ratio.median, ratio.min, ratio.max
        );
    };
    println!("== client CPU per row (user + system), medians of {rounds} rounds");
    cpu("Java loader, best configuration, writing", &|r| r.java[r.best()].1);
    cpu("tallrow load api=native, whole process", &|r| r.native_cpu);
}

/// Gets and pages of 10 and 100 actions by cursor through `api=native` and through the Java
/// client, from the same starts, in three rounds that alternate which side reads first (a
/// flush or compaction left from the load falls on either); each round's ratios, then their
/// medians and ranges.
fn pages(
    store: Arc<dyn tallrow::store::Store>,
    g: Arc<Generator>,
    w: &Workload,
    samples: usize,
    tmp: &Path,
    java: &mut shared::JavaLoader,
) {
    let starts = shared::paging_starts(store.clone(), g, w);
    assert!(starts.len() > 100, "{} users with 200 actions", starts.len());
    println!(
        "== action pages by cursor ({} users with 200+ actions; {samples} reads each, after as many to warm up; the Java client in the warm loader's JVM; 3 rounds, alternating which side reads first)",
        starts.len()
    );
    // Per round: (ours, theirs) for the get and the two pages.
    let mut rounds: Vec<[(tallrow::stats::Summary, tallrow::stats::Summary); 3]> = Vec::new();
    for round in 0..3 {
        let ours = |store: &Arc<dyn tallrow::store::Store>| {
            let get = shared::gets(&**store, &starts, samples);
            let pages = shared::measure_pages(store.clone(), w, &starts, samples);
            [get, pages[1], pages[2]]
        };
        let (ours, theirs) = if round % 2 == 0 {
            let o = ours(&store);
            (o, java.pages(w, &starts, samples, tmp))
        } else {
            let t = java.pages(w, &starts, samples, tmp);
            (ours(&store), t)
        };
        let both = [(ours[0], theirs[0]), (ours[1], theirs[1]), (ours[2], theirs[2])];
        for (what, (o, t)) in READS.iter().zip(&both) {
            println!(
                "round {}: {what}: api=native p50 {:>9} p99 {:>9} | Java client p50 {:>9} p99 {:>9} | ratios p50 {:.2} p99 {:.2}",
                round + 1,
                fmt_ns(o.p50),
                fmt_ns(o.p99),
                fmt_ns(t.p50),
                fmt_ns(t.p99),
                o.p50 as f64 / t.p50 as f64,
                o.p99 as f64 / t.p99 as f64
            );
        }
        rounds.push(both);
    }
    println!("== reads, medians of 3 rounds (ranges)");
    for (k, what) in READS.iter().enumerate() {
        let median = |f: &dyn Fn(&(tallrow::stats::Summary, tallrow::stats::Summary)) -> f64| {
            shared::Spread::of(rounds.iter().map(|r| f(&r[k])))
        };
        let (o50, o99) = (median(&|r| r.0.p50 as f64), median(&|r| r.0.p99 as f64));
        let (t50, t99) = (median(&|r| r.1.p50 as f64), median(&|r| r.1.p99 as f64));
        let r50 = median(&|r| r.0.p50 as f64 / r.1.p50 as f64);
        let r99 = median(&|r| r.0.p99 as f64 / r.1.p99 as f64);
        println!(
            "{what}: api=native p50 {:>9} p99 {:>9} | Java client p50 {:>9} p99 {:>9} | ratios p50 {:.2} ({:.2} to {:.2}) p99 {:.2} ({:.2} to {:.2})",
            fmt_ns(o50.median as u64),
            fmt_ns(o99.median as u64),
            fmt_ns(t50.median as u64),
            fmt_ns(t99.median as u64),
            r50.median,
            r50.min,
            r50.max,
            r99.median,
            r99.min,
            r99.max
        );
    }
}

/// The reads compared, in the order of [`pages`]' figures.
const READS: [&str; 3] = ["1-row get", " 10 rows", "100 rows"];

/// Home timelines (seed 001) of a page of posts through `api=native`, with the round trips
/// each costs, counted by the client.
fn timelines(url: &str, g: &Generator, w: &Workload, samples: usize) {
    let spec = tallrow::store::hbase::native::Spec::parse(url.strip_prefix("hbase://").unwrap()).unwrap();
    let native = Arc::new(tallrow::store::hbase::native::Native::open(&spec).unwrap());
    let cfg = g.microblog_config();
    let dao = Microblog::new(native.clone(), cfg);
    let celebrities = dao.load_celebrities().unwrap();
    let dao = dao.with_celebrities(celebrities);
    let users: Vec<u64> = (1..=w.data.users)
        .filter(|&u| dao.timeline(u, PAGE, None).unwrap().len() == PAGE)
        .take(500)
        .collect();
    assert!(users.len() > 50, "{} users with a full timeline", users.len());
    let (s, per_page) = shared::time_timelines(&dao, &users, samples, &|| native.round_trips());
    println!(
        "== home timelines of {PAGE} posts ({} users with as many; inbox VERSIONS = {}; {samples} reads)",
        users.len(),
        cfg.inbox_versions
    );
    println!(
        "home timeline: api=native p50 {:>9} p99 {:>9} | round trips per page {:.2}",
        fmt_ns(s.p50),
        fmt_ns(s.p99),
        per_page
    );
}
