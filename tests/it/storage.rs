//! Storage settings (`[storage]`: codec, data block encoding, bloom filter, block size, TTL):
//! the workload's section and its one-line refusals through the binary, the settings a load
//! creates tables with (kept by the embedded store across a restart), and tables created
//! through Thrift2, the native RPC and Thrift1 as HBase's own Java Admin describes them.

use crate::common::{real_hbase, real_hbase_there, tallrow};
use std::path::Path;
use std::process::Command;
use tallrow::store::storage::{Bloom, Compression, Encoding, FOREVER};
use tallrow::store::{Error, FamilyDescriptor, Storage, Store, TableDescriptor};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A small microblog workload with a `[storage]` section.
const WORKLOAD: &str = r#"name = "stored"
seed = 7

[data]
users = 60
start = 2026-01-01T00:00:00Z
span_days = 30

[data.follows]
max_followees = 20

[data.posts]
per_month = 2.0

[storage]
compression = "SNAPPY"
data_block_encoding = "FAST_DIFF"
bloom_filter = "ROWCOL"

[storage.tables."weibo:inbox"]
block_size = 16384
ttl = "3650d"

[storage.tables."weibo:inbox".families.receive]
compression = "ZSTD"
"#;

#[test]
fn a_load_creates_tables_with_the_workloads_settings_and_the_store_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.toml"), WORKLOAD).unwrap();
    let out = tallrow(
        dir.path(),
        &[
            "load",
            "w.toml",
            "--backend",
            "embedded:db",
            "--set",
            "storage.tables.weibo:content.compression=gz",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    let inbox = store.describe_table("weibo:inbox").unwrap();
    assert_eq!(
        inbox.family("receive").unwrap().storage,
        Storage {
            compression: Compression::Zstd,
            data_block_encoding: Encoding::FastDiff,
            bloom_filter: Bloom::RowCol,
            block_size: 16384,
            ttl: 3650 * 86_400,
        }
    );
    let content = store.describe_table("weibo:content").unwrap();
    assert_eq!(
        content.family("info").unwrap().storage,
        Storage {
            compression: Compression::Gz,
            data_block_encoding: Encoding::FastDiff,
            bloom_filter: Bloom::RowCol,
            ..Storage::default()
        },
        "--set overrides the file"
    );
    let relation = store.describe_table("weibo:relation").unwrap();
    for f in &relation.families {
        assert_eq!(f.storage.compression, Compression::Snappy, "{}", f.name);
        assert_eq!(f.storage.ttl, FOREVER);
    }
}

/// The workload with `from` replaced by `to`, written to `dir/w.toml`.
fn with(dir: &Path, from: &str, to: &str) {
    assert!(WORKLOAD.contains(from), "{from}");
    std::fs::write(dir.join("w.toml"), WORKLOAD.replacen(from, to, 1)).unwrap();
}

fn refused(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["load", "w.toml", "--backend", "memory:"];
    args.extend_from_slice(extra);
    let out = tallrow(dir, &args);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out.stderr.trim_end().to_string()
}

/// Two table prefixes on one store: each workload loads, verifies and runs in its own
/// tables, beside a load without a prefix, and none sees or touches the others' tables.
#[test]
fn two_table_prefixes_load_verify_and_run_apart_on_one_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.toml"), WORKLOAD).unwrap();
    let with = |prefix: &str, args: &[&str]| {
        let set = format!("storage.table_prefix={prefix}");
        let mut all = args.to_vec();
        all.extend(["w.toml", "--backend", "embedded:db", "--set", &set]);
        let out = tallrow(dir.path(), &all);
        assert_eq!(out.code, 0, "{prefix} {args:?}: {}{}", out.stdout, out.stderr);
        out.stdout
    };
    for p in ["a_", "b_", ""] {
        with(p, &["load"]);
    }
    // Drop a_'s tables below the prefix, and check the others' data is whole.
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    let names: Vec<String> = store.list_tables().unwrap().into_iter().map(|d| d.name).collect();
    let schema = [
        "weibo:celebrity",
        "weibo:content",
        "weibo:inbox",
        "weibo:relation",
        "weibo:user",
    ];
    let mut want: Vec<String> = ["a_", "b_", ""]
        .iter()
        .flat_map(|p| schema.iter().map(move |t| tallrow::store::prefixed::physical(p, t)))
        .collect();
    want.sort();
    assert_eq!(names, want);
    for t in schema {
        let a = tallrow::store::prefixed::physical("a_", t);
        store.delete_table(&a).unwrap();
    }
    drop(store);
    for p in ["b_", ""] {
        assert!(
            with(p, &["verify"]).contains("OK: the store holds exactly the workload's data"),
            "{p}"
        );
    }
    // a_'s tables are gone and b_'s are whole: a run of a_ loads its own again, and its
    // writes leave the others' data as it was.
    let run = with("a_", &["run", "--set", "run.ops=200", "--reports", "r"]);
    assert!(
        run.contains("the target held none of the workload's tables: loaded"),
        "{run}"
    );
    assert!(run.contains("tables prefixed \"a_\""), "{run}");
    for p in ["b_", ""] {
        assert!(with(p, &["verify"]).contains("OK: the store holds exactly"), "{p}");
    }
    // `drop` takes a_'s tables (marked by this workload) and leaves b_'s and the unprefixed.
    let dropped = with("a_", &["drop"]);
    assert!(
        dropped.starts_with("dropped 5 of stored's tables from embedded"),
        "{dropped}"
    );
    let words = |text: &str, table: &str| -> String {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(table))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(
        words(&dropped, "weibo:inbox"),
        "weibo:inbox weibo:a_inbox stored (this data) dropped"
    );
    for p in ["b_", ""] {
        assert!(with(p, &["verify"]).contains("OK: the store holds exactly"), "{p}");
    }
    // A table of the same name that tallrow did not make is refused, and nothing is
    // dropped; --force drops it.
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    store
        .create_table(&TableDescriptor::new("weibo:c_user", &["info"], 1))
        .unwrap();
    drop(store);
    with("c_", &["load"]);
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    let d = store.describe_table("weibo:c_content").unwrap();
    assert_eq!(d.attribute(tallrow::store::MARK_WORKLOAD), Some("stored"));
    assert_eq!(d.attribute(tallrow::store::MARK_DATA).map(str::len), Some(32));
    assert!(store.describe_table("weibo:c_user").unwrap().attributes.is_empty());
    drop(store);
    let set = ["--backend", "embedded:db", "--set", "storage.table_prefix=c_"];
    let out = tallrow(dir.path(), &[&["drop", "w.toml"][..], &set].concat());
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr.trim(),
        "error: 1 of stored's tables on embedded (fjall 3) at db, tables prefixed \"c_\" is not marked as made by it: weibo:c_user (no mark); nothing was dropped (--force drops them anyway; tables made through Thrift1 or in Bigtable, or by a tallrow before marks, carry none)"
    );
    let out = tallrow(dir.path(), &[&["drop", "w.toml", "--force"][..], &set].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        words(&out.stdout, "weibo:user"),
        "weibo:user weibo:c_user none (forced) dropped"
    );
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    let left: Vec<String> = store.list_tables().unwrap().into_iter().map(|d| d.name).collect();
    let mut want: Vec<String> = ["b_", ""]
        .iter()
        .flat_map(|p| schema.iter().map(move |t| tallrow::store::prefixed::physical(p, t)))
        .collect();
    want.sort();
    assert_eq!(left, want, "drop took exactly its own tables");
    drop(store);
    // A prefix that cannot lead a table's name is refused in one line.
    let out = tallrow(
        dir.path(),
        &[
            "verify",
            "w.toml",
            "--backend",
            "embedded:db",
            "--set",
            "storage.table_prefix=-x",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stderr.trim(),
        "error: --set storage.table_prefix=-x: storage.table_prefix: \"-x\": a table's name cannot start with '.' or '-'"
    );
}

/// Region replicas are HBase's: a store that keeps one copy refuses a workload that asks for
/// more, in one line, before writing anything.
#[test]
fn region_replicas_are_refused_where_one_copy_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let w = crate::common::small_fixture();
    let out = tallrow(
        dir.path(),
        &[
            "load",
            w.to_str().unwrap(),
            "--backend",
            "embedded:db",
            "--set",
            "storage.region_replication=2",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = out.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.starts_with("error: ")
            && line.ends_with(": storage.region_replication = 2: embedded: keeps one copy of each row; region replicas are HBase's, through api=native or api=thrift2"),
        "{line}"
    );
    let store = tallrow::store::embedded::Embedded::open(&dir.path().join("db")).unwrap();
    assert!(store.list_tables().unwrap().is_empty(), "no table made");
}

#[test]
fn bad_storage_settings_are_refused_in_one_line_that_says_where() {
    let dir = tempfile::tempdir().unwrap();
    with(dir.path(), "compression = \"SNAPPY\"", "compression = \"LZO\"");
    assert_eq!(
        refused(dir.path(), &[]),
        "error: w.toml:16:15: storage.compression: \"LZO\" is not a codec (one of NONE, GZ, SNAPPY, LZ4, ZSTD)"
    );
    with(
        dir.path(),
        "bloom_filter = \"ROWCOL\"",
        "bloom_filter = \"ROWPREFIX_FIXED_LENGTH\"",
    );
    assert!(refused(dir.path(), &[]).ends_with(
        "storage.bloom_filter: \"ROWPREFIX_FIXED_LENGTH\" is not a bloom filter type (one of NONE, ROW, ROWCOL)"
    ));
    with(dir.path(), "ttl = \"3650d\"", "ttl = \"30d\"");
    let ttl = refused(dir.path(), &[]);
    assert!(
        ttl.contains("storage.tables.\"weibo:inbox\".ttl: 2592000 s would expire generated cells at once: the oldest is stamped 2025-12-31T23:59:59.000Z"),
        "{ttl}"
    );
    with(
        dir.path(),
        "[storage.tables.\"weibo:inbox\"]",
        "[storage.tables.\"weibo:outbox\"]",
    );
    assert!(refused(dir.path(), &[]).contains("no schema has a table \"weibo:outbox\""));
    with(dir.path(), "families.receive]", "families.fans]");
    assert!(refused(dir.path(), &[]).contains("table weibo:inbox has no family \"fans\" (it has receive)"));
    with(dir.path(), "seed = 7", "seed = 7");
    assert_eq!(
        refused(dir.path(), &["--set", "storage.data_block_encoding=PREFIX_TREE"]),
        "error: --set storage.data_block_encoding=PREFIX_TREE: storage.data_block_encoding: \"PREFIX_TREE\" is not a data block encoding (one of NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1)"
    );
    assert!(
        refused(dir.path(), &["--set", "storage.block_size=512"])
            .ends_with("BLOCKSIZE 512 is outside 1024..=16777216 bytes")
    );
    assert_eq!(
        refused(dir.path(), &["--set", "data.compressibility=50"]),
        "error: --set data.compressibility=50: data.compressibility: 50 is out of reach: the generated text compresses 1.51 to 31.45 times (4.12 as it is)"
    );
    assert!(
        refused(dir.path(), &["--set", "data.compressibility=0.5"])
            .ends_with("must be above 1 and at most 100, got 0.5")
    );
}

/// Text of a chosen compressibility is other text: loaded, it verifies (the verifier
/// regenerates it), and its rows differ from the plain load's.
#[test]
fn a_compressibility_changes_the_text_and_the_load_verifies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.toml"), WORKLOAD).unwrap();
    let mut digests = Vec::new();
    for (db, set) in [("plain", None), ("two", Some("data.compressibility=2.0"))] {
        let backend = format!("embedded:{db}");
        let mut extra: Vec<&str> = vec!["--backend", backend.as_str()];
        if let Some(set) = set {
            extra.extend(["--set", set]);
        }
        let out = tallrow(dir.path(), &[&["load", "w.toml"][..], &extra].concat());
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let digest = out
            .stdout
            .lines()
            .find_map(|l| l.split("rows digest: ").nth(1))
            .expect("a rows digest")
            .to_string();
        digests.push(digest);
        let verify = tallrow(dir.path(), &[&["verify", "w.toml"][..], &extra].concat());
        assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    }
    assert_ne!(digests[0], digests[1], "other text, other rows");
}

/// `scripts/hbase.sh describe TABLE`: each family as HBase's Java Admin describes it.
/// Each of `tables`' families as HBase's Java Admin describes them (one JVM for all),
/// sorted by family, by table.
fn java_describe(tables: &[&str]) -> std::collections::BTreeMap<String, Vec<String>> {
    let out = Command::new(repo().join("scripts/hbase.sh"))
        .current_dir(repo())
        .arg("describe")
        .args(tables)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "describe {tables:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut described: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (table, family) = line.split_once(' ').unwrap_or((line, ""));
        described.entry(table.to_string()).or_default().push(family.to_string());
    }
    for families in described.values_mut() {
        families.sort();
    }
    described
}

fn open(url: &str) -> std::sync::Arc<dyn Store> {
    tallrow::store::backend::Backend::parse(url, Path::new("."))
        .unwrap()
        .open()
        .unwrap()
}

fn family(name: &str, versions: u32, storage: Storage) -> FamilyDescriptor {
    FamilyDescriptor {
        name: name.into(),
        max_versions: versions,
        storage,
    }
}

#[test]
fn tables_created_through_thrift2_native_and_thrift1_carry_the_settings_hbase_reports() {
    if !real_hbase_there() {
        return;
    }
    let set = Storage {
        compression: Compression::Gz,
        data_block_encoding: Encoding::FastDiff,
        bloom_filter: Bloom::RowCol,
        block_size: 16384,
        ttl: 86_400,
    };
    let thrift2 = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    let native = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    // Every table is created first, then HBase's Java Admin describes them all at once
    // (one JVM), then each is checked and dropped.
    struct Made {
        store: std::sync::Arc<dyn Store>,
        desc: TableDescriptor,
        what: String,
        java: Vec<String>,
    }
    let mut made: Vec<Made> = Vec::new();
    for (api, url) in [("thrift2", thrift2.as_str()), ("native", native.as_str())] {
        let store = open(url);
        let table = format!("storage_{api}_{}", std::process::id());
        let _ = store.delete_table(&table);
        let desc = TableDescriptor {
            name: table.clone(),
            families: vec![
                family("a", 3, set),
                family("b", 1, Storage::default()),
                family(
                    "c",
                    1,
                    Storage {
                        compression: Compression::None,
                        data_block_encoding: Encoding::RowIndexV1,
                        bloom_filter: Bloom::None,
                        ..set
                    },
                ),
            ],
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        };
        store.create_table(&desc).unwrap();
        made.push(Made {
            store,
            desc,
            what: api.to_string(),
            java: vec![
                "a COMPRESSION=GZ DATA_BLOCK_ENCODING=FAST_DIFF BLOOMFILTER=ROWCOL BLOCKSIZE=16384 TTL=86400 VERSIONS=3".into(),
                "b COMPRESSION=NONE DATA_BLOCK_ENCODING=NONE BLOOMFILTER=ROW BLOCKSIZE=65536 TTL=2147483647 VERSIONS=1".into(),
                "c COMPRESSION=NONE DATA_BLOCK_ENCODING=ROW_INDEX_V1 BLOOMFILTER=NONE BLOCKSIZE=16384 TTL=86400 VERSIONS=1".into(),
            ],
        });
    }

    // Every codec tallrow names loads on the test HBase: the master tries each one a family
    // names before it creates the table (hbase.table.sanity.checks).
    let store = open(&native);
    for codec in [
        Compression::Gz,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let table = format!("storage_{}_{}", codec.name().to_lowercase(), std::process::id());
        let _ = store.delete_table(&table);
        let storage = Storage {
            compression: codec,
            ..Storage::default()
        };
        let desc = TableDescriptor {
            name: table.clone(),
            families: vec![family("f", 1, storage)],
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        };
        store.create_table(&desc).unwrap_or_else(|e| panic!("{codec}: {e}"));
        made.push(Made {
            store: store.clone(),
            desc,
            what: codec.to_string(),
            java: vec![format!(
                "f COMPRESSION={codec} DATA_BLOCK_ENCODING=NONE BLOOMFILTER=ROW BLOCKSIZE=65536 TTL=2147483647 VERSIONS=1"
            )],
        });
    }

    // Thrift1's ColumnDescriptor carries the codec, the bloom type and the TTL; the rest is
    // refused before anything is created.
    let thrift1 = format!("hbase://{}", real_hbase("TALLROW_HBASE_THRIFT1").unwrap());
    let store = open(&thrift1);
    let table = format!("storage_thrift1_{}", std::process::id());
    let _ = store.delete_table(&table);
    let refused = store
        .create_table(&TableDescriptor {
            name: table.clone(),
            families: vec![family("a", 1, set)],
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        })
        .unwrap_err();
    assert_eq!(
        refused,
        Error::BadArgument(format!(
            "table {table}, family a: HBase's Thrift1 API cannot set DATA_BLOCK_ENCODING FAST_DIFF; use api=thrift2 or api=native"
        ))
    );
    assert!(matches!(store.describe_table(&table), Err(Error::TableNotFound(_))));
    let thrift1_set = Storage {
        data_block_encoding: Encoding::None,
        block_size: 65536,
        ..set
    };
    let desc = TableDescriptor {
        name: table.clone(),
        families: vec![family("a", 2, thrift1_set)],
        splits: Vec::new(),
        attributes: Vec::new(),
        region_replication: 1,
    };
    store.create_table(&desc).unwrap();
    made.push(Made {
        store,
        desc,
        what: "thrift1".into(),
        java: vec![
            "a COMPRESSION=GZ DATA_BLOCK_ENCODING=NONE BLOOMFILTER=ROWCOL BLOCKSIZE=65536 TTL=86400 VERSIONS=2".into(),
        ],
    });

    let names: Vec<&str> = made.iter().map(|m| m.desc.name.as_str()).collect();
    let described = java_describe(&names);
    for m in &made {
        assert_eq!(described.get(&m.desc.name), Some(&m.java), "{}", m.what);
        // And tallrow reads back what it set.
        let back = m.store.describe_table(&m.desc.name).unwrap();
        assert_eq!(back.families, m.desc.families, "{}", m.what);
        m.store.delete_table(&m.desc.name).unwrap();
    }
}

/// `bulkload` creates a missing table with the manifest's settings, takes an existing one of
/// the same settings, and refuses one whose settings differ, naming the first that does.
#[test]
fn bulkload_creates_tables_with_the_manifests_settings_and_refuses_other_ones() {
    use tallrow::bulkload::manifest::{FamilyEntry, TableEntry};
    use tallrow::bulkload::tool::{check, ensure};
    let written = Storage {
        compression: Compression::Snappy,
        data_block_encoding: Encoding::FastDiff,
        bloom_filter: Bloom::RowCol,
        block_size: 16384,
        ttl: FOREVER,
    };
    let entry = TableEntry {
        name: "t".into(),
        families: vec![FamilyEntry::new("f", 1, &written)],
        split_points: Vec::new(),
        region_replication: 1,
        rows: 0,
        cells: 0,
        raw_bytes: 0,
        file_bytes: 0,
        ratio: 0.0,
        files: Vec::new(),
    };
    let store = tallrow::store::memory::Memory::new();
    assert!(ensure(&store, &entry, &[]).unwrap(), "created");
    assert_eq!(store.describe_table("t").unwrap().families[0].storage, written);
    assert!(
        !ensure(&store, &entry, &[]).unwrap(),
        "the same settings: taken as it is"
    );
    store.delete_table("t").unwrap();
    let other = Storage {
        compression: Compression::Gz,
        ..written
    };
    store
        .create_table(&TableDescriptor {
            name: "t".into(),
            families: vec![family("f", 1, other)],
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        })
        .unwrap();
    assert_eq!(
        check(&store, &entry).unwrap_err().to_string(),
        "table t exists and its family f has COMPRESSION GZ (expected SNAPPY): the HFiles were written for the manifest's settings; drop the table, or load into another cluster"
    );
    // The manifest's region replication too: checked before anything is loaded.
    store.delete_table("t").unwrap();
    assert!(ensure(&store, &entry, &[]).unwrap(), "created");
    let replicated = TableEntry {
        region_replication: 2,
        ..entry
    };
    assert_eq!(
        check(&store, &replicated).unwrap_err().to_string(),
        "table t exists with region replication 1, the manifest's is 2 (storage.region_replication): drop the table, or load into another cluster"
    );
}

/// A store that cannot create a family of one codec, as a cluster that cannot load it
/// refuses the table; otherwise the memory store.
struct NoCodec {
    inner: tallrow::store::memory::Memory,
    refused: Compression,
}

impl Store for NoCodec {
    fn identity(&self) -> String {
        "a cluster without ZSTD".into()
    }
    fn create_table(&self, t: &TableDescriptor) -> tallrow::store::Result<()> {
        if t.families.iter().any(|f| f.storage.compression == self.refused) {
            return Err(Error::Io(format!(
                "org.apache.hadoop.hbase.DoNotRetryIOException: Compression algorithm '{}' previously failed test.\n\tat ...",
                self.refused.name().to_lowercase()
            )));
        }
        self.inner.create_table(t)
    }
    fn delete_table(&self, t: &str) -> tallrow::store::Result<()> {
        self.inner.delete_table(t)
    }
    fn list_tables(&self) -> tallrow::store::Result<Vec<TableDescriptor>> {
        self.inner.list_tables()
    }
    fn describe_table(&self, t: &str) -> tallrow::store::Result<TableDescriptor> {
        self.inner.describe_table(t)
    }
    fn mutate(&self, t: &str, rows: &[tallrow::store::RowMutation]) -> tallrow::store::Result<()> {
        self.inner.mutate(t, rows)
    }
    fn get(&self, t: &str, gets: &[tallrow::store::Get]) -> tallrow::store::Result<Vec<Option<tallrow::store::Row>>> {
        self.inner.get(t, gets)
    }
    fn scan(&self, t: &str, scan: &tallrow::store::Scan) -> tallrow::store::Result<Vec<tallrow::store::Row>> {
        self.inner.scan(t, scan)
    }
}

/// `bulkload` tries each codec of the files on the cluster before it hands any file over: a
/// codec the cluster cannot load is named in one line, and the probe tables are gone.
#[test]
fn bulkload_finds_a_codec_the_cluster_cannot_read_before_any_file() {
    use tallrow::bulkload::manifest::{FamilyEntry, TableEntry};
    use tallrow::bulkload::tool::{probe_codecs, probe_table};
    let entry = |name: &str, codec: Compression| TableEntry {
        name: name.into(),
        families: vec![FamilyEntry::new(
            "f",
            1,
            &Storage {
                compression: codec,
                ..Storage::default()
            },
        )],
        split_points: Vec::new(),
        region_replication: 1,
        rows: 0,
        cells: 0,
        raw_bytes: 0,
        file_bytes: 0,
        ratio: 0.0,
        files: Vec::new(),
    };
    let store = NoCodec {
        inner: tallrow::store::memory::Memory::new(),
        refused: Compression::Zstd,
    };
    let (a, b, c) = (
        entry("a", Compression::Snappy),
        entry("b", Compression::Zstd),
        entry("c", Compression::None),
    );
    probe_codecs(&store, "", &[&a, &c]).unwrap();
    assert_eq!(
        probe_codecs(&store, "", &[&a, &b, &c]).unwrap_err().to_string(),
        "a cluster without ZSTD cannot read ZSTD files (the HFiles of b/f are ZSTD): org.apache.hadoop.hbase.DoNotRetryIOException: Compression algorithm 'zstd' previously failed test.; nothing was handed over"
    );
    assert!(store.list_tables().unwrap().is_empty(), "no probe table is left");
    assert_eq!(probe_table("", Compression::Snappy), "tallrow_codec_probe_snappy");
    // Under a table prefix, the scratch tables take it too.
    assert_eq!(probe_table("t1_", Compression::Zstd), "t1_tallrow_codec_probe_zstd");
}
