//! The workload file as written: serde structs that mirror the TOML, every field optional
//! where the validated form has a default. Unknown keys are rejected here.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::value::Datetime;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Workload {
    pub name: String,
    pub seed: u64,
    pub data: Data,
    pub keys: Option<Keys>,
    pub microblog: Option<Microblog>,
    pub load: Option<Load>,
    pub run: Option<Run>,
    pub storage: Option<Storage>,
    pub design: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Data {
    pub users: u64,
    pub start: Option<Datetime>,
    pub span_days: Option<u32>,
    pub follows: Option<Follows>,
    pub posts: Option<Posts>,
    pub actions: Option<Actions>,
    pub articles: Option<Articles>,
    pub series: Option<Series>,
    pub compressibility: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Follows {
    pub mean: Option<f64>,
    pub degree_sigma: Option<f64>,
    pub max_followees: Option<u32>,
    pub max_followers: Option<f64>,
    pub zipf_exponent: Option<f64>,
    pub community_share: Option<f64>,
    pub community_window: Option<u32>,
    pub uniform_share: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Posts {
    pub per_month: Option<f64>,
    pub min_chars: Option<u32>,
    pub max_chars: Option<u32>,
    pub long_share: Option<f64>,
    pub long_max_chars: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Actions {
    pub per_user: Option<f64>,
    pub latest: Option<f64>,
    pub delay_hours: Option<f64>,
    pub verbs: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Articles {
    pub per_user: Option<f64>,
    pub categories: Option<u32>,
    pub category_zipf: Option<f64>,
    pub size_median: Option<u32>,
    pub size_sigma: Option<f64>,
    pub update_share: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Series {
    pub per_user: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Keys {
    pub actions: Option<Variant>,
    pub weibo: Option<Variant>,
    pub blog: Option<Variant>,
    pub series: Option<Variant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Variant {
    pub order: Option<String>,
    pub salt: Option<Salt>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Salt {
    Name(String),
    Buckets(i64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Microblog {
    pub inbox_versions: Option<u32>,
    pub celebrity_threshold: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Load {
    pub batch: Option<u32>,
    pub threads: Option<u32>,
    pub regions: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Run {
    pub threads: Option<u32>,
    pub duration: Option<String>,
    pub ops: Option<u64>,
    pub rate: Option<f64>,
    pub arrival: Option<String>,
    pub warmup: Option<String>,
    pub skew: Option<String>,
    pub skew_exponent: Option<f64>,
    pub mix: Option<BTreeMap<String, f64>>,
    pub stages: Option<Vec<Stage>>,
    pub consistency: Option<String>,
    pub primary_timeout: Option<String>,
    pub scan_primary_timeout: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Stage {
    pub duration: Option<String>,
    pub rate: Option<f64>,
    pub threads: Option<u32>,
    pub ramp: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Storage {
    pub table_prefix: Option<String>,
    pub region_replication: Option<i64>,
    pub compression: Option<String>,
    pub data_block_encoding: Option<String>,
    pub bloom_filter: Option<String>,
    pub block_size: Option<u32>,
    pub ttl: Option<toml::Value>,
    pub tables: Option<BTreeMap<String, TableStorage>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TableStorage {
    pub compression: Option<String>,
    pub data_block_encoding: Option<String>,
    pub bloom_filter: Option<String>,
    pub block_size: Option<u32>,
    pub ttl: Option<toml::Value>,
    pub families: Option<BTreeMap<String, FamilyStorage>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FamilyStorage {
    pub compression: Option<String>,
    pub data_block_encoding: Option<String>,
    pub bloom_filter: Option<String>,
    pub block_size: Option<u32>,
    pub ttl: Option<toml::Value>,
}
