//! The loader and the verifier: determinism across threads and shards, equivalence with a
//! replay of follows and posts in time order, idempotent re-runs, retries, failures that say
//! where, and a verifier that names exactly the rows that differ.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tallrow::generate::{Digest, Generator, Table};
use tallrow::load::{self, Options, Shard};
use tallrow::schema::microblog::{self, Microblog, Post};
use tallrow::store::{
    self, Error, Get, Mutation, Row, RowMutation, Scan, Store, TableDescriptor, embedded::Embedded, memory::Memory,
};
use tallrow::verify;
use tallrow::workload::{Load, Workload};

pub fn small() -> Workload {
    Workload::from_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small.toml")).unwrap()
}

/// A load's `[load]` and its options.
#[derive(Clone, Copy)]
struct How {
    load: Load,
    opts: Options,
}

fn options(threads: usize, shard: Shard) -> How {
    How {
        load: Load {
            threads,
            batch: 97,
            regions: 1,
        },
        opts: Options {
            shard,
            progress: false,
            count_rows: true,
            checkpoint: load::CHECKPOINT,
            opened: std::time::Duration::ZERO,
            bulk: true,
        },
    }
}

/// Every cell of every table, all versions, digested in key order.
pub fn contents(store: &dyn Store) -> (u128, u64) {
    let mut d = Digest::default();
    let mut cells = 0;
    for t in store.list_tables().unwrap() {
        d.field(t.name.as_bytes());
        let mut scan = Scan::default();
        scan.select.max_versions = 1000;
        store::scan_each(store, &t.name, &scan, 500, |r| {
            d.field(&r.key);
            for c in &r.cells {
                d.field(c.family.as_bytes());
                d.field(&c.qualifier);
                d.field(&c.timestamp.to_be_bytes());
                d.field(&c.value);
                cells += 1;
            }
            true
        })
        .unwrap();
    }
    (d.value(), cells)
}

fn load_into(store: Arc<dyn Store>, g: &Generator, how: How) -> load::Outcome {
    let out = load::load(store, g, &how.load, &how.opts).unwrap();
    assert_eq!(out.error, None);
    out
}

fn verify_report(store: Arc<dyn Store>, g: &Generator, sample: u64) -> verify::Report {
    let opts = verify::Options {
        sample,
        threads: 2,
        show: 100,
    };
    verify::verify(store, g, &opts).unwrap()
}

#[test]
fn the_same_data_on_any_thread_count_and_shard_split() {
    let g = Generator::new(&small());
    let whole = load::digest(&g, Shard::ALL, 1).unwrap();
    for threads in [2, 7] {
        assert_eq!(
            load::digest(&g, Shard::ALL, threads).unwrap(),
            whole,
            "{threads} threads"
        );
    }
    let thirds: u128 = (0..3)
        .map(|index| load::digest(&g, Shard { index, count: 3 }, 2).unwrap())
        .fold(0, u128::wrapping_add);
    assert_eq!(thirds, whole, "shards 1/3 + 2/3 + 3/3");
    let other_seed = Generator::new(&Workload { seed: 8, ..small() });
    assert_ne!(load::digest(&other_seed, Shard::ALL, 2).unwrap(), whole);

    // What the stores hold is the same too, and the loader digests what it wrote.
    let one: Arc<dyn Store> = Arc::new(Memory::new());
    let out = load_into(one.clone(), &g, options(1, Shard::ALL));
    assert_eq!(out.digest, whole);
    let seven: Arc<dyn Store> = Arc::new(Memory::new());
    assert_eq!(load_into(seven.clone(), &g, options(7, Shard::ALL)).digest, whole);
    let sharded: Arc<dyn Store> = Arc::new(Memory::new());
    for index in [2, 0, 1] {
        load_into(sharded.clone(), &g, options(2, Shard { index, count: 3 }));
    }
    let reference = contents(&*one);
    assert!(reference.1 > 10_000, "{} cells", reference.1);
    assert_eq!(contents(&*seven), reference);
    assert_eq!(contents(&*sharded), reference);
}

#[test]
fn the_microblog_equals_a_replay_of_follows_and_posts_in_time_order() {
    let w = small();
    let g = Generator::new(&w);
    let loaded: Arc<dyn Store> = Arc::new(Memory::new());
    load_into(loaded.clone(), &g, options(2, Shard::ALL));

    // Replay every follow and every post through the DAO, in time order.
    let plan = g.plan();
    let replayed: Arc<dyn Store> = Arc::new(Memory::new());
    let dao = Microblog::new(replayed.clone(), g.microblog_config()).with_celebrities(plan.celebrities().clone());
    dao.create_tables().unwrap();
    enum Event {
        Follow(u64, u64),
        Post(Post),
    }
    let mut events: Vec<(i64, u8, Event)> = Vec::new();
    let (mut list, mut seen, mut stamps, mut text) = (
        Vec::new(),
        tallrow::generate::Seen::default(),
        Vec::new(),
        String::new(),
    );
    for uid in 1..=w.data.users {
        g.followees(uid, &mut list, &mut seen);
        events.extend(list.iter().map(|f| (f.at, 0, Event::Follow(uid, f.target))));
        let n = g.post_count(uid);
        g.post_stamps(uid, n, n, &mut stamps);
        for (i, &stamp) in stamps.iter().enumerate() {
            g.post_content(uid, i as u64, &mut text);
            events.push((
                stamp,
                1,
                Event::Post(Post {
                    uid,
                    stamp,
                    content: text.clone(),
                }),
            ));
        }
    }
    events.sort_by_key(|(t, kind, _)| (*t, *kind));
    let mut follows_at = BTreeMap::new();
    for (at, _, e) in &events {
        match e {
            Event::Follow(u, f) => {
                dao.follow(*u, *f, *at).unwrap();
                follows_at.insert((*u, *f), *at);
            }
            Event::Post(p) => {
                dao.publish(p).unwrap();
            }
        }
    }
    let loaded_dao = Microblog::new(loaded.clone(), g.microblog_config()).with_celebrities(plan.celebrities().clone());
    assert_eq!(
        loaded_dao.load_celebrities().unwrap(),
        *plan.celebrities(),
        "the celebrity table holds the plan's set"
    );
    let mut timelines = 0;
    for uid in 1..=w.data.users {
        // The versions a reader can see are the same; the replay wrote older ones that the
        // inbox's VERSIONS hides, the loader writes only the visible ones.
        assert_eq!(
            loaded_dao.inbox(uid).unwrap(),
            dao.inbox(uid).unwrap(),
            "inbox of {uid}"
        );
        let want = dao.timeline(uid, 50, None).unwrap();
        assert_eq!(loaded_dao.timeline(uid, 50, None).unwrap(), want, "timeline of {uid}");
        timelines += usize::from(!want.is_empty());
        assert_eq!(
            loaded_dao.followers(uid, None, 1000).unwrap(),
            dao.followers(uid, None, 1000).unwrap()
        );
        assert_eq!(
            loaded_dao.followees(uid, None, 1000).unwrap(),
            dao.followees(uid, None, 1000).unwrap()
        );
        assert_eq!(
            loaded_dao.posts(uid, None, 1000).unwrap(),
            dao.posts(uid, None, 1000).unwrap()
        );
    }
    assert!(timelines > 250, "{timelines} users have a timeline");
    // Relation cells carry the follow time, in both directions.
    let (&(u, f), &at) = follows_at.iter().next().unwrap();
    let row = loaded
        .get(microblog::RELATION, &[Get::new(microblog::uid_bytes(f))])
        .unwrap()
        .pop()
        .flatten()
        .unwrap();
    let cell = row
        .cells
        .iter()
        .find(|c| c.family == "fans" && c.qualifier == microblog::uid_bytes(u));
    assert_eq!(cell.map(|c| c.timestamp), Some(at));
}

#[test]
fn a_bulk_load_holds_what_batches_write() {
    let g = Generator::new(&small());
    let reference: Arc<dyn Store> = Arc::new(Memory::new());
    let out = load_into(reference.clone(), &g, options(2, Shard::ALL));
    assert!(out.bulk.is_empty(), "memory: has no bulk load");
    let reference = (contents(&*reference), out.tables);

    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let bulked: Arc<dyn Store> = Arc::new(Embedded::open(dirs[0].path()).unwrap());
    let out = load_into(bulked.clone(), &g, options(3, Shard::ALL));
    assert_eq!(out.bulk, out.tables.iter().map(|(t, _)| *t).collect::<Vec<_>>());
    assert_eq!((contents(&*bulked), out.tables), reference);

    let batched: Arc<dyn Store> = Arc::new(Embedded::open(dirs[1].path()).unwrap());
    let out = load_into(
        batched.clone(),
        &g,
        How {
            opts: Options {
                bulk: false,
                ..options(3, Shard::ALL).opts
            },
            ..options(3, Shard::ALL)
        },
    );
    assert!(out.bulk.is_empty());
    assert_eq!((contents(&*batched), out.tables), reference);

    // A shard into empty tables goes in bulk; the next finds them written and sends batches.
    let dir = tempfile::tempdir().unwrap();
    let sharded: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).unwrap());
    let first = load_into(sharded.clone(), &g, options(2, Shard { index: 0, count: 2 }));
    assert!(!first.bulk.is_empty());
    let second = load_into(sharded.clone(), &g, options(2, Shard { index: 1, count: 2 }));
    assert!(
        second.bulk.len() < first.bulk.len(),
        "{:?} then {:?}",
        first.bulk,
        second.bulk
    );
    assert_eq!(contents(&*sharded), reference.0);
    drop(sharded);
    assert_eq!(contents(&Embedded::open(dir.path()).unwrap()), reference.0);
}

#[test]
fn reloading_is_idempotent_and_survives_a_restart() {
    let g = Generator::new(&small());
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let store: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).unwrap());
        let out = load_into(store.clone(), &g, options(2, Shard::ALL));
        assert!(!out.bulk.is_empty());
        let snapshot = contents(&*store);
        assert_eq!(out.rows(), out.tables.iter().map(|(_, s)| s.rows).sum::<u64>());
        snapshot
    };
    // Reopen: everything acknowledged is there; load again: nothing changes.
    let store: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).unwrap());
    assert_eq!(contents(&*store), first);
    assert!(load_into(store.clone(), &g, options(3, Shard::ALL)).bulk.is_empty());
    assert_eq!(contents(&*store), first);
    let report = verify_report(store, &g, 40);
    assert!(report.ok(), "{:?}", report.differences);
    assert!(
        report
            .checks
            .iter()
            .all(|(_, passed, failed)| *passed > 0 && *failed == 0)
    );
}

/// A store that fails some writes: transiently every `every`-th call, or for good from
/// call `fail_from` on.
struct Faulty {
    inner: Memory,
    calls: AtomicU64,
    every: u64,
    fail_from: u64,
}

impl Store for Faulty {
    fn identity(&self) -> String {
        "faulty".into()
    }
    fn create_table(&self, t: &TableDescriptor) -> store::Result<()> {
        self.inner.create_table(t)
    }
    fn delete_table(&self, t: &str) -> store::Result<()> {
        self.inner.delete_table(t)
    }
    fn list_tables(&self) -> store::Result<Vec<TableDescriptor>> {
        self.inner.list_tables()
    }
    fn describe_table(&self, t: &str) -> store::Result<TableDescriptor> {
        self.inner.describe_table(t)
    }
    fn mutate(&self, t: &str, rows: &[RowMutation]) -> store::Result<()> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.fail_from {
            return Err(Error::Io("disk on fire".into()));
        }
        if n.is_multiple_of(self.every) {
            return Err(Error::Unavailable("region busy".into()));
        }
        self.inner.mutate(t, rows)
    }
    fn get(&self, t: &str, gets: &[Get]) -> store::Result<Vec<Option<Row>>> {
        self.inner.get(t, gets)
    }
    fn scan(&self, t: &str, scan: &Scan) -> store::Result<Vec<Row>> {
        self.inner.scan(t, scan)
    }
}

#[test]
fn transient_errors_are_retried_and_permanent_ones_say_where() {
    let g = Generator::new(&small());
    let flaky = Arc::new(Faulty {
        inner: Memory::new(),
        calls: AtomicU64::new(0),
        every: 3,
        fail_from: u64::MAX,
    });
    load_into(flaky.clone(), &g, options(2, Shard::ALL));
    let report = verify_report(flaky, &g, 10);
    assert!(report.ok(), "{:?}", report.differences);

    let broken = Arc::new(Faulty {
        inner: Memory::new(),
        calls: AtomicU64::new(0),
        every: u64::MAX,
        fail_from: 40,
    });
    let how = options(1, Shard::ALL);
    let out = load::load(broken.clone(), &g, &how.load, &how.opts).unwrap();
    let error = out.error.clone().expect("the load fails");
    assert!(error.contains("disk on fire"), "{error}");
    let table = Table::SEEDS
        .iter()
        .find(|t| error.starts_with(&format!("table {}, batch of ", t.name())));
    assert!(table.is_some(), "names the table: {error}");
    assert!(
        error.contains("uid=") || error.contains("userid="),
        "names the row: {error}"
    );
    // 39 batches were acknowledged, and the outcome counts exactly their rows.
    let stored: u64 = broken
        .list_tables()
        .unwrap()
        .iter()
        .map(|t| broken.scan(&t.name, &Scan::default()).unwrap().len() as u64)
        .sum();
    assert!(out.rows() > 0 && out.rows() <= 39 * 97);
    assert!(out.blocks_done < out.blocks_total);
    assert!(stored <= out.rows(), "rows merge into fewer stored rows, never more");
}

#[test]
fn verify_names_exactly_the_rows_that_differ() {
    let w = small();
    let g = Generator::new(&w);
    let store: Arc<dyn Store> = Arc::new(Memory::new());
    load_into(store.clone(), &g, options(2, Shard::ALL));
    assert!(verify_report(store.clone(), &g, 0).ok());

    // Behind tallrow's back: delete three rows, change one, add one that no user owns.
    let pick = |table: &str, nth: usize| {
        store.scan(table, &Scan::default().limit(nth + 1)).unwrap()[nth]
            .key
            .clone()
    };
    let gone_action = pick("useractions", 5);
    let gone_post = pick("weibo:content", 17);
    let gone_point = pick("series", 300);
    let changed_article = pick("blog", 3);
    for (table, key) in [
        ("useractions", &gone_action),
        ("weibo:content", &gone_post),
        ("series", &gone_point),
    ] {
        let del = RowMutation::new(key.clone(), vec![Mutation::DeleteRow { timestamp: None }]);
        store.mutate(table, &[del]).unwrap();
    }
    let row = store
        .get("blog", &[Get::new(changed_article.clone())])
        .unwrap()
        .pop()
        .flatten()
        .unwrap();
    let ts = row.cells[0].timestamp;
    store
        .mutate(
            "blog",
            &[RowMutation::new(
                changed_article.clone(),
                vec![Mutation::put("d", "", ts, "tampered")],
            )],
        )
        .unwrap();
    store
        .mutate(
            "weibo:user",
            &[RowMutation::new(
                b"999999".to_vec(),
                vec![Mutation::put("info", "name", 1, "x")],
            )],
        )
        .unwrap();

    let report = verify_report(store.clone(), &g, 0);
    let name = |t: Table, key: &[u8]| format!("{} {}", t.name(), g.describe_row(t, key));
    let mut want = vec![
        format!("missing row {}", name(Table::ACTIONS, &gone_action)),
        format!("missing row {}", name(Table::CONTENT, &gone_post)),
        format!("missing row {}", name(Table::SERIES, &gone_point)),
        format!(
            "mismatched row {}: cell d: at {ts} has a different value (8 bytes, expected {})",
            name(Table::BLOG, &changed_article),
            row.cells[0].value.len()
        ),
        "unexpected row weibo:user uid=999999".to_string(),
    ];
    let mut got = report.differences.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(report.difference_count, 5);
    let action = want.iter().find(|d| d.contains("useractions")).unwrap();
    assert!(action.contains(" userid=") && action.contains(" actionid="), "{action}");
    let counts: BTreeMap<Table, verify::Counts> = report.tables.iter().copied().collect();
    assert_eq!(counts[&Table::ACTIONS].missing, 1);
    assert_eq!(counts[&Table::ACTIONS].found + 1, counts[&Table::ACTIONS].expected);
    assert_eq!(counts[&Table::USER].unexpected, 1);

    // With sampled queries on, the missing post also shows in the timelines that carry it,
    // and the report stays non-zero.
    let report = verify_report(store, &g, 300);
    assert!(!report.ok());
    assert!(report.differences.iter().any(|d| d.starts_with("query ")));
}

/// A store that remembers the bytes of the largest batch it was sent.
#[derive(Default)]
struct Sizes {
    inner: Memory,
    largest: AtomicU64,
}

impl Store for Sizes {
    fn identity(&self) -> String {
        "sizes".into()
    }
    fn create_table(&self, t: &TableDescriptor) -> store::Result<()> {
        self.inner.create_table(t)
    }
    fn delete_table(&self, t: &str) -> store::Result<()> {
        self.inner.delete_table(t)
    }
    fn list_tables(&self) -> store::Result<Vec<TableDescriptor>> {
        self.inner.list_tables()
    }
    fn describe_table(&self, t: &str) -> store::Result<TableDescriptor> {
        self.inner.describe_table(t)
    }
    fn mutate(&self, t: &str, rows: &[RowMutation]) -> store::Result<()> {
        let bytes = rows.iter().map(|r| r.size().1).sum();
        self.largest.fetch_max(bytes, Ordering::SeqCst);
        self.inner.mutate(t, rows)
    }
    fn get(&self, t: &str, gets: &[Get]) -> store::Result<Vec<Option<Row>>> {
        self.inner.get(t, gets)
    }
    fn scan(&self, t: &str, scan: &Scan) -> store::Result<Vec<Row>> {
        self.inner.scan(t, scan)
    }
}

/// The batches of all workers together hold at most `load::BATCH_MEMORY`: with many workers
/// each sends its batches smaller, so that the loader's memory does not grow with them; the
/// data loaded is the same.
#[test]
fn many_workers_send_smaller_batches_and_load_the_same() {
    let g = Generator::new(&small());
    let unbounded = |threads| How {
        load: Load {
            batch: 100_000,
            ..options(threads, Shard::ALL).load
        },
        ..options(threads, Shard::ALL)
    };
    let one = Arc::new(Sizes::default());
    load_into(one.clone(), &g, unbounded(1));
    let many = Arc::new(Sizes::default());
    load_into(many.clone(), &g, unbounded(256));
    let share = load::BATCH_MEMORY / 256;
    // The largest row of the small fixture is a blog article, well under 64 KiB.
    let (one_largest, many_largest) = (one.largest.load(Ordering::SeqCst), many.largest.load(Ordering::SeqCst));
    assert!(one_largest > 4 * share, "one worker batches up to 8 MiB: {one_largest}");
    assert!(many_largest <= share + (64 << 10), "{many_largest} > {share}");
    assert_eq!(contents(&one.inner), contents(&many.inner));
}
