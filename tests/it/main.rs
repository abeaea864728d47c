//! The integration suite: one binary, one module per area.

mod bad_values;
mod bigtable;
mod common;
mod contract;
mod dao;
mod differential;
mod differential2;
mod docs;
mod hbase;
mod hfile;
mod keys_cli;
mod keys_compare;
mod kill;
mod kube;
mod load;
mod load_cli;
mod metrics;
mod model;
mod modules;
mod regions;
mod run;
mod run_cli;
mod secure;
mod serve;
mod store_batches;
mod thrift2;
