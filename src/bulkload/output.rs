//! `hfile:DIR`: the bulk pipeline's second output. A load stages its puts as sorted runs
//! (as the embedded store's bulk load does), then merges each region's once and writes it
//! as HFiles (the [`hfile`] module), one per region per family per shard:
//! `DIR/<namespace>/<table>/<family>/region<NNNNN>_shard<i>of<N>` (`default` for tables
//! without a namespace), which is the layout HBase's bulk-load tool takes. Each family keeps
//! at most its VERSIONS versions of a column, newest first. `DIR/bulkload.json` (one
//! manifest per shard, the [`manifest`] module) says what the files hold; `tallrow bulkload`
//! hands them to HBase.
//!
//! DIR is local or in HDFS (`hfile:hdfs://NAMENODE:PORT/PATH`, the [`fs`] module); each
//! file appears under its name only once complete. The sorted runs are staged locally: in
//! `DIR/_runs`, or for HDFS in the system's temporary directory (`TMPDIR`).
//!
//! The store is write-only: it knows its tables and their split points, and takes nothing
//! but a bulk load.
//!
//! A load that journals (`tallrow load`) checkpoints its bulk load ([`BulkLoad::checkpoint`]):
//! while staging, the runs are made durable; while writing, the files committed so far are
//! listed, and the regions whose files all are. A resumed load ([`Store::resume_bulk_load`])
//! takes the runs over, keeps the committed files whose length still matches, passes over
//! the regions all of whose files it keeps, and writes the rest again.
//!
//! The regions of all tables are written at once, each taken by the next free thread,
//! largest first: the write ends when its last region does.

use super::fs::{self, Dir};
use super::hfile;
use super::manifest;
use crate::load::Shard;
use crate::store::runs::{Durable, MEMORY, Runs, Sealed};
use crate::store::{BulkLoad, Error, Result, RowMutation, Store, TableDescriptor, canonical_table_name, cellkey};
use manifest::{FamilyEntry, FileEntry, Manifest, TableEntry};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Where a table's files go under DIR: `<namespace>/<table>`.
pub fn table_dir(table: &str) -> String {
    match table.split_once(':') {
        Some((ns, t)) => format!("{ns}/{t}"),
        None => format!("default/{table}"),
    }
}

/// The file of one region, family and shard, relative to DIR. No `-` or `.` in the name: the
/// bulk-load tool skips the first and takes a name like `<hex>.<x>` for a reference.
pub fn file_name(region: usize, shard: Shard) -> String {
    format!("region{region:05}_shard{}of{}", shard.index + 1, shard.count)
}

/// One table's files, and the distinct rows and cells over all of them.
pub type TableFiles = (Vec<FileEntry>, u64, u64);

/// What the files written so far hold, per table.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Per table: its files, and the distinct rows and cells over all of them.
    pub tables: BTreeMap<String, TableFiles>,
}

struct Inner {
    dir: Dir,
    shard: Shard,
    tables: Mutex<BTreeMap<String, TableDescriptor>>,
    /// Split points to use in place of those a load asks for (`--split-from`).
    splits: BTreeMap<String, Vec<Vec<u8>>>,
    written: Mutex<Written>,
    /// Stamped into every file's info.
    task: String,
}

/// The `hfile:DIR` store.
#[derive(Clone)]
pub struct HFiles {
    inner: Arc<Inner>,
}

impl HFiles {
    /// Writes shard `shard` of a data set under `dir` (created if needed). `splits` replaces
    /// the split points of the tables it names.
    pub fn new(dir: Dir, shard: Shard, splits: BTreeMap<String, Vec<Vec<u8>>>) -> Result<HFiles> {
        dir.create_dir_all("").map_err(|e| Error::Io(e.to_string()))?;
        Ok(HFiles {
            inner: Arc::new(Inner {
                dir,
                shard,
                tables: Mutex::default(),
                splits,
                written: Mutex::default(),
                task: format!("tallrow {} shard {shard}", env!("CARGO_PKG_VERSION")),
            }),
        })
    }

    /// The files written, once the load finished.
    pub fn written(&self) -> Written {
        self.inner.written.lock().expect("written lock").clone()
    }

    /// The directory.
    pub fn dir(&self) -> &Dir {
        &self.inner.dir
    }

    /// Where the sorted runs are staged: local, beside the files where they are local.
    fn staging(&self) -> PathBuf {
        match self.inner.dir.local() {
            Some(p) => p.join("_runs"),
            None => std::env::temp_dir().join("tallrow-runs"),
        }
    }
}

impl HFiles {
    /// The manifest of what the load wrote, once it finished.
    pub fn manifest(&self, workload: &str, file: &str, data_digest: &str, rows_digest: u128) -> Manifest {
        let written = self.written();
        let tables = self
            .inner
            .tables
            .lock()
            .expect("tables lock")
            .values()
            .map(|d| {
                let (files, rows, cells) = written.tables.get(&d.name).cloned().unwrap_or_default();
                let raw_bytes: u64 = files.iter().map(|f| f.raw_bytes).sum();
                let file_bytes: u64 = files.iter().map(|f| f.bytes).sum();
                TableEntry {
                    raw_bytes,
                    file_bytes,
                    ratio: if file_bytes == 0 {
                        0.0
                    } else {
                        ((raw_bytes as f64 / file_bytes as f64) * 1000.0).round() / 1000.0
                    },
                    name: d.name.clone(),
                    families: d
                        .families
                        .iter()
                        .map(|f| FamilyEntry::new(&f.name, f.max_versions, &f.storage))
                        .collect(),
                    split_points: d.splits.iter().map(|k| crate::keys::hex(k)).collect(),
                    region_replication: d.region_replication,
                    rows,
                    cells,
                    files,
                }
            })
            .collect();
        Manifest {
            kind: "hfile".into(),
            tallrow: env!("CARGO_PKG_VERSION").into(),
            workload: workload.into(),
            file: file.into(),
            data_digest: data_digest.into(),
            rows_digest: format!("{rows_digest:032x}"),
            shard: self.inner.shard.to_string(),
            table_prefix: String::new(),
            written: crate::date::iso(crate::store::now_millis()),
            tables,
        }
    }
}

/// The shard a file of ours was written for, from its name.
fn shard_of(name: &str) -> Option<(u64, u64)> {
    let (_, s) = name.rsplit_once("_shard")?;
    let (i, n) = s.split_once("of")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// Readies `dir` for shard `shard` of the data set `data_digest`. Files of the other shards
/// of the same data set stay (several shards may write one directory); files of this shard,
/// or of another data set, are refused unless `replace`, which removes them, or `resume`
/// (a load of this shard resumes), which keeps this shard's. Files a killed writer left
/// under their temporary names go with `replace` and `resume`.
pub fn prepare(dir: &Dir, shard: Shard, data_digest: &str, replace: bool, resume: bool) -> Result<()> {
    match dir.kind("").map_err(|e| Error::Io(e.to_string()))? {
        None => return Ok(()),
        Some(false) => return Err(Error::BadArgument(format!("{} is not a directory", dir.display()))),
        Some(true) => {}
    }
    let bad = |e: String| Error::BadArgument(format!("cannot read the manifests in {}: {e}", dir.display()));
    let manifests = manifest::read_all(dir).map_err(bad)?;
    let files = manifest::hfiles_in(dir).map_err(|e| Error::Io(e.to_string()))?;
    let other_set =
        |m: &Manifest| m.data_digest != data_digest || m.shard.parse::<Shard>().map(|s| s.count) != Ok(shard.count);
    let name = |p: &String| p.rsplit('/').next().unwrap_or(p).to_string();
    let foreign_file = files
        .iter()
        .find(|f| shard_of(&name(f)).is_none_or(|(_, n)| n != shard.count));
    let foreign = manifests.iter().find(|(_, m)| other_set(m));
    let mine = manifest::name(shard);
    let mine_there = dir.kind(&mine).map_err(|e| Error::Io(e.to_string()))?.is_some();
    let own_files: Vec<&String> = files
        .iter()
        .filter(|f| shard_of(&name(f)) == Some((shard.index + 1, shard.count)))
        .collect();
    if replace || resume {
        for f in manifest::temporaries_in(dir).map_err(|e| Error::Io(e.to_string()))? {
            dir.remove(&f).map_err(|e| Error::Io(e.to_string()))?;
        }
    }
    if !replace {
        let again = "pass --replace to remove them, or write into another directory";
        if let Some((p, m)) = foreign {
            return Err(Error::BadArgument(format!(
                "{} already holds HFiles of another data set ({} shard {}, {p}): {again}",
                dir.display(),
                m.workload,
                m.shard,
            )));
        }
        if let Some(f) = foreign_file {
            return Err(Error::BadArgument(format!(
                "{} already holds HFiles that are not of this data set's {} shards ({f}): {again}",
                dir.display(),
                shard.count,
            )));
        }
        if (mine_there || !own_files.is_empty()) && !resume {
            return Err(Error::BadArgument(format!(
                "{} already holds the HFiles of shard {shard}: {again}",
                dir.display()
            )));
        }
        return Ok(());
    }
    let remove = |rel: &str| dir.remove(rel).map_err(|e| Error::Io(e.to_string()));
    if foreign.is_some() || foreign_file.is_some() {
        for f in &files {
            remove(f)?;
        }
        for e in dir.list("").map_err(|e| Error::Io(e.to_string()))? {
            if !e.dir && e.name.starts_with("bulkload") && e.name.ends_with(".json") {
                remove(&e.name)?;
            }
        }
        return Ok(());
    }
    for f in own_files {
        remove(f)?;
    }
    if mine_there {
        remove(&mine)?;
    }
    Ok(())
}

fn write_only() -> Error {
    Error::BadArgument(
        "hfile:DIR is write-only: `tallrow load` writes HFiles there and `tallrow bulkload` hands them to HBase".into(),
    )
}

impl Store for HFiles {
    fn identity(&self) -> String {
        format!("HFiles in {}", self.inner.dir.display())
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let mut desc = table.validated()?;
        if let Some(s) = self.inner.splits.get(&desc.name) {
            desc.splits = s.clone();
        }
        let mut tables = self.inner.tables.lock().expect("tables lock");
        if tables.contains_key(&desc.name) {
            return Err(Error::TableExists(desc.name));
        }
        tables.insert(desc.name.clone(), desc);
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        match self.inner.tables.lock().expect("tables lock").remove(&name) {
            Some(_) => Ok(()),
            None => Err(Error::TableNotFound(name)),
        }
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        Ok(self
            .inner
            .tables
            .lock()
            .expect("tables lock")
            .values()
            .cloned()
            .collect())
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        self.inner
            .tables
            .lock()
            .expect("tables lock")
            .get(&name)
            .cloned()
            .ok_or(Error::TableNotFound(name))
    }

    fn mutate(&self, _table: &str, _rows: &[RowMutation]) -> Result<()> {
        Err(write_only())
    }

    fn get(&self, _table: &str, _gets: &[crate::store::Get]) -> Result<Vec<Option<crate::store::Row>>> {
        Err(write_only())
    }

    fn scan(&self, _table: &str, _scan: &crate::store::Scan) -> Result<Vec<crate::store::Row>> {
        Err(write_only())
    }

    fn bulk_load(&self, tables: &[&str]) -> Result<Option<Box<dyn BulkLoad>>> {
        let descs: Vec<TableDescriptor> = tables.iter().map(|t| self.describe_table(t)).collect::<Result<_>>()?;
        let names = descs.iter().enumerate().map(|(i, _)| format!("t{i}")).collect();
        let runs = Runs::new(&self.staging(), descs.clone(), names, MEMORY)?;
        Ok(Some(Box::new(Bulk {
            store: self.clone(),
            tables: descs,
            runs,
            created: Mutex::default(),
            progress: Mutex::default(),
            kept: BTreeMap::new(),
            done: BTreeMap::new(),
        })))
    }

    fn resume_bulk_load(&self, tables: &[&str], state: &serde_json::Value) -> Result<Box<dyn BulkLoad>> {
        let state: Checkpoint = serde_json::from_value(state.clone())
            .map_err(|e| Error::BadArgument(format!("not the checkpoint of an hfile: load: {e}")))?;
        let descs: Vec<TableDescriptor> = tables.iter().map(|t| self.describe_table(t)).collect::<Result<_>>()?;
        let names = descs.iter().enumerate().map(|(i, _)| format!("t{i}")).collect();
        let runs = Runs::resume(&state.runs, descs.clone(), names, MEMORY)?;
        // A committed file is kept when it is still there, whole; any other is written again.
        let mut kept = BTreeMap::new();
        for files in state.files.values() {
            for f in files {
                if self.inner.dir.len(&f.path).is_ok_and(|n| n == f.bytes) {
                    kept.insert(f.path.clone(), f.clone());
                }
            }
        }
        // A region all of whose files are kept is not merged again.
        let mut done = BTreeMap::new();
        for (table, regions) in &state.regions {
            let files = state.files.get(table).map(Vec::as_slice).unwrap_or_default();
            for r in regions {
                let of_region: Vec<FileEntry> = files.iter().filter(|f| f.region == r.region).cloned().collect();
                if of_region.iter().all(|f| kept.contains_key(&f.path)) {
                    done.insert((table.clone(), r.region), (of_region, r.rows, r.cells));
                }
            }
        }
        Ok(Box::new(Bulk {
            store: self.clone(),
            tables: descs,
            runs,
            created: Mutex::default(),
            progress: Mutex::new(Progress {
                runs: Some(state.runs),
                ..Progress::default()
            }),
            kept,
            done,
        }))
    }
}

/// Removes the staged runs a checkpoint of an unfinished load names (its journal is set
/// aside by a fresh load). Its committed files stay: the fresh load's `--replace` or their
/// own names decide them.
pub fn discard_checkpoint(state: &serde_json::Value) {
    if let Ok(c) = serde_json::from_value::<Checkpoint>(state.clone()) {
        let dir = std::path::Path::new(&c.runs.dir);
        let _ = std::fs::remove_dir_all(dir);
        if let Some(parent) = dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// What a checkpoint of the bulk load records: its durable runs, the files committed, and
/// the regions all of whose files are.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Checkpoint {
    runs: Durable,
    /// Per table: the files committed so far.
    files: BTreeMap<String, Vec<FileEntry>>,
    /// Per table: the regions written whole.
    #[serde(default)]
    regions: BTreeMap<String, Vec<RegionDone>>,
}

/// A region whose files are all committed, and the distinct rows and cells they hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RegionDone {
    region: usize,
    rows: u64,
    cells: u64,
}

/// Where a checkpointed bulk load stands.
#[derive(Debug, Default)]
struct Progress {
    /// The runs as last made durable; `None` before the first checkpoint.
    runs: Option<Durable>,
    /// `finish` began: the runs are merged, no longer staged into.
    writing: bool,
    /// Per table: the files committed (or kept) so far.
    files: BTreeMap<String, Vec<FileEntry>>,
    /// Per table: the regions written (or kept) whole.
    regions: BTreeMap<String, Vec<RegionDone>>,
}

/// A load's puts on their way into HFiles.
struct Bulk {
    store: HFiles,
    tables: Vec<TableDescriptor>,
    runs: Runs,
    /// Every file this load created: removed again when it fails, unless checkpointed.
    created: Mutex<Vec<String>>,
    progress: Mutex<Progress>,
    /// Files a resumed load found committed, by path: kept, not written again.
    kept: BTreeMap<String, FileEntry>,
    /// Regions a resumed load found written whole, by table and region: not merged again.
    done: BTreeMap<(String, usize), TableFiles>,
}

impl Bulk {
    /// Merges region `r` of table `i` into its files: the region's files, and the
    /// distinct rows and cells in them.
    fn write_region(&self, sealed: &Sealed, i: usize, r: usize) -> Result<TableFiles> {
        let desc = &self.tables[i];
        let inner = &self.store.inner;
        let mut files = Files {
            table: table_dir(&desc.name),
            name: &desc.name,
            root: &inner.dir,
            desc,
            shard: inner.shard,
            task: &inner.task,
            created: &self.created,
            progress: &self.progress,
            kept: &self.kept,
            region: r,
            open: (0..desc.families.len()).map(|_| None).collect(),
            done: Vec::new(),
        };
        if let Some((kept, rows, cells)) = self.done.get(&(desc.name.clone(), r)) {
            for f in kept {
                files.committed(f.clone());
            }
            files.region_done(*rows, *cells);
            return Ok((files.done, *rows, *cells));
        }
        let (mut row, mut qualifier) = (Vec::new(), Vec::new());
        // The column of the previous cell (row, family, qualifier), kept in reused buffers.
        let (mut col_row, mut col_family, mut col_qualifier) = (Vec::new(), u8::MAX, Vec::new());
        let mut versions = 0u32;
        let (mut rows, mut cells) = (0u64, 0u64);
        sealed.merge_region(r, |key, value| {
            row.clear();
            qualifier.clear();
            let at = cellkey::split_escaped(key, 0, Some(&mut row));
            let family = key[at];
            cellkey::split_escaped(key, at + 1, Some(&mut qualifier));
            let ts = cellkey::decode_ts(key);
            let new_row = rows == 0 || row != col_row;
            if !new_row && family == col_family && qualifier == col_qualifier {
                versions += 1;
                // Older versions past the family's VERSIONS are never read: not written.
                if versions > desc.families[family as usize].max_versions {
                    return Ok(());
                }
            } else {
                versions = 1;
                col_family = family;
                col_qualifier.clone_from(&qualifier);
            }
            if new_row {
                debug_assert_eq!(desc.splits.partition_point(|s| s.as_slice() <= row.as_slice()), r);
                rows += 1;
                col_row.clone_from(&row);
            }
            cells += 1;
            files.append(family, &row, &qualifier, ts, value)
        })?;
        files.close_region()?;
        files.region_done(rows, cells);
        Ok((files.done, rows, cells))
    }
}

/// The file of one family in the region being written.
enum Open {
    Writing(String, Box<hfile::Writer<std::io::BufWriter<fs::NewFile>>>),
    /// Committed by the load this one resumed: its cells are passed over.
    Kept(FileEntry),
}

/// The open files of one region of a table.
struct Files<'a> {
    /// The table's folder, relative to the root.
    table: String,
    /// The table's name.
    name: &'a str,
    root: &'a Dir,
    desc: &'a TableDescriptor,
    shard: Shard,
    task: &'a str,
    created: &'a Mutex<Vec<String>>,
    progress: &'a Mutex<Progress>,
    kept: &'a BTreeMap<String, FileEntry>,
    region: usize,
    open: Vec<Option<Open>>,
    done: Vec<FileEntry>,
}

impl Files<'_> {
    fn append(&mut self, family: u8, row: &[u8], qualifier: &[u8], ts: i64, value: &[u8]) -> Result<()> {
        let f = family as usize;
        if self.open[f].is_none() {
            let name = &self.desc.families[f].name;
            let path = format!("{}/{name}/{}", self.table, file_name(self.region, self.shard));
            if let Some(k) = self.kept.get(&path) {
                self.open[f] = Some(Open::Kept(k.clone()));
                return Ok(());
            }
            let file = self.root.create(&path).map_err(|e| Error::Io(e.to_string()))?;
            let out = std::io::BufWriter::with_capacity(1 << 20, file);
            let mut opts = hfile::Options::new(name.as_bytes(), self.task);
            opts.block_size = self.desc.families[f].storage.block_size as usize;
            opts.compression = self.desc.families[f].storage.compression;
            opts.encoding = self.desc.families[f].storage.data_block_encoding;
            opts.bloom = self.desc.families[f].storage.bloom_filter;
            self.open[f] = Some(Open::Writing(path, Box::new(hfile::Writer::new(out, opts))));
        }
        match self.open[f].as_mut().expect("opened") {
            Open::Writing(path, w) => w
                .append(row, qualifier, ts, value)
                .map_err(|e| Error::Io(format!("cannot write {}: {e}", self.root.at(path)))),
            Open::Kept(_) => Ok(()),
        }
    }

    /// A file is complete: recorded for the manifest and for the next checkpoint.
    fn committed(&mut self, entry: FileEntry) {
        let mut p = self.progress.lock().expect("progress lock");
        p.files.entry(self.name.to_string()).or_default().push(entry.clone());
        self.done.push(entry);
    }

    /// Every file of the region is committed: a resume need not merge it again.
    fn region_done(&self, rows: u64, cells: u64) {
        let mut p = self.progress.lock().expect("progress lock");
        p.regions.entry(self.name.to_string()).or_default().push(RegionDone {
            region: self.region,
            rows,
            cells,
        });
    }

    fn close_region(&mut self) -> Result<()> {
        for f in 0..self.open.len() {
            let (path, w) = match self.open[f].take() {
                None => continue,
                Some(Open::Kept(entry)) => {
                    self.committed(entry);
                    continue;
                }
                Some(Open::Writing(path, w)) => (path, w),
            };
            let failed = |e: std::io::Error| Error::Io(format!("cannot write {}: {e}", self.root.at(&path)));
            let (summary, out) = w.finish().map_err(failed)?;
            out.into_inner()
                .map_err(|e| failed(e.into_error()))?
                .commit()
                .map_err(|e| Error::Io(e.to_string()))?;
            self.created.lock().expect("created lock").push(path.clone());
            self.committed(FileEntry {
                path,
                family: self.desc.families[f].name.clone(),
                region: self.region,
                cells: summary.cells,
                rows: summary.rows,
                first_row: crate::keys::to_string_binary(&summary.first_row),
                last_row: crate::keys::to_string_binary(&summary.last_row),
                bytes: summary.bytes,
                raw_bytes: summary.raw,
            });
        }
        Ok(())
    }
}

impl BulkLoad for Bulk {
    fn covers(&self, table: &str) -> bool {
        self.runs.position(table).is_some()
    }

    fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.runs.add(table, rows)
    }

    fn checkpoint(&self) -> Result<Option<serde_json::Value>> {
        let mut p = self.progress.lock().expect("progress lock");
        if !p.writing {
            p.runs = Some(self.runs.persist()?);
        }
        let c = Checkpoint {
            runs: p.runs.clone().expect("runs made durable"),
            files: p.files.clone(),
            regions: p.regions.clone(),
        };
        Ok(Some(serde_json::to_value(c).map_err(|e| Error::Io(e.to_string()))?))
    }

    fn finish(&self) -> Result<Vec<(String, u64)>> {
        let resumable = {
            let mut p = self.progress.lock().expect("progress lock");
            p.writing = true;
            p.runs.is_some()
        };
        let sealed: Vec<Sealed> = (0..self.tables.len())
            .into_par_iter()
            .map(|i| self.runs.seal(i))
            .collect::<Result<_>>()?;
        // Every region of every table, largest first, each taken by the next free thread:
        // the write ends when its last region does, and a large one started last would end
        // alone.
        let mut order: Vec<(u64, usize, usize)> = sealed
            .iter()
            .enumerate()
            .flat_map(|(i, s)| (0..s.regions()).map(move |r| (s.region_bytes(r), i, r)))
            .collect();
        order.sort_by(|a, b| b.cmp(a));
        let slots: Vec<Vec<Mutex<Option<Result<TableFiles>>>>> = sealed
            .iter()
            .map(|s| (0..s.regions()).map(|_| Mutex::new(None)).collect())
            .collect();
        let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
        rayon::broadcast(|_| {
            while !failed.load(Ordering::Relaxed) {
                let Some(&(_, i, r)) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                let result = self.write_region(&sealed[i], i, r);
                failed.fetch_or(result.is_err(), Ordering::Relaxed);
                *slots[i][r].lock().expect("slot lock") = Some(result);
            }
        });
        drop(sealed);
        // Per table, its regions' files in region order; or the first failure. A region
        // not written at all was left for another's failure.
        let mut tables = Vec::with_capacity(slots.len());
        let mut failure = None;
        for regions in slots {
            let mut table = TableFiles::default();
            for slot in regions {
                match slot.into_inner().expect("slot lock") {
                    Some(Ok((files, rows, cells))) => {
                        table.0.extend(files);
                        table.1 += rows;
                        table.2 += cells;
                    }
                    Some(Err(e)) => {
                        failure.get_or_insert(e);
                    }
                    None => {}
                }
            }
            tables.push(table);
        }
        let written = match failure {
            None => tables,
            // A checkpointed load keeps its complete files, which a resume takes over.
            Some(e) if resumable => return Err(e),
            Some(e) => {
                // Nothing of a failed load stays: files in progress went with their writers,
                // and those completed go now, so that the tool finds no part of a data set.
                for path in self.created.lock().expect("created lock").iter() {
                    let _ = self.store.inner.dir.remove(path);
                }
                return Err(e);
            }
        };
        self.runs.discard();
        let mut w = self.store.inner.written.lock().expect("written lock");
        let mut rows = Vec::new();
        for (desc, t) in self.tables.iter().zip(written) {
            rows.push((desc.name.clone(), t.1));
            w.tables.insert(desc.name.clone(), t);
        }
        Ok(rows)
    }
}
