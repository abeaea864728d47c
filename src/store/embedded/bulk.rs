//! Bulk loads into empty tables. Puts are staged as sorted runs (the `store::runs` module);
//! `finish` merges each table's runs once into one sorted stream that fjall ingests as
//! table files directly, past the journal, the memtables, their flushes and the compactions
//! that would rewrite them (HBase's bulk load writes sorted HFiles and adds them whole).
//!
//! Nothing is readable or acknowledged before `finish` returns; a load that stops early
//! leaves its tables as they were, and its run files are removed (by `Drop`, or by the next
//! `Embedded::open` after a crash).

use super::{Table, io};
use crate::store::cellkey;
use crate::store::runs::Runs;
use crate::store::{BulkLoad, Result, RowMutation};
use std::path::Path;
use std::sync::Arc;

/// Where a bulk load keeps its runs, inside the data directory.
pub(super) const DIR: &str = "bulk-runs";

pub use crate::store::runs::MEMORY;

/// A bulk load into the store's empty tables.
pub(super) struct Bulk {
    tables: Vec<Arc<Table>>,
    runs: Runs,
}

impl Bulk {
    /// A bulk load of `tables` (each empty), keeping its runs under `data_dir` and spilling
    /// a table's run when it holds `memory` divided among the tables.
    pub(super) fn new(data_dir: &Path, tables: Vec<Arc<Table>>, memory: usize) -> Result<Bulk> {
        let descs = tables.iter().map(|t| t.desc.clone()).collect();
        let names = tables.iter().map(|t| t.keyspace_name.clone()).collect();
        Ok(Bulk {
            runs: Runs::new(&data_dir.join(DIR), descs, names, memory)?,
            tables,
        })
    }

    /// Merges one table's runs into one ingestion of table files; returns the rows.
    fn ingest(&self, i: usize) -> Result<(String, u64)> {
        let mut ingestion = None;
        let (mut rows, mut last) = (0u64, Vec::new());
        self.runs.merge(i, |key, value| {
            let row = &key[..cellkey::escaped_end(key, 0).expect("a cell key")];
            if rows == 0 || row != last.as_slice() {
                rows += 1;
                last.clear();
                last.extend_from_slice(row);
            }
            let ing = match &mut ingestion {
                Some(ing) => ing,
                None => ingestion.insert(self.tables[i].keyspace.start_ingestion().map_err(io)?),
            };
            ing.write(key, value).map_err(io)
        })?;
        if let Some(ing) = ingestion {
            ing.finish().map_err(io)?;
        }
        Ok((self.tables[i].desc.name.clone(), rows))
    }
}

impl BulkLoad for Bulk {
    fn covers(&self, table: &str) -> bool {
        self.runs.position(table).is_some()
    }

    fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.runs.add(table, rows)
    }

    fn finish(&self) -> Result<Vec<(String, u64)>> {
        use rayon::prelude::*;
        (0..self.tables.len()).into_par_iter().map(|i| self.ingest(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Embedded;
    use super::*;
    use crate::store::{Mutation, Scan, Store, TableDescriptor};
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
            let rows_written = b.finish().unwrap();
            let distinct = rows.iter().map(|r| &r.row).collect::<std::collections::BTreeSet<_>>().len() as u64;
            prop_assert_eq!(rows_written, vec![("t".to_string(), distinct)]);
            prop_assert_eq!(cells(&bulked), cells(&batches));
            drop(b);
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
            assert!(b.runs.spilled(), "runs were spilled");
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
