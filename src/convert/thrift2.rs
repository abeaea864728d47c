//! The `THBaseService` (Thrift2) structs and the store's model, as HBase's Thrift2
//! `ThriftUtilities` converts them: puts with a timestamp per cell, deletes typed by what
//! they cover (`DELETE_COLUMNS` and `DELETE_FAMILY` at or below a timestamp, `DELETE_COLUMN`
//! and `DELETE_FAMILY_VERSION` at exactly one, a row delete without columns), gets with columns, versions and a time range, and results with every
//! cell.
//!
//! Errors are messages; each side words them into its own error type.

use super::added_columns;
use crate::idl::thrift2::{
    TBloomFilterType, TColumn, TColumnFamilyDescriptor, TColumnValue, TCompressionAlgorithm, TDataBlockEncoding,
    TDelete, TDeleteType, TGet, TPut, TResult, TTimeRange,
};
use crate::store::{Cell, Get, Mutation, Row, Selection};

fn family_name(family: Vec<u8>) -> Result<String, String> {
    let name = String::from_utf8(family)
        .map_err(|e| format!("column family {:?} is not UTF-8", String::from_utf8_lossy(e.as_bytes())))?;
    if name.is_empty() {
        return Err("column family is empty".into());
    }
    Ok(name)
}

/// A family with a name and `VERSIONS` alone, every other option left to the server.
pub fn family_descriptor(name: &[u8], max_versions: u32) -> TColumnFamilyDescriptor {
    let no = None::<bool>;
    TColumnFamilyDescriptor::new(
        name.to_vec(),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        max_versions.min(i32::MAX as u32) as i32,
        None,
        None,
        None,
        no,
        no,
        no,
        no,
        no,
        no,
        no,
    )
}

/// A family with its `VERSIONS` and storage settings, every other option left to the server.
pub fn family_with(name: &[u8], max_versions: u32, s: &crate::store::Storage) -> TColumnFamilyDescriptor {
    let mut d = family_descriptor(name, max_versions);
    d.compression_type = Some(TCompressionAlgorithm(s.compression.ordinal()));
    d.data_block_encoding = Some(TDataBlockEncoding(s.data_block_encoding.id().into()));
    d.bloomn_filter_type = Some(TBloomFilterType(s.bloom_filter.ordinal()));
    d.block_size = Some(s.block_size as i32);
    d.time_to_live = Some(s.ttl.min(crate::store::storage::FOREVER) as i32);
    d
}

/// The storage settings a family descriptor reports; a value tallrow does not model
/// (`LZO`, `ROWPREFIX_FIXED_LENGTH`) leaves HBase's default in its place.
pub fn storage_of(d: &TColumnFamilyDescriptor) -> crate::store::Storage {
    use crate::store::storage::{Bloom, Compression, Encoding, FOREVER};
    let mut s = crate::store::Storage::default();
    if let Some(c) = d.compression_type.and_then(|c| Compression::from_ordinal(c.0)) {
        s.compression = c;
    }
    if let Some(e) = d.data_block_encoding.and_then(|e| Encoding::from_id(e.0)) {
        s.data_block_encoding = e;
    }
    if let Some(b) = d.bloomn_filter_type.and_then(|b| Bloom::from_ordinal(b.0)) {
        s.bloom_filter = b;
    }
    if let Some(b) = d.block_size.filter(|b| *b > 0) {
        s.block_size = b as u32;
    }
    if let Some(t) = d.time_to_live {
        s.ttl = if t <= 0 { FOREVER } else { t as u32 };
    }
    s
}

/// A row's puts as one `TPut`, each cell with its own timestamp (none: the server's clock).
/// Mutations other than puts are left out.
pub fn tput<'a>(row: &[u8], puts: impl IntoIterator<Item = &'a Mutation>) -> TPut {
    let cells = puts
        .into_iter()
        .filter_map(|m| match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                value,
            } => Some(TColumnValue::new(
                family.as_bytes().to_vec(),
                qualifier.clone(),
                value.clone(),
                *timestamp,
                None,
                None,
            )),
            _ => None,
        })
        .collect();
    TPut::new(row.to_vec(), cells, None, None, None, None)
}

/// A `TPut` as its row and puts: a cell without a timestamp takes the put's, if it has one.
pub fn puts_of(p: TPut) -> Result<(Vec<u8>, Vec<Mutation>), String> {
    let puts = p
        .column_values
        .into_iter()
        .map(|c| {
            Ok(Mutation::Put {
                family: family_name(c.family)?,
                qualifier: c.qualifier,
                timestamp: c.timestamp.or(p.timestamp),
                value: c.value,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((p.row, puts))
}

/// A delete as a `TDelete`; `None` for a put.
pub fn tdelete(row: &[u8], m: &Mutation) -> Option<TDelete> {
    // One column (a family alone without a qualifier) of one delete type.
    let one = |family: &str, qualifier: Option<&Vec<u8>>, timestamp: Option<i64>, kind| {
        let column = TColumn::new(family.as_bytes().to_vec(), qualifier.cloned(), timestamp);
        (Some(vec![column]), Some(kind), None)
    };
    let (columns, kind, timestamp) = match m {
        Mutation::Put { .. } => return None,
        Mutation::DeleteColumn {
            family,
            qualifier,
            timestamp,
        } => one(family, Some(qualifier), *timestamp, TDeleteType::DELETE_COLUMNS),
        Mutation::DeleteVersion {
            family,
            qualifier,
            timestamp,
        } => one(family, Some(qualifier), Some(*timestamp), TDeleteType::DELETE_COLUMN),
        Mutation::DeleteFamily { family, timestamp } => one(family, None, *timestamp, TDeleteType::DELETE_FAMILY),
        Mutation::DeleteFamilyVersion { family, timestamp } => {
            one(family, None, Some(*timestamp), TDeleteType::DELETE_FAMILY_VERSION)
        }
        Mutation::DeleteRow { timestamp } => (None, None, *timestamp),
    };
    Some(TDelete::new(row.to_vec(), columns, timestamp, kind, None, None))
}

/// A `TDelete` as its row and deletes. HBase's default type is `DELETE_COLUMNS`. A
/// `DELETE_COLUMN` without a timestamp deletes the column's newest version: it comes out at
/// `LATEST_TIMESTAMP` (`i64::MAX`), which the server resolves as HBase's region server does;
/// `DELETE_FAMILY_VERSION` needs a timestamp, as in HBase's `deleteFromThrift`, and of a
/// family that `DELETE_FAMILY` names twice the last timestamp counts.
pub fn deletes_of(d: TDelete) -> Result<(Vec<u8>, Vec<Mutation>), String> {
    let Some(columns) = d.columns else {
        return Ok((d.row, vec![Mutation::DeleteRow { timestamp: d.timestamp }]));
    };
    let kind = d.delete_type.unwrap_or(TDeleteType::DELETE_COLUMNS);
    let deletes = columns
        .into_iter()
        .map(|c| {
            let family = family_name(c.family)?;
            match kind {
                TDeleteType::DELETE_COLUMNS => Ok(Mutation::DeleteColumn {
                    family,
                    qualifier: c.qualifier.unwrap_or_default(),
                    timestamp: c.timestamp,
                }),
                TDeleteType::DELETE_FAMILY => Ok(Mutation::DeleteFamily {
                    family,
                    timestamp: c.timestamp,
                }),
                TDeleteType::DELETE_COLUMN => Ok(Mutation::DeleteVersion {
                    family,
                    qualifier: c.qualifier.unwrap_or_default(),
                    timestamp: c.timestamp.unwrap_or(i64::MAX),
                }),
                TDeleteType::DELETE_FAMILY_VERSION => match c.timestamp {
                    Some(timestamp) => Ok(Mutation::DeleteFamilyVersion { family, timestamp }),
                    None => Err("Timestamp is required for TDelete with DeleteFamilyVersion type".into()),
                },
                other => Err(format!("unknown delete type {other:?}")),
            }
        })
        .collect::<Result<Vec<Mutation>, String>>()?;
    // HBase's `Delete.addFamily` clears what the delete held for the family: of a family
    // named twice, the last stays.
    let mut deletes = deletes;
    if kind == TDeleteType::DELETE_FAMILY {
        let mut seen = std::collections::HashSet::new();
        deletes.reverse();
        deletes.retain(|m| seen.insert(m.family().map(str::to_string)));
        deletes.reverse();
    }
    Ok((d.row, deletes))
}

/// A selection's columns as `TColumn`s: a whole family without a qualifier.
pub fn tcolumns(select: &Selection) -> Vec<TColumn> {
    select
        .columns
        .iter()
        .map(|c| TColumn::new(c.family.as_bytes().to_vec(), c.qualifier.clone(), None))
        .collect()
}

/// A get's row, columns, versions and time range as a `TGet`. (Qualifier cursors and cell
/// limits are the caller's: they become filters or limits.)
pub fn tget(g: &Get) -> TGet {
    let s = &g.select;
    let columns = (!s.columns.is_empty()).then(|| tcolumns(s));
    let time_range = s.time_range.map(|(min, max)| TTimeRange::new(min, max));
    TGet::new(
        g.row.clone(),
        columns,
        None,
        time_range,
        s.max_versions.min(i32::MAX as u32) as i32,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    )
}

/// A `TGet` as a get, as HBase builds one: a timestamp reads that one version time, else the
/// time range; versions default to one; columns follow `addFamily`/`addColumn`.
pub fn get_of(g: TGet) -> Result<Get, String> {
    let columns = g
        .columns
        .unwrap_or_default()
        .into_iter()
        .map(|c| Ok((family_name(c.family)?, c.qualifier)))
        .collect::<Result<Vec<_>, String>>()?;
    let time_range = match (g.timestamp, g.time_range) {
        (Some(ts), _) => Some((ts, ts.saturating_add(1))),
        (None, Some(r)) => Some((r.min_stamp, r.max_stamp)),
        (None, None) => None,
    };
    let max_versions = match g.max_versions {
        Some(v) if v > 0 => v as u32,
        Some(v) => return Err(format!("max versions must be positive, got {v}")),
        None => 1,
    };
    Ok(Get {
        row: g.row,
        select: Selection {
            columns: added_columns(columns),
            max_versions,
            time_range,
            ..Selection::default()
        },
    })
}

/// HBase's code for a put cell (`Cell.Type.Put`), which results carry for every cell.
const PUT_TYPE: i8 = 4;

/// A row as HBase's `resultFromHBase` writes it: every cell in order, typed, not stale,
/// the whole row.
pub fn tresult(row: Row) -> TResult {
    let cells = row
        .cells
        .into_iter()
        .map(|c| TColumnValue::new(c.family.into_bytes(), c.qualifier, c.value, c.timestamp, None, PUT_TYPE))
        .collect();
    TResult::new(row.key, cells, false, false)
}

/// A `TResult` as a row, its cells in the store's order (family, qualifier, newest first).
pub fn row_of(r: TResult) -> Result<Row, String> {
    let mut cells = r
        .column_values
        .into_iter()
        .map(|c| {
            Ok(Cell {
                family: family_name(c.family)?,
                qualifier: c.qualifier,
                timestamp: c.timestamp.unwrap_or(0),
                value: c.value,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    crate::store::sort_cells(&mut cells);
    Ok(Row {
        key: r.row.unwrap_or_default(),
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Column;
    use proptest::prelude::*;

    fn family() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9_.-]{0,3}"
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(any::<u8>(), 0..4)
    }

    fn delete() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (family(), bytes(), prop::option::of(0i64..9)).prop_map(|(family, qualifier, timestamp)| {
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                }
            }),
            (family(), prop::option::of(0i64..9))
                .prop_map(|(family, timestamp)| Mutation::DeleteFamily { family, timestamp }),
            prop::option::of(0i64..9).prop_map(|timestamp| Mutation::DeleteRow { timestamp }),
            (family(), bytes(), 0i64..9).prop_map(|(family, qualifier, timestamp)| Mutation::DeleteVersion {
                family,
                qualifier,
                timestamp,
            }),
            (family(), 0i64..9).prop_map(|(family, timestamp)| Mutation::DeleteFamilyVersion { family, timestamp }),
        ]
    }

    proptest! {
        #[test]
        fn puts_round_trip(
            row in bytes(),
            cells in prop::collection::vec((family(), bytes(), prop::option::of(0i64..9), bytes()), 0..8),
        ) {
            let puts: Vec<Mutation> = cells
                .into_iter()
                .map(|(family, qualifier, timestamp, value)| Mutation::Put { family, qualifier, timestamp, value })
                .collect();
            prop_assert_eq!(puts_of(tput(&row, &puts)).unwrap(), (row, puts));
        }

        #[test]
        fn deletes_round_trip(row in bytes(), d in delete()) {
            let t = tdelete(&row, &d).expect("a delete");
            prop_assert_eq!(deletes_of(t).unwrap(), (row, vec![d]));
        }

        #[test]
        fn results_round_trip(
            key in bytes(),
            raw in prop::collection::vec((family(), bytes(), 0i64..5, bytes()), 0..10),
        ) {
            let mut cells: Vec<Cell> = raw
                .into_iter()
                .map(|(family, qualifier, timestamp, value)| Cell { family, qualifier, timestamp, value })
                .collect();
            crate::store::sort_cells(&mut cells);
            cells.dedup_by(|a, b| (&a.family, &a.qualifier, a.timestamp) == (&b.family, &b.qualifier, b.timestamp));
            let row = Row { key, cells };
            prop_assert_eq!(row_of(tresult(row.clone())).unwrap(), row);
        }

        #[test]
        fn gets_round_trip(
            row in bytes(),
            families in prop::collection::btree_map(family(), prop::option::of(prop::collection::btree_set(bytes(), 1..3)), 0..3),
            max_versions in 1u32..5,
            time_range in prop::option::of((0i64..5, 5i64..10)),
        ) {
            // Columns as a selection holds them: a family whole, or some of its columns.
            let columns: Vec<Column> = families
                .into_iter()
                .flat_map(|(family, qualifiers)| match qualifiers {
                    None => vec![Column { family, qualifier: None }],
                    Some(qs) => qs.into_iter().map(|q| Column { family: family.clone(), qualifier: Some(q) }).collect(),
                })
                .collect();
            let get = Get {
                row,
                select: Selection { columns, max_versions, time_range, ..Selection::default() },
            };
            prop_assert_eq!(get_of(tget(&get)).unwrap(), get);
        }
    }

    #[test]
    fn hbase_defaults_and_refusals() {
        // No delete type is DELETE_COLUMNS; a timestamp reads one version time.
        let d = TDelete::new(
            b"r".to_vec(),
            vec![TColumn::new(b"f".to_vec(), b"q".to_vec(), 5)],
            None,
            None,
            None,
            None,
        );
        assert_eq!(
            deletes_of(d).unwrap().1,
            vec![Mutation::DeleteColumn {
                family: "f".into(),
                qualifier: b"q".to_vec(),
                timestamp: Some(5)
            }]
        );
        // DELETE_COLUMN without a timestamp names the newest version, as LATEST_TIMESTAMP;
        // DELETE_FAMILY_VERSION has no such form.
        let one = |kind| {
            TDelete::new(
                b"r".to_vec(),
                vec![TColumn::new(b"f".to_vec(), b"q".to_vec(), None)],
                None,
                kind,
                None,
                None,
            )
        };
        assert_eq!(
            deletes_of(one(TDeleteType::DELETE_COLUMN)).unwrap().1,
            vec![Mutation::delete_version("f", "q", i64::MAX)]
        );
        assert!(
            deletes_of(one(TDeleteType::DELETE_FAMILY_VERSION))
                .unwrap_err()
                .contains("Timestamp is required")
        );
        let twice = TDelete::new(
            b"r".to_vec(),
            vec![
                TColumn::new(b"f".to_vec(), None, 2),
                TColumn::new(b"g".to_vec(), None, None),
                TColumn::new(b"f".to_vec(), None, 1),
            ],
            None,
            TDeleteType::DELETE_FAMILY,
            None,
            None,
        );
        assert_eq!(
            deletes_of(twice).unwrap().1,
            vec![
                Mutation::DeleteFamily {
                    family: "g".into(),
                    timestamp: None
                },
                Mutation::DeleteFamily {
                    family: "f".into(),
                    timestamp: Some(1)
                },
            ]
        );
        let mut g = tget(&Get::new(b"r".to_vec()));
        g.timestamp = Some(7);
        assert_eq!(get_of(g).unwrap().select.time_range, Some((7, 8)));
        let p = TPut::new(
            b"r".to_vec(),
            vec![TColumnValue::new(
                b"f".to_vec(),
                b"q".to_vec(),
                b"v".to_vec(),
                None,
                None,
                None,
            )],
            9,
            None,
            None,
            None,
        );
        assert!(matches!(
            &puts_of(p).unwrap().1[0],
            Mutation::Put { timestamp: Some(9), .. }
        ));
        let bad = TPut::new(
            b"r".to_vec(),
            vec![TColumnValue::new(
                Vec::new(),
                b"q".to_vec(),
                b"v".to_vec(),
                None,
                None,
                None,
            )],
            None,
            None,
            None,
            None,
        );
        assert!(puts_of(bad).is_err());
    }
}
