//! `bulkload.json`: what one shard wrote into an `hfile:` directory (the workload and its
//! digests, the shard, and per table its families, split points and files), written by
//! `tallrow load` once every file is complete and read by `tallrow bulkload`. A directory
//! that several shards wrote holds one manifest per shard: `bulkload.json` for a load of the
//! whole, `bulkload-<i>-of-<N>.json` for shard i of N.

use super::fs::Dir;
use crate::load::Shard;
use crate::store::Storage;
use serde::{Deserialize, Serialize};

/// One shard's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `"hfile"`.
    pub kind: String,
    /// The tallrow that wrote it.
    pub tallrow: String,
    /// The workload's name.
    pub workload: String,
    /// The workload file.
    pub file: String,
    /// The digest of the workload's effective settings: shards of one data set share it.
    pub data_digest: String,
    /// The digest of every row mutation of this shard (shard digests add up, wrapping).
    pub rows_digest: String,
    /// The shard, `i/N`.
    pub shard: String,
    /// What leads each table's name (`storage.table_prefix`): the tables below are named as
    /// the cluster names them, and tallrow's scratch tables take it too.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table_prefix: String,
    /// When the files were complete (UTC).
    pub written: String,
    /// The tables, by name.
    pub tables: Vec<TableEntry>,
}

/// One table's part of a shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableEntry {
    /// `namespace:table` or `table`.
    pub name: String,
    /// Its families.
    pub families: Vec<FamilyEntry>,
    /// Where its regions begin (every region but the first), as hex.
    pub split_points: Vec<String>,
    /// Distinct rows this shard wrote.
    pub rows: u64,
    /// Cells this shard wrote.
    pub cells: u64,
    /// The cells' bytes as HBase serializes them (lengths, key, value), before encoding and
    /// compression.
    #[serde(default)]
    pub raw_bytes: u64,
    /// The files' bytes.
    #[serde(default)]
    pub file_bytes: u64,
    /// `raw_bytes / file_bytes`: what encoding and compression gained (0 with no files).
    #[serde(default)]
    pub ratio: f64,
    /// The files.
    pub files: Vec<FileEntry>,
    /// Copies of each region `bulkload` creates the table with (`storage.region_replication`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub region_replication: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A family as the files were written for it and as `bulkload` creates it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyEntry {
    /// Name.
    pub name: String,
    /// VERSIONS.
    pub versions: u32,
    /// BLOOMFILTER.
    pub bloom: String,
    /// BLOCKSIZE.
    pub block_size: u32,
    /// COMPRESSION.
    pub compression: String,
    /// DATA_BLOCK_ENCODING.
    pub encoding: String,
    /// TTL, seconds (`FOREVER` is 2147483647); absent in manifests written before it.
    #[serde(default = "forever")]
    pub ttl: u32,
}

fn forever() -> u32 {
    crate::store::storage::FOREVER
}

impl FamilyEntry {
    /// A family of `versions` versions whose files are written with `storage`.
    pub fn new(name: &str, versions: u32, storage: &Storage) -> Self {
        FamilyEntry {
            name: name.to_string(),
            versions,
            bloom: storage.bloom_filter.to_string(),
            block_size: storage.block_size,
            compression: storage.compression.to_string(),
            encoding: storage.data_block_encoding.to_string(),
            ttl: storage.ttl,
        }
    }

    /// The storage settings the files were written with; a name this tallrow does not know
    /// is an error naming it.
    pub fn storage(&self) -> Result<Storage, String> {
        let s = Storage {
            compression: self.compression.parse()?,
            data_block_encoding: self.encoding.parse()?,
            bloom_filter: self.bloom.parse()?,
            block_size: self.block_size,
            ttl: self.ttl,
        };
        s.validate()?;
        Ok(s)
    }
}

/// One HFile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the directory.
    pub path: String,
    /// Its family.
    pub family: String,
    /// Its region, 0 the first.
    pub region: usize,
    /// Cells.
    pub cells: u64,
    /// Distinct rows.
    pub rows: u64,
    /// First row, as HBase's `Bytes.toStringBinary` prints it.
    pub first_row: String,
    /// Last row.
    pub last_row: String,
    /// File length.
    pub bytes: u64,
    /// The cells' bytes before encoding and compression.
    #[serde(default)]
    pub raw_bytes: u64,
}

/// The name of `shard`'s manifest in its directory.
pub fn name(shard: Shard) -> String {
    if shard.count == 1 {
        "bulkload.json".into()
    } else {
        format!("bulkload-{}-of-{}.json", shard.index + 1, shard.count)
    }
}

/// Every manifest in `dir`, with where it is, sorted by file name.
pub fn read_all(dir: &Dir) -> Result<Vec<(String, Manifest)>, String> {
    let entries = dir.list("").map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for e in entries {
        if e.dir || !(e.name.starts_with("bulkload") && e.name.ends_with(".json")) {
            continue;
        }
        let at = dir.at(&e.name);
        let bytes = dir.read(&e.name).map_err(|e| e.to_string())?;
        let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| format!("{at}: {e}"))?;
        out.push((at, m));
    }
    Ok(out)
}

/// Writes `m` as `shard`'s manifest in `dir`, whole: written under a temporary name, then
/// renamed over the old. Returns where it is.
pub fn write(dir: &Dir, shard: Shard, m: &Manifest) -> std::io::Result<String> {
    let text = serde_json::to_string_pretty(m).map_err(std::io::Error::other)? + "\n";
    let rel = name(shard);
    dir.write_whole(&rel, text.as_bytes())?;
    Ok(dir.at(&rel))
}

/// The HFiles under `dir` (every file below a `<namespace>/<table>/<family>/` folder),
/// relative to it, `/`-separated.
pub fn hfiles_in(dir: &Dir) -> std::io::Result<Vec<String>> {
    files_in(dir, |name| !hidden(name))
}

/// The files a writer left under their temporary names (`_<name>.tmp`) below the
/// `<namespace>/<table>/<family>/` folders of `dir`: never complete, never read.
pub fn temporaries_in(dir: &Dir) -> std::io::Result<Vec<String>> {
    files_in(dir, |name| name.starts_with('_') && name.ends_with(".tmp"))
}

fn files_in(dir: &Dir, pick: impl Fn(&str) -> bool) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    let folders = |rel: &str| -> std::io::Result<Vec<String>> {
        Ok(dir
            .list(rel)?
            .into_iter()
            .filter(|e| e.dir && !hidden(&e.name))
            .map(|e| {
                if rel.is_empty() {
                    e.name
                } else {
                    format!("{rel}/{}", e.name)
                }
            })
            .collect())
    };
    for ns in folders("")? {
        for table in folders(&ns)? {
            for family in folders(&table)? {
                for f in dir.list(&family)? {
                    if !f.dir && pick(&f.name) {
                        out.push(format!("{family}/{}", f.name));
                    }
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Names starting `_` or `.`: the bulk-load tool skips them, and so do we.
fn hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}
