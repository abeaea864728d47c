//! Rows and bytes written and read per region and per interval, counted by a [`Layer`] over
//! the backend a load or run talks to. Each worker thread counts into its own tallies (no
//! lock, no shared cache line per operation); [`RegionCounts::finish`] merges them once the
//! workers are done, as the latency histograms are merged.

use super::layer::{Layer, Layered};
use super::{Result, Row, RowMutation, Store};
use crate::regions::Bounds;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_local::ThreadLocal;

/// Most columns (intervals) a spread keeps: past it, neighbouring columns merge and each
/// column covers twice the time, so a long run stays small.
pub const MAX_COLUMNS: usize = 120;

/// What one region took in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Row mutations written.
    pub rows_written: u64,
    /// Bytes of them (as [`RowMutation::size`] counts).
    pub bytes_written: u64,
    /// Rows read back.
    pub rows_read: u64,
    /// Bytes of them (as [`Row::bytes`] counts).
    pub bytes_read: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.rows_written += o.rows_written;
        self.bytes_written += o.bytes_written;
        self.rows_read += o.rows_read;
        self.bytes_read += o.bytes_read;
    }
}

/// Counts a row read in its region.
fn read(row: &Row, regions: &mut [Tally], bounds: &Bounds) {
    let r = &mut regions[bounds.locate(&row.key)];
    r.rows_read += 1;
    r.bytes_read += row.bytes();
}

/// One worker's tallies: columns of `width` base intervals, each a tally per region of every
/// table (tables one after another), allocated when first touched.
#[derive(Debug, Default)]
struct Tallies {
    width: usize,
    columns: Vec<Vec<Tally>>,
}

impl Tallies {
    /// Merges neighbouring columns until `base` falls within [`MAX_COLUMNS`] columns.
    fn fit(&mut self, base: usize) {
        while base / self.width >= MAX_COLUMNS {
            self.columns = fold(std::mem::take(&mut self.columns));
            self.width *= 2;
        }
    }
}

/// Columns two by two.
fn fold(columns: Vec<Vec<Tally>>) -> Vec<Vec<Tally>> {
    let mut out: Vec<Vec<Tally>> = Vec::with_capacity(columns.len().div_ceil(2));
    for (i, c) in columns.into_iter().enumerate() {
        if i % 2 == 0 {
            out.push(c);
        } else {
            let last = out.last_mut().expect("an even column before");
            if last.is_empty() {
                *last = c;
            } else {
                for (a, b) in last.iter_mut().zip(&c) {
                    a.add(b);
                }
            }
        }
    }
    out
}

/// How a load or run spread over the regions: per table, per region, per column.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Length of one column.
    pub column: Duration,
    /// Per table, its regions and their tallies per column (`tallies[column][region]`).
    pub tables: Vec<TableSpread>,
}

/// One table's part of a [`Spread`].
#[derive(Debug, Clone, PartialEq)]
pub struct TableSpread {
    /// Where the table's regions begin.
    pub bounds: Bounds,
    /// `tallies[column][region]`.
    pub tallies: Vec<Vec<Tally>>,
}

impl TableSpread {
    /// Per region, its tallies over every column.
    pub fn totals(&self) -> Vec<Tally> {
        let mut out = vec![Tally::default(); self.bounds.len()];
        for column in &self.tallies {
            for (a, b) in out.iter_mut().zip(column) {
                a.add(b);
            }
        }
        out
    }
}

/// A store that counts, per region, what passes through it.
pub type Counted = Layered<RegionCounts>;

/// `inner`, counted over the regions of `tables` in columns of `interval` (merged past
/// [`MAX_COLUMNS`]) from now. Tables not named pass through uncounted.
pub fn count(inner: Arc<dyn Store>, tables: Vec<Bounds>, interval: Duration) -> Counted {
    Layered::new(inner, RegionCounts::new(tables, interval))
}

/// Reads each table's regions from `store`.
pub fn bounds_of(store: &dyn Store, tables: &[String]) -> Result<Vec<Bounds>> {
    tables
        .iter()
        .map(|t| {
            Ok(Bounds {
                table: t.clone(),
                splits: store.regions(t)?,
            })
        })
        .collect()
}

/// The counting layer: per region, what was written and read through it.
pub struct RegionCounts {
    tables: Vec<Bounds>,
    /// Where each table's regions start in a column.
    offsets: Vec<usize>,
    regions: usize,
    started: Instant,
    base: Duration,
    local: ThreadLocal<RefCell<Tallies>>,
}

impl RegionCounts {
    /// Counts `rows` as written to `table`: what `mutate` does once a batch is acknowledged,
    /// for writes that reach the store another way (a bulk load).
    pub fn written(&self, table: &str, rows: &[RowMutation]) {
        self.with(table, |regions, bounds| {
            for row in rows {
                let r = &mut regions[bounds.locate(&row.row)];
                r.rows_written += 1;
                r.bytes_written += row.size().1;
            }
        });
    }

    /// Counts over the regions of `tables`, in columns of `interval` from now.
    pub fn new(tables: Vec<Bounds>, interval: Duration) -> RegionCounts {
        let mut offsets = Vec::with_capacity(tables.len());
        let mut regions = 0;
        for t in &tables {
            offsets.push(regions);
            regions += t.len();
        }
        RegionCounts {
            tables,
            offsets,
            regions,
            started: Instant::now(),
            base: interval.max(Duration::from_millis(1)),
            local: ThreadLocal::new(),
        }
    }

    fn table(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.table == name)
    }

    /// Runs `f` on this thread's column of now, with the table's region offset.
    fn with(&self, table: &str, f: impl FnOnce(&mut [Tally], &Bounds)) {
        let Some(t) = self.table(table) else {
            return;
        };
        let base = (self.started.elapsed().as_nanos() / self.base.as_nanos()) as usize;
        let mut tallies = self
            .local
            .get_or(|| {
                RefCell::new(Tallies {
                    width: 1,
                    columns: Vec::new(),
                })
            })
            .borrow_mut();
        tallies.fit(base);
        let col = base / tallies.width;
        if tallies.columns.len() <= col {
            tallies.columns.resize_with(col + 1, Vec::new);
        }
        let column = &mut tallies.columns[col];
        if column.is_empty() {
            *column = vec![Tally::default(); self.regions];
        }
        let bounds = &self.tables[t];
        f(&mut column[self.offsets[t]..self.offsets[t] + bounds.len()], bounds);
    }

    /// Every worker's tallies merged, in columns of one width. Call once the workers are done.
    pub fn finish(self) -> Spread {
        let locals: Vec<Tallies> = self.local.into_iter().map(RefCell::into_inner).collect();
        let width = locals.iter().map(|t| t.width).max().unwrap_or(1);
        let mut merged: Vec<Vec<Tally>> = Vec::new();
        for mut t in locals {
            while t.width < width {
                t.columns = fold(t.columns);
                t.width *= 2;
            }
            if merged.len() < t.columns.len() {
                merged.resize_with(t.columns.len(), Vec::new);
            }
            for (m, c) in merged.iter_mut().zip(t.columns) {
                if c.is_empty() {
                    continue;
                }
                if m.is_empty() {
                    *m = c;
                } else {
                    for (a, b) in m.iter_mut().zip(&c) {
                        a.add(b);
                    }
                }
            }
        }
        let tables = self
            .tables
            .iter()
            .zip(&self.offsets)
            .map(|(bounds, &at)| TableSpread {
                bounds: bounds.clone(),
                tallies: merged
                    .iter()
                    .map(|c| {
                        if c.is_empty() {
                            vec![Tally::default(); bounds.len()]
                        } else {
                            c[at..at + bounds.len()].to_vec()
                        }
                    })
                    .collect(),
            })
            .collect();
        Spread {
            column: self.base * width as u32,
            tables,
        }
    }
}

impl Layer for RegionCounts {
    /// Counted once acknowledged: a failed batch wrote nothing that counts.
    fn wrote(&self, table: &str, rows: &[RowMutation]) {
        self.written(table, rows);
    }

    fn read(&self, table: &str, rows: &mut dyn Iterator<Item = &Row>) {
        self.with(table, |regions, bounds| {
            for row in rows {
                read(row, regions, bounds);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Get, Mutation, Scan, TableDescriptor, memory::Memory};

    fn bounds() -> Vec<Bounds> {
        vec![Bounds {
            table: "t".into(),
            splits: vec![b"m".to_vec()],
        }]
    }

    #[test]
    fn writes_and_reads_land_in_their_regions() {
        let mem: Arc<dyn Store> = Arc::new(Memory::new());
        mem.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
        mem.create_table(&TableDescriptor::new("other", &["f"], 1)).unwrap();
        let c = Arc::new(count(mem, bounds(), Duration::from_secs(3600)));
        let rows: Vec<RowMutation> = ["a", "b", "x"]
            .iter()
            .map(|k| RowMutation::new(k.as_bytes(), vec![Mutation::put("f", "q", 1, "vv")]))
            .collect();
        c.mutate("t", &rows).unwrap();
        c.mutate("other", &rows).unwrap();
        c.get("t", &[Get::new("x"), Get::new("nope")]).unwrap();
        assert_eq!(c.scan("t", &Scan::default()).unwrap().len(), 3);
        std::thread::scope(|s| {
            s.spawn(|| c.scan_each("t", &Scan::prefix("a"), 10, &mut |_| true).unwrap());
        });
        let spread = Arc::into_inner(c).expect("one owner").layer.finish();
        assert_eq!(spread.tables.len(), 1);
        let totals = spread.tables[0].totals();
        // "a" and "b": 1 + 1 + 8 + 1 + 2 = 13 bytes each written; read as much.
        assert_eq!(
            totals[0],
            Tally {
                rows_written: 2,
                bytes_written: 26,
                rows_read: 3,
                bytes_read: 39
            }
        );
        assert_eq!(
            totals[1],
            Tally {
                rows_written: 1,
                bytes_written: 13,
                rows_read: 2,
                bytes_read: 26
            }
        );
    }

    #[test]
    fn long_runs_fold_into_wider_columns() {
        let mut t = Tallies {
            width: 1,
            columns: (0..MAX_COLUMNS)
                .map(|i| {
                    vec![Tally {
                        rows_written: i as u64,
                        ..Tally::default()
                    }]
                })
                .collect(),
        };
        t.fit(MAX_COLUMNS);
        assert_eq!(t.width, 2);
        assert_eq!(t.columns.len(), MAX_COLUMNS / 2);
        assert_eq!(t.columns[0][0].rows_written, 1);
        assert_eq!(t.columns[1][0].rows_written, 5);
        let total: u64 = t.columns.iter().map(|c| c[0].rows_written).sum();
        assert_eq!(total, (0..MAX_COLUMNS as u64).sum::<u64>());
    }
}
