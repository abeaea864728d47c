//! Sorted runs: the staging half of a bulk load, shared by every backend that writes sorted
//! files (the embedded store's table files, HBase's HFiles). Cells arrive as (cell key,
//! value) in any order, encoded with [`cellkey`](super::cellkey) so that byte order is
//! HBase's cell order; each table's are sorted in memory and spilled to a run file when its
//! share of the memory budget fills; [`Runs::merge`] merges a table's runs once into one
//! sorted stream, a later cell of the same key replacing the earlier.
//!
//! Each run records where every region of its table (the table's split points) begins in
//! it, so that a table's regions can be merged apart, on several threads at once
//! ([`Runs::seal`], [`Sealed::merge_region`]).
//!
//! The run files live in one folder that `Drop` removes: a load that stops early leaves
//! nothing behind. A load that journals (`tallrow load --resume`) makes its runs durable
//! at checkpoints instead ([`Runs::persist`]): from the first one on, the folder stays
//! until the load completes, and [`Runs::resume`] takes it over after a crash.

use super::{Error, Mutation, Result, RowMutation, TableDescriptor, cellkey, now_millis, validate_mutations};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

/// Encoded bytes a bulk load holds in memory over all its tables before spilling runs.
pub const MEMORY: usize = 64 << 20;

/// Read buffer of each run during the merge.
const READ_BUFFER: usize = 64 << 10;

fn io(what: String) -> Error {
    Error::Io(what)
}

/// Cells in arrival order: their key and value bytes in one buffer.
#[derive(Default)]
pub struct Cells {
    bytes: Vec<u8>,
    /// Start, key length and value length of each cell in `bytes`.
    index: Vec<(u32, u32, u32)>,
}

impl Cells {
    /// Adds a cell.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        self.index
            .push((self.bytes.len() as u32, key.len() as u32, value.len() as u32));
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
    }

    fn key(&self, i: usize) -> &[u8] {
        let (at, k, _) = self.index[i];
        &self.bytes[at as usize..(at + k) as usize]
    }

    fn value(&self, i: usize) -> &[u8] {
        let (at, k, v) = self.index[i];
        &self.bytes[(at + k) as usize..(at + k + v) as usize]
    }

    /// Memory held: bytes and index.
    fn held(&self) -> usize {
        self.bytes.len() + self.index.len() * 12
    }

    /// Empty, with room for `bytes` of keys and values: a table's cells grow to its share
    /// of the memory budget before they spill, and growing by doubling would copy them.
    fn with_capacity(bytes: usize) -> Cells {
        Cells {
            bytes: Vec::with_capacity(bytes),
            index: Vec::new(),
        }
    }

    /// Positions in key order, a later cell of one key replacing the earlier.
    fn sorted(&self) -> Vec<usize> {
        // Sorted by the keys' first 16 bytes, which tell most cells apart without reading
        // their bytes again; ties compare whole keys, then positions, so that cells of one
        // key stay in arrival order and the last one is the latest.
        let mut order: Vec<([u64; 2], u32)> = (0..self.index.len()).map(|i| (prefix(self.key(i)), i as u32)).collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.key(a.1 as usize).cmp(self.key(b.1 as usize)))
                .then(a.1.cmp(&b.1))
        });
        let mut out: Vec<usize> = Vec::with_capacity(order.len());
        let mut last: Option<[u64; 2]> = None;
        for (p, i) in order {
            let i = i as usize;
            match out.last_mut() {
                Some(l) if last == Some(p) && self.key(*l) == self.key(i) => *l = i,
                _ => out.push(i),
            }
            last = Some(p);
        }
        out
    }

    /// Where each region (of those beginning at `starts`) begins in `order`, a sorted
    /// order of these cells: found by bisection.
    fn region_starts(&self, order: &[usize], starts: &[Vec<u8>]) -> Vec<usize> {
        starts
            .iter()
            .map(|s| order.partition_point(|&i| self.key(i) < s.as_slice()))
            .collect()
    }
}

/// A key's first 16 bytes as two big-endian words (zero-padded): their order is the
/// bytes' order, and equal words leave the rest of the keys to compare.
fn prefix(key: &[u8]) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    b[..n].copy_from_slice(&key[..n]);
    [
        u64::from_be_bytes(b[..8].try_into().expect("8 bytes")),
        u64::from_be_bytes(b[8..].try_into().expect("8 bytes")),
    ]
}

/// A run file.
#[derive(Debug, Clone)]
struct Run {
    path: PathBuf,
    /// Its length in bytes.
    len: u64,
    /// Per split point of the table: the offset of the run's first cell at or past it,
    /// where that region's cells begin.
    bounds: Vec<u64>,
}

impl Run {
    /// The byte range of region `r`'s cells.
    fn range(&self, r: usize) -> (u64, u64) {
        let start = if r == 0 { 0 } else { self.bounds[r - 1] };
        (start, self.bounds.get(r).copied().unwrap_or(self.len))
    }
}

#[derive(Default)]
struct Staged {
    cells: Cells,
    /// Run files, oldest first; a slot is taken when a run's cells are, so that runs keep
    /// the order of their cells even when two are written at once.
    runs: Vec<Option<Run>>,
    /// The leading runs made durable by [`Runs::persist`].
    synced: usize,
}

/// Runs made durable, as a resumed load takes them over: their folder, and each table's
/// run files in it (oldest first), every one complete and synced to disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durable {
    /// The folder.
    pub dir: String,
    /// Per table, in the bulk load's order: its run files' names.
    pub runs: Vec<Vec<String>>,
    /// The number the next run file takes.
    pub next: u64,
    /// Per table, per run: where each region begins in it (see [`Runs::seal`]). Found
    /// again by reading the run where it is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Vec<Vec<u64>>>,
}

/// The staged cells of a bulk load's tables, by table position.
pub struct Runs {
    dir: PathBuf,
    /// The tables, as validated.
    descs: Vec<TableDescriptor>,
    /// Per table: its split points as cell key prefixes, where its regions begin.
    starts: Vec<Vec<Vec<u8>>>,
    /// Per table: a name for its run files, and what it has staged.
    tables: Vec<(String, Mutex<Staged>)>,
    /// Encoded bytes a table holds before it spills a run.
    run_bytes: usize,
    next_run: AtomicU64,
    /// Held shared while cells are staged, and alone by [`Runs::persist`], which so sees
    /// every staged cell in memory or in a complete run.
    gate: RwLock<()>,
    /// Set once runs were made durable: the folder then outlives the value, for a resume.
    kept: AtomicBool,
}

impl Runs {
    /// Runs of `descs` kept under `parent`, the runs of each named after it in `files`
    /// (names usable in file names), each table spilling when it holds `memory` divided
    /// among the tables.
    pub fn new(parent: &Path, descs: Vec<TableDescriptor>, files: Vec<String>, memory: usize) -> Result<Runs> {
        // One folder per bulk load, so that two at once keep apart.
        static LOADS: AtomicU64 = AtomicU64::new(0);
        let n = LOADS.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io(format!("cannot create {}: {e}", dir.display())))?;
        let run_bytes = memory / files.len().max(1);
        Ok(Runs {
            dir,
            starts: starts_of(&descs),
            descs,
            tables: files.into_iter().map(|t| (t, Mutex::default())).collect(),
            run_bytes,
            next_run: AtomicU64::new(0),
            gate: RwLock::new(()),
            kept: AtomicBool::new(false),
        })
    }

    /// Takes over the runs `d` made durable, for the same tables: run files in its folder
    /// that it does not name (spilled after it, possibly cut short) are removed.
    pub fn resume(d: &Durable, descs: Vec<TableDescriptor>, files: Vec<String>, memory: usize) -> Result<Runs> {
        let dir = PathBuf::from(&d.dir);
        let gone = |what: String| {
            io(format!(
                "the staged runs of the unfinished load are gone ({what}): load again without --resume"
            ))
        };
        if d.runs.len() != files.len() {
            return Err(gone(format!("{} holds the runs of another set of tables", d.dir)));
        }
        let mut named = std::collections::HashSet::new();
        for name in d.runs.iter().flatten() {
            if !dir.join(name).is_file() {
                return Err(gone(format!("{} is missing", dir.join(name).display())));
            }
            named.insert(name.as_str());
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| gone(format!("{}: {e}", d.dir)))?;
        for e in entries.flatten() {
            let name = e.file_name();
            if !named.contains(name.to_string_lossy().as_ref()) {
                std::fs::remove_file(e.path())
                    .map_err(|err| io(format!("cannot remove {}: {err}", e.path().display())))?;
            }
        }
        let run_bytes = memory / files.len().max(1);
        let starts = starts_of(&descs);
        let mut tables = Vec::with_capacity(files.len());
        for (t, (file, names)) in files.into_iter().zip(&d.runs).enumerate() {
            let mut runs = Vec::with_capacity(names.len());
            for (j, name) in names.iter().enumerate() {
                let path = dir.join(name);
                let len = std::fs::metadata(&path)
                    .map_err(|e| io(format!("cannot read the bulk run {}: {e}", path.display())))?
                    .len();
                let bounds = match d.bounds.get(t).and_then(|b| b.get(j)) {
                    Some(b) if b.len() == starts[t].len() && b.iter().all(|&o| o <= len) => b.clone(),
                    _ => find_bounds(&path, &starts[t])?,
                };
                runs.push(Some(Run { path, len, bounds }));
            }
            let synced = runs.len();
            tables.push((
                file,
                Mutex::new(Staged {
                    cells: Cells::default(),
                    runs,
                    synced,
                }),
            ));
        }
        Ok(Runs {
            dir,
            starts,
            descs,
            tables,
            run_bytes,
            next_run: AtomicU64::new(d.next),
            gate: RwLock::new(()),
            kept: AtomicBool::new(true),
        })
    }

    /// Makes every cell staged before the call durable: the cells in memory are spilled as
    /// runs, and every run not synced yet is synced, with the folder. Staging waits only
    /// while the cells in memory are taken. Calls must not overlap (the load's journal
    /// takes one checkpoint at a time). From the first call on, the folder stays when the
    /// value is dropped.
    pub fn persist(&self) -> Result<Durable> {
        // Staging waits only while the cells in memory are taken, each table's with the
        // slot its run takes; it goes on into fresh memory while they are spilled.
        let (taken, counts) = {
            let _alone = self.gate.write().unwrap_or_else(|e| e.into_inner());
            let mut taken = Vec::new();
            let mut counts = Vec::with_capacity(self.tables.len());
            for (t, (_, staged)) in self.tables.iter().enumerate() {
                let mut staged = staged.lock().expect("runs lock");
                if !staged.cells.index.is_empty() {
                    staged.runs.push(None);
                    let cells = std::mem::replace(&mut staged.cells, self.fresh_cells());
                    taken.push((t, staged.runs.len() - 1, cells));
                }
                counts.push(staged.runs.len());
            }
            (taken, counts)
        };
        let spilled: Vec<Result<Run>> = taken.par_iter().map(|(t, _, cells)| self.spill(*t, cells)).collect();
        for ((t, slot, _), run) in taken.iter().zip(spilled) {
            // A run that failed leaves its slot empty: the load fails when it merges, and
            // loses nothing unsaid.
            self.tables[*t].1.lock().expect("runs lock").runs[*slot] = Some(run?);
        }
        // Every run up to the counts taken above is complete: those not synced yet are.
        let failed = |p: &Path, e: std::io::Error| io(format!("cannot sync the bulk run {}: {e}", p.display()));
        let mut runs = Vec::with_capacity(self.tables.len());
        let mut bounds = Vec::with_capacity(self.tables.len());
        for ((name, staged), &count) in self.tables.iter().zip(&counts) {
            let (listed, synced) = {
                let staged = staged.lock().expect("runs lock");
                (staged.runs[..count].to_vec(), staged.synced)
            };
            let mut names = Vec::with_capacity(count);
            let mut starts = Vec::with_capacity(count);
            for (i, run) in listed.iter().enumerate() {
                let run = run
                    .as_ref()
                    .ok_or_else(|| io(format!("a bulk run of table {name} was not written")))?;
                if i >= synced {
                    File::open(&run.path)
                        .and_then(|f| f.sync_all())
                        .map_err(|e| failed(&run.path, e))?;
                }
                names.push(run.path.file_name().unwrap_or_default().to_string_lossy().into_owned());
                starts.push(run.bounds.clone());
            }
            let mut staged = staged.lock().expect("runs lock");
            staged.synced = staged.synced.max(count);
            runs.push(names);
            bounds.push(starts);
        }
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| failed(&self.dir, e))?;
        self.kept.store(true, Ordering::Relaxed);
        Ok(Durable {
            dir: self.dir.display().to_string(),
            runs,
            next: self.next_run.load(Ordering::Relaxed),
            bounds,
        })
    }

    /// A table's cells after a spill: room for its share of the memory, and for the batch
    /// that passes it (a bulk batch is at most a few hundred KiB).
    fn fresh_cells(&self) -> Cells {
        Cells::with_capacity(self.run_bytes + (1 << 20))
    }

    /// Removes the runs' folder: the load they staged is complete.
    pub fn discard(&self) {
        self.kept.store(false, Ordering::Relaxed);
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }

    /// Stages cells into table `t`: `fill` pushes them. Spills a run when the table's share
    /// is full, sorting and writing it outside the lock.
    pub fn stage(&self, t: usize, fill: impl FnOnce(&mut Cells)) -> Result<()> {
        let _staging = self.gate.read().unwrap_or_else(|e| e.into_inner());
        let (_, staged) = &self.tables[t];
        let full = {
            let mut staged = staged.lock().expect("runs lock");
            fill(&mut staged.cells);
            (staged.cells.held() >= self.run_bytes).then(|| {
                staged.runs.push(None);
                (
                    staged.runs.len() - 1,
                    std::mem::replace(&mut staged.cells, self.fresh_cells()),
                )
            })
        };
        if let Some((slot, cells)) = full {
            let run = self.spill(t, &cells)?;
            staged.lock().expect("runs lock").runs[slot] = Some(run);
        }
        Ok(())
    }

    /// The position of table `name`, if it is one of the bulk load's.
    pub fn position(&self, name: &str) -> Option<usize> {
        let name = super::canonical_table_name(name).ok()?;
        self.descs.iter().position(|t| t.name == name)
    }

    /// Stages a batch of puts into table `table` (`BulkLoad::add`): validated first, and
    /// refused whole when anything but puts is in it. A put without a timestamp takes now.
    pub fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let t = self
            .position(table)
            .ok_or_else(|| Error::BadArgument(format!("table {table} is not part of this bulk load")))?;
        let desc = &self.descs[t];
        validate_mutations(desc, rows)?;
        if let Some(rm) = rows
            .iter()
            .find(|rm| rm.mutations.iter().any(|m| !matches!(m, Mutation::Put { .. })))
        {
            return Err(Error::BadArgument(format!(
                "a bulk load takes puts only; row {} of table {} has a delete",
                String::from_utf8_lossy(&rm.row),
                desc.name
            )));
        }
        let now = now_millis();
        let mut key = Vec::new();
        self.stage(t, |cells| {
            for rm in rows {
                let row = cellkey::row_prefix(&rm.row);
                for m in &rm.mutations {
                    if let Mutation::Put {
                        family,
                        qualifier,
                        value,
                        timestamp,
                    } = m
                    {
                        let f = desc
                            .families
                            .iter()
                            .position(|f| &f.name == family)
                            .expect("validated family");
                        cellkey::column_prefix(&row, f as u8, qualifier, &mut key);
                        key.extend_from_slice(&cellkey::encode_ts(timestamp.unwrap_or(now)));
                        cells.push(&key, value);
                    }
                }
            }
        })
    }

    /// Writes `cells` in key order to a new run file of table `t`.
    fn spill(&self, t: usize, cells: &Cells) -> Result<Run> {
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{}-{n:06}.run", self.tables[t].0));
        let failed = |e: std::io::Error| io(format!("cannot write the bulk run {}: {e}", path.display()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(failed)?);
        let order = cells.sorted();
        let firsts = cells.region_starts(&order, &self.starts[t]);
        let mut bounds = Vec::with_capacity(firsts.len());
        let mut len = 0u64;
        for (at, &i) in order.iter().enumerate() {
            let (key, value) = (cells.key(i), cells.value(i));
            while bounds.len() < firsts.len() && at >= firsts[bounds.len()] {
                bounds.push(len);
            }
            out.write_all(&(key.len() as u32).to_le_bytes()).map_err(failed)?;
            out.write_all(&(value.len() as u32).to_le_bytes()).map_err(failed)?;
            out.write_all(key).map_err(failed)?;
            out.write_all(value).map_err(failed)?;
            len += 8 + key.len() as u64 + value.len() as u64;
        }
        bounds.resize(firsts.len(), len);
        out.flush().map_err(failed)?;
        // A load that checkpoints syncs every run at its next checkpoint, while staging
        // waits: written back now, in the background, the run costs that checkpoint little.
        if self.kept.load(Ordering::Relaxed) {
            let run = path.clone();
            std::thread::spawn(move || File::open(run).and_then(|f| f.sync_data()));
        }
        Ok(Run { path, len, bounds })
    }

    /// Ends staging into table `t`: what it staged, ready to be merged region by region.
    pub fn seal(&self, t: usize) -> Result<Sealed<'_>> {
        let (name, staged) = &self.tables[t];
        let staged = std::mem::take(&mut *staged.lock().expect("runs lock"));
        if staged.runs.iter().any(Option::is_none) {
            return Err(io(format!("a bulk run of table {name} was not written")));
        }
        let order = staged.cells.sorted();
        let memory_bounds = staged.cells.region_starts(&order, &self.starts[t]);
        Ok(Sealed {
            runs: self,
            staged,
            order,
            memory_bounds,
        })
    }

    /// Merges table `t`'s runs and its cells in memory, calling `emit` with each key once
    /// (its latest value) in key order; the runs are removed after, unless they were made
    /// durable (a resume may merge them again; [`Runs::discard`] removes them).
    pub fn merge(&self, t: usize, mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        let sealed = self.seal(t)?;
        for r in 0..sealed.regions() {
            sealed.merge_region(r, &mut emit)?;
        }
        Ok(())
    }

    /// Whether run files were spilled (for tests).
    pub fn spilled(&self) -> bool {
        std::fs::read_dir(&self.dir).is_ok_and(|mut d| d.next().is_some())
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        // Durable runs stay for the load that resumes this one.
        if self.kept.load(Ordering::Relaxed) {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        // The shared parent goes too, unless another bulk load still has its runs there.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// Per table: its split points as cell key prefixes.
fn starts_of(descs: &[TableDescriptor]) -> Vec<Vec<Vec<u8>>> {
    descs
        .iter()
        .map(|d| d.splits.iter().map(|s| cellkey::row_prefix(s)).collect())
        .collect()
}

/// Where each region begins in the run at `path`, read from the run (a checkpoint written
/// before runs recorded it).
fn find_bounds(path: &Path, starts: &[Vec<u8>]) -> Result<Vec<u64>> {
    let failed = |e: std::io::Error| io(format!("cannot read the bulk run {}: {e}", path.display()));
    let mut reader = BufReader::with_capacity(READ_BUFFER, File::open(path).map_err(failed)?);
    let (mut bounds, mut at, mut key) = (Vec::with_capacity(starts.len()), 0u64, Vec::new());
    let mut lengths = [0u8; 8];
    while bounds.len() < starts.len() {
        match reader.read_exact(&mut lengths) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(failed(e)),
        }
        let k = u32::from_le_bytes(lengths[..4].try_into().expect("4 bytes")) as usize;
        let v = u32::from_le_bytes(lengths[4..].try_into().expect("4 bytes")) as i64;
        key.resize(k, 0);
        reader.read_exact(&mut key).map_err(failed)?;
        while bounds.len() < starts.len() && key >= starts[bounds.len()] {
            bounds.push(at);
        }
        reader.seek_relative(v).map_err(failed)?;
        at += 8 + k as u64 + v as u64;
    }
    let len = std::fs::metadata(path).map_err(failed)?.len();
    bounds.resize(starts.len(), len);
    Ok(bounds)
}

/// One table's staged cells, its staging over: its regions are merged apart, in any
/// order and on any threads. The runs are removed when it is dropped, unless they were
/// made durable.
pub struct Sealed<'a> {
    runs: &'a Runs,
    staged: Staged,
    /// The cells in memory, in key order.
    order: Vec<usize>,
    /// Per split point: where its region begins in `order`.
    memory_bounds: Vec<usize>,
}

impl Sealed<'_> {
    /// The table's regions: one more than its split points.
    pub fn regions(&self) -> usize {
        self.memory_bounds.len() + 1
    }

    /// The cells of region `r` in memory, in key order.
    fn memory(&self, r: usize) -> &[usize] {
        let start = if r == 0 { 0 } else { self.memory_bounds[r - 1] };
        let end = self.memory_bounds.get(r).copied().unwrap_or(self.order.len());
        &self.order[start..end]
    }

    /// Bytes staged for region `r`, over its runs and memory.
    pub fn region_bytes(&self, r: usize) -> u64 {
        let runs: u64 = self
            .staged
            .runs
            .iter()
            .flatten()
            .map(|run| {
                let (start, end) = run.range(r);
                end - start
            })
            .sum();
        let cells = &self.staged.cells;
        let memory: u64 = self
            .memory(r)
            .iter()
            .map(|&i| 8 + (cells.key(i).len() + cells.value(i).len()) as u64)
            .sum();
        runs + memory
    }

    /// Merges region `r`'s cells, calling `emit` with each key once (its latest value) in
    /// key order.
    pub fn merge_region(&self, r: usize, mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        let mut sources: Vec<Source> = Vec::with_capacity(self.staged.runs.len() + 1);
        for run in self.staged.runs.iter().flatten() {
            let (start, end) = run.range(r);
            if start == end {
                continue;
            }
            let failed = |e: std::io::Error| io(format!("cannot read the bulk run {}: {e}", run.path.display()));
            let mut file = File::open(&run.path).map_err(failed)?;
            file.seek(SeekFrom::Start(start)).map_err(failed)?;
            sources.push(Source::Run(RunReader::new(file.take(end - start), &run.path)));
        }
        sources.push(Source::Memory {
            cells: &self.staged.cells,
            order: self.memory(r),
            at: 0,
        });
        // A heap of the sources that have a cell, smallest key first and, of equal keys,
        // the newest source (the highest index) first. Each source's key prefix is kept
        // beside it, so that most comparisons read no key bytes; the keys stay in their
        // sources, never copied into the heap.
        let mut prefixes = vec![[0u64; 2]; sources.len()];
        let mut heap: Vec<usize> = Vec::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            if s.advance()? {
                prefixes[i] = prefix(s.key());
                heap.push(i);
            }
        }
        for at in (0..heap.len() / 2).rev() {
            sift_down(&mut heap, at, &sources, &prefixes);
        }
        let mut last: Vec<u8> = Vec::new();
        let mut last_prefix = None;
        while let Some(&i) = heap.first() {
            let key = sources[i].key();
            if last_prefix != Some(prefixes[i]) || key != last.as_slice() {
                emit(key, sources[i].value())?;
                last.clear();
                last.extend_from_slice(key);
                last_prefix = Some(prefixes[i]);
            }
            if sources[i].advance()? {
                prefixes[i] = prefix(sources[i].key());
            } else {
                heap.swap_remove(0);
            }
            sift_down(&mut heap, 0, &sources, &prefixes);
        }
        Ok(())
    }
}

/// Whether source `a`'s cell comes before source `b`'s in the merge: the smaller key, or
/// of equal keys the newer source.
fn before(a: usize, b: usize, sources: &[Source], prefixes: &[[u64; 2]]) -> bool {
    prefixes[a]
        .cmp(&prefixes[b])
        .then_with(|| sources[a].key().cmp(sources[b].key()))
        .then(b.cmp(&a))
        .is_lt()
}

/// Restores the heap order below `at`.
fn sift_down(heap: &mut [usize], mut at: usize, sources: &[Source], prefixes: &[[u64; 2]]) {
    loop {
        let left = 2 * at + 1;
        if left >= heap.len() {
            return;
        }
        let right = left + 1;
        let child = if right < heap.len() && before(heap[right], heap[left], sources, prefixes) {
            right
        } else {
            left
        };
        if !before(heap[child], heap[at], sources, prefixes) {
            return;
        }
        heap.swap(child, at);
        at = child;
    }
}

/// Reads a run's cells in place: each key and value is a slice of its buffer, refilled
/// from the file when a cell runs past what it holds.
struct RunReader<'a> {
    file: std::io::Take<File>,
    path: &'a Path,
    buf: Vec<u8>,
    /// The bytes of `buf` read from the file.
    end: usize,
    /// The current cell: its start in `buf`, key and value lengths.
    cell: (usize, usize, usize),
    /// Where the next cell starts in `buf`.
    next: usize,
}

impl<'a> RunReader<'a> {
    fn new(file: std::io::Take<File>, path: &'a Path) -> RunReader<'a> {
        RunReader {
            file,
            path,
            buf: vec![0; READ_BUFFER],
            end: 0,
            cell: (0, 0, 0),
            next: 0,
        }
    }

    /// Makes `need` bytes from `at` readable, moving them to the buffer's front first when
    /// they run past its end; returns where they now start, or `None` where the file ends
    /// before them.
    fn readable(&mut self, at: usize, need: usize) -> std::io::Result<Option<usize>> {
        if self.end - at >= need {
            return Ok(Some(at));
        }
        self.buf.copy_within(at..self.end, 0);
        self.end -= at;
        if self.buf.len() < need {
            self.buf.resize(need.max(2 * self.buf.len()), 0);
        }
        while self.end < need {
            let n = self.file.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Ok(None);
            }
            self.end += n;
        }
        Ok(Some(0))
    }

    /// Moves to the next cell; `false` at the end of the run.
    fn advance(&mut self) -> Result<bool> {
        let failed = |e: std::io::Error| io(format!("cannot read the bulk run {}: {e}", self.path.display()));
        let Some(at) = self.readable(self.next, 8).map_err(failed)? else {
            // A run ends between cells; bytes short of a cell's lengths are a cut run.
            if self.end > 0 {
                return Err(failed(std::io::ErrorKind::UnexpectedEof.into()));
            }
            return Ok(false);
        };
        let k = u32::from_le_bytes(self.buf[at..at + 4].try_into().expect("4 bytes")) as usize;
        let v = u32::from_le_bytes(self.buf[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        // Lengths past the run's end (a damaged run) fail here, before a buffer that size.
        if (8 + k + v) as u64 > (self.end - at) as u64 + self.file.limit() {
            return Err(failed(std::io::ErrorKind::UnexpectedEof.into()));
        }
        let at = self
            .readable(at, 8 + k + v)
            .map_err(failed)?
            .ok_or_else(|| failed(std::io::ErrorKind::UnexpectedEof.into()))?;
        self.cell = (at, k, v);
        self.next = at + 8 + k + v;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        let (at, k, _) = self.cell;
        &self.buf[at + 8..at + 8 + k]
    }

    fn value(&self) -> &[u8] {
        let (at, k, v) = self.cell;
        &self.buf[at + 8 + k..at + 8 + k + v]
    }
}

impl Drop for Sealed<'_> {
    fn drop(&mut self) {
        if !self.runs.kept.load(Ordering::Relaxed) {
            for run in self.staged.runs.iter().flatten() {
                let _ = std::fs::remove_file(&run.path);
            }
        }
    }
}

/// One sorted input of a region's merge.
enum Source<'a> {
    Run(RunReader<'a>),
    Memory {
        cells: &'a Cells,
        order: &'a [usize],
        /// One past the current cell.
        at: usize,
    },
}

impl Source<'_> {
    /// Moves to the next cell; `false` at the end.
    fn advance(&mut self) -> Result<bool> {
        match self {
            Source::Run(run) => run.advance(),
            Source::Memory { order, at, .. } => {
                *at += 1;
                Ok(*at <= order.len())
            }
        }
    }

    fn key(&self) -> &[u8] {
        match self {
            Source::Run(run) => run.key(),
            Source::Memory { cells, order, at } => cells.key(order[*at - 1]),
        }
    }

    fn value(&self) -> &[u8] {
        match self {
            Source::Run(run) => run.value(),
            Source::Memory { cells, order, at } => cells.value(order[*at - 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Mutation;

    fn put(row: &str, q: &str, ts: i64, v: &str) -> RowMutation {
        RowMutation {
            row: row.as_bytes().to_vec(),
            mutations: vec![Mutation::put("f", q.as_bytes(), ts, v.as_bytes())],
        }
    }

    fn merged(runs: &Runs) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        runs.merge(0, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    /// The cells of each region of table 0, merged apart.
    fn by_region(runs: &Runs) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        let sealed = runs.seal(0).unwrap();
        (0..sealed.regions())
            .map(|r| {
                let mut out = Vec::new();
                sealed
                    .merge_region(r, |k, v| {
                        out.push((k.to_vec(), v.to_vec()));
                        Ok(())
                    })
                    .unwrap();
                out
            })
            .collect()
    }

    fn row_of(key: &[u8]) -> Vec<u8> {
        let mut row = Vec::new();
        cellkey::split_escaped(key, 0, Some(&mut row));
        row
    }

    /// Short rows of few bytes, half of them behind a long common prefix: keys that tie on
    /// their first 16 bytes and differ after, or are shorter, as the sort and the merge
    /// meet them.
    fn row() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::strategy::Strategy;
        (proptest::bool::ANY, proptest::collection::vec(0u8..4, 1..4)).prop_map(|(long, tail)| {
            let mut row = if long { vec![0u8; 15] } else { Vec::new() };
            row.extend(tail);
            row
        })
    }

    proptest::proptest! {
        /// Merged region by region, spilled or not, resumed or not, a table's cells are
        /// those of one merge of all it staged (the latest of each key), each in the
        /// region its row falls in.
        #[test]
        fn regions_merged_apart_make_the_whole(
            batches in proptest::collection::vec(
                proptest::collection::vec((row(), 0u8..3, 0i64..3, 0u8..255), 1..40),
                1..6,
            ),
            splits in proptest::collection::btree_set(row(), 0..4),
            memory in proptest::sample::select(vec![64usize, 512, 1 << 20]),
            resume in proptest::bool::ANY,
            forget_bounds in proptest::bool::ANY,
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let mut desc = TableDescriptor::new("t", &["f"], 1);
            desc.splits = splits.into_iter().collect();
            let mut expected = std::collections::BTreeMap::new();
            let runs = Runs::new(tmp.path(), vec![desc.clone()], vec!["t".into()], memory).unwrap();
            for batch in &batches {
                let rows: Vec<RowMutation> = batch
                    .iter()
                    .map(|(row, q, ts, v)| RowMutation {
                        row: row.clone(),
                        mutations: vec![Mutation::put("f", [*q], *ts, [*v])],
                    })
                    .collect();
                runs.add("t", &rows).unwrap();
                for (row, q, ts, v) in batch {
                    let mut key = Vec::new();
                    cellkey::column_prefix(&cellkey::row_prefix(row), 0, &[*q], &mut key);
                    key.extend_from_slice(&cellkey::encode_ts(*ts));
                    expected.insert(key, vec![*v]);
                }
            }
            let runs = if resume {
                let mut durable = runs.persist().unwrap();
                drop(runs);
                if forget_bounds {
                    durable.bounds.clear();
                }
                Runs::resume(&durable, vec![desc.clone()], vec!["t".into()], memory).unwrap()
            } else {
                runs
            };
            let regions = by_region(&runs);
            proptest::prop_assert_eq!(regions.len(), desc.splits.len() + 1);
            for (r, cells) in regions.iter().enumerate() {
                for (k, _) in cells {
                    let row = row_of(k);
                    proptest::prop_assert_eq!(desc.splits.partition_point(|s| s.as_slice() <= row.as_slice()), r);
                }
            }
            let all: Vec<(Vec<u8>, Vec<u8>)> = regions.into_iter().flatten().collect();
            let expected: Vec<(Vec<u8>, Vec<u8>)> = expected.into_iter().collect();
            proptest::prop_assert_eq!(all, expected);
            runs.discard();
        }
    }

    /// Cells larger than a run's read buffer merge whole; a run cut inside a cell is an
    /// error that names it, not a shorter table.
    #[test]
    fn cells_larger_than_the_read_buffer_merge_and_a_cut_run_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let desc = TableDescriptor::new("t", &["f"], 1);
        let big = |c: char, n: usize| c.to_string().repeat(n);
        let (b, c) = (big('b', 3 * READ_BUFFER + 5), big('c', READ_BUFFER - 3));
        let runs = Runs::new(tmp.path(), vec![desc.clone()], vec!["t".into()], 1 << 20).unwrap();
        runs.add(
            "t",
            &[put("a", "q", 1, "1"), put("b", "q", 1, &b), put("c", "q", 1, &c)],
        )
        .unwrap();
        runs.add("t", &[put("d", "q", 1, "4")]).unwrap();
        let durable = runs.persist().unwrap();
        let values: Vec<Vec<u8>> = by_region(&runs).concat().into_iter().map(|(_, v)| v).collect();
        assert_eq!(values, [b"1".to_vec(), b.into_bytes(), c.into_bytes(), b"4".to_vec()]);

        let run = PathBuf::from(&durable.dir).join(&durable.runs[0][0]);
        let len = std::fs::metadata(&run).unwrap().len();
        // The last cell (row "d": 8 bytes of lengths, a 15-byte key, a 1-byte value) claims
        // a value of 4 GiB: named as a cut run, with no buffer of that size.
        let whole = std::fs::read(&run).unwrap();
        let mut damaged = whole.clone();
        let at = whole.len() - 24 + 4;
        damaged[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&run, &damaged).unwrap();
        let mut reader = RunReader::new(File::open(&run).unwrap().take(len), &run);
        let mut read = 0;
        let err = loop {
            match reader.advance() {
                Ok(true) => read += 1,
                Ok(false) => panic!("a damaged run read to its end"),
                Err(e) => break e.to_string(),
            }
        };
        assert_eq!(read, 3, "the cells before the damaged one");
        assert!(err.contains("cannot read the bulk run"), "{err}");
        assert!(reader.buf.len() < 1 << 20, "a buffer of {} bytes", reader.buf.len());
        std::fs::write(&run, &whole).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&run)
            .unwrap()
            .set_len(len - 2)
            .unwrap();
        let resumed = Runs::resume(&durable, vec![desc], vec!["t".into()], 1 << 20).unwrap();
        let sealed = resumed.seal(0).unwrap();
        let err = sealed.merge_region(0, |_, _| Ok(())).unwrap_err().to_string();
        assert!(
            err.contains("cannot read the bulk run") && err.contains(".run"),
            "{err}"
        );
        drop(sealed);
        resumed.discard();
    }

    #[test]
    fn a_run_records_where_each_region_begins() {
        let tmp = tempfile::tempdir().unwrap();
        let mut desc = TableDescriptor::new("t", &["f"], 1);
        desc.splits = vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()];
        let runs = Runs::new(tmp.path(), vec![desc.clone()], vec!["t".into()], 1 << 20).unwrap();
        runs.add(
            "t",
            &[put("a", "q", 1, "1"), put("b", "q", 1, "22"), put("e", "q", 1, "333")],
        )
        .unwrap();
        let durable = runs.persist().unwrap();
        // A cell's record: 8 bytes of lengths, the key (escaped row "x" and its end, family,
        // escaped qualifier "q" and its end, 8 bytes of timestamp: 15) and the value.
        let (a, b, e) = (8 + 15 + 1, 8 + 15 + 2, 8 + 15 + 3);
        // Region 2 ([c, d)) is empty: regions 2 and 3 begin at the same offset.
        assert_eq!(durable.bounds, vec![vec![vec![a, a + b, a + b]]]);
        let run = PathBuf::from(&durable.dir).join(&durable.runs[0][0]);
        assert_eq!(std::fs::metadata(&run).unwrap().len(), a + b + e);
        let starts = starts_of(std::slice::from_ref(&desc));
        assert_eq!(find_bounds(&run, &starts[0]).unwrap(), durable.bounds[0][0]);
        runs.discard();
    }

    #[test]
    fn durable_runs_outlive_their_load_and_a_resume_drops_what_came_after() {
        let tmp = tempfile::tempdir().unwrap();
        let desc = TableDescriptor::new("t", &["f"], 1);
        let runs = Runs::new(tmp.path(), vec![desc.clone()], vec!["t".into()], 1 << 20).unwrap();
        runs.add("t", &[put("a", "q", 1, "1"), put("c", "q", 1, "3")]).unwrap();
        let durable = runs.persist().unwrap();
        assert_eq!(durable.runs, vec![vec!["t-000000.run".to_string()]]);
        // Staged after the checkpoint, and spilled: not named by it.
        runs.add("t", &[put("b", "q", 1, "2")]).unwrap();
        runs.persist().unwrap();
        let dir = PathBuf::from(&durable.dir);
        drop(runs);
        assert!(dir.join("t-000001.run").is_file(), "durable runs stay when dropped");

        let resumed = Runs::resume(&durable, vec![desc.clone()], vec!["t".into()], 1 << 20).unwrap();
        assert!(
            !dir.join("t-000001.run").exists(),
            "a run after the checkpoint is removed"
        );
        // What the resumed load stages again joins what the checkpoint kept; a cell staged
        // twice is written once.
        resumed
            .add("t", &[put("b", "q", 1, "2"), put("c", "q", 1, "3")])
            .unwrap();
        let cells = merged(&resumed);
        let values: Vec<&[u8]> = cells.iter().map(|(_, v)| v.as_slice()).collect();
        assert_eq!(values, [b"1", b"2", b"3"]);
        assert!(dir.is_dir(), "merged, durable runs stay until discarded");
        resumed.discard();
        assert!(!dir.exists());

        let gone = Runs::resume(&durable, vec![desc], vec!["t".into()], 1 << 20)
            .err()
            .unwrap();
        assert!(gone.to_string().contains("are gone"), "{gone}");
    }
}
