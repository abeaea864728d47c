//! `tallrow bulkload`: hands the HFiles that `tallrow load --backend hfile:DIR` wrote to
//! HBase, and checks that HBase holds what they hold.
//!
//! The manifests of the directories given must make one whole data set (every shard once,
//! of one workload). Each table they name is created where it does not exist (families,
//! VERSIONS, split points), refused where it exists with other families. Then its files
//! are handed over, one of two ways:
//! - through HBase's own RPC (`api=native`), the calls HBase's bulk-load tool makes:
//!   `PrepareBulkLoad`, one `BulkLoadHFile` per region with all its families' files,
//!   `CleanupBulkLoad`; the files' regions must be the table's;
//! - through the tool itself (`--hbase-cmd`), once per table and directory (`CMD
//!   DIR/<namespace>/<table> <namespace>:<table>`, CMD split into words as a shell would, no
//!   shell run), which also splits files that straddle a region.
//!
//! Last, each table's rows are counted through the store and compared with the files': one
//! shard's manifest says how many rows it wrote; several shards' files are merged to count
//! their union, since a row can take cells from several shards.

use super::fs::Dir;
use super::hfile::rows::count_distinct_in;
use super::manifest::{self, Manifest, TableEntry};
use crate::load::Shard;
use crate::store::storage::Compression;
use crate::store::{self, FamilyDescriptor, Store, TableDescriptor};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

/// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`'s default: the tool refuses
/// more files than this per region and family in one run unless told otherwise.
const TOOL_MAX_FILES: usize = 32;

/// A bulk load that cannot go on, said in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

/// One table of the data set, gathered from every manifest.
#[derive(Debug, Clone)]
pub struct Table {
    /// Name.
    pub name: String,
    /// Families and split points, as every shard wrote them.
    pub entry: TableEntry,
    /// Per directory holding files of the table: how many files at most one region and
    /// family has there.
    pub dirs: Vec<(Dir, usize)>,
    /// Files and bytes over all shards.
    pub files: usize,
    /// Bytes of them.
    pub bytes: u64,
    /// Every file's path, by region (for counting the union of several shards' rows).
    pub by_region: BTreeMap<usize, Vec<(Dir, String)>>,
    /// Every file's family and URL, by region (for handing them over through HBase's RPC).
    pub urls: BTreeMap<usize, Vec<(String, String)>>,
    /// The rows one shard wrote (exact when the data set is one shard).
    pub rows_one_shard: Option<u64>,
}

/// The data set the directories hold.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The workload's name.
    pub workload: String,
    /// Shards, all present.
    pub shards: u64,
    /// The tables, by name.
    pub tables: Vec<Table>,
    /// What leads the tables' names, and the scratch tables'.
    pub table_prefix: String,
    /// tallrow's mark of the tables it creates: the workload and its data digest.
    pub mark: Vec<(String, String)>,
}

fn err(s: String) -> Error {
    Error(s)
}

/// Reads the manifests of `dirs` and checks that they make one whole data set whose
/// files are all there.
pub fn plan(dirs: &[Dir]) -> Result<Plan, Error> {
    let mut all: Vec<(Dir, String, Manifest)> = Vec::new();
    for dir in dirs {
        let found = manifest::read_all(dir).map_err(err)?;
        if found.is_empty() {
            return Err(err(format!(
                "{}: no bulkload.json (tallrow load --backend hfile:{} writes the HFiles and it)",
                dir.display(),
                dir.display()
            )));
        }
        all.extend(found.into_iter().map(|(p, m)| (dir.clone(), p, m)));
    }
    let (_, first_path, first) = &all[0];
    let count = first
        .shard
        .parse::<Shard>()
        .map_err(|e| err(format!("{first_path}: shard: {e}")))?
        .count;
    let mut seen: BTreeMap<u64, String> = BTreeMap::new();
    for (_, path, m) in &all {
        if m.data_digest != first.data_digest {
            return Err(err(format!(
                "{path} is of another data set than {first_path} ({} against {}): load one data set at a time",
                m.workload, first.workload
            )));
        }
        let shard = m
            .shard
            .parse::<Shard>()
            .map_err(|e| err(format!("{path}: shard: {e}")))?;
        if shard.count != count {
            return Err(err(format!(
                "{path} is shard {} but {first_path} is shard {}: one data set is split one way",
                m.shard, first.shard
            )));
        }
        if m.table_prefix != first.table_prefix {
            return Err(err(format!(
                "{path} prefixes its tables {:?} but {first_path} {:?}: one data set goes into one set of tables",
                m.table_prefix, first.table_prefix
            )));
        }
        if let Some(other) = seen.insert(shard.index, path.clone()) {
            return Err(err(format!("shard {} is there twice: {other} and {path}", m.shard)));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{}/{count}", i + 1))
        .collect();
    if !missing.is_empty() {
        return Err(err(format!(
            "shard{} {} of {} {} missing: give every shard's directory",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            first.workload,
            if missing.len() > 1 { "are" } else { "is" }
        )));
    }
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    for (dir, path, m) in &all {
        for t in &m.tables {
            let table = tables.entry(t.name.clone()).or_insert_with(|| Table {
                name: t.name.clone(),
                entry: TableEntry {
                    files: Vec::new(),
                    rows: 0,
                    cells: 0,
                    ..t.clone()
                },
                dirs: Vec::new(),
                files: 0,
                bytes: 0,
                by_region: BTreeMap::new(),
                urls: BTreeMap::new(),
                rows_one_shard: (count == 1).then_some(t.rows),
            });
            if table.entry.families != t.families || table.entry.split_points != t.split_points {
                return Err(err(format!(
                    "{path}: table {} has other families or split points than in the other shards",
                    t.name
                )));
            }
            table.entry.rows += t.rows;
            table.entry.cells += t.cells;
            let mut per_column: BTreeMap<(&str, usize), usize> = BTreeMap::new();
            for f in &t.files {
                let len = dir.len(&f.path).map_err(|e| err(format!("{e}, named by {path}")))?;
                if len != f.bytes {
                    return Err(err(format!(
                        "{} has {len} bytes, {path} says {}: it changed since it was written",
                        dir.at(&f.path),
                        f.bytes
                    )));
                }
                *per_column.entry((&f.family, f.region)).or_default() += 1;
                table
                    .by_region
                    .entry(f.region)
                    .or_default()
                    .push((dir.clone(), f.path.clone()));
                let url = dir.url(&f.path).map_err(|e| err(format!("{}: {e}", dir.at(&f.path))))?;
                table.urls.entry(f.region).or_default().push((f.family.clone(), url));
                table.files += 1;
                table.bytes += f.bytes;
            }
            let most = per_column.values().copied().max().unwrap_or(0);
            match table.dirs.iter_mut().find(|(d, _)| d.display() == dir.display()) {
                Some((_, n)) => *n = (*n).max(most),
                None if most > 0 => table.dirs.push((dir.clone(), most)),
                None => {}
            }
        }
    }
    Ok(Plan {
        workload: first.workload.clone(),
        shards: count,
        tables: tables.into_values().collect(),
        table_prefix: first.table_prefix.clone(),
        mark: crate::store::mark(&first.workload, &first.data_digest),
    })
}

/// What happened to one table.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The table.
    pub name: String,
    /// Whether it was created.
    pub created: bool,
    /// Files and bytes handed over.
    pub files: usize,
    /// Bytes of them.
    pub bytes: u64,
    /// Time the hand-over took.
    pub load_time: Duration,
    /// Files the tool split because they straddled a region boundary (it rewrites them, at
    /// its own cost): 0 when the table's regions are the files'.
    pub split_by_tool: usize,
    /// Rows the files hold, and rows the table holds after.
    pub rows_expected: u64,
    /// Rows counted through the store (none with `count` off).
    pub rows_found: Option<u64>,
}

/// The table a manifest's entry describes.
pub fn descriptor(t: &TableEntry) -> Result<TableDescriptor, Error> {
    let splits = t
        .split_points
        .iter()
        .map(|s| crate::keys::parse_hex(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(format!("table {}: a split point: {e}", t.name)))?;
    let families = t
        .families
        .iter()
        .map(|f| {
            Ok(FamilyDescriptor {
                name: f.name.clone(),
                max_versions: f.versions,
                storage: f
                    .storage()
                    .map_err(|e| err(format!("table {}, family {}: {e}", t.name, f.name)))?,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(TableDescriptor {
        name: t.name.clone(),
        families,
        splits,
        attributes: Vec::new(),
        region_replication: t.region_replication,
    })
}

/// Whether `t` exists on `store`; one that exists must have the same families, VERSIONS,
/// family settings and region replication as the files' manifest.
pub fn check(store: &dyn Store, t: &TableEntry) -> Result<bool, Error> {
    let want = descriptor(t)?;
    let have = match store.describe_table(&t.name) {
        Ok(have) => have,
        Err(store::Error::TableNotFound(_)) => return Ok(false),
        Err(e) => return Err(err(format!("table {}: {e}", t.name))),
    };
    let fams = |d: &TableDescriptor| {
        let mut f: Vec<String> = d
            .families
            .iter()
            .map(|f| format!("{} (VERSIONS {})", f.name, f.max_versions))
            .collect();
        f.sort();
        f
    };
    if fams(&have) != fams(&want) {
        return Err(err(format!(
            "table {} exists with families {}, the HFiles are of {}: drop it, or load into another cluster",
            t.name,
            fams(&have).join(", "),
            fams(&want).join(", ")
        )));
    }
    // A backend without region replicas reports one copy, and creates no table with more.
    if have.region_replication != want.region_replication {
        return Err(err(format!(
            "table {} exists with region replication {}, the manifest's is {} (storage.region_replication): drop the table, or load into another cluster",
            t.name, have.region_replication, want.region_replication
        )));
    }
    // A backend that cannot hold a setting reports HBase's default for it: only one that
    // reports it can differ.
    for w in &want.families {
        let Some(h) = have.family(&w.name) else { continue };
        if let Some(diff) = h.storage.first_difference(&w.storage) {
            return Err(err(format!(
                "table {} exists and its family {} has {diff}: the HFiles were written for the manifest's settings; drop the table, or load into another cluster",
                t.name, w.name
            )));
        }
    }
    Ok(true)
}

/// Creates `t` on `store`, marked as `mark` says (tallrow's table attributes), unless it
/// exists (`check` first: one created since with other families is refused). Returns
/// whether it was created.
pub fn ensure(store: &dyn Store, t: &TableEntry, mark: &[(String, String)]) -> Result<bool, Error> {
    let mut desc = descriptor(t)?;
    desc.attributes = mark.to_vec();
    match store.create_table(&desc) {
        Ok(()) => Ok(true),
        Err(store::Error::TableExists(_)) => check(store, t).map(|_| false),
        Err(e) => Err(err(format!("cannot create table {}: {e}", t.name))),
    }
}

/// `<namespace>:<table>`, with `default` for a table without one.
pub fn qualified(name: &str) -> String {
    if name.contains(':') {
        name.to_string()
    } else {
        format!("default:{name}")
    }
}

/// The command that hands `dir`'s files of `table` to HBase: `cmd`, the option that lets
/// the tool take `most` files per region and family when that is over its default, the
/// table's folder and its name.
pub fn tool_command(cmd: &[String], dir: &Dir, table: &str, most: usize) -> Command {
    let mut c = Command::new(&cmd[0]);
    c.args(&cmd[1..]);
    if most > TOOL_MAX_FILES {
        c.arg(format!(
            "-Dhbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily={most}"
        ));
    }
    c.arg(dir.at(&super::output::table_dir(table))).arg(qualified(table));
    c
}

/// How the files reach HBase.
#[derive(Debug, Clone, Copy)]
pub enum Via<'a> {
    /// HBase's own RPC, the calls its bulk-load tool makes ([`Store::load_hfiles`]): no JVM.
    Rpc,
    /// HBase's bulk-load tool, run as this command (split into words); it also splits files
    /// that straddle the table's regions.
    Tool(&'a [String]),
}

/// Hands every file of `t` to the regions of `store` that hold its rows, one call per
/// region. Refused, before anything moves, where the table's regions are not the files'
/// (split since, or created otherwise): HBase's tool splits such files. Returns the time
/// it took.
pub fn hand_over_rpc(store: &dyn Store, t: &Table) -> Result<Duration, Error> {
    let started = Instant::now();
    let splits = t
        .entry
        .split_points
        .iter()
        .map(|s| crate::keys::parse_hex(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(format!("table {}: a split point: {e}", t.name)))?;
    let mut regions = Vec::new();
    for (&i, files) in &t.urls {
        let start = match i {
            0 => Vec::new(),
            _ => splits.get(i - 1).cloned().ok_or_else(|| {
                err(format!(
                    "table {}: region {i} is past its {} split points",
                    t.name,
                    splits.len()
                ))
            })?,
        };
        regions.push(store::HFileRegion {
            start,
            end: splits.get(i).cloned().unwrap_or_default(),
            files: files.clone(),
        });
    }
    let have = store
        .regions(&t.name)
        .map_err(|e| err(format!("the regions of table {}: {e}", t.name)))?;
    for r in &regions {
        if let Some(k) = have
            .iter()
            .find(|k| k[..] > r.start[..] && (r.end.is_empty() || k[..] < r.end[..]))
        {
            return Err(err(format!(
                "table {}: a region begins at {} inside the files of rows from {}: it is split otherwise than the files; --hbase-cmd hands them to HBase's tool, which splits them",
                t.name,
                crate::keys::hex(k),
                crate::keys::hex(&r.start)
            )));
        }
    }
    store
        .load_hfiles(&t.name, &regions)
        .map_err(|e| err(format!("handing table {} over: {e}", t.name)))?;
    Ok(started.elapsed())
}

/// Runs the tool on every directory of `t`; fails with the tool's last error line. Returns
/// the time it took and the files it split.
pub fn hand_over(cmd: &[String], t: &Table) -> Result<(Duration, usize), Error> {
    let started = Instant::now();
    let mut split = 0;
    for (dir, most) in &t.dirs {
        let out = tool_command(cmd, dir, &t.name, *most)
            .output()
            .map_err(|e| err(format!("cannot run the bulk-load tool {:?}: {e}", cmd.join(" "))))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        // LoadIncrementalHFiles logs each file it splits so.
        split += text.matches("no longer fits inside a single region").count();
        if !out.status.success() {
            return Err(err(format!(
                "the bulk-load tool failed on table {} ({}): {}",
                t.name,
                out.status,
                last_error(&text).unwrap_or("no output")
            )));
        }
    }
    Ok((started.elapsed(), split))
}

/// The line of a Java tool's output that says what failed: the last one naming an error
/// or exception, else the last line.
pub fn last_error(text: &str) -> Option<&str> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines
        .iter()
        .rev()
        .find(|l| (l.contains("ERROR") || l.contains("Exception") || l.contains("Error:")) && !l.starts_with("at "))
        .or(lines.last())
        .copied()
}

/// The rows the files of `t` hold: one shard's count, or the union of several shards'.
pub fn rows_expected(t: &Table) -> Result<u64, Error> {
    if let Some(n) = t.rows_one_shard {
        return Ok(n);
    }
    let mut n = 0;
    for files in t.by_region.values() {
        n += count_distinct_in(files).map_err(|e| err(format!("table {}: {e}", t.name)))?;
    }
    Ok(n)
}

/// The table each codec is tried with, under the data set's table prefix.
pub fn probe_table(prefix: &str, codec: Compression) -> String {
    format!("{prefix}tallrow_codec_probe_{}", codec.name().to_lowercase())
}

/// Finds, before any file is handed over, a codec of the files that the HBase under test
/// cannot read: for each codec but NONE, a scratch table of one family of that codec is
/// created and dropped. HBase's master tries the codec before it creates a table
/// (`hbase.table.sanity.checks`), so a cluster that cannot load it refuses the table.
pub fn probe_codecs(store: &dyn Store, prefix: &str, tables: &[&TableEntry]) -> Result<(), Error> {
    let mut seen: Vec<(Compression, String)> = Vec::new();
    for t in tables {
        for f in &t.families {
            let codec = f
                .storage()
                .map_err(|e| err(format!("table {}, family {}: {e}", t.name, f.name)))?
                .compression;
            if codec != Compression::None && !seen.iter().any(|(c, _)| *c == codec) {
                seen.push((codec, format!("{}/{}", t.name, f.name)));
            }
        }
    }
    for (codec, example) in seen {
        let name = probe_table(prefix, codec);
        let _ = store.delete_table(&name);
        let mut family = FamilyDescriptor::new("f", 1);
        family.storage.compression = codec;
        let probe = TableDescriptor {
            name: name.clone(),
            families: vec![family],
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        };
        match store.create_table(&probe) {
            Ok(()) => {
                let _ = store.delete_table(&name);
            }
            Err(e) => {
                return Err(err(format!(
                    "{} cannot read {codec} files (the HFiles of {example} are {codec}): {}; nothing was handed over",
                    store.identity(),
                    store::first_line(&e.to_string())
                )));
            }
        }
    }
    Ok(())
}

/// Plans, creates, hands over and (with `count`) counts every table, `parallel` tables at
/// a time (the tables are independent, and each tool run is a JVM of its own); `say` hears
/// each step.
pub fn run(
    store: &dyn Store,
    dirs: &[Dir],
    via: Via,
    parallel: usize,
    count: bool,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Vec<Outcome>, Error> {
    match via {
        Via::Tool([]) => return Err(err("--hbase-cmd: no command".into())),
        Via::Rpc if !store.loads_hfiles() => {
            return Err(err(format!(
                "{} cannot take HFiles itself: give --hbase-cmd (HBase's bulk-load tool)",
                store.identity()
            )));
        }
        _ => {}
    }
    let plan = plan(dirs)?;
    // Every existing table is checked before any is loaded; missing ones are created by
    // the workers, overlapping the tool runs of others.
    let mut exists = Vec::new();
    for t in &plan.tables {
        exists.push(check(store, &t.entry)?);
    }
    let entries: Vec<&TableEntry> = plan.tables.iter().map(|t| &t.entry).collect();
    probe_codecs(store, &plan.table_prefix, &entries)?;
    let one = |t: &Table, exists: bool| -> Result<Outcome, Error> {
        let created = !exists && ensure(store, &t.entry, &plan.mark)?;
        say(&format!(
            "{}: {} files, {:.1} MiB{}",
            t.name,
            t.files,
            t.bytes as f64 / (1 << 20) as f64,
            if created { " (table created)" } else { "" }
        ));
        // Counted first: where the files and the region servers share a file system, the
        // tool moves them away.
        let rows_expected = rows_expected(t)?;
        let (load_time, split_by_tool) = match via {
            Via::Rpc => (hand_over_rpc(store, t)?, 0),
            Via::Tool(cmd) => hand_over(cmd, t)?,
        };
        let rows_found = if count {
            Some(store::count_rows(store, &t.name).map_err(|e| err(format!("counting the rows of {}: {e}", t.name)))?)
        } else {
            None
        };
        Ok(Outcome {
            name: t.name.clone(),
            created,
            files: t.files,
            bytes: t.bytes,
            load_time,
            split_by_tool,
            rows_expected,
            rows_found,
        })
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<std::sync::Mutex<Option<Result<Outcome, Error>>>> =
        plan.tables.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..parallel.clamp(1, plan.tables.len().max(1)) {
            s.spawn(|| {
                use std::sync::atomic::Ordering::Relaxed;
                while !failed.load(Relaxed) {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(t) = plan.tables.get(i) else { break };
                    let r = one(t, exists[i]);
                    failed.fetch_or(r.is_err(), Relaxed);
                    *results[i].lock().expect("result lock") = Some(r);
                }
            });
        }
    });
    // The first failure in table order; tables not started after it have no result.
    results
        .into_iter()
        .map_while(|r| r.into_inner().expect("result lock"))
        .collect::<Result<Vec<_>, _>>()
        .and_then(|out| {
            if out.len() == plan.tables.len() {
                Ok(out)
            } else {
                Err(err("the bulk load stopped early".into()))
            }
        })
}
