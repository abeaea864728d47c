//! `[storage]`: the codec, data block encoding, bloom filter, block size and TTL every
//! created family gets, with per-table (`[storage.tables."weibo:inbox"]`) and per-family
//! (`[storage.tables."weibo:inbox".families.receive]`) overrides. A family takes its own
//! setting, else its table's, else the section's, else HBase's default.

use super::raw;
use crate::store::storage::{Bloom, Compression, Encoding, FOREVER, Storage};
use crate::store::{FamilyDescriptor, TableDescriptor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, (String, String)>;

/// Settings given at one level; `None` takes the level above.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `COMPRESSION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
    /// `DATA_BLOCK_ENCODING`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_block_encoding: Option<Encoding>,
    /// `BLOOMFILTER`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bloom_filter: Option<Bloom>,
    /// `BLOCKSIZE`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u32>,
    /// `TTL`, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u32>,
}

impl Settings {
    fn over(&self, below: Storage) -> Storage {
        Storage {
            compression: self.compression.unwrap_or(below.compression),
            data_block_encoding: self.data_block_encoding.unwrap_or(below.data_block_encoding),
            bloom_filter: self.bloom_filter.unwrap_or(below.bloom_filter),
            block_size: self.block_size.unwrap_or(below.block_size),
            ttl: self.ttl.unwrap_or(below.ttl),
        }
    }
}

/// One table's overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSettings {
    /// For every family of the table.
    #[serde(flatten)]
    pub settings: Settings,
    /// For one family, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub families: BTreeMap<String, Settings>,
}

/// The validated `[storage]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageSettings {
    /// What leads every table's name (after its namespace) on the target; empty: none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table_prefix: String,
    /// Copies of each region of every table created (`REGION_REPLICATION`); none: HBase's
    /// default, 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_replication: Option<u32>,
    /// For every family of every table.
    #[serde(flatten)]
    pub settings: Settings,
    /// Per table, by name as the schema spells it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tables: BTreeMap<String, TableSettings>,
}

impl StorageSettings {
    /// The settings of `family` of `table`.
    pub fn family(&self, table: &str, family: &str) -> Storage {
        let all = self.settings.over(Storage::default());
        let Some(t) = self.tables.get(table) else { return all };
        let whole = t.settings.over(all);
        t.families.get(family).map_or(whole, |f| f.over(whole))
    }

    /// `table` with each family's settings.
    pub fn apply(&self, mut table: TableDescriptor) -> TableDescriptor {
        for f in &mut table.families {
            f.storage = self.family(&table.name, &f.name);
        }
        table.region_replication = self.region_replication.unwrap_or(1);
        table
    }

    /// Every family's settings: what reports and digests show.
    pub fn resolved<'a>(&self, tables: impl IntoIterator<Item = &'a TableDescriptor>) -> Vec<(String, Storage)> {
        let mut out = Vec::new();
        for t in tables {
            for f in &t.families {
                out.push((format!("{}/{}", t.name, f.name), self.family(&t.name, &f.name)));
            }
        }
        out
    }
}

/// Most copies of a region a workload may ask for: a guard against a slip of the keyboard
/// (HBase keeps each copy on another server where it can).
const MAX_REPLICATION: u32 = 64;

fn bad<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T> {
    Err((field.into(), message.into()))
}

/// Checks the section against the tables the schemas create; `oldest_ms` is the oldest
/// timestamp the workload generates, which no TTL may have expired by `now_ms`.
pub(super) fn validate(
    s: Option<raw::Storage>,
    schema: &[TableDescriptor],
    oldest_ms: i64,
    now_ms: i64,
) -> Result<StorageSettings> {
    let Some(s) = s else {
        return Ok(StorageSettings::default());
    };
    let table_prefix = s.table_prefix.unwrap_or_default();
    crate::store::prefixed::check_prefix(&table_prefix).or_else(|e| bad("storage.table_prefix", e))?;
    let region_replication = match s.region_replication {
        None => None,
        Some(n) if (1..=i64::from(MAX_REPLICATION)).contains(&n) => Some(n as u32),
        Some(n) => {
            return bad(
                "storage.region_replication",
                format!("{n} copies of each region: from 1 (the primary alone, HBase's default) to {MAX_REPLICATION}"),
            );
        }
    };
    let check = Check { oldest_ms, now_ms };
    let settings = check.settings(
        "storage",
        raw::FamilyStorage {
            compression: s.compression,
            data_block_encoding: s.data_block_encoding,
            bloom_filter: s.bloom_filter,
            block_size: s.block_size,
            ttl: s.ttl,
        },
    )?;
    let mut tables = BTreeMap::new();
    for (name, t) in s.tables.unwrap_or_default() {
        let field = format!("storage.tables.{}", quoted(&name));
        let Some(desc) = schema.iter().find(|d| d.name == name) else {
            let names: Vec<&str> = schema.iter().map(|d| d.name.as_str()).collect();
            return bad(
                field,
                format!("no schema has a table {name:?} (one of {})", names.join(", ")),
            );
        };
        let table = check.settings(
            &field,
            raw::FamilyStorage {
                compression: t.compression,
                data_block_encoding: t.data_block_encoding,
                bloom_filter: t.bloom_filter,
                block_size: t.block_size,
                ttl: t.ttl,
            },
        )?;
        let mut families = BTreeMap::new();
        for (family, f) in t.families.unwrap_or_default() {
            let ffield = format!("{field}.families.{}", quoted(&family));
            if desc.family(&family).is_none() {
                let names: Vec<&str> = desc
                    .families
                    .iter()
                    .map(|f: &FamilyDescriptor| f.name.as_str())
                    .collect();
                return bad(
                    ffield,
                    format!("table {name} has no family {family:?} (it has {})", names.join(", ")),
                );
            }
            families.insert(family, check.settings(&ffield, f)?);
        }
        tables.insert(
            name,
            TableSettings {
                settings: table,
                families,
            },
        );
    }
    Ok(StorageSettings {
        table_prefix,
        region_replication,
        settings,
        tables,
    })
}

/// A key part as TOML writes it: bare when it can be.
fn quoted(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// A setting given by HBase's name (`SNAPPY`, `FAST_DIFF`, `ROWCOL`), any case.
fn named<T: std::str::FromStr<Err = String>>(field: &str, key: &str, v: Option<String>) -> Result<Option<T>> {
    v.map(|v| v.parse::<T>())
        .transpose()
        .or_else(|e| bad(format!("{field}.{key}"), e))
}

struct Check {
    oldest_ms: i64,
    now_ms: i64,
}

impl Check {
    fn settings(&self, field: &str, f: raw::FamilyStorage) -> Result<Settings> {
        let compression = named(field, "compression", f.compression)?;
        let data_block_encoding = named(field, "data_block_encoding", f.data_block_encoding)?;
        let bloom_filter = named(field, "bloom_filter", f.bloom_filter)?;
        if let Some(b) = f.block_size {
            let probe = Storage {
                block_size: b,
                ..Storage::default()
            };
            if let Err(e) = probe.validate() {
                return bad(format!("{field}.block_size"), e);
            }
        }
        let ttl = f.ttl.map(|v| self.ttl(&format!("{field}.ttl"), v)).transpose()?;
        Ok(Settings {
            compression,
            data_block_encoding,
            bloom_filter,
            block_size: f.block_size,
            ttl,
        })
    }

    /// Seconds, `"FOREVER"` or a duration (`"400d"`); one under which the oldest generated
    /// cell would already have expired is refused.
    fn ttl(&self, field: &str, v: toml::Value) -> Result<u32> {
        let secs = match &v {
            toml::Value::Integer(n) if *n > 0 => (*n).min(i64::from(FOREVER)) as u32,
            toml::Value::String(s) if s.trim().eq_ignore_ascii_case("FOREVER") => FOREVER,
            toml::Value::String(s) => match humantime::parse_duration(s.trim()) {
                Ok(d) if d.as_secs() > 0 => d.as_secs().min(u64::from(FOREVER)) as u32,
                _ => {
                    return bad(
                        field,
                        format!("{s:?} is not seconds, a duration such as \"400d\", or \"FOREVER\""),
                    );
                }
            },
            other => {
                let shown = match other {
                    toml::Value::Integer(n) => n.to_string(),
                    v => format!("a {}", v.type_str()),
                };
                return bad(
                    field,
                    format!("{shown} is not a positive number of seconds, a duration such as \"400d\", or \"FOREVER\""),
                );
            }
        };
        let s = Storage {
            ttl: secs,
            ..Storage::default()
        };
        if let Some(oldest) = s.oldest_unexpired(self.now_ms)
            && self.oldest_ms < oldest
        {
            let age_days = (self.now_ms - self.oldest_ms) as f64 / 86_400_000.0;
            return bad(
                field,
                format!(
                    "{secs} s would expire generated cells at once: the oldest is stamped {} ({age_days:.1} days ago); give at least {} s, or \"FOREVER\"",
                    crate::date::iso(self.oldest_ms),
                    (self.now_ms - self.oldest_ms) / 1000 + 1
                ),
            );
        }
        Ok(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Vec<TableDescriptor> {
        vec![
            TableDescriptor::new("weibo:inbox", &["receive"], 3),
            TableDescriptor::new("blog", &["d"], 1),
        ]
    }

    fn parse(text: &str) -> Result<StorageSettings> {
        let raw: raw::Storage = toml::from_str(text).expect("toml");
        let day = 86_400_000;
        validate(Some(raw), &schema(), 1000 * day, 1100 * day)
    }

    #[test]
    fn a_family_takes_its_own_then_its_tables_then_the_sections_then_hbases() {
        let s = parse(
            r#"
            compression = "snappy"
            data_block_encoding = "FAST_DIFF"
            [tables."weibo:inbox"]
            bloom_filter = "ROWCOL"
            compression = "ZSTD"
            [tables."weibo:inbox".families.receive]
            block_size = 16384
            ttl = "400d"
            "#,
        )
        .unwrap();
        let inbox = s.family("weibo:inbox", "receive");
        assert_eq!(inbox.compression, Compression::Zstd);
        assert_eq!(inbox.data_block_encoding, Encoding::FastDiff);
        assert_eq!(inbox.bloom_filter, Bloom::RowCol);
        assert_eq!(inbox.block_size, 16384);
        assert_eq!(inbox.ttl, 400 * 86_400);
        let blog = s.family("blog", "d");
        assert_eq!(
            blog,
            Storage {
                compression: Compression::Snappy,
                data_block_encoding: Encoding::FastDiff,
                ..Storage::default()
            }
        );
        let applied = s.apply(TableDescriptor::new("blog", &["d"], 1));
        assert_eq!(applied.families[0].storage, blog);
        assert_eq!(applied.region_replication, 1, "HBase's default");
    }

    #[test]
    fn region_replication_applies_to_every_table_and_is_checked() {
        let s = parse("region_replication = 2").unwrap();
        assert_eq!(s.region_replication, Some(2));
        let t = s.apply(TableDescriptor::new("weibo:inbox", &["receive"], 3));
        assert_eq!(t.region_replication, 2);
        assert_eq!(
            t.hbase_attributes(),
            [("REGION_REPLICATION".to_string(), "2".to_string())]
        );
        assert!(TableDescriptor::new("t", &["f"], 1).hbase_attributes().is_empty());
        for n in ["0", "-1", "65"] {
            let (field, why) = parse(&format!("region_replication = {n}")).unwrap_err();
            assert_eq!(field, "storage.region_replication");
            assert_eq!(
                why,
                format!("{n} copies of each region: from 1 (the primary alone, HBase's default) to 64")
            );
        }
    }

    #[test]
    fn bad_settings_name_the_field_and_the_valid_values() {
        let err = |t: &str| parse(t).unwrap_err();
        assert_eq!(
            err("compression = \"LZO\""),
            (
                "storage.compression".into(),
                "\"LZO\" is not a codec (one of NONE, GZ, SNAPPY, LZ4, ZSTD)".into()
            )
        );
        assert_eq!(
            err("[tables.blog]\ndata_block_encoding = \"PREFIX_TREE\"").0,
            "storage.tables.blog.data_block_encoding"
        );
        assert_eq!(
            err("[tables.\"weibo:inbox\".families.receive]\nbloom_filter = \"ROWPREFIX_FIXED_LENGTH\"").0,
            "storage.tables.\"weibo:inbox\".families.receive.bloom_filter"
        );
        assert_eq!(
            err("[tables.nope]\ncompression = \"GZ\""),
            (
                "storage.tables.nope".into(),
                "no schema has a table \"nope\" (one of weibo:inbox, blog)".into()
            )
        );
        assert_eq!(
            err("[tables.blog.families.x]\nttl = 5").1,
            "table blog has no family \"x\" (it has d)"
        );
        assert_eq!(
            err("block_size = 100").1,
            "BLOCKSIZE 100 is outside 1024..=16777216 bytes"
        );
        assert_eq!(
            err("ttl = \"30d\""),
            (
                "storage.ttl".into(),
                "2592000 s would expire generated cells at once: the oldest is stamped 1972-09-27T00:00:00.000Z (100.0 days ago); give at least 8640001 s, or \"FOREVER\"".into()
            )
        );
        assert_eq!(
            err("ttl = 0").1,
            "0 is not a positive number of seconds, a duration such as \"400d\", or \"FOREVER\""
        );
        assert_eq!(parse("ttl = \"forever\"").unwrap().settings.ttl, Some(FOREVER));
    }
}
