//! Thrift code generated from HBase's own IDL files. Thrift1 (`Hbase`) comes from the
//! `hbase-thrift` crate; Thrift2 (`THBaseService`) is generated here from the `hbase.thrift`
//! of the HBase release the tests run (`src/idl/hbase2.thrift`, HBase 2.6.1) by
//! `scripts/gen_thrift2.sh`, with Thrift 0.17 to match the `thrift` crate. Not edited by hand.

#[allow(
    missing_docs,
    unused,
    clippy::all,
    clippy::pedantic,
    non_camel_case_types,
    non_snake_case,
    unused_qualifications
)]
#[rustfmt::skip]
pub mod thrift2;
