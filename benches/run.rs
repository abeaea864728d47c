//! The runner's own cost, and what paging by cursor buys over paging by offset.
//!
//! 1. Runner overhead: the same sequence of operations on the `null:` store, once through
//!    `run::run` (one worker, closed loop) and once as a bare loop of the same prepare and
//!    execute calls; the difference per operation is what scheduling, timing, recording and
//!    interval hand-over cost.
//! 2. Cursor vs offset: action pages 1, 10 and 100 of users with over 1,000 actions on the
//!    embedded store, each page read by offset (the seed's scan-and-skip) and by cursor.
//! 3. With `--descriptions ROUNDS` alone: each seed operation through the seed's code and
//!    through its seed description's operation of the same name, on the same rows, the
//!    same draws, `null:` and `embedded:`, sides alternating first per round, each side's
//!    worker warmed by an untimed pass: the cost of a prepare and execute, and the
//!    description's over the code's.
//!
//! `cargo bench --bench run -- [--ops N] [--samples N] | --descriptions ROUNDS [--only OP]... [--backend null|embedded]`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tallrow::generate::Generator;
use tallrow::generate::rng::{Kind, Rng};
use tallrow::load::{self, Shard};
use tallrow::report::{fmt_ns, thousands};
use tallrow::run::{self, Ctx, Mix, ops::Scratch};
use tallrow::schema::actions::Actions;
use tallrow::stats::{self, Summary};
use tallrow::store::{Store, embedded::Embedded, null::Null};
use tallrow::workload::{Arrival, Run, Workload};

// The same allocator as the binary: the loader and runner allocate per cell and per
// operation, so the figures are the binary's only with it.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut ops, mut samples) = (2_000_000u64, 3_000usize);
    let mut descriptions = None;
    let mut only: Vec<String> = Vec::new();
    let mut backends = vec!["null", "embedded"];
    while let Some(a) = args.next() {
        if a == "--only" {
            only.push(args.next().expect("an operation's name after --only"));
            continue;
        }
        if a == "--backend" {
            let b = args.next().expect("null or embedded after --backend");
            backends.retain(|x| *x == b);
            assert!(!backends.is_empty(), "--backend: null or embedded, not {b}");
            continue;
        }
        let v: u64 = args
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a number after the flag");
        match a.as_str() {
            "--ops" => ops = v,
            "--samples" => samples = v as usize,
            "--descriptions" => descriptions = Some(v as usize),
            other => panic!("unknown argument {other}"),
        }
    }
    if let Some(rounds) = descriptions {
        described(rounds, &only, &backends);
        return;
    }
    overhead(ops);
    paging(samples);
}

fn load_into(w: &Workload, store: Arc<dyn Store>) -> Arc<Generator> {
    let g = Arc::new(Generator::new(w));
    let opts = load::Options {
        shard: Shard::ALL,
        progress: false,
        count_rows: false,
        checkpoint: load::CHECKPOINT,
        bulk: true,
        opened: std::time::Duration::ZERO,
    };
    let l = tallrow::workload::Load {
        threads: 2,
        batch: 1000,
        regions: 1,
    };
    let out = load::load(store, &g, &l, &opts).unwrap();
    assert!(out.error.is_none());
    g
}

fn overhead(ops: u64) {
    let w = Workload::from_file(Path::new("workloads/quickstart.toml")).unwrap_or_else(|e| panic!("{e}"));
    let store: Arc<dyn Store> = Arc::new(Null::new());
    let g = load_into(&w, store.clone());
    let r = Run {
        threads: 1,
        duration: Duration::ZERO,
        ops: Some(ops),
        rate: None,
        arrival: Arrival::Fixed,
        warmup: Duration::ZERO,
        ..w.run.clone()
    };
    let mut best_bare = f64::MAX;
    let mut best_runner = f64::MAX;
    for _ in 0..3 {
        // The bare loop: the worker's draws, prepare and execute, nothing else.
        let ctx = Ctx::new(store.clone(), g.clone(), &w.run).unwrap();
        let mix = Mix::new(&w.run.mix);
        let draws = Rng::new(w.seed).stream(Kind::Run, 0, 0);
        let mut scratch = Scratch::new(0);
        let started = Instant::now();
        let mut failed = 0u64;
        for i in 0..ops {
            let s = draws.child(i);
            let call = ctx.prepare(mix.ops()[mix.pick(s.unit(u64::MAX))], &s, &mut scratch);
            failed += u64::from(ctx.execute(&call).is_err());
        }
        best_bare = best_bare.min(started.elapsed().as_secs_f64() / ops as f64);
        assert_eq!(failed, 0);

        let started = Instant::now();
        let out = run::run(
            store.clone(),
            g.clone(),
            &r,
            Shard::ALL,
            Duration::from_secs(1),
            &mut |_, _, _| {},
        )
        .unwrap();
        best_runner = best_runner.min(started.elapsed().as_secs_f64() / ops as f64);
        assert_eq!(out.all().total(), ops);
    }
    println!(
        "== runner overhead on the null store (quickstart mix, {} operations, 1 worker, best of 3)",
        thousands(ops)
    );
    println!("bare prepare + execute loop      {:>9.0} ns/op", best_bare * 1e9);
    println!("through the runner               {:>9.0} ns/op", best_runner * 1e9);
    println!(
        "runner overhead                  {:>9.0} ns/op (target <= 200)",
        (best_runner - best_bare) * 1e9
    );
}

fn paging(samples: usize) {
    let w = Workload::from_file(Path::new("benches/paging.toml")).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).unwrap());
    let g = load_into(&w, store.clone());
    let ctx = Ctx::new(store.clone(), g.clone(), &w.run).unwrap();
    let dao = Actions::new(store, w.keys.actions);
    let mut scratch = Scratch::new(0);
    let page = run::ops::PAGE;
    let users: Vec<(u64, Arc<[Vec<u8>]>)> = (1..=w.data.users)
        .map(|u| (u, ctx.action_keys(u, &mut scratch).to_vec().into()))
        .filter(|(_, k): &(u64, Arc<[Vec<u8>]>)| k.len() >= 100 * page)
        .collect();
    assert!(users.len() > 100, "{} users with 100 pages", users.len());
    let rows: usize = users.iter().map(|(_, k)| k.len()).sum();
    println!(
        "== action pages of {page} on the embedded store ({} users with 100+ pages, {} rows; {samples} reads each)",
        users.len(),
        thousands(rows as u64)
    );
    // Depths interleaved, so background work of the store (flushes, compactions after the
    // load) falls on all of them alike; a first pass warms the cache. Cursor and offset reads
    // run in separate loops: right after a 1,000-row offset read frees its rows, the
    // allocator hands memory back to the OS, and the next read pays the page faults.
    let depths = [1usize, 10, 100];
    let mut hist: Vec<(stats::Histogram, stats::Histogram)> = depths
        .iter()
        .map(|_| (stats::histogram(), stats::histogram()))
        .collect();
    for pass in 0..2 {
        for by_cursor in [false, true] {
            for i in 0..samples {
                let (uid, keys) = &users[i % users.len()];
                for (d, &depth) in depths.iter().enumerate() {
                    let offset = (depth - 1) * page;
                    let t = Instant::now();
                    let n = if by_cursor {
                        let cursor = (depth > 1).then(|| keys[offset - 1].as_slice());
                        dao.page_after(*uid as i32, cursor, page).unwrap().items.len()
                    } else {
                        dao.page_by_offset(*uid as i32, offset, page).unwrap().len()
                    };
                    let ns = t.elapsed().as_nanos() as u64;
                    assert_eq!(n, page);
                    if pass == 1 {
                        let h = if by_cursor { &mut hist[d].1 } else { &mut hist[d].0 };
                        stats::record(h, ns);
                    }
                }
            }
        }
    }
    let mut p99 = Vec::new();
    for (d, depth) in depths.iter().enumerate() {
        let (o, c) = (Summary::of(&hist[d].0), Summary::of(&hist[d].1));
        println!(
            "page {depth:>3}: offset p50 {:>9} p99 {:>9} | cursor p50 {:>9} p99 {:>9}",
            fmt_ns(o.p50),
            fmt_ns(o.p99),
            fmt_ns(c.p50),
            fmt_ns(c.p99)
        );
        p99.push((o.p99, c.p99));
    }
    println!(
        "cursor page 100 / page 1 p99: {:.2} (target <= 2); offset page 100 / page 1 p99: {:.2}",
        p99[2].1 as f64 / p99[0].1 as f64,
        p99[2].0 as f64 / p99[0].0 as f64
    );
}

/// The seed designs' data sections, a description each, and its operations.
const DESIGNS: [(&str, &str); 4] = [
    (
        "actions",
        "[data.follows]\n[data.posts]\nper_month = 6.0\n[data.actions]\nper_user = 40.0\n",
    ),
    ("series", "[data.series]\nper_user = 100.0\n"),
    ("blog", "[data.articles]\nper_user = 2.0\ncategories = 16\n"),
    (
        "microblog",
        "[data.follows]\nmax_followees = 1000\nmax_followers = 0.2\n[data.posts]\nper_month = 4.0\n\
         [microblog]\ninbox_versions = 3\ncelebrity_threshold = 300\n",
    ),
];

/// Each seed operation (or those `only` names) through the seed's code and through its
/// description, per op.
fn described(rounds: usize, only: &[String], backends: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::env::current_dir().unwrap();
    let mut all: Vec<(String, &str, Vec<f64>, Vec<f64>)> = Vec::new();
    for &backend in backends {
        let n: u64 = if backend == "null" { 20_000 } else { 3_000 };
        println!(
            "== the seed operations through their descriptions, {backend}: ({n} operations each, {rounds} rounds)"
        );
        println!("operation         code ns/op   description ns/op   description / code [range]");
        for (file, data) in DESIGNS {
            let text = format!(
                "name = \"{file}\"\nseed = 20260101\n[data]\nusers = 2000\nstart = 2026-01-01T00:00:00Z\nspan_days = 90\n{data}"
            );
            let seed_path = dir.path().join(format!("{file}-seed.toml"));
            std::fs::write(&seed_path, &text).unwrap();
            let own_path = dir.path().join(format!("{file}-own.toml"));
            let design = root.join(format!("workloads/designs/{file}.toml"));
            std::fs::write(&own_path, format!("design = {design:?}\n{text}")).unwrap();
            let open = |name: &str| -> Arc<dyn Store> {
                match backend {
                    "null" => Arc::new(Null::new()),
                    _ => Arc::new(Embedded::open(&dir.path().join(format!("{backend}-{file}-{name}"))).unwrap()),
                }
            };
            let sides: Vec<(Workload, Ctx)> = [&seed_path, &own_path]
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    let w = Workload::from_file(p).unwrap_or_else(|e| panic!("{e}"));
                    let store = open(["seed", "own"][i]);
                    let g = load_into(&w, store.clone());
                    // The seed's side runs its hand-written DAOs, the reference.
                    let ctx = match i {
                        0 => Ctx::by_code(store, g, &w.run),
                        _ => Ctx::new(store, g, &w.run),
                    }
                    .unwrap();
                    (w, ctx)
                })
                .collect();
            for (own, _) in &sides[1].0.run.mix {
                let name = own.name();
                // The description's inbox lookup is a part of its timelines, not a seed's.
                let Some(code) = tallrow::workload::Op::from_name(name) else {
                    continue;
                };
                if !only.is_empty() && !only.iter().any(|o| o == name) {
                    continue;
                }
                let ops = [code, *own];
                let (mut ns, mut ratios) = ([Vec::new(), Vec::new()], Vec::new());
                // Each side's worker keeps its scratch (its caches of users' keys) from an
                // untimed pass through the rounds, as a run's worker keeps it for the run.
                let mut scratch = [Scratch::new(0), Scratch::new(0)];
                for (side, ctx) in sides.iter().map(|(_, c)| c).enumerate() {
                    for i in 0..n {
                        let s = Rng::new(8).stream(Kind::Run, 0, 0).child(i);
                        let _ = ctx.execute(&ctx.prepare(ops[side], &s, &mut scratch[side]));
                    }
                }
                for round in 0..rounds {
                    let mut took = [0.0f64; 2];
                    for k in 0..2 {
                        let side = (k + round) % 2;
                        let ctx = &sides[side].1;
                        let draws = Rng::new(7).stream(Kind::Run, round as u64, 0);
                        let scratch = &mut scratch[side];
                        let started = Instant::now();
                        let mut failed = 0u64;
                        for i in 0..n {
                            let s = draws.child(i);
                            let call = ctx.prepare(ops[side], &s, scratch);
                            failed += u64::from(ctx.execute(&call).is_err());
                        }
                        took[side] = started.elapsed().as_secs_f64() * 1e9 / n as f64;
                        assert_eq!(failed, 0, "{file}: {name}: failures");
                    }
                    ns[0].push(took[0]);
                    ns[1].push(took[1]);
                    ratios.push(took[1] / took[0]);
                }
                let (c, d) = (median(&ns[0]), median(&ns[1]));
                println!(
                    "{name:<16} {c:>11.0} {d:>19.0}   {:.3} [{:.3}..{:.3}]",
                    median(&ratios),
                    ratios.iter().copied().fold(f64::MAX, f64::min),
                    ratios.iter().copied().fold(f64::MIN, f64::max)
                );
                all.push((name.to_string(), backend, ns[0].clone(), ns[1].clone()));
            }
        }
        // The geometric mean of the operations' median ratios: one figure per store.
        let logs: Vec<f64> = all
            .iter()
            .filter(|(_, b, _, _)| *b == backend)
            .map(|(_, _, c, d)| (median(d) / median(c)).ln())
            .collect();
        if logs.is_empty() {
            continue;
        }
        println!(
            "all operations (geometric mean of the medians): {:.3} (target <= 1.05)",
            (logs.iter().sum::<f64>() / logs.len() as f64).exp()
        );
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
