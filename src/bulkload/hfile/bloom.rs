//! A family's bloom filter as `CompoundBloomFilterWriter` writes it: chunks of a fixed size,
//! each filled with `max_keys` keys and written as a block between data blocks; the last
//! chunk is folded down to the keys it holds; the meta block in the load-on-open section holds
//! the parameters and an index of the chunks. A ROW filter's keys are rows; a ROWCOL
//! filter's are each column's first-on-row-column key (row, empty family, qualifier, the
//! latest timestamp, type Maximum), with a lower error rate per key, as HBase halves it.
//!
//! A key sets `hash_count` bits: `abs((h1 + i * h2) % bits)` with `h1 = murmur(key, 0)` and
//! `h2 = murmur(key, h1)`, HBase's `MurmurHash` (MurmurHash2, 32-bit) in 32-bit arithmetic.

use super::block::{self, Kind, Out};
use super::index::Chunk as Entries;
use std::io::Write;

/// `io.storefile.bloom.error.rate`'s default, a Java float.
const ERROR_RATE: f32 = 0.01;
/// `io.storefile.bloom.max.fold`'s default.
const MAX_FOLD: u32 = 7;
/// `Hash.MURMUR_HASH`.
const MURMUR: i32 = 1;
/// `CompoundBloomFilterBase.VERSION`.
const VERSION: i32 = 3;

/// HBase's `MurmurHash.hash`: MurmurHash2, the tail bytes sign-extended as Java's are.
pub fn murmur(data: &[u8], seed: i32) -> i32 {
    const M: i32 = 0x5bd1_e995;
    let mut h = seed ^ data.len() as i32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= ((k as u32) >> 24) as i32;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let b = |i: usize| tail[i] as i8 as i32;
        if tail.len() >= 3 {
            h ^= b(2) << 16;
        }
        if tail.len() >= 2 {
            h ^= b(1) << 8;
        }
        h ^= b(0);
        h = h.wrapping_mul(M);
    }
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(M);
    h ^= ((h as u32) >> 15) as i32;
    h
}

/// `BloomFilterUtil.computeFoldableByteSize`: bytes for `bits`, rounded up to a multiple of
/// 2^fold.
fn foldable_bytes(bits: u64, fold: u32) -> u64 {
    let mut bytes = bits.div_ceil(8);
    let mask = (1u64 << fold) - 1;
    if bytes & mask != 0 {
        bytes = ((bytes >> fold) + 1) << fold;
    }
    bytes
}

const LN2: f64 = std::f64::consts::LN_2;

/// The error rate of a filter: `BloomFilterFactory.createGeneralBloomAtWrite` gives ROWCOL
/// `1 - sqrt(1 - rate)`, in Java's float and double arithmetic.
fn error_rate(rowcol: bool) -> f64 {
    if rowcol {
        (1.0 - f64::from(1.0f32 - ERROR_RATE).sqrt()) as f32 as f64
    } else {
        ERROR_RATE as f64
    }
}

/// `CellComparatorImpl`'s name, which a ROWCOL filter's meta block names.
const ROWCOL_COMPARATOR: &[u8] = b"org.apache.hadoop.hbase.CellComparatorImpl";

/// The size, hash count and capacity of a chunk of `hint` bytes (`BloomFilterUtil.createBySize`).
fn chunk_shape(hint: usize, err: f64) -> (u64, i32, u32) {
    let log2_squared = LN2 * LN2;
    let bytes = foldable_bytes(foldable_bytes(hint as u64 * 8, MAX_FOLD) * 8, MAX_FOLD);
    let bits = bytes * 8;
    let ideal = (bits as f64 * (log2_squared / -err.ln())) as i64 as i32;
    let hash_count = (LN2 * (bits as i64 / ideal as i64) as f64).ceil() as i32;
    let max_keys = (-(bits as f64) / hash_count as f64 * (1.0 - (err.ln() / hash_count as f64).exp()).ln()) as i64;
    (bytes, hash_count, max_keys as u32)
}

struct Chunk {
    bits: Vec<u8>,
    keys: u32,
    max_keys: u32,
    first: Vec<u8>,
}

impl Chunk {
    /// Folds the filled chunk in halves while it stays at most half full (`compactBloom`).
    fn compact(&mut self) {
        if self.keys == 0 {
            return;
        }
        let mut pieces = 1usize;
        let mut size = self.bits.len();
        let mut max = self.max_keys;
        while size & 1 == 0 && max > self.keys << 1 {
            pieces <<= 1;
            size >>= 1;
            max >>= 1;
        }
        for p in 1..pieces {
            for i in 0..size {
                self.bits[i] |= self.bits[p * size + i];
            }
        }
        self.bits.truncate(size);
        self.max_keys = max;
    }
}

/// A file's ROW or ROWCOL bloom filter.
pub struct Bloom {
    rowcol: bool,
    bytes: u64,
    hash_count: i32,
    max_keys: u32,
    chunk: Option<Chunk>,
    /// Filled chunks waiting for the next block boundary.
    ready: Vec<Chunk>,
    /// Chunks (and bits, keys, capacity) so far.
    chunks: i32,
    total_bytes: u64,
    total_keys: u64,
    total_max_keys: u64,
    index: Entries,
    buf: Vec<u8>,
}

impl Bloom {
    /// A filter of `chunk_size` byte chunks, of columns with `rowcol`, else of rows.
    pub fn new(chunk_size: usize, rowcol: bool) -> Bloom {
        let (bytes, hash_count, max_keys) = chunk_shape(chunk_size, error_rate(rowcol));
        Bloom {
            rowcol,
            bytes,
            hash_count,
            max_keys,
            chunk: None,
            ready: Vec::new(),
            chunks: 0,
            total_bytes: 0,
            total_keys: 0,
            total_max_keys: 0,
            index: Entries::default(),
            buf: Vec::new(),
        }
    }

    /// Moves the current chunk to the ready ones when it is full, or when `closing`.
    fn enqueue(&mut self, closing: bool) {
        let Some(c) = &self.chunk else { return };
        if c.keys < c.max_keys && !closing {
            return;
        }
        let mut c = self.chunk.take().expect("a chunk");
        c.compact();
        self.total_max_keys += c.max_keys as u64;
        self.total_bytes += c.bits.len() as u64;
        self.ready.push(c);
    }

    /// Adds a key (each once, in order): a row, or a column's first-on-row-column key.
    pub fn add(&mut self, row: &[u8]) {
        self.enqueue(false);
        let chunk = self.chunk.get_or_insert_with(|| {
            self.chunks += 1;
            Chunk {
                bits: vec![0; self.bytes as usize],
                keys: 0,
                max_keys: self.max_keys,
                first: row.to_vec(),
            }
        });
        let h1 = murmur(row, 0);
        let h2 = murmur(row, h1);
        let bits = chunk.bits.len() as i64 * 8;
        for i in 0..self.hash_count {
            let at = (h1.wrapping_add(i.wrapping_mul(h2)) as i64 % bits).unsigned_abs() as usize;
            chunk.bits[at / 8] |= 1 << (at % 8);
        }
        chunk.keys += 1;
        self.total_keys += 1;
    }

    /// Writes the ready chunks as blocks, and at `closing` the last one too.
    pub fn write_chunks<W: Write>(&mut self, out: &mut Out<W>, closing: bool) -> std::io::Result<()> {
        self.enqueue(closing);
        for c in std::mem::take(&mut self.ready) {
            block::start(&mut self.buf);
            self.buf.extend_from_slice(&c.bits);
            let w = out.write_block(Kind::BloomChunk, &mut self.buf)?;
            out.uncompressed += (block::HEADER + w.payload as usize) as u64;
            self.index.push(c.first, w.offset, w.on_disk);
        }
        Ok(())
    }

    /// Whether any row was added.
    pub fn is_empty(&self) -> bool {
        self.total_keys == 0
    }

    /// Writes the meta block (after every chunk).
    pub fn write_meta<W: Write>(&mut self, out: &mut Out<W>) -> std::io::Result<()> {
        block::start(&mut self.buf);
        let b = &mut self.buf;
        b.extend_from_slice(&VERSION.to_be_bytes());
        b.extend_from_slice(&self.total_bytes.to_be_bytes());
        b.extend_from_slice(&self.hash_count.to_be_bytes());
        b.extend_from_slice(&MURMUR.to_be_bytes());
        b.extend_from_slice(&self.total_keys.to_be_bytes());
        b.extend_from_slice(&self.total_max_keys.to_be_bytes());
        b.extend_from_slice(&self.chunks.to_be_bytes());
        // A ROW filter has no comparator: a null byte array, length 0.
        if self.rowcol {
            b.push(ROWCOL_COMPARATOR.len() as u8);
            b.extend_from_slice(ROWCOL_COMPARATOR);
        } else {
            b.push(0);
        }
        self.index.write_root(b);
        let w = out.write_block(Kind::BloomMeta, &mut self.buf)?;
        out.uncompressed += (block::HEADER + w.payload as usize) as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur_is_hbases() {
        // h1 = MurmurHash.getInstance().hash(new ByteArrayHashKey(k, 0, k.length), 0) and
        // h2 = the same with seed h1, printed by HBase 2.6.1: every tail length, and tail
        // bytes above 0x7F (which Java sign-extends).
        let cases: [(&[u8], i32, i32); 6] = [
            (b"", 0, 0),
            (b"a", -1838653602, 1529584742),
            (b"abcd", 646393889, -524664927),
            (b"abcde", 1594468574, 402883894),
            (&[0x80, 0xff, 1], 1132868466, 1760131270),
            (b"hello world!", 1685739664, -1807206323),
        ];
        for (key, h1, h2) in cases {
            assert_eq!(murmur(key, 0), h1, "{key:?}");
            assert_eq!(murmur(key, h1), h2, "{key:?}");
        }
    }

    #[test]
    fn chunks_have_hbases_shape() {
        // 128 KiB: BloomFilterUtil.createBySize(131072, 0.01f, 1, 7, ROW).
        let row = error_rate(false);
        assert_eq!(chunk_shape(128 << 10, row), (131072, 7, 109_306));
        // ROWCOL: createBySize(131072, 0.0050125583f, 1, 7, ROWCOL).
        assert_eq!(error_rate(true) as f32, 0.005_012_558_3_f32);
        assert_eq!(chunk_shape(128 << 10, error_rate(true)), (131072, 8, 95_069));
        // The fixture's 64 bytes round up to 128 (a multiple of 2^7).
        assert_eq!(chunk_shape(64, row).0, 128);
    }
}
