//! Conversions between the store's model (rows, cells, `family:qualifier` columns) and
//! HBase's Thrift structs, written once for the client backends and `tallrow serve`: what
//! one side writes, the other reads back (a round-trip property test holds them to it).

pub mod thrift1;
