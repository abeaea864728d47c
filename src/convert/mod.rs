//! Conversions between the store's model (rows, cells, `family:qualifier` columns) and
//! HBase's Thrift structs, written once for the client backends and `tallrow serve`: what
//! one side writes, the other reads back (a round-trip property test holds them to it).

pub mod thrift1;
pub mod thrift2;

use crate::store::Column;

/// Columns as HBase's `Get`/`Scan` add them, in order: `addFamily` selects the whole family
/// (dropping its columns), and `addColumn` on a whole family narrows it to that column.
pub fn added_columns(added: impl IntoIterator<Item = (String, Option<Vec<u8>>)>) -> Vec<Column> {
    let mut families: Vec<(String, Option<Vec<Vec<u8>>>)> = Vec::new();
    for (family, qualifier) in added {
        let i = match families.iter().position(|(f, _)| *f == family) {
            Some(i) => i,
            None => {
                families.push((family, Some(Vec::new())));
                families.len() - 1
            }
        };
        let entry = &mut families[i].1;
        match qualifier {
            None => *entry = None,
            Some(q) => match entry {
                Some(qs) => qs.push(q),
                None => *entry = Some(vec![q]),
            },
        }
    }
    families
        .into_iter()
        .flat_map(|(family, qualifiers)| match qualifiers {
            None => vec![Column {
                family,
                qualifier: None,
            }],
            Some(qs) => qs
                .into_iter()
                .map(|q| Column {
                    family: family.clone(),
                    qualifier: Some(q),
                })
                .collect(),
        })
        .collect()
}
