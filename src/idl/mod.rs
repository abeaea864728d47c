//! Thrift code generated from HBase's own IDL files, those of the HBase release the tests run
//! (HBase 2.6.1): Thrift1 (`Hbase`, `src/idl/hbase1.thrift`) and Thrift2 (`THBaseService`,
//! `src/idl/hbase2.thrift`), by `scripts/gen_thrift.sh` with Thrift 0.17 to match the
//! `thrift` crate. Not edited by hand: the script's one edit bounds what a list reader
//! reserves before its elements arrive.

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
pub mod thrift1;

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
