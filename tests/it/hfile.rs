//! HBase's own bulk load end to end through the binary: `load --backend hfile:DIR` writes
//! HFiles, HBase's `HFilePrettyPrinter` reads them, `bulkload` hands them to HBase's
//! bulk-load tool (scripts/hbase.sh completebulkload), and `verify` reads the data back
//! through Thrift2. The directory checks and the refusals need no HBase.

use crate::common::{
    PrefixedSchemaTables, RealHBaseHarness, SAMPLE, SchemaTables, real_hbase, real_hbase_there, small_fixture, tallrow,
};
use std::path::Path;
use tallrow::bulkload::fs::Dir;
use tallrow::bulkload::manifest::{self, Manifest};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `tallrow load WORKLOAD --backend hfile:DIR ARGS...`, which must succeed.
fn write_hfiles(cwd: &Path, workload: &str, dir: &Path, args: &[&str]) -> String {
    let backend = format!("hfile:{}", dir.display());
    let mut all = vec!["load", workload, "--backend", backend.as_str()];
    all.extend_from_slice(args);
    let out = tallrow(cwd, &all);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    out.stdout
}

fn read_manifest(path: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The Thrift2 URL of the real HBase.
fn thrift2() -> String {
    format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap())
}

/// The local HBase's bulk-load tool.
fn tool() -> String {
    format!("{} completebulkload", repo().join("scripts/hbase.sh").display())
}

fn bulkload(cwd: &Path, dirs: &[&Path], cmd: &str) -> crate::common::Out {
    bulkload_with(cwd, dirs, cmd, &[])
}

fn bulkload_with(cwd: &Path, dirs: &[&Path], cmd: &str, more: &[&str]) -> crate::common::Out {
    let url = thrift2();
    let mut args = vec!["bulkload"];
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    args.extend(dirs.iter().map(String::as_str));
    args.extend(["--backend", &url, "--hbase-cmd", cmd]);
    args.extend_from_slice(more);
    tallrow(cwd, &args)
}

/// HBase's `HFilePrettyPrinter` (`scripts/hbase.sh hfile FLAGS FILES`) on `paths`: what it
/// printed, after asserting it succeeded.
fn pretty_print(flags: &[&str], paths: &[String]) -> String {
    let out = std::process::Command::new(repo().join("scripts/hbase.sh"))
        .arg("hfile")
        .args(flags)
        .args(paths)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "scripts/hbase.sh hfile {}: {text}",
        flags.join(" ")
    );
    text
}

#[test]
fn hbases_pretty_printer_reads_every_file_as_written() {
    if !real_hbase_there() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hfiles");
    write_hfiles(tmp.path(), small_fixture().to_str().unwrap(), &dir, &["--regions", "2"]);
    let m = read_manifest(&dir.join("bulkload.json"));
    let files: Vec<&manifest::FileEntry> = m.tables.iter().flat_map(|t| &t.files).collect();
    assert!(files.len() >= 16, "two regions of every family: {}", files.len());
    let paths: Vec<String> = files.iter().map(|f| dir.join(&f.path).display().to_string()).collect();
    let text = pretty_print(&["-k", "-a", "-m", "-v"], &paths);
    for bad in ["ERROR", "WARNING", "Exception", "checksum"] {
        assert!(!text.contains(bad), "the printer says {bad}: {text}");
    }
    for (f, path) in files.iter().zip(&paths) {
        let at = text
            // scripts/hbase.sh hands local files over as file: URIs (HBase's root may be HDFS).
            .find(&format!("Scanning -> file:{path}\n"))
            .unwrap_or_else(|| panic!("{path} was read: {text}"));
        let part = &text[at..];
        let part = &part[..part[1..].find("Scanning -> ").map_or(part.len(), |e| e + 1)];
        assert!(part.contains(&format!("entries={},", f.cells)), "{path}: {part}");
        assert!(
            part.contains(&format!("firstKey=Optional[{}/{}:", f.first_row, f.family)),
            "{path}: {part}"
        );
        assert!(
            part.contains(&format!("lastKey=Optional[{}/{}:", f.last_row, f.family)),
            "{path}: {part}"
        );
        assert!(part.contains(&format!("entryCount={}", f.cells)), "{path}: {part}");
        assert!(part.contains("compressionCodec=NONE"), "{path}: {part}");
        assert!(part.contains("BLOOM_FILTER_TYPE = ROW"), "{path}: {part}");
        assert!(part.contains("BULKLOAD_SOURCE_TASK = tallrow"), "{path}: {part}");
        assert!(part.contains("MAJOR_COMPACTION_KEY = true"), "{path}: {part}");
        assert!(
            part.contains(&format!("LAST_BLOOM_KEY = {}", f.last_row)),
            "{path}: {part}"
        );
        let bloom = &part[part.find("Bloom filter:").expect("a bloom filter section")..];
        assert!(
            bloom.contains(&format!("No of Keys in bloom: {}", f.rows)),
            "{path}: {bloom}"
        );
    }
}

#[test]
fn two_shards_written_apart_load_together() {
    if !real_hbase_there() {
        return;
    }
    // The tables under a prefix of this test's own, dropped before and after.
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::thrift2());
    let set = tables.set();
    let tmp = tempfile::tempdir().unwrap();
    let workload = small_fixture().display().to_string();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_hfiles(
        tmp.path(),
        &workload,
        &a,
        &["--shard", "1/2", "--regions", "3", "--set", &set],
    );
    // Only one shard's directory: the other is named as missing, and nothing is created.
    let out = bulkload(tmp.path(), &[&a], &tool());
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("shard 2/2 of small is missing"), "{}", out.stderr);
    write_hfiles(
        tmp.path(),
        &workload,
        &b,
        &["--shard", "2/2", "--regions", "3", "--set", &set],
    );
    let manifests = [a.join("bulkload-1-of-2.json"), b.join("bulkload-2-of-2.json")].map(|p| read_manifest(&p));
    let out = bulkload(tmp.path(), &[&a, &b], &tool());
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let out = tallrow(
        tmp.path(),
        &[
            "verify",
            &workload,
            "--backend",
            &thrift2(),
            "--set",
            &set,
            "--sample",
            SAMPLE,
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // Every version of every inbox column reads back: the shards' cells add up.
    let store = tallrow::store::backend::Backend::parse(&thrift2(), Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    let inbox = tallrow::store::prefixed::physical(tables.prefix(), "weibo:inbox");
    let mut scan = tallrow::store::Scan::default();
    scan.select.max_versions = 1000;
    let mut cells = 0u64;
    store
        .scan_each(&inbox, &scan, 1000, &mut |row| {
            cells += row.cells.len() as u64;
            true
        })
        .unwrap();
    let written: u64 = manifests
        .iter()
        .flat_map(|m| &m.tables)
        .filter(|t| t.name == inbox)
        .map(|t| t.cells)
        .sum();
    assert!(written > 300, "inboxes hold several versions: {written}");
    assert_eq!(cells, written);
    // --split-from: the live tables' regions, read back from HBase, split the next files.
    let c = tmp.path().join("c");
    write_hfiles(tmp.path(), &workload, &c, &["--split-from", &thrift2(), "--set", &set]);
    let again = read_manifest(&c.join("bulkload.json"));
    assert!(
        manifests[0].tables.iter().any(|t| t.split_points.len() == 2),
        "three regions"
    );
    for t in &manifests[0].tables {
        let same = again.tables.iter().find(|x| x.name == t.name).unwrap();
        assert_eq!(same.split_points, t.split_points, "{}", t.name);
    }
}

#[test]
fn bulkload_refuses_what_it_cannot_load() {
    if !real_hbase_there() {
        return;
    }
    let turn = SchemaTables::thrift2();
    let tmp = tempfile::tempdir().unwrap();
    let workload = small_fixture().display().to_string();
    let dir = tmp.path().join("hfiles");
    write_hfiles(tmp.path(), &workload, &dir, &[]);
    // A tool that cannot be run.
    let out = bulkload(tmp.path(), &[&dir], "/nonexistent/hbase completebulkload");
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("cannot run the bulk-load tool \"/nonexistent/hbase completebulkload\""),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    // A tool that fails: its last error line is shown.
    let out = bulkload(
        tmp.path(),
        &[&dir],
        "sh -c 'echo ERROR: no region server >&2; exit 3' --",
    );
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("ERROR: no region server"), "{}", out.stderr);
    // A table that exists with other families.
    drop(turn);
    let _turn = SchemaTables::thrift2();
    let store = tallrow::store::backend::Backend::parse(&thrift2(), Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    store
        .create_table(&tallrow::store::TableDescriptor::new("useractions", &["other"], 1))
        .unwrap();
    let out = bulkload(tmp.path(), &[&dir], &tool());
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(
            "table useractions exists with families other (VERSIONS 1), the HFiles are of content (VERSIONS 1)"
        ),
        "{}",
        out.stderr
    );
    // A tool that succeeds and loads nothing: the count finds the tables short, naming each.
    drop(_turn);
    let _turn = SchemaTables::thrift2();
    let out = bulkload(tmp.path(), &[&dir], "true");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("the tables do not hold what the HFiles do")
            && out.stderr.contains("useractions holds 0 rows, its HFiles "),
        "{}",
        out.stderr
    );
    // With --no-count the same hand-over is taken at its word: nothing counted, nothing shown.
    let out = bulkload_with(tmp.path(), &[&dir], "true", &["--no-count"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("rows not counted (--no-count)"), "{}", out.stdout);
    let useractions = out.stdout.lines().find(|l| l.starts_with("useractions")).unwrap();
    assert!(useractions.trim_end().ends_with(" -"), "{useractions}");
    // A directory with no manifest.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bulkload(tmp.path(), &[&empty], &tool());
    assert!(
        out.code != 0 && out.stderr.contains("no bulkload.json"),
        "{}",
        out.stderr
    );
}

/// Files of the directory, relative to it.
fn files_in(dir: &Path) -> Vec<String> {
    manifest::hfiles_in(&Dir::Local(dir.to_path_buf())).unwrap()
}

#[test]
fn a_directory_takes_each_shard_once_unless_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let workload = small_fixture().display().to_string();
    let dir = tmp.path().join("hfiles");
    let out = write_hfiles(tmp.path(), &workload, &dir, &["--regions", "2"]);
    assert!(out.contains("tallrow bulkload"), "says what to run next: {out}");
    let first = files_in(&dir);
    let m = read_manifest(&dir.join("bulkload.json"));
    assert_eq!(m.shard, "1/1");
    assert_eq!(m.tables.iter().flat_map(|t| &t.files).count(), first.len());
    for t in &m.tables {
        // Inboxes keep their VERSIONS; every file is in its table's folder.
        let versions = if t.name == "weibo:inbox" { 2 } else { 1 };
        assert!(
            t.families.iter().all(|f| f.versions == versions && f.bloom == "ROW"),
            "{t:?}"
        );
        let folder = tallrow::bulkload::output::table_dir(&t.name);
        assert!(t.files.iter().all(|f| Path::new(&f.path).starts_with(&folder)), "{t:?}");
        assert!(
            t.files.iter().all(|f| !f.path.contains('.') && !f.path.contains('-')),
            "{t:?}"
        );
    }
    // Again into the same directory: refused, and nothing changes.
    let backend = format!("hfile:{}", dir.display());
    let out = tallrow(
        tmp.path(),
        &["load", &workload, "--backend", &backend, "--regions", "2"],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("already holds the HFiles of shard 1/1"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--replace"), "{}", out.stderr);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert_eq!(files_in(&dir), first);
    // Another data set into it: refused too; with --replace it takes the directory over.
    let other = ["load", &workload, "--backend", &backend, "--set", "data.users=100"];
    let out = tallrow(tmp.path(), &other);
    assert!(
        out.code != 0 && out.stderr.contains("another data set"),
        "{}",
        out.stderr
    );
    let out = tallrow(tmp.path(), &[&other[..], &["--replace"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let m2 = read_manifest(&dir.join("bulkload.json"));
    assert_ne!(m2.data_digest, m.data_digest);
    // Two shards of one data set share a directory.
    let shards = tmp.path().join("shards");
    write_hfiles(tmp.path(), &workload, &shards, &["--shard", "1/2"]);
    write_hfiles(tmp.path(), &workload, &shards, &["--shard", "2/2"]);
    assert!(shards.join("bulkload-1-of-2.json").exists() && shards.join("bulkload-2-of-2.json").exists());
    let plan = tallrow::bulkload::tool::plan(&[Dir::Local(shards.clone())]).unwrap();
    assert_eq!(plan.shards, 2);
    let whole: Vec<u128> = [1, 2]
        .map(|i| read_manifest(&shards.join(format!("bulkload-{i}-of-2.json"))).rows_digest)
        .iter()
        .map(|d| u128::from_str_radix(d, 16).unwrap())
        .collect();
    assert_eq!(
        whole[0].wrapping_add(whole[1]),
        u128::from_str_radix(&m.rows_digest, 16).unwrap(),
        "the shards are the whole"
    );
}

#[test]
fn bad_hfile_targets_say_what_and_where() {
    let tmp = tempfile::tempdir().unwrap();
    let workload = small_fixture().display().to_string();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for (backend, args, says) in [
        (format!("hfile:{}", file.display()), vec![], "is not a directory"),
        (format!("hfile:{}/sub", file.display()), vec![], "cannot create"),
        ("hfile:".to_string(), vec![], "hfile: needs a directory"),
        (
            format!("hfile:{}/d", tmp.path().display()),
            vec!["--no-bulk"],
            "written by the bulk pipeline only",
        ),
        (
            "memory:".to_string(),
            vec!["--replace"],
            "apply to --backend hfile:DIR only",
        ),
        (
            format!("hfile:{}/d", tmp.path().display()),
            vec!["--split-from", "memory:"],
            "expected an hbase:// URL",
        ),
    ] {
        let mut all = vec!["load", workload.as_str(), "--backend", backend.as_str()];
        all.extend(args);
        let out = tallrow(tmp.path(), &all);
        assert_ne!(out.code, 0, "{backend}");
        assert!(out.stderr.contains(says), "{backend}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "one line: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    // Other commands refuse the write-only backend.
    let out = tallrow(
        tmp.path(),
        &[
            "verify",
            &workload,
            "--backend",
            &format!("hfile:{}", tmp.path().display()),
        ],
    );
    assert!(
        out.code != 0 && out.stderr.contains("takes `tallrow load` only"),
        "{}",
        out.stderr
    );
}

/// Each codec's settings, the tables that take them: the four codecs HBase ships (with an
/// encoding and a bloom filter each) in one workload, two tables each.
const CODECS: [(&str, &str, &str, [&str; 2]); 4] = [
    ("SNAPPY", "FAST_DIFF", "ROWCOL", ["weibo:user", "weibo:relation"]),
    ("GZ", "PREFIX", "ROW", ["weibo:celebrity", "weibo:content"]),
    ("LZ4", "DIFF", "NONE", ["weibo:inbox", "useractions"]),
    ("ZSTD", "ROW_INDEX_V1", "ROW", ["blog", "series"]),
];

/// HFiles of every codec, encoding and bloom filter (`CODECS`, each table's own through
/// `[storage.tables]`) in one load: HBase's printer reads each file with its table's
/// settings, the files go into their tables' regions whole through HBase's RPC, `verify`
/// passes, and again after HBase has major-compacted them (read, decoded and rewritten by
/// the region servers), with no checksum or decompression error in their logs. (HBase's own
/// bulk-load tool takes files in `two_shards_written_apart_load_together` and `hdfs`.)
#[test]
fn files_of_every_codec_bulk_load_compact_and_verify() {
    if !real_hbase_there() {
        return;
    }
    let native = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let logs = crate::common::ClusterLogs::mark();
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::native());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hfiles");
    let mut text = std::fs::read_to_string(small_fixture()).unwrap();
    text.push_str(&format!(
        "\n[storage]\ntable_prefix = \"{}\"\nblock_size = 4096\n",
        tables.prefix()
    ));
    for (codec, encoding, bloom, names) in CODECS {
        for name in names {
            text.push_str(&format!(
                "\n[storage.tables.\"{name}\"]\ncompression = \"{codec}\"\n\
                 data_block_encoding = \"{encoding}\"\nbloom_filter = \"{bloom}\"\n"
            ));
        }
    }
    let workload = tmp.path().join("codecs.toml");
    std::fs::write(&workload, text).unwrap();
    let workload = workload.display().to_string();
    let settings = |table: &str| {
        let logical = tallrow::store::prefixed::logical(tables.prefix(), table).unwrap();
        let (codec, encoding, bloom, _) = CODECS.iter().find(|c| c.3.contains(&logical.as_str())).unwrap();
        (*codec, *encoding, *bloom)
    };
    write_hfiles(tmp.path(), &workload, &dir, &["--regions", "4"]);
    let m = read_manifest(&dir.join("bulkload.json"));
    assert_eq!(m.tables.len(), 8, "every table");
    assert!(
        m.tables.iter().all(|t| t.split_points.len() == 3),
        "four regions a table"
    );
    for t in &m.tables {
        assert!(t.raw_bytes > 0 && t.file_bytes > 0, "{}", t.name);
        assert_eq!(t.file_bytes, t.files.iter().map(|f| f.bytes).sum::<u64>());
        assert!(t.ratio > 0.0, "{}", t.name);
        for f in &t.families {
            assert_eq!(
                (f.compression.as_str(), f.encoding.as_str(), f.bloom.as_str()),
                settings(&t.name),
                "{}",
                t.name
            );
        }
    }
    // HBase's printer, one file at a time in one JVM: each says its table's settings.
    let files: Vec<(String, (&str, &str, &str))> = (m.tables.iter())
        .flat_map(|t| t.files.iter().map(move |f| (f, settings(&t.name))))
        .map(|(f, s)| (dir.join(&f.path).display().to_string(), s))
        .collect();
    let paths: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let text = pretty_print(&["-m", "-v", "-k"], &paths);
    for bad in ["ERROR", "Exception", "checksum", "out of order"] {
        assert!(!text.contains(bad), "the printer says {bad}: {text}");
    }
    let count = |needle: &str| text.matches(needle).count();
    let files_with = |pick: &dyn Fn(&(&str, &str, &str)) -> bool| files.iter().filter(|f| pick(&f.1)).count();
    for (codec, encoding, bloom, _) in CODECS {
        assert_eq!(
            count(&format!("compressionCodec={codec},")),
            files_with(&|s| s.0 == codec),
            "files of {codec}: {text}"
        );
        assert_eq!(
            count(&format!("DATA_BLOCK_ENCODING = {encoding}\n")),
            files_with(&|s| s.1 == encoding),
            "files of {encoding}: {text}"
        );
        if bloom != "NONE" {
            assert_eq!(
                count(&format!("BLOOM_FILTER_TYPE = {bloom}\n")),
                files_with(&|s| s.2 == bloom),
                "files of {bloom}: {text}"
            );
        }
    }
    assert_eq!(
        count("BLOOM_FILTER_TYPE"),
        files_with(&|s| s.2 != "NONE"),
        "a file without a bloom filter says none: {text}"
    );
    // Through HBase's RPC, which refuses files split otherwise than their tables: a file of
    // any codec goes into its region whole.
    let out = tallrow(
        tmp.path(),
        &["bulkload", &dir.display().to_string(), "--backend", &native],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("OK: every table holds the rows its HFiles do"),
        "{}",
        out.stdout
    );
    // Every table was created with the files' regions: no file was split.
    let created: Vec<&str> = out.stdout.lines().skip(2).filter(|l| l.contains(" yes ")).collect();
    assert_eq!(created.len(), m.tables.len(), "a line per table: {}", out.stdout);
    for line in created {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[5], "0", "split by the tool: {line}");
    }
    let verify = |when: &str| {
        let out = tallrow(
            tmp.path(),
            &["verify", &workload, "--backend", &native, "--sample", SAMPLE],
        );
        assert_eq!(out.code, 0, "{when}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("OK: the store holds exactly the workload's data"),
            "{when}: {}",
            out.stdout
        );
    };
    verify("bulk-loaded");
    let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
    let out = std::process::Command::new(repo().join("scripts/hbase.sh"))
        .arg("compact")
        .args(&names)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "compact: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in &names {
        assert!(said.lines().any(|l| l == format!("compacted {t}")), "{said}");
    }
    verify("major-compacted");
    let log = logs.region_servers_since();
    for bad in [
        "checksum verification failed",
        "DecompressionException",
        "Corrupt",
        "IllegalStateException",
    ] {
        assert!(!log.contains(bad), "a region server logged {bad}");
    }
}
