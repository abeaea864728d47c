//! Bulk loads into empty tables. Puts are encoded into cell keys as they are added, sorted
//! in memory, and spilled to files as sorted runs when a table's share of the budget fills;
//! `finish` merges each table's runs once into one sorted stream that fjall ingests as
//! table files directly, past the journal, the memtables, their flushes and the compactions
//! that would rewrite them (HBase's bulk load writes sorted HFiles and adds them whole).
//!
//! Nothing is readable or acknowledged before `finish` returns; a load that stops early
//! leaves its tables as they were, and its run files are removed (by `Drop`, or by the next
//! `Embedded::open` after a crash).

use super::{Table, cellkey, io};
use crate::store::{BulkLoad, Error, Mutation, Result, RowMutation, now_millis, validate_mutations};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where a bulk load keeps its runs, inside the data directory.
pub(super) const DIR: &str = "bulk-runs";

/// Encoded bytes a bulk load holds in memory over all its tables before spilling runs.
pub const MEMORY: usize = 64 << 20;

/// Read buffer of each run during the merge.
const READ_BUFFER: usize = 64 << 10;

/// Cells in arrival order: their key and value bytes in one buffer.
#[derive(Default)]
struct Cells {
    bytes: Vec<u8>,
    /// Start, key length and value length of each cell in `bytes`.
    index: Vec<(u32, u32, u32)>,
}

impl Cells {
    fn push(&mut self, key: &[u8], value: &[u8]) {
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

struct Staged {
    cells: Cells,
    /// Run files, oldest first; a slot is taken when a run's cells are, so that runs keep
    /// the order of their cells even when two are written at once.
    runs: Vec<Option<PathBuf>>,
}

struct BulkTable {
    table: Arc<Table>,
    staged: Mutex<Staged>,
}

/// A bulk load into the store's empty tables.
pub(super) struct Bulk {
    dir: PathBuf,
    tables: Vec<BulkTable>,
    /// Encoded bytes a table holds before it spills a run.
    run_bytes: usize,
    next_run: std::sync::atomic::AtomicU64,
}

impl Bulk {
    /// A bulk load of `tables` (each empty), keeping its runs under `data_dir` and spilling
    /// a table's run when it holds `memory` divided among the tables.
    pub(super) fn new(data_dir: &Path, tables: Vec<Arc<Table>>, memory: usize) -> Result<Bulk> {
        // One folder per bulk load, so that two at once keep apart.
        static LOADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = data_dir.join(DIR).join(n.to_string());
        std::fs::create_dir_all(&dir).map_err(|e| io(format!("cannot create {}: {e}", dir.display())))?;
        let run_bytes = memory / tables.len().max(1);
        Ok(Bulk {
            dir,
            tables: tables
                .into_iter()
                .map(|table| BulkTable {
                    table,
                    staged: Mutex::new(Staged {
                        cells: Cells::default(),
                        runs: Vec::new(),
                    }),
                })
                .collect(),
            run_bytes,
            next_run: Default::default(),
        })
    }

    fn table(&self, name: &str) -> Option<&BulkTable> {
        let name = crate::store::canonical_table_name(name).ok()?;
        self.tables.iter().find(|t| t.table.desc.name == name)
    }

    /// Writes `cells` in key order to a new run file.
    fn spill(&self, t: &BulkTable, cells: &Cells) -> Result<PathBuf> {
        let n = self.next_run.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.dir.join(format!("{}-{n:06}.run", t.table.keyspace_name));
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

    /// Merges one table's runs and its cells in memory into one ingestion.
    fn ingest(t: &BulkTable) -> Result<()> {
        let staged = std::mem::replace(
            &mut *t.staged.lock().expect("bulk lock"),
            Staged {
                cells: Cells::default(),
                runs: Vec::new(),
            },
        );
        let mut sources: Vec<Source> = Vec::with_capacity(staged.runs.len() + 1);
        for path in &staged.runs {
            let path = path
                .as_ref()
                .ok_or_else(|| io(format!("a bulk run of table {} was not written", t.table.desc.name)))?;
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
        let mut ingestion = t.table.keyspace.start_ingestion().map_err(io)?;
        let mut last = Vec::new();
        let mut written = false;
        // A popped entry's buffer carries its source's next key back into the heap.
        while let Some(Reverse((mut key, Reverse(i)))) = heap.pop() {
            if !written || key != last {
                ingestion.write(key.as_slice(), sources[i].value()).map_err(io)?;
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
        if written {
            ingestion.finish().map_err(io)?;
        }
        drop(sources);
        for path in staged.runs.iter().flatten() {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
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

impl BulkLoad for Bulk {
    fn covers(&self, table: &str) -> bool {
        self.table(table).is_some()
    }

    fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let t = self
            .table(table)
            .ok_or_else(|| Error::BadArgument(format!("table {table} is not part of this bulk load")))?;
        validate_mutations(&t.table.desc, rows)?;
        if let Some(rm) = rows
            .iter()
            .find(|rm| rm.mutations.iter().any(|m| !matches!(m, Mutation::Put { .. })))
        {
            return Err(Error::BadArgument(format!(
                "a bulk load takes puts only; row {} of table {table} has a delete",
                String::from_utf8_lossy(&rm.row)
            )));
        }
        let now = now_millis();
        let mut key = Vec::new();
        let full = {
            let mut staged = t.staged.lock().expect("bulk lock");
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
                        cellkey::column_prefix(&row, t.table.family_index(family), qualifier, &mut key);
                        key.extend_from_slice(&cellkey::encode_ts(timestamp.unwrap_or(now)));
                        staged.cells.push(&key, value);
                    }
                }
            }
            (staged.cells.held() >= self.run_bytes).then(|| {
                staged.runs.push(None);
                (staged.runs.len() - 1, std::mem::take(&mut staged.cells))
            })
        };
        // Sorted and written outside the lock: the other workers keep adding meanwhile.
        if let Some((slot, cells)) = full {
            let path = self.spill(t, &cells)?;
            t.staged.lock().expect("bulk lock").runs[slot] = Some(path);
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        use rayon::prelude::*;
        self.tables.par_iter().try_for_each(Bulk::ingest)
    }
}

impl Drop for Bulk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        // The shared parent goes too, unless another bulk load still has its runs there.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Embedded;
    use super::*;
    use crate::store::{Scan, Store, TableDescriptor};
    use proptest::prelude::*;

    fn table() -> TableDescriptor {
        TableDescriptor::new("t", &["a", "b"], 2)
    }

    /// Row, family, qualifier, timestamp, value.
    type Cell = (Vec<u8>, String, Vec<u8>, i64, Vec<u8>);

    /// Every cell of `t`, all versions, in order.
    fn cells(store: &Embedded) -> Vec<Cell> {
        let mut scan = Scan::default();
        scan.select.max_versions = 1000;
        let mut out = Vec::new();
        for row in store.scan("t", &scan).unwrap() {
            for c in row.cells {
                out.push((row.key.clone(), c.family, c.qualifier, c.timestamp, c.value));
            }
        }
        out
    }

    fn bulk(store: &Embedded, memory: usize) -> Bulk {
        Bulk::new(&store.path, vec![store.table("t").unwrap()], memory).unwrap()
    }

    fn byte() -> impl Strategy<Value = u8> {
        prop_oneof![Just(0u8), Just(1), Just(0xFF), Just(b'a')]
    }

    fn put() -> impl Strategy<Value = (Vec<u8>, bool, Vec<u8>, i64, Vec<u8>)> {
        (
            proptest::collection::vec(byte(), 1..3),
            any::<bool>(),
            proptest::collection::vec(byte(), 0..2),
            0i64..4,
            proptest::collection::vec(any::<u8>(), 0..4),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Staged in batches with runs of a few cells, a bulk load holds exactly what the
        /// same batches applied in order hold: every version, the later put of a cell winning.
        #[test]
        fn a_bulk_load_holds_what_the_same_batches_hold(
            puts in proptest::collection::vec(put(), 0..80),
            batch in 1usize..7,
            memory in 1usize..400,
        ) {
            let rows: Vec<RowMutation> = puts
                .iter()
                .map(|(row, fam, q, ts, v)| {
                    RowMutation::new(row.clone(), vec![Mutation::put(if *fam { "a" } else { "b" }, q.clone(), *ts, v.clone())])
                })
                .collect();
            let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let (batches, bulked) = (Embedded::open(d1.path()).unwrap(), Embedded::open(d2.path()).unwrap());
            batches.create_table(&table()).unwrap();
            bulked.create_table(&table()).unwrap();
            let b = bulk(&bulked, memory);
            for chunk in rows.chunks(batch) {
                batches.mutate("t", chunk).unwrap();
                b.add("t", chunk).unwrap();
            }
            // Nothing is readable before the end.
            prop_assert!(cells(&bulked).is_empty());
            Box::new(b).finish().unwrap();
            prop_assert_eq!(cells(&bulked), cells(&batches));
            drop(bulked);
            prop_assert_eq!(cells(&Embedded::open(d2.path()).unwrap()), cells(&batches));
        }
    }

    #[test]
    fn only_empty_tables_without_markers_are_bulk_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Embedded::open(dir.path()).unwrap();
        for name in ["empty", "full", "deleted"] {
            store.create_table(&TableDescriptor::new(name, &["a"], 1)).unwrap();
        }
        store
            .mutate("full", &[RowMutation::new("r", vec![Mutation::put("a", "q", 1, "v")])])
            .unwrap();
        // A delete in an empty table leaves nothing but a marker that hides later puts.
        store
            .mutate(
                "deleted",
                &[RowMutation::new("r", vec![Mutation::DeleteRow { timestamp: Some(5) }])],
            )
            .unwrap();
        let b = store.bulk_load(&["empty", "full", "deleted"]).unwrap().unwrap();
        assert!(b.covers("empty") && !b.covers("full") && !b.covers("deleted"));
        assert!(store.bulk_load(&["full", "deleted"]).unwrap().is_none());
        let refused = b.add("full", &[RowMutation::new("r", vec![Mutation::put("a", "q", 2, "v")])]);
        assert!(refused.unwrap_err().to_string().contains("not part of this bulk load"));
        let delete = [
            RowMutation::new("r", vec![Mutation::put("a", "q", 2, "v")]),
            RowMutation::new("s", vec![Mutation::delete_column("a", "q")]),
        ];
        let refused = b.add("empty", &delete).unwrap_err().to_string();
        assert!(refused.contains("puts only") && refused.contains("row s"), "{refused}");
        let bad_family = b.add("empty", &[RowMutation::new("r", vec![Mutation::put("x", "q", 2, "v")])]);
        assert!(bad_family.is_err());
        b.finish().unwrap();
        // The refused batches wrote nothing.
        assert!(store.scan("empty", &Scan::default()).unwrap().is_empty());
    }

    #[test]
    fn an_unfinished_bulk_load_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(DIR);
        {
            let store = Embedded::open(dir.path()).unwrap();
            store.create_table(&table()).unwrap();
            let b = bulk(&store, 64);
            let rows: Vec<RowMutation> = (0..100)
                .map(|i| RowMutation::new(format!("r{i:03}"), vec![Mutation::put("a", "q", 1, "value")]))
                .collect();
            b.add("t", &rows).unwrap();
            b.add("t", &rows).unwrap();
            let spilled = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
            assert!(
                std::fs::read_dir(&spilled).unwrap().next().is_some(),
                "runs were spilled"
            );
            drop(b);
            assert!(!spilled.exists(), "a dropped bulk load removes its runs");
            assert!(!runs.exists(), "and the folder they shared");
            assert!(cells(&store).is_empty());
        }
        // A crash leaves runs behind.
        std::fs::create_dir_all(runs.join("3")).unwrap();
        std::fs::write(runs.join("3").join("t0-000000.run"), b"partial").unwrap();
        assert!(runs.exists());
        let store = Embedded::open(dir.path()).unwrap();
        assert!(!runs.exists(), "the next open removes the runs of a crashed load");
        assert!(cells(&store).is_empty());
    }
}
