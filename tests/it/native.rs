//! The hbase backend over HBase's own RPC (`api=native`) end to end through the binary,
//! against real HBase (scripts/hbase.sh): `load`, `verify` and `run` with no gateway; a
//! workload loaded pre-split natively and verified through Thrift2, an independent path;
//! and the one-line errors of a cluster that cannot be reached as asked. The contract and
//! DAO suites run through `api=native` in `contract` and `dao`.

use crate::common::{
    Harness, PrefixedSchemaTables, RealHBaseHarness, SAMPLE, SchemaTables, load_verify_run_and_miss_a_row_with,
    real_hbase, real_hbase_there, small_fixture, tallrow,
};
use std::path::Path;
use std::time::Instant;

fn native_url() -> String {
    real_hbase("TALLROW_HBASE_NATIVE").expect("TALLROW_HBASE_NATIVE")
}

/// The suite's HBase, opened through `api=native`.
fn native_store() -> std::sync::Arc<dyn tallrow::store::Store> {
    tallrow::store::backend::Backend::parse(&native_url(), Path::new("."))
        .unwrap()
        .open()
        .unwrap()
}

/// Two workloads under two table prefixes on one HBase, beside a table tallrow did not
/// make: each loads, runs and verifies in its own tables (so neither takes the turn on the
/// schema tables), `drop` takes exactly one prefix's tables, marked by the workload in HBase's
/// table descriptor, and refuses a table of a workload's name that tallrow did not make.
#[test]
fn two_prefixes_load_run_and_drop_apart_on_one_hbase() {
    if !real_hbase_there() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = native_url();
    let workload = small_fixture().display().to_string();
    let store = native_store();
    let tables = |prefix: &str| -> Vec<String> {
        let mut names: Vec<String> = store
            .list_tables()
            .unwrap()
            .into_iter()
            .map(|d| d.name)
            .filter(|n| n.contains(&format!(":{prefix}")) || n.starts_with(prefix))
            .collect();
        names.sort();
        names
    };
    // What a failed run of this test left.
    for p in ["pfx1_", "pfx2_", "pfx3_"] {
        for t in tables(p) {
            store.delete_table(&t).unwrap();
        }
    }
    store
        .create_table(&tallrow::store::TableDescriptor::new("pfx1_unrelated", &["f"], 1))
        .unwrap();
    store
        .create_table(&tallrow::store::TableDescriptor::new("pfx3_series", &["d"], 1))
        .unwrap();
    let with = |prefix: &str, args: &[&str]| {
        let set = format!("storage.table_prefix={prefix}");
        let mut all = args.to_vec();
        all.extend([workload.as_str(), "--backend", url.as_str(), "--set", set.as_str()]);
        tallrow(dir.path(), &all)
    };
    for p in ["pfx1_", "pfx2_"] {
        let out = with(p, &["load"]);
        assert_eq!(out.code, 0, "{p}: {}{}", out.stdout, out.stderr);
        assert_eq!(tables(p).len(), 8 + usize::from(p == "pfx1_"), "{p}: {:?}", tables(p));
    }
    let d = store.describe_table("weibo:pfx2_inbox").unwrap();
    assert_eq!(d.attribute(tallrow::store::MARK_WORKLOAD), Some("small"), "{d:?}");
    let run = with("pfx1_", &["run", "--ops", "300", "--warmup", "0s", "--reports", "r"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("tables prefixed \"pfx1_\""), "{}", run.stdout);
    let dropped = with("pfx1_", &["drop"]);
    assert_eq!(dropped.code, 0, "{}", dropped.stderr);
    assert!(
        dropped.stdout.starts_with("dropped 8 of small's tables from "),
        "{}",
        dropped.stdout
    );
    assert_eq!(
        tables("pfx1_"),
        ["pfx1_unrelated"],
        "the table tallrow did not make stays"
    );
    let verified = with("pfx2_", &["verify", "--sample", SAMPLE]);
    assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);
    // A workload table tallrow did not make: refused, nothing dropped.
    let out = with("pfx3_", &["drop"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("is not marked as made by it: pfx3_series (no mark); nothing was dropped"),
        "{}",
        out.stderr
    );
    assert_eq!(tables("pfx3_"), ["pfx3_series"]);
    for t in ["pfx1_unrelated", "pfx3_series"] {
        store.delete_table(t).unwrap();
    }
    let out = with("pfx2_", &["drop"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(tables("pfx2_").is_empty());
}

#[test]
fn load_verify_and_run_through_hbases_own_rpc() {
    if !real_hbase_there() {
        return;
    }
    // The workload's tables under a prefix of this test's own, dropped before and after.
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::native());
    let workload = crate::common::hbase_fixture();
    let summary = load_verify_run_and_miss_a_row_with(
        workload.to_str().unwrap(),
        &[&tables.set()],
        &native_url(),
        "(HBase native RPC, cluster ",
    );
    let cluster = summary
        .split("HBase native RPC, cluster ")
        .nth(1)
        .and_then(|s| s.split([')', '"']).next())
        .unwrap_or("");
    assert!(cluster.len() >= 8, "the report names the cluster: {summary}");
}

/// The messaging example, a design of the workload's own, through HBase's own RPC.
#[test]
fn a_design_of_its_own_loads_and_verifies_through_hbases_own_rpc() {
    if !real_hbase_there() {
        return;
    }
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::native());
    crate::common::own_design_loads_verifies_and_misses_a_row(
        &[&tables.set()],
        &native_url(),
        "(HBase native RPC, cluster ",
    );
}

/// The 100,000-row fixture loaded through HBase's RPC into tables pre-split into 8 regions,
/// and verified through the Thrift2 gateway: what one path wrote, the other reads.
#[test]
fn a_presplit_native_load_verifies_through_thrift2() {
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    let workload = crate::common::hbase_fixture();
    let workload = workload.to_str().unwrap();
    let rows = tallrow::report::thousands(crate::common::row_writes(Path::new(workload)));
    let out = tallrow(
        dir.path(),
        &["load", workload, "--backend", &native_url(), "--regions", "8"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&rows),
        "every row of the workload, {rows}: {}",
        out.stdout
    );
    let thrift2 = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    let verify = tallrow(
        dir.path(),
        &["verify", workload, "--backend", &thrift2, "--sample", SAMPLE],
    );
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    assert!(
        verify
            .stdout
            .contains("OK: the store holds exactly the workload's data"),
        "{}",
        verify.stdout
    );
    // Pre-split as asked: the regions HBase lists through the native client.
    let store = native_store();
    for table in ["useractions", "weibo:content", "weibo:inbox"] {
        assert_eq!(
            store.regions(table).unwrap().len(),
            7,
            "{table}: 8 regions, 7 split points"
        );
    }
}

/// Opens `url` with `tallrow verify` and returns its error: exactly one line on stderr and a
/// non-zero exit. How long it took is printed, not judged: each bootstrap is bounded by the
/// client's connect timeout by construction.
fn refused(url: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture();
    let started = Instant::now();
    let out = tallrow(dir.path(), &["verify", fixture.to_str().unwrap(), "--backend", url]);
    assert_ne!(out.code, 0, "{url} must be refused: {}", out.stdout);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, not:\n{}", out.stderr);
    eprintln!(
        "{url}: refused after {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        lines[0]
    );
    lines[0].to_string()
}

#[test]
fn a_cluster_that_cannot_be_reached_as_asked_is_named_in_one_line() {
    if !real_hbase_there() {
        return;
    }
    let zk = real_hbase("TALLROW_HBASE_ZK").unwrap();
    let port = |v: &str| real_hbase(v).unwrap();
    // Nothing listens.
    let e = refused("hbase://127.0.0.1:1?api=native");
    assert!(
        e.contains("no ZooKeeper server of the quorum 127.0.0.1:1 could be reached"),
        "{e}"
    );
    // ZooKeeper answers, but HBase is not under that znode.
    let e = refused(&format!("hbase://{zk}/hbase-elsewhere?api=native"));
    assert!(e.contains("has no /hbase-elsewhere/hbaseid"), "{e}");
    assert!(e.contains("zookeeper.znode.parent"), "{e}");
    // A Thrift gateway's port given as the quorum.
    let e = refused(&format!("hbase://{}?api=native", port("TALLROW_HBASE_THRIFT1")));
    assert!(
        e.contains("is not a ZooKeeper quorum") && e.contains("a Thrift server"),
        "{e}"
    );
    assert!(e.contains("api=thrift1 or api=thrift2"), "{e}");
    // No master or region server where the RPC registry was sent.
    let e = refused("hbase://127.0.0.1:1?api=native&registry=rpc");
    assert!(
        e.contains("no bootstrap server of 127.0.0.1:1 answered as HBase's ClientMetaService")
            && e.contains("Connection refused"),
        "{e}"
    );
    // A ZooKeeper port given as a bootstrap server of the RPC registry.
    let e = refused(&format!("hbase://{zk}?api=native&registry=rpc"));
    assert!(e.contains("a ZooKeeper server answered"), "{e}");
    // The Thrift path, the other way round: ZooKeeper's port given as a gateway's.
    let e = refused(&format!("hbase://{zk}?api=thrift2"));
    assert!(e.contains("a ZooKeeper server answered, not a Thrift gateway"), "{e}");
    assert!(e.contains(&format!("hbase://{zk}?api=native")), "{e}");
}

/// ZooKeeper silent as the client opens (its bytes held by a proxy, as a stopped ZooKeeper
/// or one waiting on its disk holds them), for 3 s and for 15 s: HBase's client waits for
/// it, and so does ours, which then writes and reads a table.
#[test]
fn a_zookeeper_silent_at_open_is_waited_for() {
    use tallrow::store::{Get, Mutation, RowMutation, TableDescriptor};
    if !real_hbase_there() {
        return;
    }
    let proxy = crate::proxy::FaultProxy::start(&real_hbase("TALLROW_HBASE_ZK").unwrap());
    let url = format!("hbase://{}?api=native", proxy.addr());
    for silent in [3, 15] {
        let asked = Instant::now();
        proxy.hold_for(std::time::Duration::from_secs(silent));
        let store = tallrow::store::backend::Backend::parse(&url, Path::new("."))
            .unwrap()
            .open()
            .unwrap_or_else(|e| panic!("ZooKeeper silent {silent} s: {e}"));
        // The open went through the silence, not around it.
        assert!(asked.elapsed().as_secs() >= silent, "{:?}", asked.elapsed());
        let table = format!("zk_silent_{silent}_{}", std::process::id());
        let _ = store.delete_table(&table);
        store.create_table(&TableDescriptor::new(&table, &["f"], 1)).unwrap();
        let put = RowMutation::new("r", vec![Mutation::put("f", "q", 1, "v")]);
        store.mutate(&table, &[put]).unwrap();
        let row = store.get(&table, &[Get::new("r")]).unwrap().pop().unwrap().unwrap();
        assert_eq!(row.cells[0].value, b"v");
        store.delete_table(&table).unwrap();
    }
}

/// A store through the suite's cluster with `named` (`host:port`) dialled through `proxy`.
fn store_through(proxy: &crate::proxy::FaultProxy, named: &str) -> std::sync::Arc<dyn tallrow::store::Store> {
    let url = format!("{}&connect_to={named}:{}", native_url(), proxy.addr());
    tallrow::store::backend::Backend::parse(&url, Path::new("."))
        .unwrap()
        .open()
        .unwrap()
}

/// A Multi's reply lost to a reset connection after the region server applied it: the
/// client resends the whole batch, as HBase's does. A put with its own timestamp lands on
/// the same cell again (one version); a put the server stamps is written twice (two
/// versions, as HBase's client writes it twice). tallrow's client sends only puts and
/// deletes, never an increment or an append, which HBase would need a nonce to apply once.
/// A connection cut while idle, and a slow link, cost no retry.
#[test]
fn a_reply_lost_mid_multi_is_resent_and_written_once() {
    use tallrow::store::{Get, Mutation, RowMutation, Selection, TableDescriptor};
    if !real_hbase_there() {
        return;
    }
    let table = format!("reset_multi_{}", std::process::id());
    let setup = native_store();
    let _ = setup.delete_table(&table);
    setup.create_table(&TableDescriptor::new(&table, &["f"], 3)).unwrap();
    let server = crate::common::raw_client()
        .locate(&table, b"r")
        .unwrap()
        .server
        .clone()
        .unwrap();
    let named = format!("{}:{}", server.host, server.port);
    let proxy = crate::proxy::FaultProxy::start(&named);
    let store = store_through(&proxy, &named);
    // The region is found and its server's connection opened through the proxy first, so
    // the next reply on it is the Multi's.
    assert_eq!(store.get(&table, &[Get::new("r")]).unwrap(), vec![None]);
    let mut all = Get::new("r");
    all.select = Selection {
        max_versions: 3,
        ..Selection::default()
    };
    // Each put in a batch of its own, its reply lost once.
    for (i, put) in [
        Mutation::put("f", "own", 7, "v"),
        Mutation::put_now("f", "stamped", "v"),
    ]
    .into_iter()
    .enumerate()
    {
        proxy.reset_next_reply();
        store.mutate(&table, &[RowMutation::new("r", vec![put])]).unwrap();
        assert_eq!(proxy.resets(), i as u64 + 1, "the reply was lost");
    }
    assert_eq!(store.retries(), [("connection".to_string(), 2)]);
    // A connection cut while idle is opened again by the next call, which is no retry; a
    // slow link makes calls slow and nothing else.
    proxy.cut();
    // The close reaches the client's reader before the next call is sent.
    std::thread::sleep(std::time::Duration::from_millis(50));
    proxy.delay(std::time::Duration::from_millis(100));
    let slow = Instant::now();
    assert!(store.get(&table, &[Get::new("r")]).unwrap()[0].is_some());
    assert!(
        slow.elapsed() >= std::time::Duration::from_millis(200),
        "{:?}",
        slow.elapsed()
    );
    proxy.delay(std::time::Duration::ZERO);
    assert_eq!(store.retries(), [("connection".to_string(), 2)]);
    let row = setup.get(&table, &[all]).unwrap().pop().unwrap().unwrap();
    let versions = |q: &[u8]| row.cells.iter().filter(|c| c.qualifier == q).count();
    assert_eq!(versions(b"own"), 1, "{row:?}");
    assert_eq!(versions(b"stamped"), 2, "{row:?}");
    setup.delete_table(&table).unwrap();
}

/// The master silent for 6 s, longer than a call's timeout (`hbase.rpc.timeout`, 4 s on
/// this client's URL: the default of 60 s would make the test wait out a minute for the same
/// behaviour) and shorter than two, while a table is created: the call times out, is sent again with
/// the same nonce, and the master runs one create when the bytes come through, as it does
/// for HBase's client.
#[test]
fn a_master_silent_past_a_calls_timeout_during_a_create_creates_the_table_once() {
    use tallrow::store::{Get, Mutation, RowMutation, TableDescriptor};
    if !real_hbase_there() {
        return;
    }
    let master = crate::common::raw_client().cluster().master.addr();
    let proxy = crate::proxy::FaultProxy::start(&master);
    let url = format!(
        "{}&hbase.rpc.timeout=4000&connect_to={master}:{}",
        native_url(),
        proxy.addr()
    );
    let store = tallrow::store::backend::Backend::parse(&url, Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    let table = format!("master_silent_{}", std::process::id());
    let _ = store.delete_table(&table);
    let asked = Instant::now();
    proxy.hold_for(std::time::Duration::from_secs(6));
    store
        .create_table(&TableDescriptor::new(&table, &["f"], 1))
        .unwrap_or_else(|e| panic!("create through a master silent for 6 s: {e}"));
    assert!(asked.elapsed().as_secs() >= 6, "{:?}", asked.elapsed());
    // One call timed out and was sent again; a second create would have been refused with
    // TableExistsException had the master not known the nonce.
    assert_eq!(store.retries(), [("timeout".to_string(), 1)]);
    let put = RowMutation::new("r", vec![Mutation::put("f", "q", 1, "v")]);
    store.mutate(&table, &[put]).unwrap();
    assert!(store.get(&table, &[Get::new("r")]).unwrap()[0].is_some());
    store.delete_table(&table).unwrap();
}

#[test]
fn a_table_that_does_not_exist_is_named() {
    if !real_hbase_there() {
        return;
    }
    let store = native_store();
    let name = format!("missing_{}", std::process::id());
    let e = store.get(&name, &[tallrow::store::Get::new("r")]).unwrap_err();
    assert_eq!(e, tallrow::store::Error::TableNotFound(name.clone()));
    let e = store.scan(&name, &tallrow::store::Scan::default()).unwrap_err();
    assert_eq!(e, tallrow::store::Error::TableNotFound(name));
}

/// A table created with two copies of each region, through HBase's own RPC and through
/// the Thrift2 gateway: HBase keeps `REGION_REPLICATION` and reports it back, opens each
/// region's secondary on the other region server, and meta names it (`info:server_0001`)
/// under its own region name, which the client reads as HBase spells it.
#[test]
fn a_table_of_two_copies_has_a_secondary_on_the_other_server() {
    if !real_hbase_there() {
        return;
    }
    let client = crate::common::raw_client();
    let thrift2 = tallrow::store::backend::Backend::parse(
        &format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap()),
        Path::new("."),
    )
    .unwrap()
    .open()
    .unwrap();
    for (store, via) in [(native_store(), "native"), (thrift2, "thrift2")] {
        let name = format!("replicas_{via}_{}", std::process::id());
        let mut desc = tallrow::store::TableDescriptor::new(&name, &["f"], 1).with_splits(vec![b"m".to_vec()]);
        desc.region_replication = 2;
        store.create_table(&desc).unwrap();
        assert_eq!(store.describe_table(&name).unwrap().region_replication, 2, "{via}");
        // Secondaries open after their primaries: wait for meta to name each one's server.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let regions = loop {
            let regions = client.regions(&name).unwrap();
            if regions.len() == 2
                && regions
                    .iter()
                    .all(|r| r.replicas.len() == 1 && r.replicas[0].server.is_some())
            {
                break regions;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{via}: secondaries in meta: {regions:#?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(250));
        };
        for r in &regions {
            let secondary = &r.replicas[0];
            assert_eq!(secondary.id, 1);
            assert_ne!(
                secondary.server, r.server,
                "{via}: a replica apart from its primary: {r:#?}"
            );
            // `<table>,<start>,<id>_0001.<md5>.`, the primary's name but for the replica id.
            let primary = String::from_utf8_lossy(&r.name).into_owned();
            let id = primary.trim_end_matches('.').rsplit_once('.').unwrap().0;
            let want = format!("{id}_0001.");
            let got = String::from_utf8_lossy(&secondary.name).into_owned();
            assert!(
                got.starts_with(&want) && got.len() == want.len() + 33,
                "{got} for {primary}"
            );
        }
        store.delete_table(&name).unwrap();
    }
}

/// HBase's bulk load through the native client: `bulkload` creates the tables, hands the
/// local files to the region servers (which copy them into HBase's file system) and counts
/// the rows through `api=native`; `--split-from` reads the live tables' regions through it.
/// Files split otherwise than the tables are refused before anything moves, and HBase's
/// tool (`--hbase-cmd`) splits them.
#[test]
fn bulkload_and_split_from_go_through_hbases_own_rpc() {
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let tmp = tempfile::tempdir().unwrap();
    let fixture = small_fixture();
    let fixture = fixture.to_str().unwrap();
    let manifest = |dir: &Path| -> tallrow::bulkload::manifest::Manifest {
        serde_json::from_str(&std::fs::read_to_string(dir.join("bulkload.json")).unwrap()).unwrap()
    };
    let a = tmp.path().join("a");
    let hfiles = format!("hfile:{}", a.display());
    let out = tallrow(tmp.path(), &["load", fixture, "--backend", &hfiles, "--regions", "3"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let tool = format!(
        "{} completebulkload",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase.sh").display()
    );
    let out = tallrow(
        tmp.path(),
        &["bulkload", a.to_str().unwrap(), "--backend", &native_url()],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.lines().next().unwrap().ends_with("through HBase's RPC"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("OK: every table holds the rows its HFiles do"),
        "{}",
        out.stdout
    );
    // Watched as a load is: the tables it created are events beside the cluster's line.
    assert!(out.stdout.contains("\ncluster: "), "{}", out.stdout);
    let events = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("cluster events: "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let events = std::fs::read_to_string(tmp.path().join(events.trim())).unwrap();
    assert!(events.contains(",create_table,"), "{events}");
    let verify = tallrow(
        tmp.path(),
        &["verify", fixture, "--backend", &native_url(), "--sample", SAMPLE],
    );
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    // The regions the bulk load created, read back through the native client, split the
    // next files where the first were split.
    let b = tmp.path().join("b");
    let hfiles = format!("hfile:{}", b.display());
    let out = tallrow(
        tmp.path(),
        &["load", fixture, "--backend", &hfiles, "--split-from", &native_url()],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let (first, again) = (manifest(&a), manifest(&b));
    assert!(first.tables.iter().any(|t| t.split_points.len() == 2), "three regions");
    for t in &first.tables {
        let same = again.tables.iter().find(|x| x.name == t.name).unwrap();
        assert_eq!(same.split_points, t.split_points, "{}", t.name);
    }
    // The same rows in five regions a table: the tables' three regions straddle them.
    let c = tmp.path().join("c");
    let hfiles = format!("hfile:{}", c.display());
    let out = tallrow(tmp.path(), &["load", fixture, "--backend", &hfiles, "--regions", "5"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let files =
        |dir: &Path| tallrow::bulkload::manifest::hfiles_in(&tallrow::bulkload::fs::Dir::Local(dir.into())).unwrap();
    let before = files(&c);
    let out = tallrow(
        tmp.path(),
        &["bulkload", c.to_str().unwrap(), "--backend", &native_url()],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = out.stderr.trim();
    assert!(
        !line.contains('\n')
            && line.contains("it is split otherwise than the files; --hbase-cmd hands them to HBase's tool"),
        "{line}"
    );
    assert_eq!(files(&c), before, "nothing moved");
    let out = tallrow(
        tmp.path(),
        &[
            "bulkload",
            c.to_str().unwrap(),
            "--backend",
            &native_url(),
            "--hbase-cmd",
            &tool,
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("OK: every table holds the rows its HFiles do"),
        "{}",
        out.stdout
    );
    let verify = tallrow(
        tmp.path(),
        &["verify", fixture, "--backend", &native_url(), "--sample", SAMPLE],
    );
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
}

/// `tallrow sweep` through HBase's own RPC: a data set per point where the data changes,
/// loaded into the workload's tables one after another, dropped in between and after.
#[test]
fn a_sweep_loads_and_runs_each_point_through_hbases_own_rpc() {
    if !real_hbase_there() {
        return;
    }
    let turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture();
    let out = tallrow(
        dir.path(),
        &[
            "sweep",
            fixture.to_str().unwrap(),
            "--vary",
            "microblog.celebrity_threshold=3,1000",
            "--set",
            "run.mix.timeline=1",
            "--ops",
            "40",
            "--warmup",
            "0s",
            "--backend",
            &native_url(),
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("sweeping small over 2 points: "),
        "{}",
        out.stdout
    );
    let names: Vec<String> = turn
        .store()
        .list_tables()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        !names.iter().any(|n| n == "weibo:inbox"),
        "dropped after the sweep: {names:?}"
    );
}

/// The master's status and procedures, read as the cluster observer reads them, name what
/// `scripts/hbase.sh chaos` did to a table: the region it split, and the one it moved, to
/// where; and every live region server reports the table's regions.
#[test]
fn the_masters_procedures_name_the_split_and_the_move_chaos_made() {
    use hbase_client::status::Acts;
    use tallrow::store::{Mutation, RowMutation, TableDescriptor};
    if !real_hbase_there() {
        return;
    }
    let store = native_store();
    let table = format!("status_probe_{}", std::process::id());
    let _ = store.delete_table(&table);
    store.create_table(&TableDescriptor::new(&table, &["f"], 1)).unwrap();
    let rows: Vec<RowMutation> = (0..200u32)
        .map(|i| RowMutation::new(format!("r{i:04}"), vec![Mutation::put("f", "q", 1, "v")]))
        .collect();
    store.mutate(&table, &rows).unwrap();
    let out = std::process::Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase.sh"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["chaos", "shuffle", &table, "1"])
        .output()
        .unwrap();
    let chaos = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && chaos.contains("splits 1 moves 1"), "{chaos}");
    let word = |prefix: &str, n: usize| {
        chaos
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().nth(n))
            .unwrap_or_else(|| panic!("{prefix} in {chaos}"))
            .to_string()
    };
    let (split, moved, to) = (word("split ", 0), word("moved ", 0), word("moved ", 4));

    let client = crate::common::raw_client();
    let procedures = client.procedures().unwrap();
    let found_split = procedures.iter().find_map(|p| match &p.what {
        Acts::Split { parent, children } if parent.encoded == split => Some((p, children.len())),
        _ => None,
    });
    let (p, children) = found_split.unwrap_or_else(|| panic!("no split of {split} in {procedures:#?}"));
    assert_eq!((p.class.as_str(), children), ("SplitTableRegionProcedure", 2));
    assert!(
        p.ended() && p.submitted_ms > 0 && p.updated_ms >= p.submitted_ms,
        "{p:?}"
    );
    let found_move = procedures.iter().find(|p| {
        matches!(&p.what, Acts::Transit { region, kind: "move", to: Some(server) }
            if region.encoded == moved && region.table == table && server.to_string() == to)
    });
    assert!(found_move.is_some(), "no move of {moved} to {to} in {procedures:#?}");

    // The servers report every 3 s (hbase.regionserver.msginterval): the status that counts
    // is one whose every report began after the chaos ended (a server that stopped reporting
    // leaves the live ones, and the count below says so).
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let status = loop {
        let status = client.cluster_status().unwrap();
        if status.live.iter().all(|s| s.report_start_ms > after) {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    assert!(status.master.is_some() && status.dead.is_empty(), "{status:?}");
    assert_eq!(status.live.len(), 2, "{status:?}");
    let regions: Vec<_> = status
        .live
        .iter()
        .flat_map(|s| &s.regions)
        .filter(|r| r.table == table)
        .collect();
    assert_eq!(regions.len(), store.regions(&table).unwrap().len() + 1, "{regions:?}");
    let to_addr = to.rsplit_once(',').unwrap().0.replace(',', ":");
    let holder = status
        .live
        .iter()
        .find(|s| s.regions.iter().any(|r| r.encoded == moved));
    assert_eq!(holder.map(|s| s.name.addr()), Some(to_addr), "{status:?}");
    for s in &status.live {
        assert!(s.report_end_ms >= s.report_start_ms, "{s:?}");
    }
    store.delete_table(&table).unwrap();
}

/// `scripts/hbase.sh chaos ARGS`: its output, after it succeeded.
fn chaos(args: &[&str]) -> String {
    let out = std::process::Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase.sh"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("chaos")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "chaos {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `host,port,startcode` (as HBase's Java client prints a server) as `host:port`.
fn addr(server: &str) -> String {
    let mut parts = server.split(',');
    format!("{}:{}", parts.next().unwrap(), parts.next().unwrap())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A run through HBase's own RPC during which `scripts/hbase.sh chaos` flushes a table,
/// splits a region of it and moves another, then major-compacts it: the run's report has each
/// as an event with the table, region and server HBase named, at the time HBase did it, the
/// text table ends with the line that counts them, and nothing happened that the events say
/// did (no server lost or joined, no other split or move of the table).
#[test]
fn a_runs_events_name_the_flush_split_move_and_compaction_chaos_made() {
    use std::io::{BufRead, BufReader};
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    // The small fixture: its action log (3,633 rows) is rows enough to flush, split at one
    // and compact.
    let workload = small_fixture();
    let url = native_url();
    let out = tallrow(dir.path(), &["load", workload.to_str().unwrap(), "--backend", &url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The load is watched too: its line, and its events beside its manifest.
    assert!(out.stdout.contains("\ncluster: "), "{}", out.stdout);
    let beside = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("cluster events: "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let beside = std::fs::read_to_string(dir.path().join(beside.trim())).unwrap();
    assert!(
        beside.starts_with("t_s,utc,kind,table,region,server,detail,source\n"),
        "{beside}"
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(dir.path())
        .env("CI", "1")
        .args(["run", workload.to_str().unwrap(), "--backend", &url])
        .args(["--threads", "2", "--duration", "20m", "--warmup", "1s"])
        .args(["--metrics", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its live metrics, named on stderr first: what the observer has read so far.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut early = String::new();
    let metrics = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no metrics: {early}");
        if let Some(addr) = line.trim_end().strip_prefix("tallrow: metrics at http://") {
            break crate::common::Metrics(addr.trim_end_matches("/metrics").to_string());
        }
        early.push_str(&line);
    };
    // A thread drains the rest, so that the run never waits on a full pipe.
    let stderr = std::thread::spawn(move || {
        let mut rest = early;
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        rest
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut read = String::new();
    while !read.contains("running ") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the run ended first: {read}");
        read.push_str(&line);
    }
    let began = now_ms();
    let table = "useractions";
    let flushed = chaos(&["flush", table]);
    let flushed_at = now_ms();
    let shuffled = chaos(&["shuffle", table, "1"]);
    let compacting = now_ms();
    let compacted = chaos(&["compact", table]);
    // Every region server's next report, which lists what ended last, then the signal.
    let ended = now_ms();
    let client = crate::common::raw_client();
    while !client
        .cluster_status()
        .unwrap()
        .live
        .iter()
        .all(|s| s.report_start_ms > ended)
    {
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    // Each region server's /jmx read twice (every 10 s), so that the second has GC figures.
    metrics.wait_for("two /jmx reads of each region server", 4, |m| {
        m.sum("tallrow_cluster_jmx_reads_total", &[])
    });
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.stdout = Some(stdout.into_inner());
    let out = child.wait_with_output().unwrap();
    let stdout = format!("{read}{}", String::from_utf8_lossy(&out.stdout));
    let stderr = stderr.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .map(|p| dir.path().join(p.trim()))
        .unwrap_or_else(|| panic!("no report in {stdout}"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    let started_ms = summary["started_ms"].as_i64().unwrap();
    let mut events = csv::Reader::from_path(report.join("events.csv")).unwrap();
    assert_eq!(
        events.headers().unwrap().iter().collect::<Vec<_>>(),
        ["t_s", "utc", "kind", "table", "region", "server", "detail", "source"]
    );
    // (at ms, kind, table, region, server, detail)
    let rows: Vec<(u64, String, String, String, String, String)> = events
        .records()
        .map(|r| {
            let r = r.unwrap();
            let t: f64 = r[0].parse().unwrap();
            let at = (started_ms as f64 + t * 1000.0).round() as u64;
            (at, r[2].into(), r[3].into(), r[4].into(), r[5].into(), r[6].into())
        })
        .collect();
    // Within the chaos command that made it: procedures at HBase's own times, flushes and
    // compactions by the next report of their server (every 3 s), the poll (1 s) aside.
    let window = |from: u64, to: u64| (from, to + 4_000);
    let has = |kind: &str, region: &str, server: &str, detail: &str, (after, before): (u64, u64)| {
        rows.iter().any(|(at, k, t, r, s, d)| {
            k == kind
                && t == table
                && r == region
                && s == server
                && d.starts_with(detail)
                && *at + 1 >= after
                && *at <= before
        })
    };
    let word = |text: &str, prefix: &str, n: usize| -> String {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().nth(n))
            .unwrap_or_else(|| panic!("{prefix} in {text}"))
            .to_string()
    };
    let (region, server) = (word(&flushed, "flushed ", 0), addr(&word(&flushed, "flushed ", 1)));
    assert!(
        has("flush", &region, &server, "end", window(began, flushed_at)),
        "{region} on {server} in {rows:#?}"
    );
    let split = word(&shuffled, "split ", 0);
    assert!(
        has("split", &split, &server, "start, into ", window(flushed_at, compacting)),
        "{split} in {rows:#?}"
    );
    assert!(
        has("split", &split, &server, "end, success", window(flushed_at, compacting)),
        "{rows:#?}"
    );
    let (moved, from, to) = (
        word(&shuffled, "moved ", 0),
        addr(&word(&shuffled, "moved ", 2)),
        addr(&word(&shuffled, "moved ", 4)),
    );
    assert!(
        has(
            "move",
            &moved,
            &from,
            &format!("start, to {to}"),
            window(flushed_at, compacting)
        ),
        "{moved} in {rows:#?}"
    );
    for line in compacted.lines().filter_map(|l| l.strip_prefix("compacted ")) {
        let (region, server) = line.split_once(' ').unwrap();
        assert!(
            has(
                "compaction",
                region,
                &addr(server),
                "end, major, ",
                window(compacting, ended)
            ),
            "a major compaction of {region} on {server} in {rows:#?}"
        );
    }
    // Nothing that did not happen: one split and one move of the table, no server changes.
    let count = |kind: &str, detail: &str| {
        rows.iter()
            .filter(|(_, k, t, _, _, d)| {
                k == kind
                    && (kind.starts_with("server") || kind.starts_with("master") || t == table)
                    && d.starts_with(detail)
            })
            .count()
    };
    assert_eq!((count("split", "start"), count("move", "start")), (1, 1), "{rows:#?}");
    assert_eq!(
        (
            count("server_dead", ""),
            count("server_joined", ""),
            count("master_changed", "")
        ),
        (0, 0, 0),
        "{rows:#?}"
    );
    // The counts are the cluster's (other tests' tables too), a span once, as events.csv has
    // them: its start, or its end where it began before the observer looked (another test's
    // move in flight at the run's start).
    let starts = |kind: &str| {
        let mut open: Vec<(&str, &str)> = Vec::new();
        let mut n = 0u64;
        for (_, _, _, r, s, d) in rows.iter().filter(|row| row.1 == kind) {
            if d.starts_with("start") {
                open.push((r, s));
                n += 1;
            } else if d.starts_with("end") {
                match open.iter().position(|o| *o == (r.as_str(), s.as_str())) {
                    Some(i) => {
                        open.remove(i);
                    }
                    None => n += 1,
                }
            }
        }
        n
    };
    let events = &summary["events"];
    for kind in ["split", "move"] {
        assert_eq!(events[kind].as_u64(), Some(starts(kind)), "{kind}: {summary}");
    }
    let line = stdout
        .lines()
        .find(|l| l.starts_with("cluster: "))
        .unwrap_or_else(|| panic!("no cluster line in {stdout}"));
    for part in [
        format!("{} split", starts("split")),
        format!("{} move", starts("move")),
        " major compaction".to_string(),
        ", 0 servers lost".to_string(),
    ] {
        assert!(line.contains(&part), "{part} in {line}");
    }
    // index.html draws them over the plot, each with its words, and names them in the
    // table of the worst seconds.
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains(&format!("split (table {table}, region {split}")),
        "{html}"
    );
    assert!(html.contains("What happened when latency rose"), "{html}");
    // A row per region server report, both servers named; and a row per read of each one's
    // /jmx (every 10 s, on the info port it reports), its GC counted from its second.
    let samples = std::fs::read_to_string(report.join("cluster.csv")).unwrap();
    for s in [&from, &to] {
        assert!(samples.contains(&format!(",{s},")), "{s} in {samples}");
    }
    let mut csv = csv::Reader::from_reader(samples.as_bytes());
    let header: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let jmx: Vec<csv::StringRecord> = csv
        .records()
        .map(Result::unwrap)
        .filter(|r| !r[col("compactions_queued")].is_empty())
        .collect();
    for s in [&from, &to] {
        let mine: Vec<&csv::StringRecord> = jmx.iter().filter(|r| &r[col("server")] == s.as_str()).collect();
        assert!(mine.len() >= 2, "{s}'s /jmx read twice in {samples}");
        assert!(
            mine[0][col("gc_ms")].is_empty() && !mine[1][col("gc_ms")].is_empty(),
            "{samples}"
        );
        assert!(
            mine.iter().all(|r| r[col("rpc_queued")].parse::<u64>().is_ok()),
            "{samples}"
        );
    }
    // Nothing filled a memstore to its blocking limit.
    assert!(!rows.iter().any(|r| r.1 == "writes_blocked"), "{rows:#?}");
}
