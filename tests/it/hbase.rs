//! The hbase backend end to end through the binary, against real HBase (scripts/hbase.sh):
//! `load`, `verify` and `run` of a 100,000-row workload through both Thrift1 servers. The
//! contract and DAO suites run against real HBase in `contract` and `dao`.

use crate::common::{RealHBaseDaoHarness, real_hbase, real_hbase_there, tallrow};
use std::path::Path;
use tallrow::store::{Backend, Mutation, RowMutation};

fn load_verify_and_run(turn: fn() -> RealHBaseDaoHarness, url: &str) {
    // The workload's tables have the schemas' fixed names: take the DAO suites' turn, which
    // also drops them before and after.
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hbase.toml");
    let workload = workload.to_str().unwrap();
    let out = tallrow(dir.path(), &["load", workload, "--backend", url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(HBase Thrift1, "), "{}", out.stdout);
    assert!(
        out.stdout.contains("100,936"),
        "every row of the workload: {}",
        out.stdout
    );
    let out = tallrow(dir.path(), &["verify", workload, "--backend", url]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("OK: the store holds exactly the workload's data"),
        "{}",
        out.stdout
    );
    let reports = dir.path().join("reports");
    let out = tallrow(
        dir.path(),
        &[
            "run",
            workload,
            "--backend",
            url,
            "--ops",
            "400",
            "--warmup",
            "0s",
            "--reports",
            reports.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("400 operations"), "{}", out.stdout);

    // Verify reads what is there: a row deleted behind its back is reported missing. (The
    // run wrote to the store, so this checks one row's absence, not the whole.)
    let store = Backend::parse(url, Path::new(".")).unwrap().open().unwrap();
    store
        .mutate(
            "weibo:user",
            &[RowMutation::new("1", vec![Mutation::DeleteRow { timestamp: None }])],
        )
        .unwrap();
    drop(store);
    let out = tallrow(dir.path(), &["verify", workload, "--backend", url]);
    assert_ne!(out.code, 0);
    assert!(out.stdout.contains("missing row weibo:user"), "{}", out.stdout);
}

#[test]
fn load_verify_and_run_on_real_hbase_buffered_binary() {
    if !real_hbase_there() {
        return;
    }
    let url = format!("hbase://{}", real_hbase("TALLROW_HBASE_THRIFT1").unwrap());
    load_verify_and_run(RealHBaseDaoHarness::buffered_binary, &url);
}

#[test]
fn load_verify_and_run_on_real_hbase_framed_compact() {
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase("TALLROW_HBASE_THRIFT1_FC").unwrap();
    let url = format!("hbase://{addr}?transport=framed&protocol=compact");
    load_verify_and_run(RealHBaseDaoHarness::framed_compact, &url);
}
