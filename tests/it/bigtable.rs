//! The bigtable backend end to end through the binary, against Google's Bigtable emulator:
//! `load`, `verify` and `run` of the quickstart workload, and one-line errors. The contract
//! and DAO suites run against the emulator in `contract` and `dao`.

use crate::common::{bigtable_emulator, tallrow};
use std::path::Path;
use tallrow::store::{Backend, Mutation, RowMutation};

fn quickstart() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/quickstart.toml")
        .display()
        .to_string()
}

#[test]
fn load_verify_and_run_the_quickstart_on_the_emulator() {
    if !bigtable_emulator() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("bigtable://tallrow-test/quickstart-{}", std::process::id());
    let workload = quickstart();

    let out = tallrow(dir.path(), &["load", &workload, "--backend", &url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(Bigtable emulator at "), "{}", out.stdout);
    assert!(
        out.stdout.contains("1,109,990"),
        "every row of the quickstart: {}",
        out.stdout
    );

    let out = tallrow(dir.path(), &["verify", &workload, "--backend", &url]);
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
            &workload,
            "--backend",
            &url,
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
    let summary = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path().join("summary.json"))
        .find(|p| p.exists())
        .expect("a report with a summary");
    let summary = std::fs::read_to_string(summary).unwrap();
    assert!(summary.contains("Bigtable emulator"), "the report names the backend");

    // Verify reads what is there: a row taken away behind its back is reported missing.
    let store = Backend::parse(&url, Path::new(".")).unwrap().open().unwrap();
    store
        .mutate(
            "weibo:user",
            &[RowMutation::new("1", vec![Mutation::DeleteRow { timestamp: None }])],
        )
        .unwrap();
    drop(store);
    let out = tallrow(dir.path(), &["verify", &workload, "--backend", &url]);
    assert_ne!(out.code, 0);
    assert!(out.stdout.contains("missing row weibo:user"), "{}", out.stdout);
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
