//! An in-memory backend: the reference model of the store semantics. It is written to be
//! obviously right rather than fast; property tests require every backend to read exactly
//! as it does.

use super::{
    Cell, Error, Get, Mutation, Result, Row, RowMutation, Scan, Selection, Store, TableDescriptor,
    canonical_table_name, now_millis, validate_mutations, validate_row_key,
};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::RwLock;

type Versions = BTreeMap<Reverse<i64>, Vec<u8>>;
type Columns = BTreeMap<(String, Vec<u8>), Versions>;

struct Table {
    desc: TableDescriptor,
    rows: BTreeMap<Vec<u8>, Columns>,
}

/// The in-memory store.
#[derive(Default)]
pub struct Memory {
    tables: RwLock<BTreeMap<String, Table>>,
}

impl Memory {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn select(desc: &TableDescriptor, key: &[u8], columns: &Columns, sel: &Selection) -> Option<Row> {
    let mut cells = Vec::new();
    for ((family, qualifier), versions) in columns {
        if !sel.wants_column(family, qualifier) {
            continue;
        }
        let kept = desc.family(family).map_or(0, |f| f.max_versions) as usize;
        for (Reverse(ts), value) in versions
            .iter()
            .take(kept)
            .filter(|(Reverse(ts), _)| sel.wants_timestamp(*ts))
            .take(sel.max_versions as usize)
        {
            cells.push(Cell {
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp: *ts,
                value: value.clone(),
            });
        }
    }
    if let Some(limit) = sel.cell_limit {
        cells.truncate(limit);
    }
    (!cells.is_empty()).then(|| Row {
        key: key.to_vec(),
        cells,
    })
}

fn apply(columns: &mut Columns, m: &Mutation, now: i64) {
    let ts = m.timestamp().unwrap_or(now);
    let prune = |versions: &mut Versions| versions.retain(|Reverse(t), _| *t > ts);
    match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            ..
        } => {
            columns
                .entry((family.clone(), qualifier.clone()))
                .or_default()
                .insert(Reverse(ts), value.clone());
        }
        Mutation::DeleteColumn { family, qualifier, .. } => {
            if let Some(v) = columns.get_mut(&(family.clone(), qualifier.clone())) {
                prune(v);
            }
        }
        Mutation::DeleteFamily { family, .. } => {
            for ((f, _), v) in columns.iter_mut() {
                if f == family {
                    prune(v);
                }
            }
        }
        Mutation::DeleteRow { .. } => columns.values_mut().for_each(prune),
    }
    columns.retain(|_, v| !v.is_empty());
}

impl Store for Memory {
    fn identity(&self) -> String {
        "memory (in-process, not persistent)".into()
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        let mut tables = self.tables.write().expect("lock");
        if tables.contains_key(&desc.name) {
            return Err(Error::TableExists(desc.name));
        }
        tables.insert(
            desc.name.clone(),
            Table {
                desc,
                rows: BTreeMap::new(),
            },
        );
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        match self.tables.write().expect("lock").remove(&name) {
            Some(_) => Ok(()),
            None => Err(Error::TableNotFound(name)),
        }
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        Ok(self
            .tables
            .read()
            .expect("lock")
            .values()
            .map(|t| t.desc.clone())
            .collect())
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        tables
            .get(&name)
            .map(|t| t.desc.clone())
            .ok_or(Error::TableNotFound(name))
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let name = canonical_table_name(table)?;
        let mut tables = self.tables.write().expect("lock");
        let t = tables.get_mut(&name).ok_or(Error::TableNotFound(name))?;
        validate_mutations(&t.desc, rows)?;
        let now = now_millis();
        for rm in rows {
            let columns = t.rows.entry(rm.row.clone()).or_default();
            for m in &rm.mutations {
                apply(columns, m, now);
            }
            if columns.is_empty() {
                t.rows.remove(&rm.row);
            }
        }
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        let t = tables.get(&name).ok_or(Error::TableNotFound(name))?;
        gets.iter()
            .map(|g| {
                validate_row_key(&g.row)?;
                g.select.validate(&t.desc)?;
                Ok(t.rows.get(&g.row).and_then(|c| select(&t.desc, &g.row, c, &g.select)))
            })
            .collect()
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        let t = tables.get(&name).ok_or(Error::TableNotFound(name))?;
        scan.select.validate(&t.desc)?;
        let limit = scan.limit.unwrap_or(usize::MAX);
        let rows = t.rows.iter();
        let matching = |(key, columns): (&Vec<u8>, &Columns)| {
            if scan.contains(key) {
                select(&t.desc, key, columns, &scan.select)
            } else {
                None
            }
        };
        Ok(if scan.reversed {
            rows.rev().filter_map(matching).take(limit).collect()
        } else {
            rows.filter_map(matching).take(limit).collect()
        })
    }
}
