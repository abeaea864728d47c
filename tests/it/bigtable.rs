//! The bigtable backend end to end through the binary, against Google's Bigtable emulator:
//! `load`, `verify` and `run` of the quickstart at 500 users, and one-line errors. The
//! contract and DAO suites run against the emulator in `contract` and `dao`.

use crate::common::{bigtable_emulator, load_verify_run_and_miss_a_row_with, tallrow};
use std::path::Path;

#[test]
fn load_verify_and_run_the_quickstart_on_the_emulator() {
    if !bigtable_emulator() {
        return;
    }
    let url = format!("bigtable://tallrow-test/quickstart-{}", std::process::id());
    // The quickstart's keys (the emulator scans forward only), at 500 users: two blocks of
    // users, 94,275 rows.
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/quickstart.toml");
    let summary = load_verify_run_and_miss_a_row_with(
        workload.to_str().unwrap(),
        &["data.users=500"],
        &url,
        "(Bigtable emulator at ",
    );
    assert!(summary.contains("Bigtable emulator"), "the report names the backend");
}

/// The messaging example, a design of the workload's own, on the emulator.
#[test]
fn a_design_of_its_own_loads_and_verifies_on_the_emulator() {
    if !bigtable_emulator() {
        return;
    }
    let url = format!("bigtable://tallrow-test/messaging-{}", std::process::id());
    crate::common::own_design_loads_verifies_and_misses_a_row(&[], &url, "(Bigtable emulator at ");
}

#[test]
fn bad_urls_and_an_absent_emulator_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = crate::common::small_fixture();
    let fixture = fixture.to_str().unwrap();
    for url in ["bigtable://project", "bigtable://p/i?channels=0", "bigtable://p q/i"] {
        let out = tallrow(dir.path(), &["load", fixture, "--backend", url]);
        assert_ne!(out.code, 0, "{url}");
        assert_eq!(out.stderr.lines().count(), 1, "{url}: {}", out.stderr);
        assert!(out.stderr.contains("bigtable://"), "{url}: {}", out.stderr);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(dir.path())
        .env("CI", "1")
        .env("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1")
        .args(["load", fixture, "--backend", "bigtable://p/i"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot use the Bigtable emulator at 127.0.0.1:1"),
        "{stderr}"
    );
}

/// The emulator's `SampleRowKeys` is a random 1% of the row keys and the last one, not
/// tablets: a loaded, pre-split table there counts as one region, the same on every call.
#[test]
fn a_table_on_the_emulator_is_one_region() {
    if !bigtable_emulator() {
        return;
    }
    use tallrow::store::{Mutation, RowMutation, TableDescriptor, backend::Backend};
    let url = format!("bigtable://tallrow-test/regions-{}", std::process::id());
    let store = Backend::parse(&url, Path::new("unused")).unwrap().open().unwrap();
    let t = "regions";
    let splits = vec![b"k0400".to_vec(), b"k0800".to_vec()];
    store
        .create_table(&TableDescriptor::new(t, &["f"], 1).with_splits(splits))
        .unwrap();
    let rows: Vec<RowMutation> = (0..1000)
        .map(|i| RowMutation {
            row: format!("k{i:04}").into_bytes(),
            mutations: vec![Mutation::put("f", "q", 1, "v")],
        })
        .collect();
    store.mutate(t, &rows).unwrap();
    for _ in 0..3 {
        assert_eq!(store.regions(t).unwrap(), Vec::<Vec<u8>>::new());
    }
}
