//! HFiles written straight into HDFS (`hfile:hdfs://NAMENODE:PORT/PATH`) and bulk-loaded
//! into an HBase whose root directory is on that HDFS (`scripts/hbase.sh start --hdfs`, as
//! scripts/test.sh runs it): the 100,000-row fixture in four regions, handed over through HBase's RPC
//! by tallrow's client, and the evidence that HBase renamed the files rather than copied
//! them; two shards written apart and loaded together; files that appear only once
//! complete.
//!
//! The files are written as another HDFS user than HBase's (`HADOOP_USER_NAME`): a store
//! file that still belongs to the writer, with the time it was written, was moved, not
//! copied.

use crate::common::{SAMPLE, SchemaTables, real_hbase, small_fixture, tallrow, tallrow_with};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use tallrow::bulkload::fs::Location;
use tallrow::bulkload::manifest::{self, Manifest};

/// The HDFS user the tests write as; HBase runs as the user who started it.
const WRITER: &str = "tallrow-writer";

/// The HDFS HBase runs on, when it does.
fn hdfs() -> Option<String> {
    let url = std::env::var("TALLROW_HDFS").ok().filter(|u| !u.is_empty());
    if url.is_none() {
        tallrow::testkit::absent(
            "HDFS",
            "TALLROW_HDFS is not set (scripts/hbase.sh start --hdfs, or scripts/test.sh)",
        );
    }
    url
}

/// A folder of its own in HDFS's /tmp for one test.
fn scratch(hdfs: &str, what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{hdfs}/tmp/tallrow-it-{}-{nanos}-{what}", std::process::id())
}

fn client(hdfs: &str) -> hdfs_native::sync::Client {
    hdfs_native::sync::ClientBuilder::new().with_url(hdfs).build().unwrap()
}

/// The path part of an hdfs:// URL.
fn path_of(url: &str) -> String {
    let rest = url.strip_prefix("hdfs://").unwrap();
    format!("/{}", rest.split_once('/').unwrap().1)
}

/// Every file under `path`: its path, length, modification time (ms) and owner.
fn files_under(c: &hdfs_native::sync::Client, path: &str) -> BTreeMap<String, (usize, u64, String)> {
    c.list_status(path, true)
        .unwrap()
        .into_iter()
        .filter(|s| !s.isdir)
        .map(|s| (s.path.clone(), (s.length, s.modification_time, s.owner.clone())))
        .collect()
}

/// `tallrow load WORKLOAD --backend hfile:URL ARGS...` as the writer, which must succeed.
fn write_into(cwd: &Path, workload: &str, url: &str, args: &[&str]) -> String {
    let backend = format!("hfile:{url}");
    let mut all = vec!["load", workload, "--backend", backend.as_str()];
    all.extend_from_slice(args);
    let out = tallrow_with(cwd, &all, &[("HADOOP_USER_NAME", WRITER)]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    out.stdout
}

fn manifests(url: &str) -> Vec<Manifest> {
    let dir = Location::parse(url).unwrap().open().unwrap();
    manifest::read_all(&dir).unwrap().into_iter().map(|(_, m)| m).collect()
}

/// `tallrow bulkload URLS... --backend NATIVE`: handed over through HBase's RPC by
/// tallrow's client. (HBase's own tool takes files out of HDFS in
/// `secure::hfiles_written_into_kerberized_hdfs_at_each_protection_bulk_load_and_verify`.)
fn bulkload(cwd: &Path, urls: &[&str], native: &str) -> crate::common::Out {
    let mut args = vec!["bulkload"];
    args.extend_from_slice(urls);
    args.extend(["--backend", native]);
    let out = tallrow(cwd, &args);
    if out.code == 0 {
        assert!(
            out.stdout.lines().next().unwrap_or("").ends_with("through HBase's RPC"),
            "{}",
            out.stdout
        );
    }
    out
}

#[test]
fn hfiles_written_into_hdfs_are_renamed_into_hbase_and_verify() {
    let Some(hdfs) = hdfs() else { return };
    let native = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let _turn = SchemaTables::native();
    let tmp = tempfile::tempdir().unwrap();
    let url = scratch(&hdfs, "fixture");
    let workload = crate::common::hbase_fixture().display().to_string();
    let out = write_into(tmp.path(), &workload, &url, &["--regions", "4"]);
    assert!(out.contains(&format!("tallrow bulkload {url}")), "{out}");
    let c = client(&hdfs);
    let written = files_under(&c, &path_of(&url));
    let m = &manifests(&url)[0];
    let listed: usize = m.tables.iter().map(|t| t.files.len()).sum();
    assert!(
        m.tables.iter().all(|t| t.split_points.len() == 3),
        "four regions a table"
    );
    // The manifest and each file it names, by its own name: no temporary file is left.
    assert_eq!(written.len(), listed + 1, "{written:?}");
    for t in &m.tables {
        for f in &t.files {
            let at = format!("{}/{}", path_of(&url), f.path);
            let (len, _, owner) = &written[&at];
            assert_eq!((*len as u64, owner.as_str()), (f.bytes, WRITER), "{at}");
        }
    }

    // A user who may not move the writer's files is refused in one line, and nothing moved.
    let stranger = "tallrow-stranger";
    let out = tallrow_with(
        tmp.path(),
        &["bulkload", &url, "--backend", &native],
        &[("HADOOP_USER_NAME", stranger)],
    );
    let line = out.stderr.trim();
    assert!(
        out.code != 0 && !line.contains('\n') && line.contains(&format!("not readable and writable by {stranger}")),
        "{}\n{line}",
        out.stdout
    );
    assert_eq!(files_under(&c, &path_of(&url)), written, "nothing moved");

    let out = bulkload(tmp.path(), &[&url], &native);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("every table holds the rows its HFiles do"),
        "{}",
        out.stdout
    );
    // Renamed: the sources are gone, and each store file is one of them, the writer's,
    // with the time it was written. HBase's copy would be its own, made now.
    let left = files_under(&c, &path_of(&url));
    assert_eq!(
        left.keys().collect::<Vec<_>>(),
        [&format!("{}/bulkload.json", path_of(&url))]
    );
    for t in &m.tables {
        let (ns, name) = t.name.split_once(':').unwrap_or(("default", &t.name));
        let stored: Vec<(usize, u64, String)> = files_under(&c, &format!("/hbase/data/{ns}/{name}"))
            .into_iter()
            .filter(|(p, _)| {
                let parts: Vec<&str> = p.rsplit('/').take(2).collect();
                t.families.iter().any(|f| f.name == parts[1]) && !parts[0].starts_with('.')
            })
            .map(|(_, v)| v)
            .collect();
        assert_eq!(stored.len(), t.files.len(), "{}: {stored:?}", t.name);
        for f in &t.files {
            let (len, mtime, _) = &written[&format!("{}/{}", path_of(&url), f.path)];
            assert!(
                stored.contains(&(*len, *mtime, WRITER.to_string())),
                "{}: {} (length {len}, written at {mtime}) is not among the store files {stored:?}",
                t.name,
                f.path
            );
        }
    }
    let out = tallrow(
        tmp.path(),
        &["verify", &workload, "--backend", &native, "--sample", SAMPLE],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    c.delete(&path_of(&url), true).unwrap();
}

/// The messaging example, a design of the workload's own, as HFiles written into HDFS,
/// renamed into HBase by `tallrow bulkload`, verified through HBase's RPC, and its
/// operations run there.
#[test]
fn a_design_of_its_own_written_as_hfiles_into_hdfs_loads_and_verifies() {
    let Some(hdfs) = hdfs() else { return };
    let native = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let tables = crate::common::PrefixedSchemaTables::new(crate::common::RealHBaseHarness::native());
    let tmp = tempfile::tempdir().unwrap();
    let url = scratch(&hdfs, "messaging");
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/messaging.toml");
    let workload = workload.to_str().unwrap();
    let prefix = tables.set();
    let sets = ["--set", "data.users=200", "--set", prefix.as_str()];
    write_into(tmp.path(), workload, &url, &sets);
    let out = bulkload(tmp.path(), &[&url], &native);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let mut verify = vec!["verify", workload, "--backend", &native, "--sample", SAMPLE];
    verify.extend(sets);
    let out = tallrow(tmp.path(), &verify);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for t in ["chat:accounts", "chat:messages", "chat:conversations"] {
        assert!(out.stdout.contains(t), "{t}: {}", out.stdout);
    }
    // The design's operations, on the rows the bulk load put in place: each ran, none failed.
    let mut run = vec![
        "run",
        workload,
        "--backend",
        &native,
        "--set",
        "run.ops=200",
        "--set",
        "run.warmup=0s",
    ];
    run.extend(sets);
    let out = tallrow(tmp.path(), &run);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    crate::common::ran_without_errors(&out.stdout, &["account ", "conversation ", "inbox ", "send "]);
    let store = tallrow::store::backend::Backend::parse(&native, Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    let store = tallrow::store::prefixed::over(store, tables.prefix());
    let names = ["chat:accounts", "chat:messages", "chat:conversations"].map(String::from);
    crate::common::drop_tables(&*store, &names).unwrap();
    client(&hdfs).delete(&path_of(&url), true).unwrap();
}

#[test]
fn two_shards_written_into_hdfs_apart_load_together() {
    let Some(hdfs) = hdfs() else { return };
    let native = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let workload = small_fixture().display().to_string();
    let (a, b) = (scratch(&hdfs, "a"), scratch(&hdfs, "b"));
    write_into(tmp.path(), &workload, &a, &["--shard", "1/2", "--regions", "3"]);
    // Refused before any table is touched: no turn needed yet.
    let out = bulkload(tmp.path(), &[&a], &native);
    assert!(
        out.code != 0 && out.stderr.contains("shard 2/2 of small is missing"),
        "{}",
        out.stderr
    );
    write_into(tmp.path(), &workload, &b, &["--shard", "2/2", "--regions", "3"]);
    // The same shard again is refused; with --replace it is written anew.
    let again = tallrow_with(
        tmp.path(),
        &[
            "load",
            &workload,
            "--backend",
            &format!("hfile:{b}"),
            "--shard",
            "2/2",
            "--regions",
            "3",
        ],
        &[("HADOOP_USER_NAME", WRITER)],
    );
    assert!(
        again.code != 0 && again.stderr.contains("already holds the HFiles of shard 2/2"),
        "{}",
        again.stderr
    );
    assert_eq!(again.stderr.trim().lines().count(), 1, "{}", again.stderr);
    write_into(
        tmp.path(),
        &workload,
        &b,
        &["--shard", "2/2", "--regions", "3", "--replace"],
    );
    let _turn = SchemaTables::native();
    let out = bulkload(tmp.path(), &[&a, &b], &native);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let out = tallrow(
        tmp.path(),
        &["verify", &workload, "--backend", &native, "--sample", SAMPLE],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let c = client(&hdfs);
    for url in [a, b] {
        c.delete(&path_of(&url), true).unwrap();
    }
}

/// The writer's contract in HDFS: a file has its name only once closed, and one dropped
/// unclosed leaves nothing; a folder HDFS refuses is said in one line.
#[test]
fn files_in_hdfs_appear_only_complete() {
    let Some(hdfs) = hdfs() else { return };
    let url = scratch(&hdfs, "files");
    let dir = Location::parse(&url).unwrap().open().unwrap();
    let c = client(&hdfs);
    let mut f = dir.create("ns/t/cf/region00000").unwrap();
    f.write_all(&vec![7u8; 3 << 20]).unwrap();
    assert_eq!(dir.kind("ns/t/cf/region00000").unwrap(), None);
    f.commit().unwrap();
    assert_eq!(dir.len("ns/t/cf/region00000").unwrap(), 3 << 20);
    let mut g = dir.create("ns/t/cf/region00001").unwrap();
    g.write_all(b"half a file").unwrap();
    drop(g);
    let names: Vec<String> = dir.list("ns/t/cf").unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["region00000"]);
    assert_eq!(
        manifest::hfiles_in(&dir).unwrap(),
        ["ns/t/cf/region00000"],
        "what a bulk load would find"
    );
    c.delete(&path_of(&url), true).unwrap();

    // HBase's root directory is HBase's: another user may not write there.
    let tmp = tempfile::tempdir().unwrap();
    let backend = format!("hfile:{hdfs}/hbase/not-yours");
    let out = tallrow_with(
        tmp.path(),
        &["load", small_fixture().to_str().unwrap(), "--backend", &backend],
        &[("HADOOP_USER_NAME", WRITER)],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("/hbase/not-yours") && out.stderr.contains("AccessControlException"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
}
