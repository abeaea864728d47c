//! tallrow: a bulk-load and load-testing harness for HBase-style schemas that hold
//! time-ordered, per-user data.
//!
//! The layers, bottom up: [`keys`] (byte-exact row-key codecs), [`store`] (the `Store` trait,
//! its data model and backends), [`schema`] (one DAO per seed design); [`workload`] (the TOML
//! model), [`generate`] (deterministic synthetic data), [`load`], [`run`] and [`verify`]
//! over them; [`session`] runs the commands' work from the validated workload, and [`cli`]
//! parses arguments into it and prints the results. [`wire`] and [`secure`] carry the hbase
//! backend's and `serve`'s Thrift: framing, bounded readers, SASL, Kerberos and TLS roots.

/// `FromStr` and `Display` for an enum from the names [`clap::ValueEnum`] gives it: one
/// spelling for flags, URLs, workload files and reports. `$what` names it in errors:
/// `unknown transport "x": expected buffered or framed`.
macro_rules! named_values {
    ($t:ty, $what:literal) => {
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<Self, String> {
                <$t as clap::ValueEnum>::from_str(s, false).map_err(|_| {
                    let names: Vec<String> = <$t as clap::ValueEnum>::value_variants()
                        .iter()
                        .map(|v| v.to_string())
                        .collect();
                    format!("unknown {} {s:?}: expected {}", $what, names.join(" or "))
                })
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    clap::ValueEnum::to_possible_value(self)
                        .expect("every variant is named")
                        .get_name(),
                )
            }
        }
    };
}

pub mod bulkload;
pub mod cli;
pub mod clock;
pub mod convert;
pub mod date;
pub mod design;
pub mod generate;
pub mod idl;
pub mod keys;
pub mod load;
pub mod metrics;
pub mod observe;
pub mod regions;
pub mod report;
pub mod run;
pub mod schema;
pub mod secure;
pub mod serve;
pub mod session;
pub mod stats;
pub mod store;
#[doc(hidden)]
pub mod testkit;
pub mod tomlfile;
pub mod verify;
pub mod wire;
pub mod workload;
