//! `tallrow keys compare` through the binary: on the embedded store and against real HBase's
//! Thrift2 server, each variant is loaded with its own keys into tables split as asked, the
//! run's writes under `latest` skew pile onto the last region with unsalted keys and spread
//! with bucket salts, and the comparison folder says so in numbers.

use crate::common::{Harness, SchemaTables, real_hbase, real_hbase_there, tallrow};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/keys.toml")
}

/// The one comparison folder under `reports`, and its keys.json.
fn comparison(reports: &Path) -> (PathBuf, Value) {
    let dirs: Vec<PathBuf> = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let dir = dirs[0].clone();
    assert!(
        dir.file_name().unwrap().to_str().unwrap().starts_with("keys-keys-"),
        "{dir:?}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("keys.json")).unwrap()).unwrap();
    // It reads back as the report's type, which writes it out again the same.
    let typed: tallrow::report::keys::KeysReport = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), json);
    (dir, json)
}

fn variant<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("variant {name} in {report}"))
}

/// `useractions`' figures in a variant's load or run regions.
fn actions<'a>(v: &'a Value, phase: &str) -> &'a Value {
    v[phase]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["table"] == "useractions")
        .unwrap_or_else(|| panic!("useractions in {phase} of {v}"))
}

#[test]
fn keys_compare_on_the_embedded_store_shows_unsalted_writes_piling_onto_the_last_region() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let out = tallrow(dir.path(), &["keys", "compare", wl.to_str().unwrap(), "--regions", "4"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The workload keeps the seed's unsalted layouts, so `salt-none` would repeat `seed`.
    assert!(
        out.stdout
            .contains("salt-none left out: it keys keys's tables as seed does"),
        "{}",
        out.stdout
    );
    let (folder, report) = comparison(&dir.path().join("reports"));
    for f in ["index.html", "variants.csv", "latency.csv"] {
        assert!(folder.join(f).is_file(), "{f}");
    }
    let names: Vec<&str> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["seed", "forward", "salt-hash", "salt-16"]);
    assert_eq!(report["regions_asked"], 4);
    assert_eq!(report["config"]["skew"], "latest");

    let rows = variant(&report, "seed")["load"]["row_writes"].as_u64().unwrap();
    for name in &names {
        let v = variant(&report, name);
        assert_eq!(v["load"]["row_writes"].as_u64().unwrap(), rows, "{name}: the same data");
        let sub = folder.join(name);
        for f in ["load.json", "summary.json", "regions.csv", "index.html"] {
            assert!(sub.join(f).is_file(), "{name}/{f}");
        }
        // Pre-split at quantiles or bucket boundaries, every variant's load lands evenly.
        let load = actions(v, "load");
        assert_eq!(load["regions"], 4, "{name}");
        let even = load["write_max_mean"].as_f64().unwrap();
        assert!(even < 1.2, "{name}: load max/mean {even}");
        let ops = v["run"]["ops"].as_array().unwrap();
        assert!(
            ops.iter()
                .any(|o| o["op"] == "action_write" && o["count"].as_u64().unwrap() > 0),
            "{name}: {ops:?}"
        );
    }
    // Each variant was loaded with its own keys: the bucket salt splits at bucket boundaries.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("salt-16/load.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["tables"]["useractions"]["split_points"],
        serde_json::json!(["\\x04", "\\x08", "\\x0C"])
    );
    assert_eq!(
        variant(&report, "salt-16")["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["table"] == "useractions")
            .unwrap()["keys"],
        "order=reverse salt=16"
    );

    // Under `latest` skew the newest users' writes pile onto the last region of the unsalted
    // layouts (and of seed 002's hash, the id itself), while 16 buckets spread them.
    for name in ["seed", "forward", "salt-hash"] {
        let r = actions(variant(&report, name), "run");
        assert_eq!(r["write_hottest_region"], 4, "{name}: {r}");
        let share = r["write_hottest_share"].as_f64().unwrap();
        assert!(share > 0.6, "{name}: {share}");
    }
    let spread = actions(variant(&report, "salt-16"), "run");
    let share = spread["write_hottest_share"].as_f64().unwrap();
    assert!(share < 0.45, "salt-16: {share}");

    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["table"] == "useractions" && f["kind"] == "writes")
        .expect("a finding on useractions' writes");
    let text = finding["text"].as_str().unwrap();
    assert!(
        text.contains("Unsalted keys (seed, forward) put") && text.contains("into one region, the last"),
        "{text}"
    );
    assert!(out.stdout.contains(text), "the terminal prints the findings");
    let html = std::fs::read_to_string(folder.join("index.html")).unwrap();
    assert!(html.contains("<h2>Findings</h2>") && html.contains("salt-16/regions.svg"));
    let csv = std::fs::read_to_string(folder.join("latency.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("salt-16,action_write,")).count(),
        1
    );

    // Without --keep the variants' data directories are gone.
    assert!(!dir.path().join("data/keys-keys").exists());
}

#[test]
fn keys_compare_runs_the_variants_asked_for_and_refuses_bad_ones_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let w = wl.to_str().unwrap();
    let out = tallrow(
        dir.path(),
        &[
            "keys",
            "compare",
            w,
            "--backend",
            "memory:",
            "--variant",
            "fwd=order=forward",
            "--variant",
            "b8=actions.salt=8",
            "--regions",
            "8",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let (_, report) = comparison(&dir.path().join("reports"));
    let b8 = variant(&report, "b8");
    let keys: Vec<(&str, &str)> = b8["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["design"].as_str().unwrap(), t["keys"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("weibo", "order=reverse salt=none"),
            ("actions", "order=reverse salt=8")
        ]
    );
    assert_eq!(actions(b8, "load")["regions"], 8);
    assert_eq!(variant(&report, "fwd")["spec"], "order=forward");

    for (args, says) in [
        (vec!["--variant", "nospec"], "--variant \"nospec\": not NAME=SPEC"),
        (
            vec!["--variant", "x=order=sideways"],
            "--variant \"x=order=sideways\": order: \"sideways\" is not reverse or forward",
        ),
        (
            vec!["--variant", "a=seed", "--variant", "a=salt=4"],
            "a variant named a is given twice",
        ),
        (vec!["--variant", "a/b=seed"], "the name must be 1-40 letters"),
        (vec!["--regions", "0"], "--regions 0: must be between 1 and 1024"),
    ] {
        let mut all = vec!["keys", "compare", w, "--backend", "null:"];
        all.extend(args.iter().copied());
        let out = tallrow(dir.path(), &all);
        assert_ne!(out.code, 0, "{args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    // A workload without a table a design keys has nothing to compare.
    let graph = dir.path().join("graph.toml");
    std::fs::write(
        &graph,
        "name = \"graph\"\nseed = 1\n[data]\nusers = 100\n[data.follows]\nmean = 3.0\n",
    )
    .unwrap();
    let out = tallrow(
        dir.path(),
        &[
            "keys",
            "compare",
            graph.to_str().unwrap(),
            "--backend",
            "null:",
            "--ops",
            "10",
        ],
    );
    assert_ne!(out.code, 0);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("no table keyed by a design"), "{}", out.stderr);
}

/// Against real HBase through Thrift2: each variant's tables are created with the regions
/// asked, the region HBase reports as the last takes the unsalted writes, the tables are
/// dropped between variants, and tables left over are replaced only when asked.
#[test]
fn keys_compare_on_real_hbase_counts_the_regions_hbase_reports() {
    if !real_hbase_there() {
        return;
    }
    let url = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    compare_on_real_hbase(SchemaTables::thrift2(), &url);
}

/// The same through HBase's own RPC.
#[test]
fn keys_compare_through_hbases_own_rpc() {
    if !real_hbase_there() {
        return;
    }
    let url = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    compare_on_real_hbase(SchemaTables::native(), &url);
}

fn compare_on_real_hbase(turn: SchemaTables, url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let w = wl.to_str().unwrap();
    let out = tallrow(
        dir.path(),
        &[
            "keys",
            "compare",
            w,
            "--backend",
            url,
            "--regions",
            "4",
            "--variant",
            "seed=seed",
            "--variant",
            "salt-16=salt=16",
            "--warmup",
            "1s",
            "--keep",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let (_, report) = comparison(&dir.path().join("reports"));
    let seed = actions(variant(&report, "seed"), "run");
    assert_eq!(seed["regions"], 4, "HBase reports the regions asked: {seed}");
    assert_eq!(seed["write_hottest_region"], 4, "{seed}");
    assert!(seed["write_hottest_share"].as_f64().unwrap() > 0.6, "{seed}");
    let spread = actions(variant(&report, "salt-16"), "run");
    assert!(spread["write_hottest_share"].as_f64().unwrap() < 0.45, "{spread}");
    // --keep left the last variant's tables, with its bucket splits.
    let store = turn.store();
    let splits: Vec<Vec<u8>> = store.regions("useractions").unwrap();
    assert_eq!(splits, [vec![4u8], vec![8], vec![12]]);

    // Tables left over are the workload's: refused without --replace, dropped with it. The
    // same workload at a tenth of its users: what is refused or dropped goes by the tables'
    // names, and the load after the drop need not be the first one's again.
    let reports = dir.path().join("again");
    let text = std::fs::read_to_string(&wl).unwrap();
    assert!(text.contains("\nusers = 2000\n"), "{text}");
    let fewer = dir.path().join("keys.toml");
    std::fs::write(&fewer, text.replace("\nusers = 2000\n", "\nusers = 200\n")).unwrap();
    let again = |extra: &[&str]| {
        let mut args = vec![
            "keys",
            "compare",
            fewer.to_str().unwrap(),
            "--backend",
            url,
            "--regions",
            "2",
            "--variant",
            "seed=seed",
            "--ops",
            "200",
            "--warmup",
            "0s",
            "--reports",
            reports.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        tallrow(dir.path(), &args)
    };
    let out = again(&[]);
    assert_ne!(out.code, 0);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("pass --replace"), "{}", out.stderr);
    let out = again(&["--replace"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let names: Vec<String> = store.list_tables().unwrap().into_iter().map(|t| t.name).collect();
    assert!(
        !names.iter().any(|n| n == "useractions"),
        "dropped after the run: {names:?}"
    );
    drop(turn);
}
