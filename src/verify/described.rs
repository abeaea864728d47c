//! `verify` of a workload's own design: the rows its descriptions make, read back.
//!
//! Two passes. (1) Every block of users in parallel: the rows the block's users make, their
//! cells merged per row (a row keyed by a followee gathers cells from many followers), each
//! family's cells trimmed to the `VERSIONS` it keeps, are read with one multi-get per table
//! and [`GET_BATCH`] rows; every expected cell must be there with its timestamp and value.
//! (2) Every table is scanned: a row no user makes is unexpected, and a table holding more
//! cells than the workload writes says how many.

use super::{Report, Tally};
use crate::design::Design;
use crate::generate::{Generator, Scratch, Table};
use crate::keys::to_string_binary;
use crate::schema;
use crate::store::{self, Get, Mutation, RowMutation, Scan, Store};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// Rows read in one multi-get.
const GET_BATCH: usize = 1000;

/// A cell: family, qualifier, timestamp, value.
type Cell = (String, Vec<u8>, i64, Vec<u8>);

/// What one block's check leaves: its first differences, and per table the hashes of the
/// rows it expects, of those missing and of those mismatched (a row many blocks write is
/// counted once), and the cells it expects.
struct Block {
    differences: Vec<String>,
    rows: Vec<HashSet<u64>>,
    missing: Vec<HashSet<u64>>,
    mismatched: Vec<HashSet<u64>>,
    cells: Vec<u64>,
}

fn row_hash(key: &[u8]) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
}

/// Each family's `VERSIONS`, per table of the design.
fn versions(d: &Design) -> Vec<BTreeMap<String, u32>> {
    d.tables
        .iter()
        .map(|t| t.families.iter().cloned().zip(t.versions.iter().copied()).collect())
        .collect()
}

/// The cells a row should hold once written: every put, newest first per column, as many
/// as its family keeps.
fn expected_cells(mutations: &[Mutation], keeps: &BTreeMap<String, u32>) -> Vec<Cell> {
    let mut cells: Vec<Cell> = mutations
        .iter()
        .filter_map(|m| match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                value,
            } => Some((
                family.clone(),
                qualifier.clone(),
                timestamp.unwrap_or(-1),
                value.clone(),
            )),
            _ => None,
        })
        .collect();
    // Newest first within a column; a cell written twice at one timestamp keeps the later.
    cells.reverse();
    cells.sort_by(|a, b| (&a.0, &a.1, b.2).cmp(&(&b.0, &b.1, a.2)));
    cells.dedup_by(|a, b| (&a.0, &a.1, a.2) == (&b.0, &b.1, b.2));
    let mut out: Vec<Cell> = Vec::with_capacity(cells.len());
    let mut run = 0u32;
    for c in cells {
        let same_column = out.last().is_some_and(|p| (&p.0, &p.1) == (&c.0, &c.1));
        run = if same_column { run + 1 } else { 1 };
        if run <= keeps.get(&c.0).copied().unwrap_or(1) {
            out.push(c);
        }
    }
    out
}

/// The first expected cell a row lacks, in a few words; `None` when it holds them all.
fn lacking(expected: &[Cell], found: &[Cell]) -> Option<String> {
    let name = |c: &Cell| format!("{}:{}", c.0, to_string_binary(&c.1));
    for e in expected {
        if found.contains(e) {
            continue;
        }
        return Some(match found.iter().find(|f| (&f.0, &f.1, f.2) == (&e.0, &e.1, e.2)) {
            Some(f) => format!(
                "cell {} at {} has a different value ({} bytes, expected {})",
                name(e),
                e.2,
                f.3.len(),
                e.3.len()
            ),
            None => format!("missing cell {} at {}", name(e), e.2),
        });
    }
    None
}

struct Verifier<'a> {
    store: &'a dyn Store,
    g: &'a Generator,
    keeps: Vec<BTreeMap<String, u32>>,
    absent: HashSet<Table>,
}

impl Verifier<'_> {
    fn row_name(&self, t: Table, key: &[u8]) -> String {
        format!("{} {}", t.name(), self.g.describe_row(t, key))
    }

    fn check_block(&self, b: u64, scratch: &mut Scratch, show: usize) -> schema::Result<Block> {
        let n = self.g.all_tables().len();
        let mut made: Vec<(Table, RowMutation)> = Vec::new();
        self.g.emit_block(b, scratch, &mut made)?;
        // Per table, each row's mutations together.
        let mut rows: Vec<BTreeMap<Vec<u8>, Vec<Mutation>>> = vec![BTreeMap::new(); n];
        for (t, rm) in made {
            rows[t.index()].entry(rm.row).or_default().extend(rm.mutations);
        }
        let mut out = Block {
            differences: Vec::new(),
            rows: vec![HashSet::new(); n],
            missing: vec![HashSet::new(); n],
            mismatched: vec![HashSet::new(); n],
            cells: vec![0; n],
        };
        for (&t, rows) in self.g.all_tables().iter().zip(rows) {
            let i = t.index();
            let keeps = &self.keeps[i];
            let most = keeps.values().copied().max().unwrap_or(1);
            let expected: Vec<(Vec<u8>, Vec<Cell>)> = rows
                .into_iter()
                .map(|(k, m)| {
                    let c = expected_cells(&m, keeps);
                    (k, c)
                })
                .collect();
            for chunk in expected.chunks(GET_BATCH) {
                let found = if self.absent.contains(&t) {
                    vec![None; chunk.len()]
                } else {
                    let gets: Vec<Get> = chunk.iter().map(|(k, _)| Get::new(k.clone()).versions(most)).collect();
                    self.store.get(t.name(), &gets)?
                };
                for ((key, cells), found) in chunk.iter().zip(found) {
                    let h = row_hash(key);
                    out.rows[i].insert(h);
                    out.cells[i] += cells.len() as u64;
                    let Some(found) = found else {
                        if out.missing[i].insert(h) && out.differences.len() < show {
                            out.differences.push(format!("missing row {}", self.row_name(t, key)));
                        }
                        continue;
                    };
                    let found: Vec<Cell> = found
                        .cells
                        .into_iter()
                        .map(|c| (c.family, c.qualifier, c.timestamp, c.value))
                        .collect();
                    if let Some(why) = lacking(cells, &found)
                        && out.mismatched[i].insert(h)
                        && out.differences.len() < show
                    {
                        out.differences
                            .push(format!("mismatched row {}: {why}", self.row_name(t, key)));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Scans table `t`: its rows and cells, and the rows none of `expected` names.
    fn check_strays(&self, t: Table, expected: &HashSet<u64>, tally: &mut Tally) -> schema::Result<(u64, u64)> {
        if self.absent.contains(&t) {
            return Ok((0, 0));
        }
        let most = self.keeps[t.index()].values().copied().max().unwrap_or(1);
        let (mut rows, mut cells) = (0u64, 0u64);
        let mut strays = Vec::new();
        store::scan_each(self.store, t.name(), &Scan::default().versions(most), 1000, |r| {
            rows += 1;
            cells += r.cells.len() as u64;
            if !expected.contains(&row_hash(&r.key)) {
                strays.push(r.key);
            }
            true
        })?;
        for key in &strays {
            tally.note(|| format!("unexpected row {}", self.row_name(t, key)));
        }
        tally.counts[t.index()].unexpected += strays.len() as u64;
        Ok((rows, cells))
    }
}

/// Verifies `store` against a workload of its own design (`g.own_design()`), on the pool
/// the caller installed.
pub(super) fn verify(store: &dyn Store, g: &Generator, show: usize) -> schema::Result<Report> {
    let design = g.own_design().expect("a workload of its own design");
    let tables = g.written_tables();
    let absent = super::absent(store, &tables)?;
    let v = Verifier {
        store,
        g,
        keeps: versions(design),
        absent,
    };
    let blocks: Vec<Block> = (0..g.blocks())
        .into_par_iter()
        .map_init(Scratch::default, |scratch, b| v.check_block(b, scratch, show))
        .collect::<schema::Result<Vec<_>>>()?;
    let n = g.all_tables().len();
    let mut total = Tally::new(show);
    for &t in &tables {
        if v.absent.contains(&t) {
            total.note(|| format!("missing table {}", t.name()));
        }
    }
    let (mut rows, mut missing, mut mismatched) = (
        vec![HashSet::new(); n],
        vec![HashSet::<u64>::new(); n],
        vec![HashSet::<u64>::new(); n],
    );
    let mut cells = vec![0u64; n];
    let mut differences = Vec::new();
    for b in blocks {
        for i in 0..n {
            rows[i].extend(&b.rows[i]);
            missing[i].extend(&b.missing[i]);
            mismatched[i].extend(&b.mismatched[i]);
            cells[i] += b.cells[i];
        }
        differences.extend(b.differences);
    }
    // The rows' differences first, in block order, as the seed designs' verify lists them.
    differences.dedup();
    differences.truncate(show);
    let mut noted = std::mem::replace(&mut total.differences, differences);
    total.differences.append(&mut noted);
    total.differences.truncate(show);
    let mut report = Report::default();
    for &t in &tables {
        let i = t.index();
        let (found, found_cells) = v.check_strays(t, &rows[i], &mut total)?;
        let c = &mut total.counts[i];
        c.expected = rows[i].len() as u64;
        c.found = found;
        c.missing = missing[i].len() as u64;
        c.mismatched = mismatched[i].len() as u64;
        total.count += c.missing + c.mismatched;
        if found_cells > cells[i] && !v.absent.contains(&t) {
            let more = found_cells - cells[i];
            total.note(|| format!("table {} holds {more} cells more than the workload writes", t.name()));
        }
        report.tables.push((t, total.counts[i]));
    }
    report.differences = total.differences;
    report.difference_count = total.count;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(q: &str, ts: i64, v: &str) -> Mutation {
        Mutation::Put {
            family: "f".into(),
            qualifier: q.as_bytes().to_vec(),
            timestamp: Some(ts),
            value: v.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_row_is_expected_to_keep_the_newest_versions_of_each_column() {
        let keeps = BTreeMap::from([("f".to_string(), 2)]);
        let m = [
            put("a", 1, "x"),
            put("a", 3, "y"),
            put("a", 2, "z"),
            put("b", 1, "w"),
            put("a", 3, "later"),
        ];
        let got: Vec<(Vec<u8>, i64, Vec<u8>)> = expected_cells(&m, &keeps)
            .into_iter()
            .map(|c| (c.1, c.2, c.3))
            .collect();
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), 3, b"later".to_vec()),
                (b"a".to_vec(), 2, b"z".to_vec()),
                (b"b".to_vec(), 1, b"w".to_vec()),
            ]
        );
    }

    #[test]
    fn a_lacking_cell_is_named_with_what_differs() {
        let keeps = BTreeMap::from([("f".to_string(), 1)]);
        let e = expected_cells(&[put("a", 1, "x"), put("b", 2, "y")], &keeps);
        let mut f = e.clone();
        assert_eq!(lacking(&e, &f), None);
        f.push(("f".into(), b"c".to_vec(), 9, b"extra".to_vec()));
        assert_eq!(
            lacking(&e, &f),
            None,
            "cells of other users' rows are not this block's to judge"
        );
        f[1].3 = b"yy".to_vec();
        assert_eq!(
            lacking(&e, &f).as_deref(),
            Some("cell f:b at 2 has a different value (2 bytes, expected 1)")
        );
        f.remove(1);
        assert_eq!(lacking(&e, &f).as_deref(), Some("missing cell f:b at 2"));
    }
}
