//! The server-side filters a client sends, each as HBase's protobuf form of the Java filter
//! (`Filter{name: class, serialized_filter}`, as `ProtobufUtil.toFilter` writes it).

use crate::pb;
use bytes::Bytes;
use prost::Message;

const PACKAGE: &str = "org.apache.hadoop.hbase.filter.";

fn named(class: &str, serialized: Vec<u8>) -> pb::Filter {
    pb::Filter {
        name: format!("{PACKAGE}{class}"),
        serialized_filter: Some(Bytes::from(serialized)),
    }
}

/// `BinaryComparator(value)`.
pub fn binary(value: &[u8]) -> pb::Comparator {
    pb::Comparator {
        name: format!("{PACKAGE}BinaryComparator"),
        serialized_comparator: Some(Bytes::from(
            pb::BinaryComparator {
                comparable: pb::ByteArrayComparable {
                    value: Some(Bytes::copy_from_slice(value)),
                },
            }
            .encode_to_vec(),
        )),
    }
}

/// `QualifierFilter(op, BinaryComparator(qualifier))`: cells whose qualifier compares so.
/// Unlike `ColumnRangeFilter` it gives the server no seek hint, so a family's delete markers
/// are never skipped over.
pub fn qualifier(op: pb::CompareType, qualifier: &[u8]) -> pb::Filter {
    named(
        "QualifierFilter",
        pb::QualifierFilter {
            compare_filter: pb::CompareFilter {
                compare_op: op as i32,
                comparator: Some(binary(qualifier)),
            },
        }
        .encode_to_vec(),
    )
}

/// `PrefixFilter(prefix)`: rows whose key starts with `prefix`.
pub fn prefix(prefix: &[u8]) -> pb::Filter {
    named(
        "PrefixFilter",
        pb::PrefixFilter {
            prefix: Some(Bytes::copy_from_slice(prefix)),
        }
        .encode_to_vec(),
    )
}

/// Every filter of `filters` at once (`FilterList` of `MUST_PASS_ALL`); one filter alone as
/// itself, none as none.
pub fn all(mut filters: Vec<pb::Filter>) -> Option<pb::Filter> {
    match filters.len() {
        0 => None,
        1 => filters.pop(),
        _ => Some(named(
            "FilterList",
            pb::FilterList {
                operator: pb::filter_list::Operator::MustPassAll as i32,
                filters,
            }
            .encode_to_vec(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_carry_their_java_class_and_protobuf_form() {
        let f = qualifier(pb::CompareType::Greater, b"q1");
        assert_eq!(f.name, "org.apache.hadoop.hbase.filter.QualifierFilter");
        let q = pb::QualifierFilter::decode(f.serialized_filter.clone().unwrap()).unwrap();
        assert_eq!(q.compare_filter.compare_op, pb::CompareType::Greater as i32);
        let c = q.compare_filter.comparator.unwrap();
        assert_eq!(c.name, "org.apache.hadoop.hbase.filter.BinaryComparator");
        let b = pb::BinaryComparator::decode(c.serialized_comparator.unwrap()).unwrap();
        assert_eq!(b.comparable.value.as_deref(), Some(&b"q1"[..]));
        assert!(all(vec![]).is_none());
        assert_eq!(
            all(vec![prefix(b"p")]).unwrap().name,
            "org.apache.hadoop.hbase.filter.PrefixFilter"
        );
        let list = all(vec![prefix(b"p"), f]).unwrap();
        let l = pb::FilterList::decode(list.serialized_filter.unwrap()).unwrap();
        assert_eq!(l.filters.len(), 2);
        assert_eq!(l.operator, pb::filter_list::Operator::MustPassAll as i32);
    }
}
