//! The hbase backend end to end through the binary, against real HBase (scripts/hbase.sh):
//! `load`, `verify` and `run` through both Thrift1 servers and the Thrift2 server (the
//! small fixture: several batches and verify blocks, every kind of row). The contract and DAO suites run against real HBase in `contract` and `dao`.

use crate::common::{
    PrefixedSchemaTables, RealHBaseHarness, load_verify_run_and_miss_a_row_with, real_hbase, real_hbase_there,
    small_fixture,
};
use std::path::PathBuf;

fn load_verify_and_run(server: fn() -> RealHBaseHarness, url: &str, api: &str, workload: PathBuf) {
    // The workload's tables under a prefix of this test's own, dropped before and after.
    let tables = PrefixedSchemaTables::new(server());
    let label = format!("(HBase {api}, ");
    let summary = load_verify_run_and_miss_a_row_with(workload.to_str().unwrap(), &[&tables.set()], url, &label);
    assert!(
        summary.contains(&format!("HBase {api}")),
        "the report names the backend"
    );
}

#[test]
fn load_verify_and_run_on_real_hbase_buffered_binary() {
    if !real_hbase_there() {
        return;
    }
    let url = format!("hbase://{}", real_hbase("TALLROW_HBASE_THRIFT1").unwrap());
    load_verify_and_run(RealHBaseHarness::buffered_binary, &url, "Thrift1", small_fixture());
}

#[test]
fn load_verify_and_run_on_real_hbase_framed_compact() {
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase("TALLROW_HBASE_THRIFT1_FC").unwrap();
    let url = format!("hbase://{addr}?transport=framed&protocol=compact");
    load_verify_and_run(RealHBaseHarness::framed_compact, &url, "Thrift1", small_fixture());
}

#[test]
fn load_verify_and_run_on_real_hbase_thrift2() {
    if !real_hbase_there() {
        return;
    }
    let url = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    load_verify_and_run(RealHBaseHarness::thrift2, &url, "Thrift2", small_fixture());
}

/// The messaging example, a design of the workload's own, through the Thrift2 gateway.
#[test]
fn a_design_of_its_own_loads_and_verifies_through_thrift2() {
    if !real_hbase_there() {
        return;
    }
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::thrift2());
    let url = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    crate::common::own_design_loads_verifies_and_misses_a_row(&[&tables.set()], &url, "(HBase Thrift2, ");
}
