//! The `Hbase` (Thrift1) service's columns and row results. A column argument is
//! `family[:qualifier]` as HBase's `CellUtil.parseColumn` reads it: `family` names the whole
//! family, `family:` the empty qualifier. A row result carries cells as a map of
//! `family:qualifier` to the newest cell, or, with `sortColumns`, as a list of every cell.
//!
//! A row's mutations travel as a `BatchMutation` of `Mutation`s (`isDelete`, `column`,
//! `value`): [`batch_mutation`] builds one from the store's mutations, [`write_batch`] writes
//! the same bytes without building it (the hbase backend's path), and [`row_mutation`] reads
//! the fields back as HBase's handler applies them (the server's path, whether the fields
//! come from generated structs or are read in place).
//!
//! Errors are messages; each side words them into its own error type.

use crate::idl::thrift1::{BatchMutation, Mutation, TCell, TColumn, TRowResult};
use crate::store::{Cell, Column, Mutation as StoreMutation, Row, RowMutation};
use std::collections::BTreeMap;
use thrift::protocol::{TFieldIdentifier, TListIdentifier, TOutputProtocol, TStructIdentifier, TType};

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

/// A Thrift1 `Mutation`'s parts: family, qualifier (`None`: the whole family) and value
/// (`None`: a delete).
pub type MutationParts<'a> = (&'a str, Option<&'a [u8]>, Option<&'a [u8]>);

/// A store mutation as a Thrift1 `Mutation`'s parts. Row deletes and one-version deletes
/// have none: the first is a call of its own (`deleteAllRow`), the second Thrift1 cannot say.
pub fn mutation_parts(m: &StoreMutation) -> Option<MutationParts<'_>> {
    match m {
        StoreMutation::Put {
            family,
            qualifier,
            value,
            ..
        } => Some((family, Some(qualifier), Some(value))),
        StoreMutation::DeleteColumn { family, qualifier, .. } => Some((family, Some(qualifier), None)),
        StoreMutation::DeleteFamily { family, .. } => Some((family, None, None)),
        StoreMutation::DeleteRow { .. }
        | StoreMutation::DeleteVersion { .. }
        | StoreMutation::DeleteFamilyVersion { .. } => None,
    }
}

/// `family` alone for a whole family, else `family:qualifier` (`family:` is the empty
/// qualifier), into `out`.
fn put_column(out: &mut Vec<u8>, family: &str, qualifier: Option<&[u8]>) {
    out.clear();
    out.extend_from_slice(family.as_bytes());
    if let Some(q) = qualifier {
        out.push(b':');
        out.extend_from_slice(q);
    }
}

/// A row's mutations as a `BatchMutation` (`writeToWAL` left to its default); an error names
/// a mutation Thrift1 cannot carry.
pub fn batch_mutation(row: &[u8], mutations: &[StoreMutation]) -> Result<BatchMutation, String> {
    let mut out = Vec::with_capacity(mutations.len());
    for m in mutations {
        let (family, qualifier, value) = mutation_parts(m).ok_or_else(|| format!("{m:?} has no Thrift1 Mutation"))?;
        let mut column = Vec::new();
        put_column(&mut column, family, qualifier);
        out.push(Mutation {
            is_delete: Some(value.is_none()),
            column: Some(column),
            value: value.map(<[u8]>::to_vec),
            write_to_w_a_l: None,
        });
    }
    Ok(BatchMutation::new(row.to_vec(), out))
}

/// Writes what [`batch_mutation`] builds, straight from the borrowed cells; `column` is
/// scratch space. The caller has left out what has no Thrift1 `Mutation`.
pub fn write_batch(
    o: &mut dyn TOutputProtocol,
    row: &[u8],
    mutations: &[StoreMutation],
    column: &mut Vec<u8>,
) -> thrift::Result<()> {
    let bytes_field = |o: &mut dyn TOutputProtocol, name: &str, id: i16, v: &[u8]| -> thrift::Result<()> {
        o.write_field_begin(&TFieldIdentifier::new(name, TType::String, id))?;
        o.write_bytes(v)?;
        o.write_field_end()
    };
    o.write_struct_begin(&TStructIdentifier::new("BatchMutation"))?;
    bytes_field(o, "row", 1, row)?;
    o.write_field_begin(&TFieldIdentifier::new("mutations", TType::List, 2))?;
    o.write_list_begin(&TListIdentifier::new(TType::Struct, mutations.len() as i32))?;
    for m in mutations {
        let (family, qualifier, value) = mutation_parts(m).ok_or_else(|| {
            thrift::Error::Protocol(thrift::ProtocolError::new(
                thrift::ProtocolErrorKind::InvalidData,
                format!("{m:?} has no Thrift1 Mutation"),
            ))
        })?;
        put_column(column, family, qualifier);
        o.write_struct_begin(&TStructIdentifier::new("Mutation"))?;
        o.write_field_begin(&TFieldIdentifier::new("isDelete", TType::Bool, 1))?;
        o.write_bool(value.is_none())?;
        o.write_field_end()?;
        bytes_field(o, "column", 2, column)?;
        if let Some(v) = value {
            bytes_field(o, "value", 3, v)?;
        }
        o.write_field_stop()?;
        o.write_struct_end()?;
    }
    o.write_list_end()?;
    o.write_field_end()?;
    o.write_field_stop()?;
    o.write_struct_end()
}

/// A `Mutation`'s fields as the server reads them (absent ones as their defaults, false and
/// empty), owned or borrowed from the request.
pub type MutationFields<C, V> = (bool, C, V);

/// A generated `Mutation`'s fields.
pub fn fields_of(m: Mutation) -> MutationFields<Vec<u8>, Vec<u8>> {
    (
        m.is_delete.unwrap_or(false),
        m.column.unwrap_or_default(),
        m.value.unwrap_or_default(),
    )
}

/// A row's Thrift mutations as the store's, as HBase's handler applies them: puts first,
/// then deletes; `timestamp` on every cell (`None`: the server's clock). `rows_call` for a
/// mutateRows(Ts) call, where HBase refuses a put that names only a family; mutateRow(Ts)
/// skips it.
pub fn row_mutation<C: AsRef<[u8]>, V: Into<Vec<u8>>>(
    row: Vec<u8>,
    mutations: impl IntoIterator<Item = MutationFields<C, V>>,
    timestamp: Option<i64>,
    rows_call: bool,
) -> Result<RowMutation, String> {
    if row.is_empty() {
        return Err("Row length is 0".into());
    }
    let mut puts = Vec::new();
    let mut deletes = Vec::new();
    for (is_delete, column, value) in mutations {
        let (family, qualifier) = parse_column(column.as_ref())?;
        if is_delete {
            deletes.push(match qualifier {
                Some(qualifier) => StoreMutation::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                },
                None => StoreMutation::DeleteFamily { family, timestamp },
            });
            continue;
        }
        // HBase logs and skips a put that names only a family in mutateRow(Ts).
        let Some(qualifier) = qualifier else {
            if rows_call {
                return Err("Invalid famAndQf provided.".into());
            }
            continue;
        };
        puts.push(StoreMutation::Put {
            family,
            qualifier,
            timestamp,
            value: value.into(),
        });
    }
    puts.extend(deletes);
    Ok(RowMutation::new(row, puts))
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

    /// Store mutations a Thrift1 batch carries: puts, column deletes and family deletes, each
    /// stamped `ts`, the puts first (as HBase applies a batch).
    fn batch() -> impl Strategy<Value = (Vec<u8>, Option<i64>, Vec<StoreMutation>)> {
        let bytes = || prop::collection::vec(any::<u8>(), 0..5);
        (
            prop::collection::vec(any::<u8>(), 1..6),
            prop::option::of(any::<i64>()),
            prop::collection::vec((family(), bytes(), bytes()), 0..6),
            prop::collection::vec((family(), prop::option::of(bytes())), 0..4),
        )
            .prop_map(|(row, ts, puts, deletes)| {
                let mut m: Vec<StoreMutation> = puts
                    .into_iter()
                    .map(|(family, qualifier, value)| StoreMutation::Put {
                        family,
                        qualifier,
                        timestamp: ts,
                        value,
                    })
                    .collect();
                m.extend(deletes.into_iter().map(|(family, qualifier)| match qualifier {
                    Some(qualifier) => StoreMutation::DeleteColumn {
                        family,
                        qualifier,
                        timestamp: ts,
                    },
                    None => StoreMutation::DeleteFamily { family, timestamp: ts },
                }));
                (row, ts, m)
            })
    }

    /// The bytes `write` puts out in the binary and the compact protocol.
    fn written(write: &dyn Fn(&mut dyn TOutputProtocol) -> thrift::Result<()>) -> [Vec<u8>; 2] {
        use thrift::protocol::{TBinaryOutputProtocol, TCompactOutputProtocol};
        let (mut binary, mut compact) = (Vec::new(), Vec::new());
        write(&mut TBinaryOutputProtocol::new(&mut binary, true)).unwrap();
        write(&mut TCompactOutputProtocol::new(&mut compact)).unwrap();
        [binary, compact]
    }

    proptest! {
        /// The hbase backend's writer puts out the generated code's bytes for the one
        /// conversion's `BatchMutation`, in both protocols.
        #[test]
        fn the_batch_writer_writes_the_generated_bytes((row, _ts, m) in batch()) {
            let generated = written(&|o| {
                thrift::protocol::TSerializable::write_to_out_protocol(&batch_mutation(&row, &m).unwrap(), o)
            });
            let fast = written(&|o| write_batch(o, &row, &m, &mut Vec::new()));
            prop_assert_eq!(fast, generated);
        }

        /// What the backend sends, the server reads back as the same row mutation.
        #[test]
        fn a_batch_round_trips((row, ts, m) in batch()) {
            let b = batch_mutation(&row, &m).unwrap();
            let fields = b.mutations.unwrap_or_default().into_iter().map(fields_of);
            let back = row_mutation(b.row.unwrap_or_default(), fields, ts, true).unwrap();
            prop_assert_eq!(back, RowMutation::new(row, m));
        }
    }

    #[test]
    fn what_thrift1_cannot_carry_is_refused_and_a_family_put_follows_the_call() {
        let version = StoreMutation::DeleteVersion {
            family: "f".into(),
            qualifier: b"q".to_vec(),
            timestamp: 1,
        };
        assert!(batch_mutation(b"r", std::slice::from_ref(&version)).is_err());
        assert!(
            write_batch(
                &mut thrift::protocol::TBinaryOutputProtocol::new(Vec::new(), true),
                b"r",
                &[version],
                &mut Vec::new()
            )
            .is_err()
        );
        assert_eq!(
            row_mutation(Vec::new(), Vec::<MutationFields<Vec<u8>, Vec<u8>>>::new(), None, false).unwrap_err(),
            "Row length is 0"
        );
        let family_put = || vec![(false, b"f".to_vec(), b"v".to_vec())];
        assert_eq!(
            row_mutation(b"r".to_vec(), family_put(), None, true).unwrap_err(),
            "Invalid famAndQf provided."
        );
        assert!(
            row_mutation(b"r".to_vec(), family_put(), None, false)
                .unwrap()
                .mutations
                .is_empty()
        );
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
