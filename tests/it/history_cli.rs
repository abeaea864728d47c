//! `tallrow history` through the real binary: 24 runs against `delay:` over one embedded
//! store, the delay stepped up at one run, found at that run with its size; 24 more whose
//! delay drifts up by build, run out of order and put back in it by `--key`; and what is
//! not a history refused in one line.

use super::common::{browser, loaded_reads, python, tallrow};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn history_finds_a_step_in_the_delay_at_its_run_and_refuses_what_is_not_a_history() {
    let dir = tempfile::tempdir().unwrap();
    loaded_reads(dir.path(), "own_posts = 1", 100);
    // Runs 0 to 13 at 1 ms a call, 14 to 23 at 5 ms: a step at run 14, large enough to stand
    // out of a busy machine's own noise.
    for i in 0..24 {
        short_run(dir.path(), "reads.toml", if i < 14 { "1ms" } else { "5ms" }, &[]);
    }
    // The runs are delay-bound and vary by a percent or two, so shifts of a few percent in
    // the machine's state are significant: the change asked for is a fifth at least.
    let out = tallrow(
        dir.path(),
        &["history", "runs", "--reports", "out", "--magnitude", "0.2"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let at = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("history: "))
        .expect("a history line");
    let md = dir.path().join(at);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(md.with_file_name("history.json")).unwrap()).unwrap();
    let group = &json["groups"][0];
    assert_eq!(group["runs"].as_array().unwrap().len(), 24, "{}", out.stdout);
    assert_eq!(json["groups"].as_array().unwrap().len(), 1, "{}", out.stdout);
    let changes: Vec<&serde_json::Value> = group["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["operation"] == "own_posts" && c["figure"] == "p50")
        .collect();
    // The step, once; a busy machine may add a smaller shift of its own, and a last run
    // unlike the rest would be a single run apart, not a change point.
    let at_step: Vec<&&serde_json::Value> = changes
        .iter()
        .filter(|c| (13..=15).contains(&c["run"].as_u64().unwrap()))
        .collect();
    assert_eq!(at_step.len(), 1, "{}", out.stdout);
    assert!(
        changes
            .iter()
            .all(|c| std::ptr::eq(*c, *at_step[0]) || c["change"].as_f64().unwrap().abs() < 0.5),
        "{}",
        out.stdout
    );
    assert!(
        group["single_runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["figure"] != "p50" || !(13..=15).contains(&c["run"].as_u64().unwrap())),
        "{}",
        out.stdout
    );
    let c = *at_step[0];
    assert_eq!(c["verdict"], "regression");
    // Its size within 20% of the step put in: 4 ms more a call. A busy machine stretches
    // every sleep by about as much on both sides, so the share it comes to varies with the
    // load, and the difference of the levels does not.
    let (before, after) = (c["before"].as_f64().unwrap(), c["after"].as_f64().unwrap());
    let added = after - before;
    assert!((added - 4e6).abs() <= 0.8e6, "{c}: {added} ns added");
    let found = c["change"].as_f64().unwrap();
    let (lo, hi) = (c["interval"][0].as_f64().unwrap(), c["interval"][1].as_f64().unwrap());
    assert!(lo < found && found < hi, "{c}");
    assert!(out.stdout.contains("| own_posts | p50 | "), "{}", out.stdout);
    // A step is not a drift: a line fits it worse than its two levels.
    assert!(
        group["drifts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["figure"] != "p50" || d["operation"] != "own_posts"),
        "{}",
        out.stdout
    );
    // The page: a chart per operation and figure, each run a point linking to its report,
    // the change point marked, the settings printed.
    let html = std::fs::read_to_string(md.with_file_name("history.html")).unwrap();
    assert!(html.contains("<p id=\"settings\">E-divisive means"), "{html}");
    assert_eq!(
        html.matches("<svg ").count(),
        10,
        "own_posts and all, five figures each"
    );
    assert_eq!(html.matches("<circle class=\"run\"").count(), 10 * 24);
    let first = Path::new(group["runs"][0]["dir"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        html.contains(&format!("href=\"../../runs/{first}/index.html\"")),
        "{html}"
    );
    assert!(
        html.contains("<line class=\"change\"") && html.contains("regression at run 1"),
        "{html}"
    );
    read_in_a_browser(&md.with_file_name("history.html"), 10);
    read_in_a_browser(
        &dir.path()
            .join(group["runs"][14]["dir"].as_str().unwrap())
            .join("index.html"),
        0,
    );
    // The CSV Otava reads: a time column, and each figure's logarithm beside it.
    let csv = std::fs::read_to_string(md.with_file_name("history.csv")).unwrap();
    assert_eq!(csv.lines().count(), 25);
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("time,run,"), "{header}");
    assert!(header.contains(",own_posts.p50,own_posts.p50.ln,"), "{header}");

    // The gate: the step, within the last 12 runs and above 5%, fails it (exit 4); not
    // within the last 3; and, acknowledged, it passes.
    let gate = |extra: &[&str]| {
        let mut args = vec!["history", "runs", "--reports", "out", "--magnitude", "0.2"];
        args.extend_from_slice(extra);
        tallrow(dir.path(), &args)
    };
    let out = gate(&["--fail-within", "12", "--fail-above", "5%"]);
    assert_eq!(out.code, 4, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("**Gate: regression.**"), "{}", out.stdout);
    let at = out.stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(at).with_file_name("history.json")).unwrap())
            .unwrap();
    let failing = json["gate"]["failing"].as_array().unwrap();
    assert!(
        failing
            .iter()
            .any(|c| c["operation"] == "own_posts" && c["figure"] == "p50")
    );
    let ack: String = failing
        .iter()
        .map(|c| {
            let run = Path::new(c["dir"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            format!(
                "{run} {} {}  # seen\n",
                c["operation"].as_str().unwrap(),
                c["figure"].as_str().unwrap()
            )
        })
        .collect();
    std::fs::write(dir.path().join("accepted.txt"), format!("# accepted changes\n{ack}")).unwrap();
    let out = gate(&[
        "--fail-within",
        "12",
        "--fail-above",
        "5%",
        "--acknowledged",
        "accepted.txt",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("**Gate: no regression.**") && out.stdout.contains("- Acknowledged: own_posts p50 "),
        "{}",
        out.stdout
    );
    // Not within the last 3 runs (where a busy machine's own shift, if any, is far smaller).
    let out = gate(&["--fail-within", "3", "--fail-above", "50%"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    std::fs::write(dir.path().join("bad.txt"), "run-1 own_posts\n").unwrap();
    let out = gate(&["--fail-within", "3", "--acknowledged", "bad.txt"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("bad.txt:1: a line names one change point as RUN OPERATION FIGURE"),
        "{}",
        out.stderr
    );

    // Apache Otava, given the CSV as it is (the `.ln` columns and `errors`), finds the same
    // change points at a magnitude of 0: the same series, the same runs.
    otava_agrees(dir.path());

    // Two runs: shown, not searched.
    let runs: Vec<String> = std::fs::read_dir(dir.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let out = tallrow(dir.path(), &["history", &runs[0], &runs[1], "--reports", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("Not searched: 2 runs: too few to find a change (at least 3)."),
        "{}",
        out.stdout
    );
    // Nor gated: no verdict it cannot make.
    let out = tallrow(
        dir.path(),
        &["history", &runs[0], &runs[1], "--reports", "out", "--fail-within", "1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("**Gate: undecided.** Over quickstart ")
            && out.stdout.contains("2 runs: too few to find a change")
            && !out.stdout.contains("no regression"),
        "{}",
        out.stdout
    );
    // An empty folder, and a folder whose summary.json is cut short: one line each.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let out = tallrow(dir.path(), &["history", "empty", "--reports", "refused"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("empty: no report folder"), "{}", out.stderr);
    // A folder of other things is not a report either.
    std::fs::create_dir_all(dir.path().join("notes/2026")).unwrap();
    std::fs::write(dir.path().join("notes/2026/run.txt"), "ran fine\n").unwrap();
    let out = tallrow(dir.path(), &["history", "notes", "--reports", "refused"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("notes: no report folder"), "{}", out.stderr);
    let cut = dir.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    let summary = std::fs::read_to_string(Path::new(&runs[0]).join("summary.json")).unwrap();
    std::fs::write(cut.join("summary.json"), &summary[..summary.len() / 2]).unwrap();
    let out = tallrow(dir.path(), &["history", "cut", "--reports", "refused"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("summary.json"), "{}", out.stderr);
    assert!(!dir.path().join("refused").exists(), "nothing written for a refusal");
}

#[test]
fn history_of_24_runs_without_a_change_has_no_change_point() {
    let dir = tempfile::tempdir().unwrap();
    loaded_reads(dir.path(), "own_posts = 1", 100);
    // On the simulated clock: real sleeps on a loaded CI machine shift by more than a fifth
    // between runs (seen: p50 2.7 ms, then 1.5 ms, at 1 ms a call), which is a change of the
    // machine; here the store is steady, and the history must find it so.
    let run = |workload: &str| short_run(dir.path(), workload, "1ms,clock=virtual", &[]);
    for _ in 0..24 {
        run("reads.toml");
    }
    // One run of another workload among them: left out, with what differs.
    let reads = std::fs::read_to_string(dir.path().join("reads.toml")).unwrap();
    let other = reads.replacen("name = \"quickstart\"", "name = \"other\"", 1);
    std::fs::write(dir.path().join("other.toml"), other).unwrap();
    run("other.toml");
    // The change asked for is a fifth, as in the step's history: the machine's own shifts
    // are smaller.
    let out = tallrow(
        dir.path(),
        &["history", "runs", "--reports", "out", "--magnitude", "0.2"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let at = out.stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(at).with_file_name("history.json")).unwrap())
            .unwrap();
    let group = &json["groups"][0];
    assert_eq!(group["runs"].as_array().unwrap().len(), 24);
    let left = json["left_out"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{}", out.stdout);
    let why = left[0]["why"].as_str().unwrap();
    assert!(
        why.starts_with("not comparable with the largest group's runs (workload quickstart "),
        "{why}"
    );
    assert_eq!(
        json["groups"][1]["unjudged"], "1 run: too few to find a change (at least 3)",
        "{}",
        out.stdout
    );
    for list in ["changes", "drifts"] {
        let found: Vec<&serde_json::Value> = group[list]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["figure"] == "p50" || c["figure"] == "throughput" || c["figure"] == "errors")
            .collect();
        assert!(found.is_empty(), "{list}: {found:?}\n{}", out.stdout);
    }
}

#[test]
fn history_finds_a_drift_in_the_order_of_its_key() {
    let dir = tempfile::tempdir().unwrap();
    loaded_reads(dir.path(), "own_posts = 1", 100);
    // Builds 0 to 23, each 5% slower a call than the one before (1 ms to 3.07 ms), run in a
    // scrambled order (build 11 x run mod 24, uncorrelated with the runs' order) and
    // labelled with their build.
    let build = |run: u32| (11 * run) % 24;
    for run in 0..24 {
        let b = build(run);
        // On the simulated clock, as the steady history: a loaded CI machine's sleeps
        // overshoot by more than the drift's first builds apart (seen: 2.8 ms at 1 ms).
        let delay = format!("{}us,clock=virtual", (1000.0 * 1.05f64.powi(b as i32)).round());
        short_run(dir.path(), "reads.toml", &delay, &["--label", &format!("build={b}")]);
    }
    let history = |extra: &[&str]| {
        let mut args = vec!["history", "runs", "--reports", "out", "--magnitude", "0.2"];
        args.extend_from_slice(extra);
        let out = tallrow(dir.path(), &args);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let at = out.stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(at).with_file_name("history.json")).unwrap())
                .unwrap();
        (out.stdout, json)
    };
    let own_p50 = |d: &&serde_json::Value| d["operation"] == "own_posts" && d["figure"] == "p50";
    // By start, the builds are scrambled: no drift.
    let (stdout, json) = history(&[]);
    assert!(
        !json["groups"][0]["drifts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| own_p50(&d)),
        "{stdout}"
    );
    // By build (numbers, ordered by value), the drift over every run, rising.
    let (stdout, json) = history(&["--key", "build"]);
    let group = &json["groups"][0];
    let labels: Vec<&str> = group["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    let builds: Vec<String> = (0..24).map(|b| b.to_string()).collect();
    assert_eq!(labels, builds, "{stdout}");
    assert!(stdout.contains("24 runs, build 0 to 23"), "{stdout}");
    let drifts = group["drifts"].as_array().unwrap();
    let d = drifts.iter().find(own_p50).unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(d["verdict"], "regression", "{d}");
    assert_eq!(
        (d["runs"][0].as_u64(), d["runs"][1].as_u64()),
        (Some(0), Some(23)),
        "{d}"
    );
    // The line rises by the 2.07 ms put in, within 20%: a busy machine stretches every
    // sleep by about as much at both ends.
    let rise = d["to"].as_f64().unwrap() - d["from"].as_f64().unwrap();
    assert!((rise - 2.07e6).abs() <= 0.2 * 2.07e6, "{d}: {rise} ns");
    assert!(stdout.contains("own_posts p50 drifts +"), "{stdout}");
    // The change points the search cut the drift into are its steps, not changes.
    assert!(
        !group["changes"].as_array().unwrap().iter().any(|c| own_p50(&c)),
        "{stdout}"
    );
    // The gate: the drift goes on to the last run, and fails it; acknowledged by any of its
    // runs, it passes.
    let gated = |extra: &[&str]| {
        let mut args = vec![
            "history",
            "runs",
            "--reports",
            "out",
            "--magnitude",
            "0.2",
            "--key",
            "build",
            "--fail-within",
            "3",
            "--fail-above",
            "50%",
        ];
        args.extend_from_slice(extra);
        tallrow(dir.path(), &args)
    };
    let out = gated(&[]);
    assert_eq!(out.code, 4, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("- Fails it: own_posts p50 drifts +"),
        "{}",
        out.stdout
    );
    let some_run = Path::new(group["runs"][5]["dir"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let ack: String = ["own_posts", "all"]
        .iter()
        .flat_map(|op| ["p50", "p99", "throughput"].map(|f| format!("{some_run} {op} {f}\n")))
        .collect();
    std::fs::write(dir.path().join("accepted.txt"), ack).unwrap();
    let out = gated(&["--acknowledged", "accepted.txt"]);
    let json_at = out.stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
    let gate: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(json_at).with_file_name("history.json")).unwrap(),
    )
    .unwrap();
    let has_own_p50 = |list: &str| gate["gate"][list].as_array().unwrap().iter().any(|d| own_p50(&d));
    assert!(
        has_own_p50("acknowledged_drifts") && !has_own_p50("failing_drifts"),
        "{}",
        out.stdout
    );
    // The page draws it; the CSV keeps the key beside each run.
    let at = stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
    let md = dir.path().join(at);
    let html = std::fs::read_to_string(md.with_file_name("history.html")).unwrap();
    assert!(html.contains("<line class=\"drift\""), "{html}");
    read_in_a_browser(&md.with_file_name("history.html"), 10);
    let csv = std::fs::read_to_string(md.with_file_name("history.csv")).unwrap();
    assert!(csv.lines().next().unwrap().starts_with("time,run,build,"), "{csv}");
    // A setting orders them too (all alike here); a key no run has leaves every run out.
    let out = tallrow(dir.path(), &["history", "runs", "--reports", "out", "--key", "commit"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("no label or setting commit"), "{}", out.stderr);
    let (stdout, _) = history(&["--key", "threads"]);
    assert!(stdout.contains("24 runs, threads 1 to 1"), "{stdout}");
    // A label given twice, or not KEY=VALUE: one line, before anything runs.
    for bad in [["--label", "a=1", "--label", "a=2"], ["--label", "a", "--label", "b=1"]] {
        let mut args = vec!["run", "reads.toml", "--backend", "embedded:db", "--ops", "1"];
        args.extend_from_slice(&bad);
        let out = tallrow(dir.path(), &args);
        assert_ne!(out.code, 0, "{}", out.stdout);
        assert!(out.stderr.contains("--label"), "{}", out.stderr);
    }
}

/// A run of `workload` of 100 reads on one thread, no warm-up, over the embedded store at
/// `db` with `delay` added to every call, its report under `runs/`.
fn short_run(dir: &Path, workload: &str, delay: &str, extra: &[&str]) {
    let backend = format!("delay:{delay}:embedded:db");
    let mut args = vec![
        "run",
        workload,
        "--backend",
        &backend,
        "--set",
        "data.users=100",
        "--ops",
        "100",
        "--threads",
        "1",
        "--warmup",
        "0s",
        "--reports",
        "runs",
    ];
    args.extend_from_slice(extra);
    let out = tallrow(dir, &args);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// `page` as headless Chromium shows it: loaded without an error, a failed load or a
/// message on the console; `charts` charts at least (inline SVGs), none empty and nothing
/// drawn outside one; no page wider than the window; and every link to a file that is there.
fn read_in_a_browser(page: &Path, charts: usize) {
    let shot = std::env::var_os("TALLROW_SCREENSHOTS").map(|d| {
        Path::new(&d).join(format!(
            "{}.png",
            page.parent().unwrap().file_name().unwrap().to_string_lossy()
        ))
    });
    let Some(seen) = browser(page, shot.as_deref()) else {
        return;
    };
    let at = page.display();
    for list in ["console", "exceptions", "log", "failed"] {
        assert_eq!(seen[list].as_array().unwrap().len(), 0, "{at}: {list}: {}", seen[list]);
    }
    assert!(
        seen["title"].as_str().unwrap().starts_with("tallrow"),
        "{at}: {}",
        seen["title"]
    );
    let svgs = seen["svgs"].as_array().unwrap();
    assert!(svgs.len() >= charts, "{at}: {} charts", svgs.len());
    for svg in svgs {
        assert_eq!(svg["empty"], false, "{at}: {svg}");
        assert_eq!(svg["outside"], 0, "{at}: drawn outside its chart: {svg}");
    }
    assert_eq!(seen["overflow_x"], false, "{at}: wider than the window");
    for l in seen["links"].as_array().unwrap() {
        let resolved = l["resolved"].as_str().unwrap();
        if let Some(file) = resolved.strip_prefix("file://") {
            let file = file.split('#').next().unwrap();
            assert!(
                Path::new(file).exists(),
                "{at}: a link to {resolved} ({}) leads nowhere",
                l["href"]
            );
        }
    }
}

/// `tallrow history runs --magnitude 0` and Otava 0.8.0's `analyze` on its `history.csv`:
/// the same change points (series and run) in every series.
fn otava_agrees(dir: &Path) {
    let Some(python) = python() else { return };
    let out = tallrow(dir, &["history", "runs", "--reports", "otava"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let at = out.stdout.lines().find_map(|l| l.strip_prefix("history: ")).unwrap();
    let md = dir.join(at);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(md.with_file_name("history.json")).unwrap()).unwrap();
    let group = &json["groups"][0];
    let metric = |c: &serde_json::Value| {
        let (op, figure) = (c["operation"].as_str().unwrap(), c["figure"].as_str().unwrap());
        if figure == "errors" {
            format!("{op}.{figure}")
        } else {
            format!("{op}.{figure}.ln")
        }
    };
    let mut ours: BTreeSet<(String, u64)> = ["changes", "single_runs"]
        .iter()
        .flat_map(|k| group[*k].as_array().unwrap().iter())
        .map(|c| (metric(c), c["run"].as_u64().unwrap()))
        .collect();
    // A drift's change points are its steps.
    for d in group["drifts"].as_array().unwrap() {
        for step in d["steps"].as_array().unwrap() {
            ours.insert((metric(d), step.as_u64().unwrap()));
        }
    }
    let metrics: Vec<String> = group["series"].as_array().unwrap().iter().map(&metric).collect();
    let csv = md.with_file_name("history.csv");
    let config = format!(
        "tests:\n  history:\n    type: csv\n    file: {}\n    time_column: time\n    attributes: [run]\n    metrics: [{}]\n    csv_options:\n      delimiter: \",\"\n      quote_char: '\"'\n",
        csv.display(),
        metrics
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::fs::write(dir.join("otava.yaml"), config).unwrap();
    let run = std::process::Command::new(python.with_file_name("otava"))
        .current_dir(dir)
        .env("TZ", "UTC")
        .args([
            "analyze",
            "history",
            "--config-file",
            "otava.yaml",
            "--since",
            "2000-01-01",
        ])
        .args(["--window", "50", "-P", "0.001", "-M", "0", "--output", "json"])
        .output()
        .expect("otava runs (apache-otava in tests/requirements.txt)");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let theirs: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let theirs: BTreeSet<(String, u64)> = theirs["history"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["changes"].as_array().unwrap().iter())
        .map(|c| (c["metric"].as_str().unwrap().to_string(), c["index"].as_u64().unwrap()))
        .collect();
    assert_eq!(ours, theirs, "{}", out.stdout);
    // And Otava finds the step at its run (in how many figures depends on the load).
    assert!(
        theirs
            .iter()
            .any(|(m, i)| m == "own_posts.p50.ln" && (13..=15).contains(i)),
        "{theirs:?}"
    );
}
