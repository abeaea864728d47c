//! One HFile of one family, written cell by cell as `StoreFileWriter` over `HFileWriterImpl`
//! writes it: the bloom filter sees a row before its cell is placed, a data block closes once
//! it holds the block size, and the index and bloom blocks that filled meanwhile follow it.

use super::block::{self, Kind, Out};
use super::bloom::Bloom;
use super::encode::Encoder;
use super::index::{Chunk, DataIndex};
use super::{LATEST, MAXIMUM, Options, PUT, key_len, proto, put_key};
use crate::store::storage::Bloom as BloomType;
use prost::Message;
use std::collections::BTreeMap;
use std::io::Write;

/// What a finished file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Cells.
    pub cells: u64,
    /// Distinct rows.
    pub rows: u64,
    /// The first and last row.
    pub first_row: Vec<u8>,
    /// The last row.
    pub last_row: Vec<u8>,
    /// File length.
    pub bytes: u64,
    /// The cells as HBase serializes a `KeyValue` (lengths, key, value): what the file
    /// holds before encoding and compression.
    pub raw: u64,
}

/// A cell's coordinates, kept between calls.
#[derive(Default, Clone)]
struct Key {
    row: Vec<u8>,
    qualifier: Vec<u8>,
    ts: i64,
}

impl Key {
    fn set(&mut self, row: &[u8], qualifier: &[u8], ts: i64) {
        self.row.clear();
        self.row.extend_from_slice(row);
        self.qualifier.clear();
        self.qualifier.extend_from_slice(qualifier);
        self.ts = ts;
    }
}

/// Writes one family's cells into an HFile.
pub struct Writer<W: Write> {
    out: Out<W>,
    opts: Options,
    /// The open data block (header room and cells); `None` between blocks.
    block: Option<Vec<u8>>,
    spare: Vec<u8>,
    first_in_block: Key,
    /// The last cell of the previous data block, once there is one.
    before_block: Option<Key>,
    last: Option<Key>,
    index: DataIndex,
    bloom: Bloom,
    /// The last ROWCOL bloom key.
    bloom_key: Vec<u8>,
    enc: Encoder,
    cells: u64,
    rows: u64,
    key_bytes: u64,
    value_bytes: u64,
    biggest: (u64, Vec<u8>),
    first_row: Vec<u8>,
    first_block: Option<u64>,
    last_block: u64,
    ts_range: (i64, i64),
}

/// A rejected cell.
fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, what)
}

impl<W: Write> Writer<W> {
    /// A writer into `out` (buffered by the caller).
    pub fn new(out: W, opts: Options) -> Self {
        Writer {
            out: Out::new(out, opts.compression),
            index: DataIndex::new(opts.index_chunk_size, opts.index_min_entries),
            bloom: Bloom::new(opts.bloom_chunk_size, opts.bloom == BloomType::RowCol),
            bloom_key: Vec::new(),
            enc: Encoder::new(opts.encoding),
            opts,
            block: None,
            spare: Vec::new(),
            first_in_block: Key::default(),
            before_block: None,
            last: None,
            cells: 0,
            rows: 0,
            key_bytes: 0,
            value_bytes: 0,
            biggest: (0, Vec::new()),
            first_row: Vec::new(),
            first_block: None,
            last_block: 0,
            ts_range: (i64::MAX, i64::MIN),
        }
    }

    /// Appends a put. Cells come in HBase's order: row, then qualifier (unsigned bytes), then
    /// timestamp descending; a cell not after the previous one is refused.
    pub fn append(&mut self, row: &[u8], qualifier: &[u8], ts: i64, value: &[u8]) -> std::io::Result<()> {
        if row.is_empty() || row.len() > super::MAX_ROW {
            return Err(invalid(format!(
                "a row key of {} bytes (1 to {} allowed)",
                row.len(),
                super::MAX_ROW
            )));
        }
        if ts < 0 {
            return Err(invalid(format!("timestamp {ts} is negative")));
        }
        let mut new_column = true;
        let new_row = match &self.last {
            None => true,
            Some(l) => {
                let order = l
                    .row
                    .as_slice()
                    .cmp(row)
                    .then_with(|| l.qualifier.as_slice().cmp(qualifier))
                    .then_with(|| ts.cmp(&l.ts));
                if order != std::cmp::Ordering::Less {
                    return Err(invalid(format!(
                        "cell {}/{}/{ts} does not sort after {}/{}/{}",
                        crate::keys::to_string_binary(row),
                        crate::keys::to_string_binary(qualifier),
                        crate::keys::to_string_binary(&l.row),
                        crate::keys::to_string_binary(&l.qualifier),
                        l.ts
                    )));
                }
                new_column = l.row != row || l.qualifier != qualifier;
                l.row != row
            }
        };
        match self.opts.bloom {
            BloomType::Row if new_row => self.bloom.add(row),
            BloomType::RowCol if new_column => {
                self.bloom_key.clear();
                put_key(&mut self.bloom_key, row, b"", qualifier, LATEST, MAXIMUM);
                self.bloom.add(&self.bloom_key);
            }
            _ => {}
        }
        if new_row {
            self.rows += 1;
            if self.cells == 0 {
                self.first_row = row.to_vec();
            }
        }
        if self.block.is_some() && self.enc.full(self.opts.block_size) {
            self.finish_block()?;
            self.write_inline(false)?;
        }
        let family = &self.opts.family;
        let block = match &mut self.block {
            Some(b) => b,
            None => {
                self.before_block = self.last.clone();
                self.first_in_block.set(row, qualifier, ts);
                let mut b = std::mem::take(&mut self.spare);
                block::start(&mut b);
                self.enc.start(&mut b);
                self.block.insert(b)
            }
        };
        let klen = key_len(row, family, qualifier);
        self.enc.append(block, row, family, qualifier, ts, value);

        self.cells += 1;
        self.key_bytes += klen as u64;
        self.value_bytes += value.len() as u64;
        // `KeyValue.getSerializedSize()` plus an int, as HBase measures a cell.
        let size = (12 + klen + value.len()) as u64;
        if size > self.biggest.0 {
            self.biggest.0 = size;
            self.biggest.1.clear();
            put_key(&mut self.biggest.1, row, family, qualifier, ts, PUT);
        }
        self.ts_range = (self.ts_range.0.min(ts), self.ts_range.1.max(ts));
        self.last.get_or_insert_with(Key::default).set(row, qualifier, ts);
        Ok(())
    }

    fn finish_block(&mut self) -> std::io::Result<()> {
        let Some(mut b) = self.block.take() else { return Ok(()) };
        self.enc.finish(&mut b);
        let kind = if self.enc.encodes() {
            Kind::EncodedData
        } else {
            Kind::Data
        };
        let w = self.out.write_block(kind, &mut b)?;
        self.spare = b;
        self.first_block.get_or_insert(w.offset);
        self.last_block = w.offset;
        self.out.uncompressed += (block::HEADER + w.payload as usize) as u64;
        let key = self.index_key();
        self.index.add(key, w);
        Ok(())
    }

    /// The index key of the block just written: a short key after the previous block's
    /// last cell and not after this block's first (`getMidpoint`).
    fn index_key(&self) -> Vec<u8> {
        let family = &self.opts.family;
        let right = &self.first_in_block;
        let mut key = Vec::new();
        let Some(left) = &self.before_block else {
            put_key(&mut key, &right.row, family, &right.qualifier, right.ts, PUT);
            return key;
        };
        if let Some(row) = midpoint(&left.row, &right.row) {
            put_key(&mut key, &row, b"", b"", LATEST, MAXIMUM);
        } else if let Some(q) = midpoint(&left.qualifier, &right.qualifier) {
            put_key(&mut key, &right.row, family, &q, LATEST, MAXIMUM);
        } else {
            put_key(&mut key, &right.row, family, &right.qualifier, right.ts, PUT);
        }
        key
    }

    fn write_inline(&mut self, closing: bool) -> std::io::Result<()> {
        self.index.write_leaf(&mut self.out, closing)?;
        self.bloom.write_chunks(&mut self.out, closing)
    }

    /// Writes the rest of the file and returns what it holds and the output.
    pub fn finish(mut self) -> std::io::Result<(Summary, W)> {
        if self.cells == 0 {
            return Err(invalid("an HFile needs at least one cell".into()));
        }
        self.finish_block()?;
        self.write_inline(true)?;
        let root = self.index.write_root(&mut self.out)?;
        // The meta index: a root block of no entries.
        let mut buf = Vec::new();
        block::start(&mut buf);
        Chunk::default().write_root(&mut buf);
        let w = self.out.write_block(Kind::RootIndex, &mut buf)?;
        self.out.uncompressed += (block::HEADER + w.payload as usize) as u64;

        let file_info_offset = self.out.pos();
        block::start(&mut buf);
        buf.extend_from_slice(b"PBUF");
        self.file_info().encode_length_delimited(&mut buf).expect("a Vec grows");
        let w = self.out.write_block(Kind::FileInfo, &mut buf)?;
        self.out.uncompressed += (block::HEADER + w.payload as usize) as u64;
        if !self.bloom.is_empty() {
            self.bloom.write_meta(&mut self.out)?;
        }

        let trailer = proto::Trailer {
            file_info_offset: Some(file_info_offset),
            load_on_open_data_offset: Some(root.offset),
            uncompressed_data_index_size: Some(root.uncompressed),
            total_uncompressed_bytes: Some(self.out.uncompressed + TRAILER as u64),
            data_index_count: Some(root.entries),
            meta_index_count: Some(0),
            entry_count: Some(self.cells),
            num_data_index_levels: Some(root.levels),
            first_data_block_offset: self.first_block,
            last_data_block_offset: Some(self.last_block),
            comparator_class_name: Some(COMPARATOR.to_string()),
            compression_codec: Some(self.opts.compression.ordinal() as u32),
        };
        let mut t = Vec::with_capacity(TRAILER);
        t.extend_from_slice(b"TRABLK\"$");
        trailer.encode_length_delimited(&mut t).expect("a Vec grows");
        t.resize(TRAILER - 4, 0);
        // Major version 3, minor version 3.
        t.extend_from_slice(&(3u32 | 3 << 24).to_be_bytes());
        self.out.write_raw(&t)?;
        let bytes = self.out.pos();
        let summary = Summary {
            cells: self.cells,
            rows: self.rows,
            first_row: std::mem::take(&mut self.first_row),
            last_row: self.last.take().map(|l| l.row).unwrap_or_default(),
            bytes,
            raw: self.key_bytes + self.value_bytes + 8 * self.cells,
        };
        Ok((summary, self.out.finish()?))
    }

    /// File info: what a bulk load's `StoreFileWriter` and `HFileWriterImpl` write for a file
    /// without tags (no `hfile.MAX_TAGS_LEN`, no `hfile.TAGS_COMPRESSED`), sorted by key.
    fn file_info(&self) -> proto::FileInfo {
        let last = self.last.as_ref().expect("a cell");
        let mut last_key = Vec::new();
        put_key(
            &mut last_key,
            &last.row,
            &self.opts.family,
            &last.qualifier,
            last.ts,
            PUT,
        );
        let mut range = Vec::with_capacity(16);
        range.extend_from_slice(&self.ts_range.0.to_be_bytes());
        range.extend_from_slice(&self.ts_range.1.to_be_bytes());
        let int = |v: i32| v.to_be_bytes().to_vec();
        let long = |v: i64| v.to_be_bytes().to_vec();
        let entries: BTreeMap<&[u8], Vec<u8>> = [
            (&b"BULKLOAD_SOURCE_TASK"[..], self.opts.task.as_bytes().to_vec()),
            (b"BULKLOAD_TIMESTAMP", long(self.opts.bulkload_time)),
            (b"DELETE_FAMILY_COUNT", long(0)),
            (b"EARLIEST_PUT_TS", long(self.ts_range.0)),
            (b"EXCLUDE_FROM_MINOR_COMPACTION", vec![0]),
            (b"HISTORICAL", vec![0]),
            (b"KEY_VALUE_VERSION", int(1)),
            // Java's Bytes.toBytes(true).
            (b"MAJOR_COMPACTION_KEY", vec![0xFF]),
            (b"MAX_MEMSTORE_TS_KEY", long(0)),
            (b"TIMERANGE", range),
            (b"hfile.AVG_KEY_LEN", int((self.key_bytes / self.cells) as i32)),
            (b"hfile.AVG_VALUE_LEN", int((self.value_bytes / self.cells) as i32)),
            (b"hfile.CREATE_TIME_TS", long(self.opts.create_time)),
            (b"hfile.KEY_OF_BIGGEST_CELL", self.biggest.1.clone()),
            (b"hfile.LASTKEY", last_key),
            (b"hfile.LEN_OF_BIGGEST_CELL", long(self.biggest.0 as i64)),
        ]
        .into_iter()
        .collect();
        let mut entries = entries;
        // A family without a bloom filter names none.
        match self.opts.bloom {
            BloomType::None => {}
            BloomType::Row => {
                entries.insert(b"BLOOM_FILTER_TYPE", b"ROW".to_vec());
                entries.insert(b"LAST_BLOOM_KEY", last.row.clone());
            }
            BloomType::RowCol => {
                entries.insert(b"BLOOM_FILTER_TYPE", b"ROWCOL".to_vec());
                entries.insert(b"LAST_BLOOM_KEY", self.bloom_key.clone());
            }
        }
        if self.opts.encoding != crate::store::storage::Encoding::None {
            entries.insert(b"DATA_BLOCK_ENCODING", self.opts.encoding.name().as_bytes().to_vec());
        }
        proto::FileInfo {
            map_entry: entries
                .into_iter()
                .map(|(k, v)| proto::Pair {
                    first: k.to_vec(),
                    second: v,
                })
                .collect(),
        }
    }
}

/// The trailer's length in version 3.
pub const TRAILER: usize = 4096;

/// The comparator a v3 file names, in HBase 1's spelling as 2.x writes it.
pub const COMPARATOR: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";

/// `getMinimumMidpointArray`: a short array after `left` and not after `right`; `None` when
/// they are equal.
fn midpoint(left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
    let min = left.len().min(right.len());
    let diff = left.iter().zip(right).position(|(a, b)| a != b).unwrap_or(min);
    if diff == min {
        return match left.len().cmp(&right.len()) {
            // Sorted input never has a left that sorts after right.
            std::cmp::Ordering::Greater | std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Less => {
                let mut m = right[..min + 1].to_vec();
                m[min] = 0;
                Some(m)
            }
        };
    }
    let mut m = left[..diff + 1].to_vec();
    m[diff] = m[diff].wrapping_add(1);
    Some(m)
}
