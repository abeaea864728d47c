//! Region replicas and TIMELINE reads against the suite's HBase: tables of two copies, reads
//! that a secondary answers while its primary is silent, and what those answers may be.

use crate::common::{SAMPLE, real_hbase, real_hbase_there};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tallrow::store::{Consistency, Get, Mutation, RowMutation, Scan, Store, TableDescriptor};

fn native_url() -> String {
    real_hbase("TALLROW_HBASE_NATIVE").expect("TALLROW_HBASE_NATIVE")
}

fn open(url: &str) -> Arc<dyn Store> {
    tallrow::store::backend::Backend::parse(url, Path::new("."))
        .unwrap()
        .open()
        .unwrap()
}

fn hbase_sh(args: &[&str]) -> String {
    let out = std::process::Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase.sh"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hbase.sh {args:?}: {text}");
    text
}

/// Creates `table` with two copies of its one region and waits until meta names the
/// secondary's server; returns the primary's and the secondary's servers (`host:port`).
fn two_copies(store: &dyn Store, table: &str) -> (String, String) {
    let _ = store.delete_table(table);
    let mut desc = TableDescriptor::new(table, &["f"], 3);
    desc.region_replication = 2;
    store.create_table(&desc).unwrap();
    let client = crate::common::raw_client();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let regions = client.regions(table).unwrap();
        if let [r] = &regions[..]
            && let (Some(p), Some(s)) = (&r.server, r.replicas.first().and_then(|s| s.server.clone()))
        {
            return (p.addr(), s.addr());
        }
        assert!(Instant::now() < deadline, "no secondary in meta: {regions:#?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn value(store: &dyn Store, table: &str, row: &str) -> Option<Vec<u8>> {
    let got = store.get(table, &[Get::new(row)]).unwrap().pop().unwrap();
    got.map(|r| r.cells[0].value.clone())
}

fn put(row: &str, ts: i64, v: &str) -> RowMutation {
    RowMutation::new(row, vec![Mutation::put("f", "q", ts, v)])
}

/// The primary's server silent (its connection held by a proxy, as a stopped server holds
/// it): TIMELINE gets and scans are answered by the secondary after the primary timeout,
/// stale, with the version the secondary has (the flushed one, not the newer write that
/// only the primary holds); STRONG reads are not, and once the primary speaks again,
/// TIMELINE reads are its answers, fresh.
#[test]
fn a_silent_primarys_reads_are_answered_stale_by_its_secondary() {
    if !real_hbase_there() {
        return;
    }
    let table = format!("timeline_reads_{}", std::process::id());
    let direct = open(&native_url());
    let (primary, _secondary) = two_copies(&*direct, &table);
    direct
        .mutate(
            &table,
            &(0..5).map(|i| put(&format!("r{i}"), 1, "old")).collect::<Vec<_>>(),
        )
        .unwrap();
    hbase_sh(&["chaos", "flush", &table]);
    // Newer versions the primary alone holds: in its memstore, never flushed.
    direct
        .mutate(
            &table,
            &(0..5).map(|i| put(&format!("r{i}"), 2, "new")).collect::<Vec<_>>(),
        )
        .unwrap();
    let proxy = crate::proxy::FaultProxy::start(&primary);
    let store = open(&format!("{}&connect_to={primary}:{}", native_url(), proxy.addr()));
    let timeline = Consistency::Timeline {
        get: Duration::from_millis(10),
        scan: Duration::from_millis(50),
    };
    // Locations (and meta, wherever it is) read while the primary speaks. STRONG: a TIMELINE
    // read would be answered by the secondary whenever the primary, on a busy machine, took
    // longer than the 10 ms below, and read stale.
    assert_eq!(value(&*store, &table, "r0").as_deref(), Some(&b"new"[..]));
    store.set_consistency(timeline).unwrap();
    // The secondary picks up the flushed file within its refresh period (1 s here).
    proxy.hold_for(Duration::from_secs(120));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let before = tallrow::store::stale_reads();
        let v = value(&*store, &table, "r1");
        assert_eq!(tallrow::store::stale_reads(), before + 1, "a stale answer");
        if v.is_some() {
            // The older version, never the primary's newer one nor a wrong one.
            assert_eq!(v.as_deref(), Some(&b"old"[..]));
            break;
        }
        assert!(Instant::now() < deadline, "the secondary never saw the flushed rows");
        std::thread::sleep(Duration::from_millis(200));
    }
    let asked = Instant::now();
    let before = tallrow::store::stale_reads();
    let rows = store.scan(&table, &Scan::default()).unwrap();
    assert_eq!(tallrow::store::stale_reads(), before + 1);
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.cells[0].value == b"old"), "{rows:?}");
    assert!(asked.elapsed() >= Duration::from_millis(50), "{:?}", asked.elapsed());
    // A multi-get of several rows, all stale.
    let before = tallrow::store::stale_reads();
    let gets: Vec<Get> = (0..5).map(|i| Get::new(format!("r{i}"))).collect();
    let got = store.get(&table, &gets).unwrap();
    assert_eq!(tallrow::store::stale_reads(), before + 5);
    assert!(got.iter().all(|r| r.as_ref().unwrap().cells[0].value == b"old"));
    // Released: the primary answers, fresh.
    proxy.release();
    store
        .set_consistency(Consistency::Timeline {
            get: Duration::from_secs(5),
            scan: Duration::from_secs(5),
        })
        .unwrap();
    let before = tallrow::store::stale_reads();
    assert_eq!(value(&*store, &table, "r1").as_deref(), Some(&b"new"[..]));
    let rows = store.scan(&table, &Scan::default()).unwrap();
    assert!(rows.iter().all(|r| r.cells[0].value == b"new"), "{rows:?}");
    assert_eq!(tallrow::store::stale_reads(), before);
    store.set_consistency(Consistency::Strong).unwrap();
    assert_eq!(value(&*store, &table, "r4").as_deref(), Some(&b"new"[..]));
    direct.delete_table(&table).unwrap();
}

/// `tallrow ARGS` on the small fixture's tables under `prefix`, with two copies of each
/// region.
fn small(dir: &Path, prefix: &str, args: &[&str]) -> crate::common::Out {
    let fixture = crate::common::small_fixture();
    let mut all = vec![args[0], fixture.to_str().unwrap()];
    let prefix = format!("storage.table_prefix={prefix}");
    all.extend(["--set", &prefix, "--set", "storage.region_replication=2"]);
    all.extend(&args[1..]);
    crate::common::tallrow(dir, &all)
}

/// Loads into tables of two copies, through HBase's RPC and as HFiles bulk-loaded, verify
/// through the primaries. After a run with TIMELINE reads that wrote rows the primaries
/// alone hold (never flushed), a TIMELINE get that a secondary answers is an older state of
/// the row (absent, or as the primary has it), never another; some are older.
#[test]
fn replicated_tables_verify_through_the_primaries_and_stale_answers_are_older_states() {
    if !real_hbase_there() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("rep{}_", std::process::id());
    let url = native_url();
    let client = crate::common::raw_client();
    let drop_all = || {
        let mine: Vec<String> = (client.table_names().unwrap().into_iter())
            .filter(|t| t.contains(&prefix))
            .collect();
        crate::common::drop_tables(&*open(&url), &mine).unwrap();
    };
    // HFiles, bulk-loaded into tables created with the manifest's replication, verify.
    let hfiles = dir.path().join("hfiles");
    let out = small(
        dir.path(),
        &prefix,
        &["load", "--backend", &format!("hfile:{}", hfiles.display())],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = crate::common::tallrow(dir.path(), &["bulkload", hfiles.to_str().unwrap(), "--backend", &url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let table = |name: &str| format!("{prefix}{name}");
    let described = open(&url).describe_table(&table("useractions")).unwrap();
    assert_eq!(described.region_replication, 2);
    let out = small(dir.path(), &prefix, &["verify", "--backend", &url, "--sample", SAMPLE]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    drop_all();
    // Loaded through the RPC, they verify too.
    let out = small(dir.path(), &prefix, &["load", "--backend", &url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = small(dir.path(), &prefix, &["verify", "--backend", &url, "--sample", SAMPLE]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The secondaries see the load once flushed; the run's writes only the primaries hold.
    let actions = table("useractions");
    client.flush_table(&actions).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let out = small(
        dir.path(),
        &prefix,
        &[
            "run",
            "--backend",
            &url,
            "--set",
            "run.mix.action_write=1",
            "--set",
            "run.mix.actions_offset=1",
            "--set",
            "run.consistency=timeline",
            "--set",
            "run.duration=3s",
            "--set",
            "run.warmup=0s",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("timeline reads (stale: "), "{}", out.stdout);
    let strong = open(&url);
    let timeline = open(&url);
    // Every get asks the secondary at once: the first answer wins.
    timeline
        .set_consistency(Consistency::Timeline {
            get: Duration::ZERO,
            scan: Duration::ZERO,
        })
        .unwrap();
    let rows = strong.scan(&actions, &Scan::default()).unwrap();
    let (mut stale, mut older) = (0, 0);
    for row in &rows {
        let key = String::from_utf8_lossy(&row.key).into_owned();
        let before = tallrow::store::stale_reads();
        let got = timeline
            .get(&actions, &[Get::new(row.key.clone())])
            .unwrap()
            .pop()
            .unwrap();
        if tallrow::store::stale_reads() == before {
            assert_eq!(got.as_ref(), Some(row), "{key}: the primary's own answer");
            continue;
        }
        stale += 1;
        match got {
            None => older += 1,
            Some(got) => assert_eq!(
                &got, row,
                "{key}: a stale answer is the row as the primary has it, or none"
            ),
        }
    }
    eprintln!(
        "{} rows, {stale} answered by the secondary, {older} of them older",
        rows.len()
    );
    assert!(
        stale > 0 && older > 0,
        "{} rows, {stale} stale, {older} older",
        rows.len()
    );
    drop_all();
}
