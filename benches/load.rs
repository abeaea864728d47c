//! The loader against the limit of the store under it: one workload generated without a store
//! (null), written raw from pre-built batches, and loaded through the loader, each into a fresh
//! embedded store with the same threads and batch size: once in batches, once through the
//! store's bulk load of empty tables. Best of `--repeat` runs each. First, the seed
//! descriptions against the hand-written codecs, rounds alternating: generation alone, then
//! generating and loading into `null:` and `embedded:` (all `--generation-only` runs).
//!
//! `cargo bench --bench load -- WORKLOAD [--users N] [--threads N] [--repeat N] [--generation-only]
//! [--one-path described|codecs]`

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tallrow::generate::{Generator, Scratch, Sink, Table};
use tallrow::load::{self, Options, Shard};
use tallrow::report::thousands;
use tallrow::schema;
use tallrow::store::{self, RowMutation, Store, embedded::Embedded, null::Null};
use tallrow::workload::Workload;

// The same allocator as the binary: the loader and runner allocate per cell and per
// operation, so the figures are the binary's only with it.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Batches {
    batch: usize,
    open: Vec<Vec<RowMutation>>,
    done: Vec<(Table, Vec<RowMutation>)>,
}

impl Sink for Batches {
    fn row(&mut self, t: Table, row: RowMutation) -> schema::Result<()> {
        let buf = &mut self.open[t.index()];
        buf.push(row);
        if buf.len() >= self.batch {
            self.done.push((t, std::mem::take(buf)));
        }
        Ok(())
    }
}

/// Rows and bytes generated, and nothing kept.
struct Count(u64, u64);

impl Sink for Count {
    fn row(&mut self, _: Table, row: RowMutation) -> schema::Result<()> {
        self.0 += 1;
        self.1 += row.size().1;
        Ok(())
    }
}

fn rate(rows: u64, d: Duration) -> f64 {
    rows as f64 / d.as_secs_f64()
}

fn main() {
    // `cargo test --all-targets` runs benches without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut path = None;
    let (mut users, mut threads, mut repeat, mut generation_only) = (None, None, 2usize, false);
    let mut one_path: Option<String> = None;
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .expect("a number after the flag")
        };
        match a.as_str() {
            "--users" => users = Some(value()),
            "--threads" => threads = Some(value() as usize),
            "--repeat" => repeat = value() as usize,
            "--generation-only" => generation_only = true,
            "--one-path" => one_path = args.next(),
            other => path = Some(PathBuf::from(other)),
        }
    }
    let path = path.unwrap_or_else(|| PathBuf::from("workloads/quickstart.toml"));
    let mut w = Workload::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    if let Some(n) = users {
        w.data.users = n;
    }
    let threads = threads.unwrap_or(if w.load.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        w.load.threads
    });
    let l = tallrow::workload::Load {
        threads,
        batch: w.load.batch,
        regions: 1,
    };
    let opts = Options {
        shard: Shard::ALL,
        progress: false,
        count_rows: false,
        checkpoint: load::CHECKPOINT,
        bulk: true,
        opened: std::time::Duration::ZERO,
    };
    let g = Generator::new(&w);

    // One path's generation alone, `repeat` times, for a profiler: `--one-path described`
    // or `--one-path codecs`.
    if let Some(path) = one_path {
        let described = path == "described";
        for _ in 0..repeat {
            let (mut count, mut scratch, started) = (Count(0, 0), Scratch::default(), Instant::now());
            for uid in 1..=w.data.users {
                if described {
                    g.emit_user_described(uid, &mut scratch, &mut count).unwrap();
                } else {
                    g.emit_user(uid, &mut scratch, &mut count).unwrap();
                }
            }
            println!("{path}: {:.3} s", started.elapsed().as_secs_f64());
            std::hint::black_box(&count);
        }
        return;
    }

    // Generation alone, through the seed descriptions against the hand-written codecs, on
    // one thread: the cost of generality. The order alternates per round; per-round ratios.
    let mut ratios = Vec::new();
    for round in 0..repeat.max(3) {
        let mut secs = [0f64; 2];
        for i in 0..2 {
            let described = (round + i) % 2 == 1;
            let mut count = Count(0, 0);
            let mut scratch = Scratch::default();
            let started = Instant::now();
            for uid in 1..=w.data.users {
                if described {
                    g.emit_user_described(uid, &mut scratch, &mut count).unwrap();
                } else {
                    g.emit_user(uid, &mut scratch, &mut count).unwrap();
                }
            }
            secs[usize::from(described)] = started.elapsed().as_secs_f64();
            std::hint::black_box(&count);
        }
        ratios.push(secs[1] / secs[0]);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "generation through the seed descriptions: {:.3}x the codecs' time (median of {}, {:.3} to {:.3})",
        ratios[ratios.len() / 2],
        ratios.len(),
        ratios[0],
        ratios[ratios.len() - 1]
    );

    // Generating and loading, the loader's whole work, through the descriptions against the
    // codecs: into `null:` (the loader alone) and a fresh `embedded:` store, on the
    // workload's threads, rounds alternating which goes first; per-round ratios of rows/s.
    let codecs = g.clone().through_codecs();
    for (what, embedded) in [("null:", false), ("embedded:", true)] {
        let mut ratios = Vec::new();
        for round in 0..repeat.max(3) {
            let mut rates = [0f64; 2];
            for i in 0..2 {
                let d = (round + i) % 2 == 1;
                let dir = tempfile::tempdir().unwrap();
                let store: Arc<dyn Store> = if embedded {
                    Arc::new(Embedded::open(dir.path()).unwrap())
                } else {
                    Arc::new(Null::new())
                };
                let out = load::load(store, if d { &g } else { &codecs }, &l, &opts).unwrap();
                rates[usize::from(d)] = rate(out.rows(), out.write_time);
            }
            ratios.push(rates[1] / rates[0]);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "generating and loading into {what:<10} through the descriptions: {:.3}x the codecs' rows/s (median of {}, {:.3} to {:.3})",
            ratios[ratios.len() / 2],
            ratios.len(),
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    if generation_only {
        return;
    }

    // Generation and batching without a store.
    let mut gen_best = 0f64;
    let mut rows = 0;
    for _ in 0..repeat {
        let out = load::load(Arc::new(Null::new()), &g, &l, &opts).unwrap();
        rows = out.rows();
        gen_best = gen_best.max(rate(rows, out.write_time));
    }

    // The same rows, pre-built into batches.
    let mut b = Batches {
        batch: l.batch,
        open: vec![Vec::new(); g.all_tables().len()],
        done: Vec::new(),
    };
    let mut scratch = Scratch::default();
    for block in 0..g.blocks() {
        g.emit_block(block, &mut scratch, &mut b).unwrap();
    }
    for (i, buf) in b.open.iter_mut().enumerate() {
        if !buf.is_empty() {
            b.done.push((g.all_tables()[i], std::mem::take(buf)));
        }
    }
    let batches = b.done;
    assert_eq!(batches.iter().map(|(_, r)| r.len() as u64).sum::<u64>(), rows);

    // Each path of the loader against the same store path fed the pre-built batches: in
    // batches through `mutate`, and staged into the store's bulk load of empty tables.
    let (mut raw, mut loaded) = ([0f64; 2], [0f64; 2]);
    let tables = g.tables();
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    for _ in 0..repeat {
        for (path, bulk) in [false, true].into_iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let store = Embedded::open(dir.path()).unwrap();
            for t in g.tables() {
                store::ensure_table(&store, &t).unwrap();
            }
            let next = AtomicUsize::new(0);
            let started = Instant::now();
            let staged = if bulk { store.bulk_load(&names).unwrap() } else { None };
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some((t, rows)) = batches.get(i) else { break };
                            match &staged {
                                Some(b) => b.add(t.name(), rows).unwrap(),
                                None => store.mutate(t.name(), rows).unwrap(),
                            }
                        }
                    });
                }
            });
            if let Some(b) = staged {
                b.finish().unwrap();
            }
            raw[path] = raw[path].max(rate(rows, started.elapsed()));
            // Gone before the load starts, so that the kernel is not writing its files back
            // while the load runs.
            drop(store);
            drop(dir);

            let dir = tempfile::tempdir().unwrap();
            let embedded: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).unwrap());
            let out = load::load(embedded, &g, &l, &Options { bulk, ..opts }).unwrap();
            assert_eq!(out.rows(), rows);
            assert_eq!(out.bulk.is_empty(), !bulk);
            loaded[path] = loaded[path].max(rate(rows, out.write_time));
        }
    }

    println!(
        "workload {} ({} users): {} rows, {} threads, batches of {}, best of {repeat}",
        w.name,
        thousands(w.data.users),
        thousands(rows),
        threads,
        l.batch
    );
    println!(
        "generation only (null store)    {:>12} rows/s",
        thousands(gen_best as u64)
    );
    for (path, what) in ["batches", "bulk load"].iter().enumerate() {
        println!("{what}:");
        println!(
            "  raw store writes (pre-built)  {:>12} rows/s",
            thousands(raw[path] as u64)
        );
        println!(
            "  load (embedded)               {:>12} rows/s",
            thousands(loaded[path] as u64)
        );
        println!("  load / raw                    {:>12.2}", loaded[path] / raw[path]);
    }
    println!("bulk load / batches, load       {:>12.2}", loaded[1] / loaded[0]);
}
