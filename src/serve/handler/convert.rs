//! Thrift1 arguments to the store's model and back: `family:qualifier` columns, column
//! lists, cells and row results.

use super::*;
use crate::convert::thrift1;
pub(super) use crate::convert::thrift1::tcell;

/// HBase's Thrift1 handler builds scans with the deprecated `Scan.setStartRow`/`setStopRow`,
/// which keep the old rule that a scan whose start equals its stop reads that one row.
pub(super) fn get_scan(mut scan: Scan) -> Scan {
    if !scan.start.is_empty() && scan.start == scan.stop {
        scan.stop.push(0);
        scan.reversed = false;
    }
    scan
}

/// A `family[:qualifier]` column argument (`None`: the whole family).
pub(super) fn parse_column(column: &[u8]) -> R<(String, Option<Vec<u8>>)> {
    thrift1::parse_column(column).map_err(illegal)
}

/// A delete of a column (every version at or below `ts`) or, for `family`, of the whole
/// family.
pub(super) fn delete_of(column: &[u8], timestamp: Option<i64>) -> R<StoreMutation> {
    let (family, qualifier) = parse_column(column)?;
    Ok(match qualifier {
        Some(qualifier) => StoreMutation::DeleteColumn {
            family,
            qualifier,
            timestamp,
        },
        None => StoreMutation::DeleteFamily { family, timestamp },
    })
}

/// A put's column: `family:qualifier`, where `family:` is the empty qualifier.
pub(super) fn parse_put_column(column: &[u8]) -> R<(String, Vec<u8>)> {
    if !column.contains(&b':') {
        return Err(illegal(format!(
            "Invalid famAndQf provided: {:?} has no qualifier; only deletes take a whole family",
            String::from_utf8_lossy(column)
        )));
    }
    let (family, qualifier) = parse_column(column)?;
    Ok((family, qualifier.unwrap_or_default()))
}

/// A column list as HBase's `Get`/`Scan` build it (see [`crate::convert::added_columns`]).
pub(super) fn columns(list: &[Text]) -> R<Vec<Column>> {
    let parsed = list.iter().map(|c| parse_column(c)).collect::<R<Vec<_>>>()?;
    Ok(crate::convert::added_columns(parsed))
}

pub(super) fn row_result(row: Row, sorted: bool) -> TRowResult {
    thrift1::row_result(row, sorted)
}
