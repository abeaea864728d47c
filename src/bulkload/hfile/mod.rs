//! HBase's HFile v3, written: the files HBase's own bulk load (`completebulkload`,
//! `BulkLoadHFilesTool`) hands to its region servers whole.
//!
//! A file is what HBase's `StoreFileWriter` writes for a family of cells without tags, as a
//! region server's flush or compaction writes one: the family's codec, block encoding, bloom
//! filter and block size (HBase's defaults: none, none, ROW, 64 KiB), memstore timestamps
//! included and no tags, CRC32C checksums per 16 KiB. (HBase's MapReduce bulk load,
//! `HFileOutputFormat2`, always includes tags: a tags length of 0 a cell, up to 7% more bytes
//! on a table of small cells, until a compaction drops them.) Its parts, in file order:
//! data blocks, with leaf index and bloom chunk blocks written between them as they fill;
//! then the load-on-open section (intermediate index blocks, the root data index, an empty
//! meta index, file info, the bloom filter's meta) and the fixed 4 KiB trailer. The unit
//! tests hold the bytes to a file HBase itself wrote (`tests/fixtures/hfile/`).
//!
//! [`Writer`] takes one family's cells in HBase's order (row, qualifier, timestamp
//! descending) and writes them through a buffer; it holds a data block, one index chunk and
//! one bloom chunk at a time.

mod block;
mod bloom;
mod codec;
mod encode;
mod index;
mod proto;
#[cfg(test)]
mod read;
pub mod rows;
#[cfg(test)]
mod tests;
mod writer;

pub use writer::{Summary, Writer};

/// What a file is written with. [`Options::new`] gives HBase's defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// The family every cell of the file belongs to.
    pub family: Vec<u8>,
    /// Data block size: a block is closed once it holds this many bytes (the family's
    /// BLOCKSIZE, 64 KiB by default).
    pub block_size: usize,
    /// Largest index block (`hfile.index.block.max.size`, 128 KiB).
    pub index_chunk_size: usize,
    /// Fewest entries of an intermediate index block (`hfile.index.block.min.entries`, 16).
    pub index_min_entries: usize,
    /// Bloom chunk size (`io.storefile.bloom.block.size`, 128 KiB).
    pub bloom_chunk_size: usize,
    /// File info `hfile.CREATE_TIME_TS`, epoch milliseconds.
    pub create_time: i64,
    /// File info `BULKLOAD_TIMESTAMP`, epoch milliseconds.
    pub bulkload_time: i64,
    /// File info `BULKLOAD_SOURCE_TASK`: what wrote the file.
    pub task: String,
    /// The codec every block is compressed with (the family's `COMPRESSION`).
    pub compression: crate::store::storage::Compression,
    /// How data blocks are encoded (the family's `DATA_BLOCK_ENCODING`).
    pub encoding: crate::store::storage::Encoding,
    /// The bloom filter (the family's `BLOOMFILTER`).
    pub bloom: crate::store::storage::Bloom,
}

impl Options {
    /// HBase's defaults for `family`, stamped now.
    pub fn new(family: &[u8], task: &str) -> Options {
        let now = crate::store::now_millis();
        Options {
            family: family.to_vec(),
            block_size: 64 << 10,
            index_chunk_size: 128 << 10,
            index_min_entries: 16,
            bloom_chunk_size: 128 << 10,
            create_time: now,
            bulkload_time: now,
            task: task.to_string(),
            compression: crate::store::storage::Compression::None,
            encoding: crate::store::storage::Encoding::None,
            bloom: crate::store::storage::Bloom::Row,
        }
    }
}

/// `KeyValue.Type.Put`.
const PUT: u8 = 4;
/// `KeyValue.Type.Maximum`: the type of the synthetic keys an index holds, which sort before
/// every real cell of their row and column.
const MAXIMUM: u8 = 255;
/// `HConstants.LATEST_TIMESTAMP`.
const LATEST: i64 = i64::MAX;

/// Appends a cell's key as HBase serializes it (`KeyValue`'s key): row length (u16), row,
/// family length (u8), family, qualifier, timestamp (i64), type.
fn put_key(out: &mut Vec<u8>, row: &[u8], family: &[u8], qualifier: &[u8], ts: i64, kind: u8) {
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&ts.to_be_bytes());
    out.push(kind);
}

/// The length of a cell's serialized key.
fn key_len(row: &[u8], family: &[u8], qualifier: &[u8]) -> usize {
    2 + row.len() + 1 + family.len() + qualifier.len() + 8 + 1
}

/// Appends `v` as Hadoop's `WritableUtils.writeVLong` does.
fn put_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    // A negative value is written as its complement, flagged by the length byte.
    let (mut len, i) = if v < 0 { (-120i32, !v) } else { (-112i32, v) };
    let mut tmp = i;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as u8);
    let bytes = if len < -120 { -(len + 120) } else { -(len + 112) };
    for idx in (1..=bytes).rev() {
        out.push((i >> ((idx - 1) * 8)) as u8);
    }
}

/// The largest row key HBase takes (`Short.MAX_VALUE` bytes).
pub const MAX_ROW: usize = i16::MAX as usize;

#[cfg(test)]
mod vlong_tests {
    use super::put_vlong;

    #[test]
    fn vlongs_are_hadoops() {
        let enc = |v: i64| {
            let mut out = Vec::new();
            put_vlong(&mut out, v);
            out
        };
        // Values from Hadoop's WritableUtils.
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(-112), [0x90]);
        assert_eq!(enc(128), [0x8f, 0x80]);
        assert_eq!(enc(300), [0x8e, 0x01, 0x2c]);
        assert_eq!(enc(-113), [0x87, 0x70]);
        assert_eq!(enc(i64::MAX), [0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    }
}
