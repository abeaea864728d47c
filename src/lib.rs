//! tallrow: a bulk-load and load-testing harness for HBase-style schemas that hold
//! time-ordered, per-user data.
//!
//! The layers, bottom up: [`keys`] (byte-exact row-key codecs), [`store`] (the `Store` trait,
//! its data model and backends), [`schema`] (one DAO per seed design); [`workload`] (the TOML
//! model), [`generate`] (deterministic synthetic data), [`load`] and [`verify`] over them;
//! [`cli`] on top.

pub mod bulkload;
pub mod cli;
pub mod convert;
pub mod date;
pub mod generate;
pub mod hfile;
pub mod idl;
pub mod keys;
pub mod load;
pub mod metrics;
pub mod regions;
pub mod report;
pub mod run;
pub mod schema;
pub mod serve;
pub mod session;
pub mod stats;
pub mod store;
pub mod verify;
pub mod wire;
pub mod workload;
