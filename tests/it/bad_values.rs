//! Bad command-line values and unreadable workload files through the binary: each gets one
//! line that says what is wrong and where, and a non-zero exit.

use crate::common::{small_fixture, tallrow};

/// Runs `args` in a fresh folder and checks the one-line error that names `says`.
fn refused(args: &[&str], says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = tallrow(dir.path(), args);
    assert_ne!(out.code, 0, "{args:?}: {}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
}

#[test]
fn thread_counts_are_bounded() {
    let wl = small_fixture();
    let w = wl.to_str().unwrap();
    // load and run: the flag stands for load.threads and run.threads, validated as the file's.
    for cmd in ["load", "run"] {
        refused(
            &[cmd, w, "--backend", "null:", "--threads", "100000"],
            "--threads 100000: must be between 0 and 4096, got 100000",
        );
    }
    refused(
        &["verify", w, "--backend", "null:", "--threads", "100000"],
        "--threads 100000: at most 4096 worker threads",
    );
    let cores = std::thread::available_parallelism().unwrap().get();
    let many = 64 * cores + 1;
    if many > 4096 {
        // Past 64 cores the per-core limit lies beyond the absolute one.
        tallrow::testkit::absent(
            "at most 64 cores",
            "the --force-threads refusal needs 64 threads a core to stay under 4,096",
        );
        return;
    }
    let n = many.to_string();
    refused(
        &["load", w, "--backend", "null:", "--threads", &n],
        "pass --force-threads",
    );
    refused(
        &["run", w, "--backend", "null:", "--threads", &n, "--ops", "10"],
        "pass --force-threads",
    );
    let dir = tempfile::tempdir().unwrap();
    let out = tallrow(
        dir.path(),
        &["load", w, "--backend", "null:", "--threads", &n, "--force-threads"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(&format!("{n} threads")), "{}", out.stdout);
}

#[test]
fn a_manifest_that_cannot_be_written_fails_the_load_and_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = format!("embedded:{}", data.display());
    let wl = small_fixture();
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "a file where the reports folder would be").unwrap();
    let reports = blocked.join("reports");
    let out = tallrow(
        dir.path(),
        &[
            "load",
            wl.to_str().unwrap(),
            "--backend",
            &url,
            "--reports",
            reports.to_str().unwrap(),
        ],
    );
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the load manifest could not be written")
            && out.stderr.contains("row writes acknowledged stay in the store"),
        "{}",
        out.stderr
    );
    let out = tallrow(dir.path(), &["verify", wl.to_str().unwrap(), "--backend", &url]);
    assert_eq!(out.code, 0, "the loaded data stays: {}{}", out.stdout, out.stderr);

    // A run that loads first fails the same way.
    let fresh = format!("embedded:{}", dir.path().join("fresh").display());
    let out = tallrow(
        dir.path(),
        &[
            "run",
            wl.to_str().unwrap(),
            "--backend",
            &fresh,
            "--ops",
            "10",
            "--reports",
            reports.to_str().unwrap(),
        ],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("the load manifest could not be written"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_arguments_are_named() {
    refused(&["report", "merge"], "not provided: <DIR>...");
    refused(&["keys", "encode", "actions"], "not provided: <FIELD=VALUE>...");
}

#[test]
fn a_rate_too_low_to_schedule_every_worker_is_refused() {
    let wl = small_fixture();
    let w = wl.to_str().unwrap();
    refused(
        &["run", w, "--backend", "memory:", "--rate", "1e-300", "--threads", "2"],
        "--rate 1e-300: schedules 0.000 operations in the run's 60s, fewer than one for each of its 2 workers",
    );
    refused(
        &["run", w, "--backend", "memory:", "--rate", "0.001", "--ops", "10000"],
        "take 10000000 s, longer than a week",
    );
}

#[test]
fn workload_files_that_are_not_utf8_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "latin1.toml",
            b"name = \"x\"\nseed = 1\n[data]\nusers = 1\xe9\n".to_vec(),
            "latin1.toml:4:10: byte 0xe9 is not UTF-8",
        ),
        (
            "utf16.toml",
            [0xff, 0xfe, b'n', 0, b'a', 0].to_vec(),
            "utf16.toml:1:1: the file starts with a UTF-16 byte-order mark",
        ),
        (
            "binary.toml",
            b"\x7fELF\x02\x01\x01\x00\x00\x00\x9c\x00".to_vec(),
            "binary.toml:1:11: byte 0x9c is not UTF-8",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        refused(&["load", path.to_str().unwrap(), "--backend", "null:"], says);
    }
    // A UTF-8 byte-order mark is allowed.
    let bom = dir.path().join("bom.toml");
    let text = std::fs::read_to_string(small_fixture()).unwrap();
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    let out = tallrow(dir.path(), &["load", bom.to_str().unwrap(), "--backend", "null:"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_key_nested_too_deep_is_reported_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(small_fixture()).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.resize(40, "# ...".into());
    lines.push(format!("a{} = 1", ".a".repeat(99_999)));
    let path = dir.path().join("deep.toml");
    std::fs::write(&path, lines.join("\n")).unwrap();
    refused(
        &["load", path.to_str().unwrap(), "--backend", "null:"],
        "deep.toml:41:1: recursion limit: a key of 100000 dotted parts nests too deep",
    );
}

#[test]
fn request_limits_that_cannot_be_represented_are_refused_at_startup() {
    for v in ["17592186044416", "18446744073709551615", "2048", "0"] {
        refused(
            &["serve", "--bind", "127.0.0.1:0", "--max-request-mib", v],
            "must be a whole number of MiB from 1 to 2047",
        );
    }
}

/// A flag that stands for a workload field is checked once, as the field: its error is the
/// field's own, naming the flag as given, and the same value through `--set` or the file
/// says the same.
#[test]
fn flags_are_validated_as_the_fields_they_stand_for() {
    let wl = small_fixture();
    let w = wl.to_str().unwrap();
    let mem = ["--backend", "memory:"];
    for (cmd, flag, value, says) in [
        (
            "run",
            "--rate",
            "0",
            "must be above 0 and at most 10000000 operations/s, got 0",
        ),
        ("run", "--ops", "0", "must be at least 1"),
        (
            "run",
            "--duration",
            "soon",
            "\"soon\" is not a duration like 500ms, 30s, 5m or 1h",
        ),
        (
            "run",
            "--warmup",
            "5 parsecs",
            "\"5 parsecs\" is not a duration like 500ms, 30s, 5m or 1h",
        ),
        ("load", "--batch", "0", "must be between 1 and 100000, got 0"),
    ] {
        let mut args = vec![cmd, w, mem[0], mem[1], flag, value];
        if cmd == "run" && flag != "--ops" {
            args.extend(["--ops", "10"]);
        }
        if flag == "--duration" {
            args.truncate(6);
        }
        refused(&args, &format!("{flag} {value}: {says}"));
    }
    refused(
        &["run", w, "--backend", "memory:", "--set", "run.rate=0"],
        "--set run.rate=0: run.rate: must be above 0 and at most 10000000 operations/s, got 0",
    );
    refused(
        &["run", w, "--backend", "memory:", "--arrival", "bursty"],
        "invalid value 'bursty' for '--arrival <ARRIVAL>'",
    );
    refused(
        &["run", w, "--backend", "memory:", "--set", "run.consistency=eventual"],
        "--set run.consistency=eventual: run.consistency: \"eventual\" is not \"strong\" or \"timeline\"",
    );
    refused(
        &["run", w, "--backend", "memory:", "--set", "run.primary_timeout=2m"],
        "--set run.primary_timeout=2m: run.primary_timeout: \"2m\" is longer than a minute",
    );
    // A store of one copy reads no replica: refused before anything is measured.
    let dir = tempfile::tempdir().unwrap();
    let backend = format!("embedded:{}", dir.path().join("db").display());
    let out = tallrow(dir.path(), &["load", w, "--backend", &backend]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = tallrow(
        dir.path(),
        &[
            "run",
            w,
            "--backend",
            &backend,
            "--set",
            "run.consistency=timeline",
            "--ops",
            "10",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(
        out.stderr.trim(),
        format!(
            "error: run.consistency: timeline reads need HBase's region replicas, read through api=native or api=thrift2; embedded (fjall 3) at {}/db keeps one copy of each row",
            dir.path().display()
        )
    );
    assert!(!out.stdout.contains("operations in"), "{}", out.stdout);
}
