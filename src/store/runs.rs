//! Sorted runs: the staging half of a bulk load, shared by every backend that writes sorted
//! files (the embedded store's table files, HBase's HFiles). Cells arrive as (cell key,
//! value) in any order, encoded with [`cellkey`](super::cellkey) so that byte order is
//! HBase's cell order; each table's are sorted in memory and spilled to a run file when its
//! share of the memory budget fills; [`Runs::merge`] merges a table's runs once into one
//! sorted stream, a later cell of the same key replacing the earlier.
//!
//! The run files live in one folder that `Drop` removes: a load that stops early leaves
//! nothing behind.

use super::{Error, Mutation, Result, RowMutation, TableDescriptor, cellkey, now_millis, validate_mutations};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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

    /// Positions in key order, a later cell of one key replacing the earlier.
    fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.index.len()).collect();
        // Stable: cells of one key stay in arrival order, so the last one is the latest.
        order.sort_by(|&a, &b| self.key(a).cmp(self.key(b)));
        let mut out: Vec<usize> = Vec::with_capacity(order.len());
        for i in order {
            match out.last_mut() {
                Some(last) if self.key(*last) == self.key(i) => *last = i,
                _ => out.push(i),
            }
        }
        out
    }
}

#[derive(Default)]
struct Staged {
    cells: Cells,
    /// Run files, oldest first; a slot is taken when a run's cells are, so that runs keep
    /// the order of their cells even when two are written at once.
    runs: Vec<Option<PathBuf>>,
}

/// The staged cells of a bulk load's tables, by table position.
pub struct Runs {
    dir: PathBuf,
    /// The tables, as validated.
    descs: Vec<TableDescriptor>,
    /// Per table: a name for its run files, and what it has staged.
    tables: Vec<(String, Mutex<Staged>)>,
    /// Encoded bytes a table holds before it spills a run.
    run_bytes: usize,
    next_run: AtomicU64,
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
            descs,
            tables: files.into_iter().map(|t| (t, Mutex::default())).collect(),
            run_bytes,
            next_run: AtomicU64::new(0),
        })
    }

    /// Stages cells into table `t`: `fill` pushes them. Spills a run when the table's share
    /// is full, sorting and writing it outside the lock.
    pub fn stage(&self, t: usize, fill: impl FnOnce(&mut Cells)) -> Result<()> {
        let (name, staged) = &self.tables[t];
        let full = {
            let mut staged = staged.lock().expect("runs lock");
            fill(&mut staged.cells);
            (staged.cells.held() >= self.run_bytes).then(|| {
                staged.runs.push(None);
                (staged.runs.len() - 1, std::mem::take(&mut staged.cells))
            })
        };
        if let Some((slot, cells)) = full {
            let path = self.spill(name, &cells)?;
            staged.lock().expect("runs lock").runs[slot] = Some(path);
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

    /// Writes `cells` in key order to a new run file.
    fn spill(&self, name: &str, cells: &Cells) -> Result<PathBuf> {
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{name}-{n:06}.run"));
        let failed = |e: std::io::Error| io(format!("cannot write the bulk run {}: {e}", path.display()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(failed)?);
        for i in cells.sorted() {
            let (key, value) = (cells.key(i), cells.value(i));
            out.write_all(&(key.len() as u32).to_le_bytes()).map_err(failed)?;
            out.write_all(&(value.len() as u32).to_le_bytes()).map_err(failed)?;
            out.write_all(key).map_err(failed)?;
            out.write_all(value).map_err(failed)?;
        }
        out.flush().map_err(failed)?;
        Ok(path)
    }

    /// Merges table `t`'s runs and its cells in memory, calling `emit` with each key once
    /// (its latest value) in key order; the runs are removed after.
    pub fn merge(&self, t: usize, mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        let (name, staged) = &self.tables[t];
        let staged = std::mem::take(&mut *staged.lock().expect("runs lock"));
        let mut sources: Vec<Source> = Vec::with_capacity(staged.runs.len() + 1);
        for path in &staged.runs {
            let path = path
                .as_ref()
                .ok_or_else(|| io(format!("a bulk run of table {name} was not written")))?;
            let file = File::open(path).map_err(|e| io(format!("cannot read the bulk run {}: {e}", path.display())))?;
            sources.push(Source::Run {
                reader: BufReader::with_capacity(READ_BUFFER, file),
                path: path.clone(),
                key: Vec::new(),
                value: Vec::new(),
            });
        }
        let memory = staged.cells.sorted();
        sources.push(Source::Memory {
            cells: &staged.cells,
            order: memory,
            at: 0,
        });
        // Smallest key first; of equal keys, the newest source (the highest index) first.
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if s.advance()? {
                heap.push(Reverse((s.key().to_vec(), Reverse(i))));
            }
        }
        let mut last = Vec::new();
        let mut written = false;
        // A popped entry's buffer carries its source's next key back into the heap.
        while let Some(Reverse((mut key, Reverse(i)))) = heap.pop() {
            if !written || key != last {
                emit(key.as_slice(), sources[i].value())?;
                written = true;
                last.clear();
                last.extend_from_slice(&key);
            }
            if sources[i].advance()? {
                key.clear();
                key.extend_from_slice(sources[i].key());
                heap.push(Reverse((key, Reverse(i))));
            }
        }
        drop(sources);
        for path in staged.runs.iter().flatten() {
            let _ = std::fs::remove_file(path);
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
        let _ = std::fs::remove_dir_all(&self.dir);
        // The shared parent goes too, unless another bulk load still has its runs there.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// One sorted input of a table's merge.
enum Source<'a> {
    Run {
        reader: BufReader<File>,
        path: PathBuf,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Memory {
        cells: &'a Cells,
        order: Vec<usize>,
        /// One past the current cell.
        at: usize,
    },
}

impl Source<'_> {
    /// Moves to the next cell; `false` at the end.
    fn advance(&mut self) -> Result<bool> {
        match self {
            Source::Run {
                reader,
                path,
                key,
                value,
            } => {
                let failed = |e: std::io::Error| io(format!("cannot read the bulk run {}: {e}", path.display()));
                let mut lengths = [0u8; 8];
                match reader.read_exact(&mut lengths) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
                    Err(e) => return Err(failed(e)),
                }
                let k = u32::from_le_bytes(lengths[..4].try_into().expect("4 bytes")) as usize;
                let v = u32::from_le_bytes(lengths[4..].try_into().expect("4 bytes")) as usize;
                key.resize(k, 0);
                value.resize(v, 0);
                reader.read_exact(key).map_err(failed)?;
                reader.read_exact(value).map_err(failed)?;
                Ok(true)
            }
            Source::Memory { order, at, .. } => {
                *at += 1;
                Ok(*at <= order.len())
            }
        }
    }

    fn key(&self) -> &[u8] {
        match self {
            Source::Run { key, .. } => key,
            Source::Memory { cells, order, at } => cells.key(order[*at - 1]),
        }
    }

    fn value(&self) -> &[u8] {
        match self {
            Source::Run { value, .. } => value,
            Source::Memory { cells, order, at } => cells.value(order[*at - 1]),
        }
    }
}
