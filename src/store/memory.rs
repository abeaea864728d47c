//! An in-memory backend: the reference model of the store semantics. It is written to be
//! obviously right first; property tests require every backend to read exactly as it does.
//! It is also offered to users, so a scan walks only its key range and a put touches only
//! its column.

use super::{
    Cell, Error, Get, Mutation, Result, Row, RowMutation, Scan, Selection, Store, TableDescriptor,
    canonical_table_name, now_millis, validate_mutations, validate_row_key,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::RwLock;

type Versions = BTreeMap<Reverse<i64>, Vec<u8>>;
type Columns = BTreeMap<(String, Vec<u8>), Versions>;

/// Which of the two behaviours the model reads with (see "Store semantics" in docs/backends.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Semantics {
    /// HBase's: a delete leaves a marker that hides every put at or below its timestamp in
    /// its scope (a one-version delete: at exactly its timestamp), also puts written after it (`NEW_VERSION_BEHAVIOR => false`, until a major
    /// compaction); a read counts versions among the cells inside its time range (what
    /// HBase returns before a flush drops versions past the family's `VERSIONS`).
    #[default]
    Hbase,
    /// Cloud Bigtable's: a delete removes what it covers and leaves nothing behind; each
    /// column is capped at its family's versions before any time range applies.
    Bigtable,
}

/// The delete markers of one row: the highest timestamp deleted for the whole row, per
/// family and per column, and the single versions deleted per column and per family.
#[derive(Default)]
struct Markers {
    row: Option<i64>,
    families: BTreeMap<String, i64>,
    columns: BTreeMap<(String, Vec<u8>), i64>,
    versions: BTreeSet<(String, Vec<u8>, i64)>,
    family_versions: BTreeSet<(String, i64)>,
}

impl Markers {
    /// Whether a put of `family:qualifier` at `ts` is hidden.
    fn hides(&self, family: &str, qualifier: &[u8], ts: i64) -> bool {
        let column = self.columns.get(&(family.to_string(), qualifier.to_vec()));
        [self.row, self.families.get(family).copied(), column.copied()]
            .into_iter()
            .flatten()
            .any(|m| ts <= m)
            || self.versions.contains(&(family.to_string(), qualifier.to_vec(), ts))
            || self.family_versions.contains(&(family.to_string(), ts))
    }
}

#[derive(Default)]
struct RowState {
    columns: Columns,
    markers: Markers,
}

struct Table {
    desc: TableDescriptor,
    rows: BTreeMap<Vec<u8>, RowState>,
}

/// The in-memory store.
#[derive(Default)]
pub struct Memory {
    semantics: Semantics,
    tables: RwLock<BTreeMap<String, Table>>,
}

impl Memory {
    /// An empty store with HBase's semantics.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with the given semantics.
    pub fn with(semantics: Semantics) -> Self {
        Memory {
            semantics,
            ..Self::default()
        }
    }
}

/// A row as a read at `now` sees it: cells past their family's TTL are gone before versions
/// are counted, in both semantics.
fn select(
    semantics: Semantics,
    desc: &TableDescriptor,
    key: &[u8],
    columns: &Columns,
    sel: &Selection,
    now: i64,
) -> Option<Row> {
    let mut cells = Vec::new();
    for ((family, qualifier), versions) in columns {
        if !sel.wants_column(family, qualifier) {
            continue;
        }
        let fd = desc.family(family);
        let kept = fd.map_or(0, |f| f.max_versions) as usize;
        let oldest = fd.and_then(|f| f.storage.oldest_unexpired(now)).unwrap_or(i64::MIN);
        let live = |(Reverse(ts), _): &(&Reverse<i64>, &Vec<u8>)| *ts >= oldest;
        let in_range = |(Reverse(ts), _): &(&Reverse<i64>, &Vec<u8>)| sel.wants_timestamp(*ts);
        let chosen: Vec<(&Reverse<i64>, &Vec<u8>)> = match semantics {
            Semantics::Hbase => versions
                .iter()
                .filter(live)
                .filter(in_range)
                .take(kept.min(sel.max_versions as usize))
                .collect(),
            Semantics::Bigtable => versions
                .iter()
                .filter(live)
                .take(kept)
                .filter(in_range)
                .take(sel.max_versions as usize)
                .collect(),
        };
        for (Reverse(ts), value) in chosen {
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

fn apply(semantics: Semantics, row: &mut RowState, m: &Mutation, now: i64) {
    let ts = m.timestamp().unwrap_or(now);
    let prune = |versions: &mut Versions| versions.retain(|Reverse(t), _| *t > ts);
    let markers = semantics == Semantics::Hbase;
    let raise = |marker: &mut i64| *marker = (*marker).max(ts);
    match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            ..
        } => {
            if !row.markers.hides(family, qualifier, ts) {
                row.columns
                    .entry((family.clone(), qualifier.clone()))
                    .or_default()
                    .insert(Reverse(ts), value.clone());
            }
            // A put empties no column.
            return;
        }
        Mutation::DeleteColumn { family, qualifier, .. } => {
            let column = (family.clone(), qualifier.clone());
            if let Some(v) = row.columns.get_mut(&column) {
                prune(v);
            }
            if markers {
                raise(row.markers.columns.entry(column).or_insert(ts));
            }
        }
        Mutation::DeleteVersion { family, qualifier, .. } => {
            let column = (family.clone(), qualifier.clone());
            if let Some(v) = row.columns.get_mut(&column) {
                v.remove(&Reverse(ts));
            }
            if markers {
                row.markers.versions.insert((column.0, column.1, ts));
            }
        }
        Mutation::DeleteFamilyVersion { family, .. } => {
            for ((f, _), v) in row.columns.iter_mut() {
                if f == family {
                    v.remove(&Reverse(ts));
                }
            }
            if markers {
                row.markers.family_versions.insert((family.clone(), ts));
            }
        }
        Mutation::DeleteFamily { family, .. } => {
            for ((f, _), v) in row.columns.iter_mut() {
                if f == family {
                    prune(v);
                }
            }
            if markers {
                raise(row.markers.families.entry(family.clone()).or_insert(ts));
            }
        }
        Mutation::DeleteRow { .. } => {
            row.columns.values_mut().for_each(prune);
            if markers {
                raise(row.markers.row.get_or_insert(ts));
            }
        }
    }
    row.columns.retain(|_, v| !v.is_empty());
}

impl Store for Memory {
    fn identity(&self) -> String {
        "memory (in-process, not persistent)".into()
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        crate::store::one_copy(&desc, "memory: keeps one copy of each row")?;
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
            let row = t.rows.entry(rm.row.clone()).or_default();
            for m in &rm.mutations {
                apply(self.semantics, row, m, now);
            }
        }
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        let t = tables.get(&name).ok_or(Error::TableNotFound(name))?;
        let now = now_millis();
        gets.iter()
            .map(|g| {
                validate_row_key(&g.row)?;
                g.select.validate(&t.desc)?;
                Ok(t.rows
                    .get(&g.row)
                    .and_then(|r| select(self.semantics, &t.desc, &g.row, &r.columns, &g.select, now)))
            })
            .collect()
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        let t = tables.get(&name).ok_or(Error::TableNotFound(name))?;
        scan.select.validate(&t.desc)?;
        let now = now_millis();
        let limit = scan.limit.unwrap_or(usize::MAX);
        let Some(bounds) = key_range(scan) else {
            return Ok(Vec::new());
        };
        // The range narrows the walk to the scan's bounds; `contains` stays the rule.
        let rows = t.rows.range::<Vec<u8>, _>(bounds);
        let matching = |(key, row): (&Vec<u8>, &RowState)| {
            if scan.contains(key) {
                select(self.semantics, &t.desc, key, &row.columns, &scan.select, now)
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

/// Lower and upper bounds over row keys.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The keys a scan may return, as a range over row keys (a superset: `Scan::contains`
/// decides); `None` when there are none.
fn key_range(scan: &Scan) -> Option<KeyRange> {
    let bound = |k: &[u8], b: fn(Vec<u8>) -> Bound<Vec<u8>>| if k.is_empty() { Unbounded } else { b(k.to_vec()) };
    let (mut lower, mut upper) = if scan.reversed {
        (bound(&scan.stop, Excluded), bound(&scan.start, Included))
    } else {
        (bound(&scan.start, Included), bound(&scan.stop, Excluded))
    };
    if !scan.prefix.is_empty() {
        let p = &scan.prefix;
        if !matches!(&lower, Included(l) | Excluded(l) if l >= p) {
            lower = Included(p.clone());
        }
        // Every row that starts with the prefix sorts below the prefix with its last byte
        // that is not 0xFF raised (and the rest dropped); all-0xFF prefixes run to the end.
        if let Some(i) = p.iter().rposition(|&b| b != 0xFF) {
            let mut end = p[..=i].to_vec();
            end[i] += 1;
            if !matches!(&upper, Included(u) | Excluded(u) if *u <= end) {
                upper = Excluded(end);
            }
        }
    }
    let empty = match (&lower, &upper) {
        (Included(l), Included(u)) => l > u,
        (Included(l) | Excluded(l), Included(u) | Excluded(u)) => l >= u,
        _ => false,
    };
    (!empty).then_some((lower, upper))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(0x7F), Just(0xFE), Just(0xFF)],
            0..4,
        )
    }

    proptest! {
        /// A scan walks only its key range, and returns exactly the rows `Scan::contains`
        /// takes, in order, up to its limit.
        #[test]
        fn scans_return_what_contains_takes(
            rows in proptest::collection::btree_set(key().prop_filter("non-empty", |k| !k.is_empty()), 0..40),
            start in key(), stop in key(), prefix in key(),
            reversed in any::<bool>(), start_exclusive in any::<bool>(), limit in proptest::option::of(0usize..10),
        ) {
            let m = Memory::new();
            m.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
            let batch: Vec<RowMutation> =
                rows.iter().map(|r| RowMutation::new(r.clone(), vec![Mutation::put("f", "q", 1, "v")])).collect();
            m.mutate("t", &batch).unwrap();
            let scan = Scan { start, stop, prefix, reversed, start_exclusive, limit, ..Scan::default() };
            let got: Vec<Vec<u8>> = m.scan("t", &scan).unwrap().into_iter().map(|r| r.key).collect();
            let mut want: Vec<Vec<u8>> = rows.iter().filter(|r| scan.contains(r)).cloned().collect();
            if reversed {
                want.reverse();
            }
            want.truncate(limit.unwrap_or(usize::MAX));
            prop_assert_eq!(got, want);
        }
    }
}
