//! The `Hbase` (Thrift1) service's columns and row results. A column argument is
//! `family[:qualifier]` as HBase's `CellUtil.parseColumn` reads it: `family` names the whole
//! family, `family:` the empty qualifier. A row result carries cells as a map of
//! `family:qualifier` to the newest cell, or, with `sortColumns`, as a list of every cell.
//!
//! Errors are messages; each side words them into its own error type.

use crate::idl::thrift1::{TCell, TColumn, TRowResult};
use crate::store::{Cell, Column, Row};
use std::collections::BTreeMap;

/// A selection's column as a column argument: `family` alone for the whole family.
pub fn column_arg(c: &Column) -> Vec<u8> {
    let mut name = c.family.as_bytes().to_vec();
    if let Some(q) = &c.qualifier {
        name.push(b':');
        name.extend_from_slice(q);
    }
    name
}

/// A column argument as family and qualifier (`None`: the whole family).
pub fn parse_column(column: &[u8]) -> Result<(String, Option<Vec<u8>>), String> {
    let (family, qualifier) = match column.iter().position(|&b| b == b':') {
        Some(i) => (&column[..i], Some(column[i + 1..].to_vec())),
        None => (column, None),
    };
    let family = String::from_utf8(family.to_vec())
        .map_err(|_| format!("column family {:?} is not UTF-8", String::from_utf8_lossy(family)))?;
    if family.is_empty() {
        return Err("column family is empty".into());
    }
    Ok((family, qualifier))
}

/// A cell's `family:qualifier`.
pub fn cell_column(c: &Cell) -> Vec<u8> {
    let mut name = Vec::with_capacity(c.family.len() + 1 + c.qualifier.len());
    name.extend_from_slice(c.family.as_bytes());
    name.push(b':');
    name.extend_from_slice(&c.qualifier);
    name
}

/// A cell's `family:qualifier` read back.
pub fn split_cell_column(name: &[u8]) -> Result<(String, Vec<u8>), String> {
    match parse_column(name) {
        Ok((family, Some(qualifier))) => Ok((family, qualifier)),
        _ => Err(format!("bad column name {:?}", String::from_utf8_lossy(name))),
    }
}

/// A cell as a `TCell`: value and timestamp.
pub fn tcell(c: Cell) -> TCell {
    TCell::new(c.value, c.timestamp)
}

/// A row as a row result: every cell, in order, with `sorted`; else one per column, the
/// first of each (the newest, in the store's order), as HBase's map keeps.
pub fn row_result(row: Row, sorted: bool) -> TRowResult {
    if sorted {
        let list: Vec<TColumn> = row
            .cells
            .into_iter()
            .map(|c| TColumn::new(cell_column(&c), tcell(c)))
            .collect();
        TRowResult::new(row.key, None, list)
    } else {
        let mut map = BTreeMap::new();
        for c in row.cells {
            map.entry(cell_column(&c)).or_insert_with(|| tcell(c));
        }
        TRowResult::new(row.key, map, None)
    }
}

/// A row result as a row, its cells in the store's order (family, qualifier, newest first).
pub fn row_of(r: TRowResult) -> Result<Row, String> {
    let mut cells = Vec::new();
    let map = r.columns.unwrap_or_default().into_iter();
    let list = r
        .sorted_columns
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.column_name.unwrap_or_default(), c.cell.unwrap_or_default()));
    for (name, cell) in map.chain(list) {
        let (family, qualifier) = split_cell_column(&name)?;
        cells.push(Cell {
            family,
            qualifier,
            timestamp: cell.timestamp.unwrap_or(0),
            value: cell.value.unwrap_or_default(),
        });
    }
    crate::store::sort_cells(&mut cells);
    Ok(Row {
        key: r.row.unwrap_or_default(),
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn family() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9_.-]{0,3}"
    }

    fn cells() -> impl Strategy<Value = Vec<Cell>> {
        prop::collection::vec(
            (
                family(),
                prop::collection::vec(any::<u8>(), 0..4),
                0i64..5,
                prop::collection::vec(any::<u8>(), 0..4),
            ),
            0..12,
        )
        .prop_map(|raw| {
            let mut cells: Vec<Cell> = raw
                .into_iter()
                .map(|(family, qualifier, timestamp, value)| Cell {
                    family,
                    qualifier,
                    timestamp,
                    value,
                })
                .collect();
            // The store's order, one cell per version.
            crate::store::sort_cells(&mut cells);
            cells.dedup_by(|a, b| (&a.family, &a.qualifier, a.timestamp) == (&b.family, &b.qualifier, b.timestamp));
            cells
        })
    }

    proptest! {
        #[test]
        fn every_cell_round_trips_sorted(key in prop::collection::vec(any::<u8>(), 0..6), cells in cells()) {
            let row = Row { key, cells };
            prop_assert_eq!(row_of(row_result(row.clone(), true)).unwrap(), row);
        }

        #[test]
        fn the_newest_per_column_round_trips_as_a_map(key in prop::collection::vec(any::<u8>(), 0..6), cells in cells()) {
            let mut newest = cells.clone();
            newest.dedup_by(|a, b| (&a.family, &a.qualifier) == (&b.family, &b.qualifier));
            let back = row_of(row_result(Row { key: key.clone(), cells }, false)).unwrap();
            prop_assert_eq!(back, Row { key, cells: newest });
        }

        #[test]
        fn column_arguments_round_trip(family in family(), qualifier in prop::option::of(prop::collection::vec(any::<u8>(), 0..4))) {
            let c = Column { family: family.clone(), qualifier: qualifier.clone() };
            prop_assert_eq!(parse_column(&column_arg(&c)).unwrap(), (family, qualifier));
        }
    }

    #[test]
    fn family_alone_and_empty_qualifier_differ() {
        assert_eq!(parse_column(b"f").unwrap(), ("f".to_string(), None));
        assert_eq!(parse_column(b"f:").unwrap(), ("f".to_string(), Some(Vec::new())));
        assert_eq!(
            parse_column(b"f:a:b").unwrap(),
            ("f".to_string(), Some(b"a:b".to_vec()))
        );
        assert!(parse_column(b":a").is_err());
        assert!(split_cell_column(b"f").is_err());
    }
}
