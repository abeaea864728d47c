//! `tallrow run`, `compare` and `report merge` through the real binary: the report folder and
//! every file in it, a third-party reader of its HdrHistogram logs, compare's exit codes, and
//! merging shards.

use super::common::{Out, loaded_reads, small_fixture, tallrow};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> String {
    small_fixture().display().to_string()
}

/// The report folder a run printed.
fn report_dir(dir: &Path, stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .expect("a report line");
    dir.join(line)
}

fn run(dir: &Path, backend: &str, extra: &[&str]) -> (Out, PathBuf) {
    let wl = fixture();
    let mut args = vec![
        "run",
        wl.as_str(),
        "--backend",
        backend,
        "--threads",
        "2",
        "--warmup",
        "0s",
        "--interval",
        "200ms",
    ];
    args.extend_from_slice(extra);
    let out = tallrow(dir, &args);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let report = report_dir(dir, &out.stdout);
    (out, report)
}

/// `report merge A B --out OUT` in `dir`.
fn merge_into(dir: &Path, a: &Path, b: &Path, out: &str) -> Out {
    tallrow(
        dir,
        &[
            "report",
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            out,
        ],
    )
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// `run` loads a target that holds none of the workload's tables, whatever else it holds (a
/// shared cluster's), leaving those alone; it refuses one that holds some of the workload's
/// tables and lacks others, naming them.
#[test]
fn run_loads_beside_other_tables_and_refuses_a_part_of_its_own() {
    use tallrow::store::{TableDescriptor, backend::Backend};
    let dir = tempfile::tempdir().unwrap();
    let with = |name: &str, table: &str| {
        let url = format!("embedded:{}", dir.path().join(name).display());
        let store = Backend::parse(&url, dir.path()).unwrap().open().unwrap();
        store.create_table(&TableDescriptor::new(table, &["f"], 1)).unwrap();
        url
    };
    let shared = with("shared", "someone_elses");
    let (out, _) = run(dir.path(), &shared, &["--ops", "100"]);
    assert!(
        out.stdout
            .starts_with("the target held none of the workload's tables: loaded "),
        "{}",
        out.stdout
    );
    let store = Backend::parse(&shared, dir.path()).unwrap().open().unwrap();
    let names: Vec<String> = store.list_tables().unwrap().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"someone_elses".to_string()), "{names:?}");
    assert!(names.contains(&"useractions".to_string()), "{names:?}");
    drop(store);
    let part = with("part", "useractions");
    let out = tallrow(dir.path(), &["run", &fixture(), "--backend", &part, "--ops", "10"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("holds some of small's tables but not ") && out.stderr.contains("weibo:inbox"),
        "{}",
        out.stderr
    );
}

#[test]
fn run_loads_an_empty_target_then_reports_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = run(dir.path(), "delay:1ms:embedded:store", &["--ops", "400"]);
    assert!(out.stderr.is_empty(), "quiet outside a terminal: {}", out.stderr);
    assert!(
        out.stdout
            .starts_with("the target held none of the workload's tables: loaded "),
        "{}",
        out.stdout
    );
    let header = out
        .stdout
        .lines()
        .find(|l| l.starts_with("operation"))
        .expect("a table");
    for col in ["count", "ops/s", "mean", "p50", "p90", "p99", "p99.9", "max", "errors"] {
        assert!(header.split_whitespace().any(|c| c == col), "{col} in {header}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["valid"], true);
    assert_eq!(summary["workload"]["name"], "small");
    assert_eq!(summary["workload"]["data_digest"].as_str().unwrap().len(), 32);
    assert!(
        summary["backend"]["identity"]
            .as_str()
            .unwrap()
            .starts_with("delay (1ms) over embedded")
    );
    assert!(summary["machine"]["cores"].as_u64().unwrap() >= 1);
    assert_eq!(summary["config"]["ops"], 400);
    assert_eq!(
        summary["all"]["count"].as_u64().unwrap() + summary["all"]["errors"].as_u64().unwrap(),
        400
    );
    let ops: Vec<String> = summary["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["op"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ops.len(), 17, "the default mix over every design: {ops:?}");
    for op in &ops {
        for ext in ["hgrm", "hlog"] {
            let f = report.join(format!("{op}.{ext}"));
            assert!(f.is_file(), "{}", f.display());
        }
    }
    let rows = csv_rows(&report.join("ops.csv"));
    assert_eq!(rows[0][..4], ["op", "count", "errors", "ops_per_s"]);
    assert_eq!(rows.len(), 1 + ops.len() + 1, "a row per operation and one for all");
    assert_eq!(rows.last().unwrap()[0], "all");
    let series = csv_rows(&report.join("timeseries.csv"));
    assert_eq!(series[0][..3], ["start_s", "length_s", "op"]);
    // Retries on the `all` rows only (a retry belongs to no one operation): none here.
    assert_eq!(series[0].last().unwrap(), "retries");
    for row in &series[1..] {
        assert_eq!(row.last().unwrap(), if row[2] == "all" { "0" } else { "" }, "{row:?}");
    }
    assert!(series.len() > ops.len() + 1);
    let svg = std::fs::read_to_string(report.join("latency.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<img src=\"latency.svg\"") && html.contains("<td><a href=\"timeline.hgrm\">"));
    // Over time: per operation and all, throughput, p50 and p99, a point per interval.
    assert!(html.contains("<img src=\"timeseries.svg\""));
    let over_time = std::fs::read_to_string(report.join("timeseries.svg")).unwrap();
    assert_eq!(over_time.matches("<polyline").count(), 3 * (ops.len() + 1));
    let intervals = (series.len() - 1) / (ops.len() + 1);
    let rates = over_time
        .lines()
        .find(|l| l.contains("<title>all ops/s</title>"))
        .expect("the all line");
    let points = rates.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
    assert_eq!(points.split_whitespace().count(), intervals, "{rates}");
    let hgrm = std::fs::read_to_string(report.join("timeline.hgrm")).unwrap();
    assert!(hgrm.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"));
    let load_manifests = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("-load-"))
        .count();
    assert_eq!(load_manifests, 1, "the load wrote its manifest");

    // A second run finds the data and does not load again.
    let (again, _) = run(dir.path(), "embedded:store", &["--ops", "50"]);
    assert!(
        again.stdout.starts_with("running small against embedded"),
        "{}",
        again.stdout
    );
}

#[test]
fn the_hdrhistogram_python_package_reads_the_interval_logs_as_ops_csv_says() {
    let Some(python) = crate::common::python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = run(dir.path(), "memory:", &["--duration", "2s"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/read_report.py");
    let out = Command::new(&python).arg(&script).arg(&report).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.lines().filter(|l| l.ends_with(": agree")).count() >= 10,
        "{stdout}"
    );
    assert!(
        stdout.contains("values in 10 intervals"),
        "2 s in 200 ms intervals: {stdout}"
    );
}

#[test]
fn compare_passes_identical_runs_and_fails_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let mix_args = ["--ops", "200"];
    // On the stores' simulated clocks: a call takes 1 ms, or 5, exactly.
    let (_, fast) = run(dir.path(), "delay:1ms,clock=virtual:embedded:store", &mix_args);
    let (_, again) = run(dir.path(), "delay:1ms,clock=virtual:embedded:again", &mix_args);
    let (_, slow) = run(dir.path(), "delay:5ms,clock=virtual:embedded:store", &mix_args);
    let (f, s) = (fast.to_str().unwrap(), slow.to_str().unwrap());
    assert_ne!(fast, again, "two runs, two reports");

    // Two runs of the same settings, each its own report.
    let same = tallrow(
        dir.path(),
        &[
            "compare",
            f,
            again.to_str().unwrap(),
            "--threshold",
            "p99=10%",
            "--threshold",
            "throughput=5%",
        ],
    );
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.contains("verdict: no regression ("), "{}", same.stdout);
    assert!(
        same.stdout
            .contains("warning: one run a side: the noise between runs is unknown"),
        "{}",
        same.stdout
    );
    assert!(
        same.stdout.lines().any(|l| l.starts_with("timeline ")),
        "{}",
        same.stdout
    );

    let worse = tallrow(dir.path(), &["compare", f, s, "--threshold", "p50=50%"]);
    assert_eq!(worse.code, 1, "{}{}", worse.stdout, worse.stderr);
    assert!(worse.stdout.contains("REGRESSION: all p50:"), "{}", worse.stdout);
    assert!(worse.stdout.contains("yes, worse"), "{}", worse.stdout);

    // The other way round the candidate is faster: nothing crossed.
    let better = tallrow(dir.path(), &["compare", s, f, "--threshold", "p50=50%"]);
    assert_eq!(better.code, 0, "{}", better.stdout);

    let bad = tallrow(dir.path(), &["compare", f, s, "--threshold", "p98=1%"]);
    assert_eq!(bad.code, 2);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("unknown metric \"p98\""), "{}", bad.stderr);

    let missing = tallrow(dir.path(), &["compare", f, "nowhere"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.starts_with("error: nowhere/summary.json: "),
        "{}",
        missing.stderr
    );
}

/// Three runs a side, taken in turn (baseline, candidate, baseline, ...) so that whatever
/// drifts over the runs falls on both sides: the same build and workload twice is no
/// regression; the candidate through `delay:` with 2 ms added to every call is one, named
/// figure by figure, and the verdict is written as JSON and Markdown.
#[test]
fn compare_judges_three_runs_a_side_against_the_noise_between_them() {
    let dir = tempfile::tempdir().unwrap();
    loaded_reads(
        dir.path(),
        "timeline = 4\nown_posts = 2\nactions_offset = 2\nfollowers = 1\ncategory = 1",
        200,
    );
    let one = |backend: &str, ops: &str| {
        let out = tallrow(
            dir.path(),
            &[
                "run",
                "reads.toml",
                "--backend",
                backend,
                "--set",
                "data.users=200",
                "--ops",
                ops,
                "--threads",
                "2",
                "--warmup",
                "0s",
            ],
        );
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        report_dir(dir.path(), &out.stdout).display().to_string()
    };
    let (mut a, mut b, mut slow) = (Vec::new(), Vec::new(), Vec::new());
    // The slow build: 10 ms a call, so far above what a loaded machine's stalls add to a
    // baseline run's tail that the verdict does not hang on them; 300 operations a run.
    for _ in 0..3 {
        a.push(one("embedded:db", "1500"));
        b.push(one("embedded:db", "1500"));
        slow.push(one("delay:10ms:embedded:db", "300"));
    }
    let compare = |base: &[String], cand: &[String]| {
        let mut args = vec!["compare", "--baseline"];
        args.extend(base.iter().map(String::as_str));
        args.push("--candidate");
        args.extend(cand.iter().map(String::as_str));
        tallrow(dir.path(), &args)
    };
    let same = compare(&a, &b);
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.contains("verdict: no regression ("), "{}", same.stdout);
    // Nothing differs between the runs; what 1,500 calls a run cannot place is named.
    assert!(
        !same
            .stdout
            .lines()
            .any(|l| l.starts_with("warning: ") && !l.starts_with("warning: too few calls to judge ")),
        "{}",
        same.stdout
    );
    assert!(
        same.stdout
            .contains("warning: too few calls to judge timeline p99, timeline p99.9, "),
        "{}",
        same.stdout
    );
    assert!(
        same.stdout
            .lines()
            .any(|l| l.starts_with("timeline ") && l.contains("ops/s")),
        "{}",
        same.stdout
    );

    let worse = compare(&a, &slow);
    assert_eq!(worse.code, 1, "{}{}", worse.stdout, worse.stderr);
    assert!(worse.stdout.contains("REGRESSION: all p50: "), "{}", worse.stdout);
    assert!(worse.stdout.contains("verdict: regression ("), "{}", worse.stdout);
    assert!(
        worse.stdout.contains("warning: the runs differ in backend: "),
        "{}",
        worse.stdout
    );
    // The verdict's files, beside the terminal's table.
    let at = worse.stdout.lines().last().unwrap();
    let md = dir
        .path()
        .join(at.trim_start_matches("verdict: regression (").trim_end_matches(')'));
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.starts_with("## tallrow compare: regression\n"), "{markdown}");
    assert!(markdown.contains("| all | p50 | "), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(md.with_file_name("verdict.json")).unwrap()).unwrap();
    assert_eq!(json["verdict"], "regression");
    assert_eq!(json["baseline"].as_array().unwrap().len(), 3);
    let p50 = json["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["operation"] == "all" && f["figure"] == "p50")
        .unwrap();
    assert_eq!(p50["verdict"], "regression");
    assert!(p50["candidate"].as_f64().unwrap() > 10_000_000.0, "{p50}");

    // Only the figures a threshold names are judged, and beyond it.
    let mut args = vec!["compare", "--threshold", "throughput=99.9%", "--baseline"];
    args.extend(a.iter().map(String::as_str));
    args.push("--candidate");
    args.extend(slow.iter().map(String::as_str));
    let out = tallrow(dir.path(), &args);
    assert_eq!(out.code, 0, "a drop within 99.9%: {}", out.stdout);
    // A percentile the runs hold too few calls to place (1,500 calls a run, p99.9 needs
    // 10,000) cannot pass a gate that names it. The same runs on both sides: two sets of
    // runs of one build can lie apart on a loaded machine (a suite run once measured every
    // rerun's p99.9 at twice the first three's), and the gate would rightly say so.
    let mut args = vec!["compare", "--threshold", "p99.9=10%", "--baseline"];
    args.extend(a.iter().map(String::as_str));
    args.push("--candidate");
    args.extend(a.iter().map(String::as_str));
    let out = tallrow(dir.path(), &args);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("verdict: undecided ("), "{}", out.stdout);
    assert!(
        out.stdout.contains("warning: too few calls to judge timeline p99.9, "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.contains("p99.9") && l.ends_with("too few calls (p99.9 needs 10,000 a run)")),
        "{}",
        out.stdout
    );
    // A percentile too few calls place is still decided where every run's interval lies
    // beyond every baseline run's: 10 ms a call against the baseline's microseconds (each
    // operation's 30 to 600 calls a run cannot place its p99 by the test), and not for the
    // same runs.
    let gate = |cand: &[String]| {
        let mut args = vec!["compare", "--threshold", "p99=10%", "--baseline"];
        args.extend(a.iter().map(String::as_str));
        args.push("--candidate");
        args.extend(cand.iter().map(String::as_str));
        tallrow(dir.path(), &args)
    };
    let out = gate(&slow);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("verdict: regression ("), "{}", out.stdout);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("REGRESSION: timeline p99: ") && l.ends_with(", every run's interval apart)")),
        "{}",
        out.stdout
    );
    let out = gate(&a);
    assert!(!out.stdout.contains("REGRESSION: "), "{}", out.stdout);
    let refused = tallrow(dir.path(), &["compare", "--baseline", &a[0], "--candidate"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
}

#[test]
fn report_merge_adds_up_the_shards() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = run(dir.path(), "memory:", &["--ops", "300", "--shard", "1/2"]);
    let (_, b) = run(dir.path(), "memory:", &["--ops", "200", "--shard", "2/2"]);
    let out = merge_into(dir.path(), &a, &b, "merged");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let merged = dir.path().join("merged");
    let read = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap()
    };
    let (sa, sb, sm) = (read(&a), read(&b), read(&merged));
    let total = |s: &serde_json::Value| s["all"]["count"].as_u64().unwrap() + s["all"]["errors"].as_u64().unwrap();
    assert_eq!(total(&sa), 300);
    assert_eq!(total(&sb), 200);
    assert_eq!(total(&sm), 500);
    assert_eq!(sm["merged_from"].as_array().unwrap().len(), 2);
    assert_eq!(sm["config"]["threads"], 4);
    let rate = |s: &serde_json::Value| s["all"]["ops_per_s"].as_f64().unwrap();
    assert!((rate(&sm) - rate(&sa) - rate(&sb)).abs() < 1.0, "throughputs add up");
    let max = |s: &serde_json::Value| s["all"]["response"]["max"].as_u64().unwrap();
    assert_eq!(max(&sm), max(&sa).max(max(&sb)));
    for f in [
        "ops.csv",
        "timeseries.csv",
        "timeline.hgrm",
        "timeline.hlog",
        "latency.svg",
        "index.html",
    ] {
        assert!(merged.join(f).is_file(), "{f}");
    }
    // A report of other data is refused.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("w.toml"),
        "name = \"other\"\nseed = 1\n[data]\nusers = 50\nstart = 2025-01-01T00:00:00Z\n[data.series]\n",
    )
    .unwrap();
    let o = tallrow(
        other.path(),
        &["run", "w.toml", "--backend", "memory:", "--ops", "20", "--warmup", "0s"],
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let c = report_dir(other.path(), &o.stdout);
    let refused = tallrow(
        dir.path(),
        &["report", "merge", a.to_str().unwrap(), c.to_str().unwrap()],
    );
    assert_eq!(refused.code, 1);
    assert!(refused.stderr.contains("not shards of one run"), "{}", refused.stderr);
}

/// Shards of one run through HBase's own RPC each watch the cluster: `report merge` keeps one
/// observer's events (the first shard that has them), not their sum, and `compare` puts two
/// runs' events side by side. (The events here are written into the shards' reports as an
/// observer leaves them; `native::a_runs_events_name_...` watches a real cluster.)
#[test]
fn report_merge_keeps_one_observers_events_and_compare_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = run(dir.path(), "memory:", &["--ops", "100", "--shard", "1/2"]);
    let (_, b) = run(dir.path(), "memory:", &["--ops", "100", "--shard", "2/2"]);
    let csv = "t_s,utc,kind,table,region,server,detail,source\n\
               1.000,2026-11-29T15:00:01.000Z,split,useractions,abc,rs1:16020,\"start, into d and e\",procedures\n";
    for (d, splits) in [(&b, 1), (&a, 1)] {
        let path = d.join("summary.json");
        let mut s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        s["events"] = serde_json::json!({ "split": splits });
        std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
        std::fs::write(d.join("events.csv"), csv).unwrap();
        std::fs::write(d.join("cluster.csv"), "t_s,utc,server\n").unwrap();
    }
    let out = merge_into(dir.path(), &a, &b, "merged");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let merged = dir.path().join("merged");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["events"],
        serde_json::json!({ "split": 1 }),
        "one observer's, not two"
    );
    assert_eq!(std::fs::read_to_string(merged.join("events.csv")).unwrap(), csv);
    assert!(merged.join("cluster.csv").is_file());

    // A run not observed has no events: `-` beside the other's.
    let (_, c) = run(dir.path(), "memory:", &["--ops", "50"]);
    let out = tallrow(dir.path(), &["compare", c.to_str().unwrap(), merged.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let row: Vec<&str> = out
        .stdout
        .lines()
        .find(|l| l.starts_with("split "))
        .unwrap_or_else(|| panic!("{}", out.stdout))
        .split_whitespace()
        .collect();
    assert_eq!(row, ["split", "-", "1"]);
    assert!(out.stdout.contains("cluster events"), "{}", out.stdout);
}

/// `report merge` given the folder the shards wrote under (as Kubernetes' run Job lays it
/// out): it finds their reports, adds up their regions too, names a missing shard and
/// refuses, merges with `--partial` and says so in the report; a shard twice or a merged
/// report among shards is refused.
#[test]
fn report_merge_takes_a_folder_of_shards_and_names_the_missing() {
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for i in 0..3 {
        let at = format!("run-1/shards/{i}");
        let count = [400, 300, 200][i];
        let (_, r) = run(
            dir.path(),
            "memory:",
            &[
                "--ops",
                &count.to_string(),
                "--shard-index",
                &i.to_string(),
                "--shard-count",
                "3",
                "--reports",
                &at,
            ],
        );
        assert!(r.starts_with(dir.path().join(&at)), "{}", r.display());
        reports.push(r);
    }
    let read = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap()
    };
    let s1 = read(&reports[1]);
    assert_eq!(s1["config"]["shard"], "2/3");
    assert_eq!(s1["config"]["shard_index"], 1);
    assert_eq!(s1["config"]["shard_count"], 3);

    let out = tallrow(dir.path(), &["report", "merge", "run-1/shards", "--out", "merged"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("merged 3 reports (3 merged) into merged"),
        "{}",
        out.stdout
    );
    let m = read(&dir.path().join("merged"));
    let total = |s: &serde_json::Value| s["all"]["count"].as_u64().unwrap() + s["all"]["errors"].as_u64().unwrap();
    assert_eq!(total(&m), 900);
    assert_eq!(m["config"]["shard"], "3 merged");
    assert_eq!(m["config"]["shard_count"], 3);
    assert_eq!(m["config"]["shard_index"], serde_json::Value::Null);
    let from: Vec<String> = m["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for (i, f) in from.iter().enumerate() {
        assert!(f.contains(&format!("shards/{i}/")), "in shard order: {from:?}");
    }
    // regions.csv adds up, row for row, and the summary's skew figures come from it.
    let rows = |d: &Path| csv_rows(&d.join("regions.csv"));
    let merged_rows = rows(&dir.path().join("merged"));
    let shard_rows: Vec<Vec<Vec<String>>> = reports.iter().map(|r| rows(r)).collect();
    assert_eq!(merged_rows[0], shard_rows[0][0], "same header");
    assert!(merged_rows.len() > 1);
    for (k, row) in merged_rows.iter().enumerate().skip(1) {
        assert_eq!(row[..3], shard_rows[0][k][..3], "same table and bounds");
        for c in 3..7 {
            let sum: u64 = shard_rows.iter().map(|s| s[k][c].parse::<u64>().unwrap()).sum();
            assert_eq!(row[c].parse::<u64>().unwrap(), sum, "{} of {row:?}", merged_rows[0][c]);
        }
    }
    let written: u64 = merged_rows[1..].iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
    let skew_written: u64 = m["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rows_written"].as_u64().unwrap())
        .sum();
    assert_eq!(skew_written, written);
    assert!(
        !dir.path().join("merged/regions.svg").exists(),
        "no heat map without intervals"
    );

    // Shard 2/3's report gone: named, refused; then merged with --partial.
    std::fs::rename(dir.path().join("run-1/shards/1"), dir.path().join("aside")).unwrap();
    let refused = tallrow(dir.path(), &["report", "merge", "run-1/shards", "--out", "partial"]);
    assert_eq!(refused.code, 1, "{}", refused.stdout);
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .starts_with("error: run-1/shards: shard 2/3 missing (found 1/3, 3/3)"),
        "{}",
        refused.stderr
    );
    assert!(!dir.path().join("partial").exists());
    let partial = tallrow(
        dir.path(),
        &["report", "merge", "run-1/shards", "--out", "partial", "--partial"],
    );
    assert_eq!(partial.code, 0, "{}{}", partial.stdout, partial.stderr);
    assert!(
        partial.stdout.contains("partial: shard 2/3 missing"),
        "{}",
        partial.stdout
    );
    let p = read(&dir.path().join("partial"));
    assert_eq!(total(&p), 600);
    assert_eq!(p["missing_shards"], serde_json::json!(["2/3"]));
    assert_eq!(p["config"]["shard"], "2 of 3 merged");
    assert_eq!(p["valid"], false);
    assert!(
        p["invalid_reason"]
            .as_str()
            .unwrap()
            .starts_with("shard 2/3 missing: the figures are of 2 of 3 shards"),
        "{}",
        p["invalid_reason"]
    );

    // The same shard twice, and a merged report among shards: refused, naming both.
    let again = tallrow(
        dir.path(),
        &["report", "merge", "run-1/shards", reports[0].to_str().unwrap()],
    );
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("shard 1/3 again (also "), "{}", again.stderr);
    let mixed = tallrow(dir.path(), &["report", "merge", "run-1/shards", "merged"]);
    assert_eq!(mixed.code, 1);
    assert!(
        mixed
            .stderr
            .starts_with("error: merged: a merged report (3 merged): merge the shards' own reports"),
        "{}",
        mixed.stderr
    );
    std::fs::create_dir(dir.path().join("nothing")).unwrap();
    let none = tallrow(dir.path(), &["report", "merge", "nothing"]);
    assert_eq!(none.code, 1);
    assert_eq!(
        none.stderr.trim(),
        "error: nothing: no report folder (one holding a summary.json) in it"
    );
}

/// A run whose --start-at has passed exits 3 with one line and measures nothing, before and
/// after the load the empty target needs; bad shard flags are refused.
#[test]
fn a_run_that_would_start_late_exits_3_without_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let late = tallrow(
        dir.path(),
        &[
            "run",
            &wl,
            "--backend",
            "memory:",
            "--ops",
            "50",
            "--start-at",
            "2026-01-01T00:00:00Z",
        ],
    );
    assert_eq!(late.code, 3, "{}{}", late.stdout, late.stderr);
    assert_eq!(late.stderr.lines().count(), 1, "{}", late.stderr);
    assert!(
        late.stderr
            .starts_with("error: --start-at 2026-01-01T00:00:00.000Z: passed ")
            && late
                .stderr
                .contains("a run that starts late would not measure the same period"),
        "{}",
        late.stderr
    );
    assert!(!dir.path().join("reports").exists(), "nothing written");

    // Passed while the empty target was loaded: the same code, said so. The load's calls
    // each sleep 20 ms (about 390 calls on 2 threads: at least 3.9 s), so a start 1.5 s
    // ahead passes during it once the binary has begun loading within those 1.5 s.
    let at = humantime::format_rfc3339_millis(std::time::SystemTime::now() + std::time::Duration::from_millis(1500))
        .to_string();
    let loading = tallrow(
        dir.path(),
        &[
            "run",
            &wl,
            "--backend",
            "delay:20ms:memory:",
            "--ops",
            "50",
            "--start-at",
            &at,
        ],
    );
    assert_eq!(loading.code, 3, "{}{}", loading.stdout, loading.stderr);
    assert!(loading.stderr.contains(" ago while loading; "), "{}", loading.stderr);
    assert!(
        loading
            .stdout
            .contains("the target held none of the workload's tables: loaded"),
        "{}",
        loading.stdout
    );
    let reports: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        reports.iter().all(|n| n.contains("-load-")),
        "only the load manifest: {reports:?}"
    );

    for (args, want) in [
        (
            vec!["--shard-index", "3", "--shard-count", "3"],
            "error: --shard-index 3: not below --shard-count 3 (the index counts from 0)",
        ),
        (
            vec!["--shard-index", "0", "--shard-count", "0"],
            "error: --shard-count 0: not between 1 and 1000000",
        ),
    ] {
        let mut all = vec!["run", wl.as_str(), "--backend", "memory:"];
        all.extend(args);
        let out = tallrow(dir.path(), &all);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_eq!(out.stderr.trim(), want);
    }
    for args in [
        vec!["--shard-index", "1"],
        vec!["--shard", "1/2", "--shard-index", "1", "--shard-count", "2"],
    ] {
        let mut all = vec!["run", wl.as_str(), "--backend", "memory:"];
        all.extend(args);
        let out = tallrow(dir.path(), &all);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    }
}

#[test]
fn broken_reports_and_arguments_get_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = run(dir.path(), "memory:", &["--ops", "50"]);
    let summary = report.join("summary.json");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(&summary, text.replacen("\"count\"", "\"cuont\"", 1)).unwrap();
    let r = report.to_str().unwrap();
    let out = tallrow(dir.path(), &["compare", r, r]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("summary.json") && out.stderr.contains("line"),
        "{}",
        out.stderr
    );

    let wl = fixture();
    for (args, want) in [
        (
            vec!["run", wl.as_str(), "--backend", "memory:", "--rate", "0"],
            "--rate",
        ),
        (
            vec!["run", wl.as_str(), "--backend", "memory:", "--duration", "5 parsecs"],
            "--duration",
        ),
        (
            vec!["run", wl.as_str(), "--backend", "memory:", "--arrival", "bursty"],
            "--arrival",
        ),
        (vec!["run", wl.as_str(), "--backend", "delay:2ms"], "delay"),
    ] {
        let out = tallrow(dir.path(), &args);
        assert_ne!(out.code, 0, "{args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(want), "{args:?}: {}", out.stderr);
    }
}

/// `--slo`: the run writes its report, prints each target's verdict, keeps them in
/// summary.json and index.html, and exits 1 when one is missed, 0 when all are met.
#[test]
fn latency_targets_decide_the_exit_code_and_go_into_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let with = |targets: &[&str]| {
        let mut args = vec![
            "run",
            wl.as_str(),
            "--backend",
            // Timed by the store's simulated clock: every call takes 5 ms, exactly.
            "delay:5ms,clock=virtual:embedded:store",
            "--threads",
            "2",
            "--warmup",
            "0s",
            "--ops",
            "200",
        ];
        for t in targets {
            args.extend(["--slo", t]);
        }
        tallrow(dir.path(), &args)
    };
    let verdicts = |out: &Out| -> Vec<(String, bool)> {
        let summary = std::fs::read_to_string(report_dir(dir.path(), &out.stdout).join("summary.json")).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        summary["slos"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["target"].as_str().unwrap().to_string(), v["held"].as_bool().unwrap()))
            .collect()
    };

    let met = with(&["all:p50<1s", "timeline:errors<1%", "all:throughput>1"]);
    assert_eq!(met.code, 0, "{}{}", met.stdout, met.stderr);
    assert!(met.stdout.contains("target all p50 < 1.000 s: "), "{}", met.stdout);
    assert_eq!(met.stdout.matches("(met)").count(), 3, "{}", met.stdout);
    assert_eq!(
        verdicts(&met),
        [
            ("all p50 < 1.000 s".to_string(), true),
            ("timeline errors < 1%".to_string(), true),
            ("all throughput > 1 ops/s".to_string(), true)
        ]
    );

    // Every operation waits 5 ms for the store: a 1 ms median cannot hold.
    let missed = with(&["all:p50<1ms", "all:p99<1s"]);
    assert_eq!(missed.code, 1, "{}{}", missed.stdout, missed.stderr);
    assert_eq!(missed.stderr.lines().count(), 1, "{}", missed.stderr);
    assert!(
        missed
            .stderr
            .starts_with("error: 1 of 2 targets missed: all p50 < 1.00 ms (measured 5."),
        "{}",
        missed.stderr
    );
    assert_eq!(
        verdicts(&missed),
        [
            ("all p50 < 1.00 ms".to_string(), false),
            ("all p99 < 1.000 s".to_string(), true)
        ]
    );
    let html = std::fs::read_to_string(report_dir(dir.path(), &missed.stdout).join("index.html")).unwrap();
    assert!(html.contains("1 of 2 targets met") && html.contains("MISSED"), "{html}");

    for (target, says) in [
        ("nosuch:p99<5ms", "\"nosuch\" is not an operation of the run's mix"),
        ("all:p95<5ms", "unknown metric \"p95\""),
        ("all:errors<5", "a percentage"),
    ] {
        let out = tallrow(
            dir.path(),
            &[
                "run",
                wl.as_str(),
                "--backend",
                "memory:",
                "--ops",
                "10",
                "--slo",
                target,
            ],
        );
        assert_ne!(out.code, 0, "{target}");
        assert_eq!(out.stderr.lines().count(), 1, "{target}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{target}: {}", out.stderr);
    }
}

/// `timeline_pull` runs the DAO's pull timeline (followees' newest posts merged at read).
#[test]
fn timeline_pull_is_an_operation_of_the_mix() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = run(
        dir.path(),
        "memory:",
        &[
            "--ops",
            "60",
            "--set",
            "run.mix.timeline_pull=1",
            "--slo",
            "timeline_pull:errors<=0%",
        ],
    );
    let rows = csv_rows(&report.join("ops.csv"));
    let row = rows
        .iter()
        .find(|r| r[0] == "timeline_pull")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(
        (row[1].as_str(), row[2].as_str()),
        ("60", "0"),
        "count and errors: {rows:?}"
    );
    assert_eq!(rows.len(), 3, "timeline_pull and all: {rows:?}");
    assert!(
        out.stdout.contains("target timeline_pull errors <= 0%: 0.000% (met)"),
        "{}",
        out.stdout
    );
}

/// `--start-at TIME` holds the run until TIME, so that shards measure the same period; a
/// time already past is refused in one line.
#[test]
fn start_at_holds_the_run_until_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    let at = now_ms() + 3_000;
    let when = tallrow::date::iso(at);
    let (out, report) = run(dir.path(), "memory:", &["--ops", "20", "--start-at", &when]);
    assert!(
        out.stdout.contains(&format!("until {when}, to start")),
        "{}",
        out.stdout
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert!(summary["started_ms"].as_i64().unwrap() >= at, "{summary}");

    let wl = fixture();
    for (when, says) in [
        ("2020-01-01T00:00:00Z", "--start-at 2020-01-01T00:00:00.000Z: passed "),
        ("tomorrow", "is not a UTC time like"),
        ("2999-01-01T00:00:00Z", "more than a week away"),
    ] {
        let out = tallrow(
            dir.path(),
            &[
                "run",
                wl.as_str(),
                "--backend",
                "memory:",
                "--ops",
                "5",
                "--start-at",
                when,
            ],
        );
        assert_ne!(out.code, 0, "{when}");
        assert_eq!(out.stderr.lines().count(), 1, "{when}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{when}: {}", out.stderr);
    }
}

/// `--find-max` against a store with a known latency: 2 workers and 20 ms a call (one call
/// per `own_posts`) allow 100 operations a second. The search converges near that, writes
/// its folder (steps.csv, findmax.json, index.html, a report per step), and exits 1 when no
/// rate holds the targets.
#[test]
fn find_max_converges_to_the_rate_the_delay_and_threads_allow() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let search = |target: &str| {
        tallrow(
            dir.path(),
            &[
                "run",
                wl.as_str(),
                "--backend",
                "delay:20ms,clock=virtual:embedded:store",
                "--threads",
                "2",
                "--warmup",
                "500ms",
                "--set",
                "run.mix.own_posts=1",
                "--find-max",
                "--step-duration",
                "2s",
                "--slo",
                target,
            ],
        )
    };
    // On the store's simulated clock a call takes 20 ms exactly and nothing else takes any
    // time: up to 100 a second every call answers in 20 ms; above it calls queue for longer
    // with every step (at 101 a second, 25 ms behind after a step and its warm-up), so p99
    // under 40 ms holds up to 100 a second and the search ends within 5% below that.
    let out = search("all:p99<40ms");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("max sustainable rate: "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let found: f64 = line
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(
        (95.0..=100.0).contains(&found),
        "{found} ops/s, not within 5% below 100: {}",
        out.stdout
    );
    assert!(line.contains("(all p99 "), "{line}");
    let folder = report_dir(dir.path(), &out.stdout);
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("small-findmax-")
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("findmax.json")).unwrap()).unwrap();
    let steps = json["steps"].as_array().unwrap();
    let probe = steps[0]["achieved_ops_per_s"].as_f64().unwrap();
    assert!((probe - 100.0).abs() < 0.5, "the probe runs flat out: {probe}");
    assert!(steps[0]["target_ops_per_s"].is_null());
    let best = &steps[json["best_step"].as_u64().unwrap() as usize];
    assert_eq!(best["holds"], true);
    assert!((json["max_ops_per_s"].as_f64().unwrap() - found).abs() < 1.0);
    // Within the precision of the lowest rate that failed above it.
    let lowest_failed = steps[1..]
        .iter()
        .filter(|s| s["holds"] == false)
        .map(|s| s["target_ops_per_s"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(
        lowest_failed.is_infinite() || lowest_failed - found <= 0.05 * lowest_failed + 0.01,
        "{json}"
    );
    let rows = csv_rows(&folder.join("steps.csv"));
    assert_eq!(
        rows[0][..4],
        ["step", "folder", "target_ops_per_s", "achieved_ops_per_s"]
    );
    assert_eq!(rows[0].last().unwrap(), "all p99 < 40.00 ms");
    assert_eq!(rows.len(), steps.len() + 1);
    // Each step's report records one run: the step's rate and length, in its config and in
    // the effective workload alike, and reads back as the summary type.
    for s in steps {
        let step = folder.join(s["folder"].as_str().unwrap());
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(step.join("summary.json")).unwrap()).unwrap();
        let (config, effective) = (&summary["config"], &summary["workload"]["effective"]["run"]);
        assert_eq!(config["rate"], s["target_ops_per_s"], "{}", step.display());
        for field in ["rate", "duration", "ops", "threads", "arrival", "warmup", "skew", "mix"] {
            assert_eq!(config[field], effective[field], "{field} in {}", step.display());
        }
        assert_eq!(config["duration"], "2s", "{}", step.display());
        tallrow::report::read(&step).unwrap();
    }
    let html = std::fs::read_to_string(folder.join("index.html")).unwrap();
    assert!(
        html.contains("max sustainable rate: ") && html.contains("<circle"),
        "{html}"
    );

    // No rate makes a 20 ms call answer within 1 ms.
    let none = search("all:p99<1ms");
    assert_eq!(none.code, 1, "{}{}", none.stdout, none.stderr);
    assert!(
        none.stderr.starts_with("error: no rate held the targets, down to "),
        "{}",
        none.stderr
    );
    assert!(
        none.stdout.contains("no rate tried held the targets"),
        "{}",
        none.stdout
    );

    for (flag, value, says) in [
        ("--precision", "80%", "must be from 0.1% to 50%"),
        ("--step-duration", "100ms", "a step must measure at least 1s"),
        ("--rate", "5", "cannot be used with"),
    ] {
        let out = tallrow(
            dir.path(),
            &["run", wl.as_str(), "--backend", "memory:", "--find-max", flag, value],
        );
        assert_eq!(out.code, 2, "{flag} {value}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(says), "{flag} {value}: {}", out.stderr);
    }
}

/// `tallrow sweep`: every combination of the varied values runs, loading a fresh data set
/// only where the data changes; points.csv, load.csv, sweep.json and index.html report each
/// operation at every point, and the data directories go unless kept.
#[test]
fn sweep_runs_every_combination_and_loads_only_where_the_data_changes() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let out = tallrow(
        dir.path(),
        &[
            "sweep",
            wl.as_str(),
            "--vary",
            "microblog.celebrity_threshold=3,1000",
            "--vary",
            "threads=1,2",
            "--set",
            "run.mix.timeline=1",
            "--set",
            "run.mix.timeline_pull=1",
            "--ops",
            "40",
            "--warmup",
            "0s",
            "--backend",
            "embedded:sweepdata",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("sweeping small over 4 points: "),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("not loaded again").count(), 2, "{}", out.stdout);
    let folder = report_dir(dir.path(), &out.stdout);
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("small-sweep-")
    );
    assert!(!dir.path().join("sweepdata").exists(), "the data sets are removed");

    let points = csv_rows(&folder.join("points.csv"));
    assert_eq!(
        points[0][..5],
        ["point", "microblog.celebrity_threshold", "run.threads", "op", "count"]
    );
    assert_eq!(points.len(), 1 + 4 * 3, "4 points × (timeline, timeline_pull, all)");
    let at = |threshold: &str, threads: &str, op: &str| {
        points
            .iter()
            .find(|r| r[1] == threshold && r[2] == threads && r[3] == op)
            .unwrap_or_else(|| panic!("{threshold} {threads} {op} in {points:?}"))
    };
    for (threshold, threads) in [("3", "1"), ("3", "2"), ("1000", "1"), ("1000", "2")] {
        let all = at(threshold, threads, "all");
        assert_eq!(all[4].parse::<u64>().unwrap() + all[5].parse::<u64>().unwrap(), 40);
        assert_eq!(at(threshold, threads, "timeline_pull")[5], "0", "no errors");
    }
    // A low threshold makes celebrities, whose posts are not pushed: fewer inbox cells.
    let loads = csv_rows(&folder.join("load.csv"));
    assert_eq!(
        loads[0],
        [
            "point",
            "microblog.celebrity_threshold",
            "run.threads",
            "table",
            "row_writes",
            "rows_in_table",
            "cells",
            "bytes"
        ]
    );
    let inbox = |threshold: &str| -> u64 {
        loads
            .iter()
            .find(|r| r[1] == threshold && r[3] == "weibo:inbox")
            .unwrap_or_else(|| panic!("{threshold} in {loads:?}"))[6]
            .parse()
            .unwrap()
    };
    assert!(inbox("3") < inbox("1000"), "{loads:?}");
    assert!(loads.iter().all(|r| r[2] != "2"), "loaded once per data set: {loads:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("sweep.json")).unwrap()).unwrap();
    let typed: tallrow::report::sweep::SweepReport = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), json);
    let sets: Vec<u64> = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["data_set"].as_u64().unwrap())
        .collect();
    assert_eq!(sets, [1, 1, 2, 2]);
    for p in json["points"].as_array().unwrap() {
        let run = folder.join(p["folder"].as_str().unwrap()).join("run/summary.json");
        assert!(run.is_file(), "{}", run.display());
    }
    let html = std::fs::read_to_string(folder.join("index.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 3, "a chart per operation and all");

    for (extra, says) in [
        (
            vec!["--vary", "threads=1,2", "--threads", "4"],
            "--vary threads=1,2: --threads fixes what it varies",
        ),
        (
            vec!["--vary", "data.usres=1,2"],
            "--set data.usres=1: unknown field `usres`",
        ),
        (vec!["--vary", "data.users=1,,2"], "an empty value"),
    ] {
        let out = tallrow(
            dir.path(),
            &[&["sweep", wl.as_str(), "--backend", "memory:"][..], &extra].concat(),
        );
        assert_ne!(out.code, 0, "{extra:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{extra:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{extra:?}: {}", out.stderr);
    }
}

/// Ctrl-C (SIGINT) while a run measures ends it there: it exits 0 with the report of what it
/// measured, marked as stopped early, its intervals those it reached.
#[test]
fn a_run_stopped_by_sigint_reports_what_it_measured() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(dir.path())
        .env("CI", "1")
        .args([
            "run",
            &wl,
            "--backend",
            "embedded:store",
            "--duration",
            "10m",
            "--warmup",
            "0s",
            "--interval",
            "200ms",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut read = String::new();
    while !read.contains("running ") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the run ended first: {read}");
        read.push_str(&line);
    }
    // A second of measuring, then the signal.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.stdout = Some(stdout.into_inner());
    let out = child.wait_with_output().unwrap();
    let stdout = format!("{read}{}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("SIGINT: the run stops now"), "{stderr}");
    assert!(stdout.contains("stopped early: these figures cover the "), "{stdout}");
    let report = report_dir(dir.path(), &stdout);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["stopped_early"], true);
    let measured = summary["measured_s"].as_f64().unwrap();
    assert!((0.5..600.0).contains(&measured), "{measured}");
    assert!(summary["all"]["count"].as_u64().unwrap() > 0);
    // An interval per 200 ms reached, the last one cut where the run stopped.
    let series = csv_rows(&report.join("timeseries.csv"));
    let ops = summary["ops"].as_array().unwrap().len();
    let intervals = (series.len() - 1) / (ops + 1);
    assert_eq!(intervals, (measured / 0.2).ceil() as usize, "{measured} s");
}

/// Stages from the workload file, on the store's simulated clock (a call takes 5 ms, one
/// worker: 200 a second at most): 1 s at 100/s, then 1 s at 400/s, which the store cannot
/// keep up with. Each stage gets its table, its figures in summary.json, its verdicts (the
/// run fails when one stage misses) and its `stage` events; `--stage` replaces the file's;
/// the shards' stages add up in a merge; a malformed stage is one line naming it.
#[test]
fn stages_have_their_own_tables_verdicts_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(super::common::small_fixture()).unwrap();
    let wl = dir.path().join("staged.toml");
    let run_section = "[run]\nmix = { own_posts = 1 }\nwarmup = \"0s\"\nthreads = 1\n";
    let stages_toml =
        "[[run.stages]]\nduration = \"1s\"\nrate = 100\n\n[[run.stages]]\nduration = \"1s\"\nrate = 400\n";
    std::fs::write(&wl, format!("{base}\n{run_section}\n{stages_toml}")).unwrap();
    let wl = wl.to_str().unwrap();
    let backend = "delay:5ms,clock=virtual:embedded:store";
    let out = tallrow(
        dir.path(),
        &[
            "run",
            wl,
            "--backend",
            backend,
            "--slo",
            "all:p99<6ms",
            "--slo",
            "all:throughput>=150",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: 3 of 6 targets missed: all p99 < 6.00 ms (measured "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("all throughput >= 150 ops/s in stage 1 (measured 100.0 ops/s)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("all p99 < 6.00 ms in stage 2"), "{}", out.stderr);
    assert!(
        out.stdout
            .contains("stage 1 (0.0-1.0 s, 1s at 100 ops/s): asked 100.0 ops/s, achieved 100.0 ops/s"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("target in stage 2: all p99 < 6.00 ms: "),
        "{}",
        out.stdout
    );
    let report = report_dir(dir.path(), &out.stdout);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    let stages = summary["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    let field = |f: &str| stages.iter().map(|s| s[f].clone()).collect::<Vec<_>>();
    assert_eq!(field("start_s"), [serde_json::json!(0.0), serde_json::json!(1.0)]);
    assert_eq!(field("end_s"), [serde_json::json!(1.0), serde_json::json!(2.0)]);
    assert_eq!(
        field("asked_ops_per_s"),
        [serde_json::json!(100.0), serde_json::json!(400.0)]
    );
    // All 400 due in the second stage ran, most of them late; 199 finished within it.
    let counts: Vec<u64> = stages.iter().map(|s| s["all"]["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, [100, 400]);
    assert_eq!(stages[0]["achieved_ops_per_s"], 100.0);
    assert_eq!(stages[1]["achieved_ops_per_s"], 199.0);
    // Stage 1 waits 5 ms a call; stage 2's last due waits about a second.
    let p99: Vec<u64> = stages
        .iter()
        .map(|s| s["all"]["response"]["p99"].as_u64().unwrap())
        .collect();
    assert!((4_990_000..=5_010_000).contains(&p99[0]), "{p99:?}");
    assert!(p99[1] > 900_000_000, "{p99:?}");
    let held: Vec<Vec<bool>> = stages
        .iter()
        .map(|s| {
            s["slos"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["held"].as_bool().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(held, [[true, false], [false, true]]);
    // The page opens its targets with the verdict the exit status gives, stages counted.
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<p class=\"bad\">3 of 6 targets met.</p>"), "{html}");
    assert!(html.contains("<td>all p99 &lt; 6.00 ms in stage 2</td>"), "{html}");
    assert_eq!(summary["events"], serde_json::json!({ "stage": 2 }));
    let events = std::fs::read_to_string(report.join("events.csv")).unwrap();
    let rows: Vec<(&str, &str)> = events
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0], f[2])
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("0.000", "stage"),
            ("1.000", "stage"),
            ("1.000", "stage"),
            ("2.000", "stage")
        ]
    );
    assert!(events.contains("\"start, stage 2: 1s at 400 ops/s\""), "{events}");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("<h2>Stages</h2>") && html.contains("stage 2: 1s at 400 ops/s"),
        "{html}"
    );

    // --stage in place of the file's stages.
    let out = tallrow(
        dir.path(),
        &[
            "run",
            wl,
            "--backend",
            backend,
            "--stage",
            "1s:50",
            "--stage",
            "1s:150:ramp",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report_dir(dir.path(), &out.stdout).join("summary.json")).unwrap(),
    )
    .unwrap();
    let asked: Vec<&str> = summary["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["asked"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["1s at 50 ops/s", "1s ramp 50 to 150 ops/s"]);
    let counts: Vec<u64> = summary["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["all"]["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [50, 100]);

    // Two shards' stages add up.
    let shard = |s: &str| {
        let out = tallrow(
            dir.path(),
            &["run", wl, "--backend", "delay:5ms,clock=virtual:memory:", "--shard", s],
        );
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        report_dir(dir.path(), &out.stdout)
    };
    let (a, b) = (shard("1/2"), shard("2/2"));
    let out = merge_into(dir.path(), &a, &b, "merged");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("merged/summary.json")).unwrap()).unwrap();
    let st = merged["stages"].as_array().unwrap();
    let asked: Vec<f64> = st.iter().map(|s| s["asked_ops_per_s"].as_f64().unwrap()).collect();
    assert_eq!(asked, [200.0, 800.0]);
    let counts: Vec<u64> = st.iter().map(|s| s["all"]["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, [200, 800]);
    assert!(
        std::fs::read_to_string(dir.path().join("merged/events.csv"))
            .unwrap()
            .contains("stage 2: 1s at 400 ops/s")
    );

    // Malformed stages: one line each, naming the flag or the file's place and field.
    let bad_file = dir.path().join("bad.toml");
    std::fs::write(
        &bad_file,
        format!("{base}\n{run_section}\n{stages_toml}\n[[run.stages]]\nduration = \"1s\"\nthreads = 2\n"),
    )
    .unwrap();
    let bad = bad_file.to_str().unwrap();
    for (args, says) in [
        (
            vec!["run", wl, "--backend", "memory:", "--stage", "1s"],
            "the form is DURATION:RATE[:ramp]",
        ),
        (
            vec!["run", wl, "--backend", "memory:", "--stage", "1s:fast"],
            "\"fast\" is not operations per second",
        ),
        (
            vec![
                "run",
                wl,
                "--backend",
                "memory:",
                "--stage",
                "1s:10",
                "--duration",
                "5s",
            ],
            "--duration",
        ),
        (
            vec!["run", wl, "--backend", "memory:", "--stage", "1s:-5"],
            "run.stages[1].rate: must be from 0",
        ),
        (
            vec!["run", wl, "--backend", "memory:", "--find-max", "--slo", "all:p99<1s"],
            "--find-max",
        ),
        (
            vec!["run", bad, "--backend", "memory:"],
            "run.stages[3]: gives threads where run.stages[1] gives ops/s",
        ),
    ] {
        let out = tallrow(dir.path(), &args);
        assert_ne!(out.code, 0, "{args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    let out = tallrow(dir.path(), &["run", bad, "--backend", "memory:"]);
    let lines = base.lines().count() + run_section.lines().count() + stages_toml.lines().count() + 4;
    assert!(
        out.stderr.contains(&format!("bad.toml:{lines}:")),
        "the third stage's line: {}",
        out.stderr
    );
}
