//! The HBase Thrift1-compatible server over the embedded store (`tallrow serve`). So far it
//! holds the filter language that scans carry; the server follows.

pub mod eval;
pub mod filter;
