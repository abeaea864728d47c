//! `tallrow load` and `tallrow verify` through the real binary, and workload files with
//! mistakes in them.

use std::path::{Path, PathBuf};
use tallrow::store::embedded::Embedded;
use tallrow::workload::{Error, Workload};

fn tallrow(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = super::common::tallrow(dir, args);
    (out.code == 0, out.stdout, out.stderr)
}

fn fixture() -> PathBuf {
    super::common::small_fixture()
}

/// The first load manifest in `reports`.
/// The first load manifest under `reports`, as JSON; it reads back as the manifest type
/// and writes out again the same, field for field.
fn first_manifest(reports: &Path) -> serde_json::Value {
    let path = std::fs::read_dir(reports).unwrap().next().unwrap().unwrap().path();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let typed = tallrow::load::Manifest::read(&path).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), json);
    json
}

#[test]
fn load_then_verify_on_the_embedded_backend() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let wl = wl.to_str().unwrap();
    let (ok, out, err) = tallrow(dir.path(), &["load", wl, "--threads", "2"]);
    assert!(ok, "{out}{err}");
    assert!(err.is_empty(), "no progress drawn outside a terminal: {err:?}");
    assert!(
        out.starts_with("loaded small (shard 1/1, 300 users) into embedded"),
        "{out}"
    );
    for table in ["weibo:inbox", "useractions", "blog", "series", "total"] {
        assert!(out.lines().any(|l| l.starts_with(table)), "{table} in {out}");
    }
    // The default data directory and the manifest.
    assert!(dir.path().join("data/small").is_dir());
    let manifests: Vec<_> = std::fs::read_dir(dir.path().join("reports")).unwrap().collect();
    assert_eq!(manifests.len(), 1);
    let text = std::fs::read_to_string(manifests[0].as_ref().unwrap().path()).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(m["status"], "complete");
    assert_eq!(m["shard"], "1/1");
    assert_eq!(m["seed"], 7);
    assert!(m["backend"].as_str().unwrap().starts_with("embedded"));
    assert_eq!(m["data_digest"].as_str().unwrap().len(), 32);
    let rows = m["total"]["row_writes"].as_u64().unwrap();
    assert!(rows > 10_000, "{rows}");
    // Row writes count mutations; the rows in a table count each row once, however many
    // mutations wrote it (an inbox row is written once per post fanned out into it).
    let (mut fewer, mut same) = (0, 0);
    for (name, t) in m["tables"].as_object().unwrap() {
        let (writes, distinct) = (t["row_writes"].as_u64().unwrap(), t["rows_in_table"].as_u64().unwrap());
        assert!(
            distinct > 0 && distinct <= writes,
            "{name}: {distinct} rows, {writes} writes"
        );
        if distinct < writes {
            fewer += 1;
        } else {
            same += 1;
        }
    }
    assert!(fewer > 0 && same > 0, "{m}");
    assert!(out.lines().next().unwrap().contains("s counting rows"), "{out}");
    assert!(out.contains("row writes  rows in table"), "{out}");

    let (ok, out, err) = tallrow(dir.path(), &["verify", wl, "--sample", "30"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.ends_with("OK: the store holds exactly the workload's data\n"),
        "{out}"
    );

    // Verify against an empty store fails, one line on stderr, and says how much is missing.
    let (ok, out, err) = tallrow(dir.path(), &["verify", wl, "--backend", "memory:", "--show", "3"]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("differences (3 shown"),
        "{err}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("missing table ")).count(),
        3,
        "{out}"
    );
}

#[test]
fn shards_load_the_whole_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let wl = wl.to_str().unwrap();
    for shard in ["1/2", "2/2"] {
        let (ok, out, err) = tallrow(dir.path(), &["load", wl, "--shard", shard, "--batch", "500"]);
        assert!(ok, "{out}{err}");
        assert!(out.contains(&format!("(shard {shard}, 300 users)")), "{out}");
    }
    let (ok, out, err) = tallrow(dir.path(), &["verify", wl, "--sample", "10"]);
    assert!(ok, "{out}{err}");
    let (ok, _, err) = tallrow(dir.path(), &["load", wl, "--shard", "3/2"]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--shard") && err.contains("3/2"), "{err}");
}

fn invalid(src: &str) -> Error {
    Workload::from_str(Path::new("w.toml"), src).unwrap_err()
}

fn at(e: &Error) -> (usize, usize, Option<&str>, &str) {
    match e {
        Error::Invalid {
            line,
            column,
            field,
            message,
            ..
        } => (*line, *column, field.as_deref(), message.as_str()),
        other => panic!("not an invalid-workload error: {other}"),
    }
}

const BASE: &str = "name = \"t\"\nseed = 1\n[data]\nusers = 10\n";

#[test]
fn workload_errors_name_file_line_column_and_field() {
    let e = invalid(&format!("{BASE}[data.follows]\nmean = 4.0\nfolow_cap = 3\n"));
    let (line, col, field, msg) = at(&e);
    assert_eq!((line, col, field), (7, 1, Some("data.follows.folow_cap")));
    assert!(msg.contains("unknown field `folow_cap`"), "{msg}");
    assert!(
        e.to_string()
            .starts_with("w.toml:7:1: data.follows.folow_cap: unknown field"),
        "{e}"
    );

    let e = invalid(&format!("{BASE}[data.follows]\nzipf_exponent = 9.5\n"));
    assert_eq!(at(&e).0..=at(&e).1, 6..=17);
    assert_eq!(at(&e).2, Some("data.follows.zipf_exponent"));
    assert!(at(&e).3.contains("between 0.01 and 3, got 9.5"), "{e}");

    let e = invalid("name = \"t\"\nseed = -4\n[data]\nusers = 10\n");
    assert_eq!((at(&e).0, at(&e).2), (2, Some("seed")));

    let e = invalid(&format!("{BASE}[run.mix]\ntimeline = 2\n"));
    assert_eq!(at(&e).2, Some("run.mix.timeline"));
    assert!(
        at(&e).3.contains("needs a [data.follows] and [data.posts] section"),
        "{e}"
    );

    let e = invalid(&format!("{BASE}[run.mix]\nteleport = 1\n"));
    assert!(at(&e).3.starts_with("unknown operation; known: timeline,"), "{e}");

    let e = invalid(&format!("{BASE}[keys]\nblog = {{ salt = 300 }}\n"));
    assert_eq!(at(&e).2, Some("keys.blog.salt"));

    let e = invalid(&format!("{BASE}[data.actions]\nper_user = 3.0\n"));
    assert_eq!(at(&e).2, Some("data.actions"));

    let e = invalid("name = \"t\"\nseed = 1\n[data]\nusers = 10\nstart = 2100-01-01T00:00:00Z\n");
    assert_eq!((at(&e).0, at(&e).2), (5, Some("data.start")));
    assert!(at(&e).3.contains("in the future"), "{e}");

    let e = invalid("name = \"t\"\nseed = 1\n[data\nusers = 10\n");
    assert_eq!(at(&e).0, 3, "{e}");

    let e = invalid("name = \"bad name\"\nseed = 1\n[data]\nusers = 10\n");
    assert_eq!((at(&e).0, at(&e).2), (1, Some("name")));

    let e = invalid("name = \"t\"\nseed = 1\n");
    assert!(at(&e).3.contains("missing field `data`"), "{e}");
}

#[test]
fn a_bad_workload_fails_the_binary_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, format!("{BASE}[data.series]\nper_user = -1.0\n")).unwrap();
    let (ok, out, err) = tallrow(dir.path(), &["load", "bad.toml"]);
    assert!(!ok);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "error: bad.toml:6:12: data.series.per_user: must be between 0 and 100000, got -1\n"
    );
    assert!(!dir.path().join("data").exists(), "nothing created for a bad workload");
    let (ok, _, err) = tallrow(dir.path(), &["verify", "missing.toml"]);
    assert!(!ok);
    assert!(err.starts_with("error: cannot read missing.toml: "), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn every_shipped_workload_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let w = Workload::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(Some(w.name.as_str()), path.file_stem().and_then(|s| s.to_str()));
            names.push(w.name);
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "actions",
            "blog",
            "capacity",
            "fanout",
            "messaging",
            "quickstart",
            "series",
            "social"
        ]
    );
}

/// `--no-count` leaves the rows in each table uncounted: "-" in the summary, null in the
/// manifest, and no counting time.
#[test]
fn no_count_skips_counting_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    // Batches: only a scan could count the rows, and none runs.
    let (ok, out, err) = tallrow(dir.path(), &["load", wl.to_str().unwrap(), "--no-count", "--no-bulk"]);
    assert!(ok, "{out}{err}");
    assert!(out.lines().next().unwrap().contains(", 0.00 s counting rows"), "{out}");
    let relation = out.lines().find(|l| l.starts_with("weibo:relation")).unwrap();
    assert_eq!(relation.split_whitespace().nth(2), Some("-"), "{out}");
    let m = first_manifest(&dir.path().join("reports"));
    assert!(m["tables"]["weibo:relation"]["rows_in_table"].is_null(), "{m}");
    assert!(m["total"]["rows_in_tables"].is_null(), "{m}");
    assert!(m["tables"]["weibo:relation"]["row_writes"].as_u64().unwrap() > 300);
    // A bulk load counts the rows it writes into its empty tables: the same figure as the
    // scan's, without one.
    let counted = tempfile::tempdir().unwrap();
    let (ok, scanned, err) = tallrow(counted.path(), &["load", wl.to_str().unwrap(), "--no-bulk"]);
    assert!(ok, "{scanned}{err}");
    let bulk = tempfile::tempdir().unwrap();
    let (ok, out, err) = tallrow(bulk.path(), &["load", wl.to_str().unwrap(), "--no-count"]);
    assert!(ok, "{out}{err}");
    let rows_in_table = |text: &str, t: &str| {
        let line = text.lines().find(|l| l.starts_with(t)).unwrap().to_string();
        line.split_whitespace().nth(2).unwrap().to_string()
    };
    for t in ["weibo:relation", "weibo:inbox", "useractions", "total"] {
        assert_eq!(
            rows_in_table(&out, t),
            rows_in_table(&scanned, t),
            "{t}: {out}\n{scanned}"
        );
        assert_ne!(rows_in_table(&out, t), "-", "{out}");
    }
}

/// Empty embedded tables are bulk-loaded, and say so; `--no-bulk` sends batches; both hold
/// the workload's data exactly.
#[test]
fn empty_tables_are_bulk_loaded_unless_no_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let wl = wl.to_str().unwrap();
    for (store, flags, bulk) in [("embedded:a", &[][..], true), ("embedded:b", &["--no-bulk"][..], false)] {
        let reports = format!("reports-{bulk}");
        let args = [&["load", wl, "--backend", store, "--reports", &reports][..], flags].concat();
        let (ok, out, err) = tallrow(dir.path(), &args);
        assert!(ok, "{out}{err}");
        let said = out.lines().find(|l| l.starts_with("bulk-loaded"));
        assert_eq!(said.is_some(), bulk, "{out}");
        if let Some(l) = said {
            assert!(l.contains("weibo:relation") && l.contains("series"), "{l}");
        }
        let m = first_manifest(&dir.path().join(&reports));
        assert_eq!(m["tables"]["weibo:relation"]["bulk"], bulk, "{m}");
        // A finished load leaves nothing for the next open to replay.
        let path = dir.path().join(&store["embedded:".len()..]);
        let unflushed = || Embedded::open(&path).unwrap().unflushed_bytes();
        assert_eq!(unflushed(), 0, "{out}");
        let (ok, out, err) = tallrow(dir.path(), &["verify", wl, "--backend", store]);
        assert!(ok && out.contains("OK: the store holds exactly"), "{out}{err}");
        // Loaded again, the tables hold data: batches, and nothing changes.
        let (ok, out, err) = tallrow(dir.path(), &["load", wl, "--backend", store, "--reports", &reports]);
        assert!(ok && !out.contains("bulk-loaded"), "{out}{err}");
        assert_eq!(unflushed(), 0, "{out}");
    }
}

/// `--set KEY=VALUE` overrides a workload field for load, verify and run, shows in the
/// manifest's and the report's effective workload, and is validated as the file's own
/// fields, with errors that name it.
#[test]
fn set_overrides_a_field_and_its_errors_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let wl = fixture();
    let wl = wl.to_str().unwrap();
    let store = ["--backend", "embedded:store"];
    let (ok, out, err) = tallrow(
        dir.path(),
        &[
            &[
                "load",
                wl,
                "--set",
                "data.users=40",
                "--set",
                "microblog.celebrity_threshold=5",
            ][..],
            &store,
        ]
        .concat(),
    );
    assert!(ok, "{out}{err}");
    assert!(
        out.starts_with("loaded small (shard 1/1, 40 users) into embedded"),
        "{out}"
    );
    let m = first_manifest(&dir.path().join("reports"));
    assert_eq!(m["effective"]["data"]["users"], 40, "{m}");
    assert_eq!(m["effective"]["microblog"]["celebrity_threshold"], 5, "{m}");
    // The same settings verify what they loaded; without them the store holds other data.
    let (ok, out, err) = tallrow(
        dir.path(),
        &[
            &[
                "verify",
                wl,
                "--set",
                "data.users=40",
                "--set",
                "microblog.celebrity_threshold=5",
            ][..],
            &store,
        ]
        .concat(),
    );
    assert!(ok, "{out}{err}");
    let (ok, out, _) = tallrow(dir.path(), &[&["verify", wl][..], &store].concat());
    assert!(!ok, "{out}");
    // run: the report's effective workload.
    let (ok, out, err) = tallrow(
        dir.path(),
        &[
            &["run", wl, "--ops", "20", "--warmup", "0s"][..],
            &[
                "--set",
                "data.users=40",
                "--set",
                "microblog.celebrity_threshold=5",
                "--set",
                "run.skew=uniform",
            ],
            &store,
        ]
        .concat(),
    );
    assert!(ok, "{out}{err}");
    let report = out.lines().find_map(|l| l.strip_prefix("report: ")).unwrap();
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(report).join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["workload"]["effective"]["run"]["skew"], "uniform", "{s}");
    assert_eq!(s["workload"]["effective"]["data"]["users"], 40, "{s}");

    for (set, says) in [
        ("data.users=lots", "--set data.users=lots: "),
        ("data.users=0", "--set data.users=0: data.users: "),
        ("data.usres=5", "--set data.usres=5: unknown field `usres`"),
        ("name.first=x", "--set name.first=x: name is a string, not a table"),
        ("users", "\"users\" is not KEY=VALUE"),
    ] {
        let (ok, out, err) = tallrow(dir.path(), &["load", wl, "--backend", "null:", "--set", set]);
        assert!(!ok, "{set}: {out}");
        assert_eq!(err.lines().count(), 1, "{set}: {err}");
        assert!(err.contains(says), "{set}: {err}");
    }
}
