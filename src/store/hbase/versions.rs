//! What Thrift1 cannot ask in one call: more than one version per column, qualifier
//! cursors and cell limits, read with `getVerTs` and one-row scans, and the cell filters
//! those scans use.

use super::*;

/// Quotes bytes as an argument of the filter language.
pub(super) fn quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in bytes {
        if b == b'\'' {
            out.push(b'\'');
        }
        out.push(b);
    }
    out.push(b'\'');
    out
}

/// Where a scan runs, as sent: start and stop rows (empty: the table's edge) and filters.
pub(super) struct Bounds {
    pub(super) start: Vec<u8>,
    pub(super) stop: Vec<u8>,
    pub(super) filters: Vec<Vec<u8>>,
}

/// A scan's row range narrowed to its prefix, with the `PrefixFilter` that keeps exactly the
/// prefix's rows (and, in a reversed scan, ends it once rows fall below the prefix); `None`
/// when the range holds no row. HBase reads a scan whose start equals its stop as a get of
/// that row, so an empty range is answered before anything is sent.
pub(super) fn scan_bounds(scan: &Scan) -> Option<Bounds> {
    let (mut start, mut stop) = (scan.start.clone(), scan.stop.clone());
    let mut filters: Vec<Vec<u8>> = Vec::new();
    if !scan.prefix.is_empty() {
        let end = crate::keys::next_prefix(&scan.prefix);
        let high = if scan.reversed { &mut start } else { &mut stop };
        if !end.is_empty() && (high.is_empty() || *high > end) {
            *high = end;
        }
        if !scan.reversed && start.as_slice() < scan.prefix.as_slice() {
            start = scan.prefix.clone();
        }
        filters.push([b"PrefixFilter(".as_slice(), &quote(&scan.prefix), b")"].concat());
    }
    let empty = match scan.reversed {
        false => !stop.is_empty() && stop <= start,
        true => !start.is_empty() && !stop.is_empty() && start <= stop,
    };
    (!empty).then_some(Bounds { start, stop, filters })
}

/// A selection's columns as HBase's column lists take them: a whole family alone, since
/// `addColumn` after `addFamily` would narrow the family to that column.
pub(super) fn added_columns(select: &crate::store::Selection) -> impl Iterator<Item = &Column> {
    select
        .columns
        .iter()
        .filter(|c| c.qualifier.is_none() || !select.wants_whole_family(&c.family))
}

/// Filter-language terms for a selection's qualifier cursor.
pub(super) fn cell_filters(s: &crate::store::Selection) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if let Some(after) = &s.qualifier_after {
        // Not ColumnRangeFilter: its seek hint can jump over a family's delete marker (kept
        // at the empty qualifier) and bring back cells a plain get calls deleted.
        // QualifierFilter only skips, so every marker is seen.
        out.push([b"QualifierFilter(>, 'binary:".as_slice(), &quote(after)[1..], b")"].concat());
    }
    out
}

impl Hbase {
    /// A get with a qualifier cursor or cell limit: a one-row scan with filters.
    pub(super) fn paged_row(&self, desc: &TableDescriptor, g: &Get) -> Result<Option<Row>> {
        let mut stop = g.row.clone();
        stop.push(0);
        let scan = Scan {
            start: g.row.clone(),
            stop,
            select: g.select.clone(),
            limit: Some(1),
            ..Scan::default()
        };
        Ok(self.scan(&desc.name, &scan)?.pop())
    }

    /// A multi-version get: the row's columns from a time-bounded read, then their versions.
    pub(super) fn versioned_row(&self, desc: &TableDescriptor, g: &Get) -> Result<Option<Row>> {
        let mut latest = g.clone();
        latest.select.max_versions = 1;
        latest.select.cell_limit = None;
        let Some(newest) = self.get(&desc.name, &[latest])?.pop().flatten() else {
            return Ok(None);
        };
        Ok(self.expand_versions(desc, vec![newest], &g.select)?.pop())
    }

    /// Replaces each cell of `rows` (the newest version of its column below the time
    /// range's end) by the column's versions the selection asks for, read with `getVerTs`,
    /// pipelined.
    pub(super) fn expand_versions(
        &self,
        desc: &TableDescriptor,
        rows: Vec<Row>,
        select: &crate::store::Selection,
    ) -> Result<Vec<Row>> {
        let ts = select.time_range.map_or(LATEST, |(_, max)| max);
        let min = select.time_range.map_or(i64::MIN, |(min, _)| min);
        let versions = select.max_versions.min(i32::MAX as u32) as i32;
        let name = desc.name.as_bytes().to_vec();
        let mut calls: Vec<Call> = Vec::new();
        for r in &rows {
            for c in &r.cells {
                let (name, row, column) = (
                    name.clone(),
                    r.key.clone(),
                    thrift1::column_arg(&Column::qualifier(&c.family, c.qualifier.clone())),
                );
                calls.push(Call {
                    name: "getVerTs",
                    args: Box::new(move |o| {
                        write_bytes_field(o, "tableName", 1, &name)?;
                        write_bytes_field(o, "row", 2, &row)?;
                        write_bytes_field(o, "column", 3, &column)?;
                        write_field(o, "timestamp", TType::I64, 4)?;
                        o.write_i64(ts)?;
                        o.write_field_end()?;
                        write_field(o, "numVersions", TType::I32, 5)?;
                        o.write_i32(versions)?;
                        o.write_field_end()?;
                        write_no_attributes(o, 6)
                    }),
                });
            }
        }
        let mut replies = self
            .call(true, |c| pipeline(c, &desc.name, &calls, read_cells))?
            .into_iter();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let mut cells = Vec::new();
            for column in &r.cells {
                for tc in replies.next().flatten().unwrap_or_default() {
                    let timestamp = tc.timestamp.unwrap_or(0);
                    if timestamp >= min {
                        cells.push(Cell {
                            family: column.family.clone(),
                            qualifier: column.qualifier.clone(),
                            timestamp,
                            value: tc.value.unwrap_or_default(),
                        });
                    }
                }
            }
            if let Some(limit) = select.cell_limit {
                cells.truncate(limit);
            }
            if !cells.is_empty() {
                out.push(Row { key: r.key, cells });
            }
        }
        Ok(out)
    }
}
