//! Block indexes as `HFileBlockIndex.BlockIndexWriter` writes them. A data index entry is a
//! data block's first key (or a shorter key between it and the previous block's last),
//! offset and on-disk size. Entries gather in a leaf chunk, written as a leaf block between
//! data blocks once it reaches the chunk size; the root indexes the leaves (with their
//! cumulative entry counts, for the mid-key). A root too large gets intermediate levels. A
//! file whose entries never filled a leaf has a single-level index: the root holds them.
//!
//! Non-root format: entry count (i32), the offset of each entry within the entries and
//! their total length (i32 each), then per entry offset (i64), on-disk size (i32) and key.
//! Root format: per entry offset (i64), on-disk size (i32), key length (vint) and key.

use super::block::{self, Kind, Out, Written};
use super::put_vlong;
use std::io::Write;

/// Entries of one index block.
#[derive(Debug, Default)]
pub struct Chunk {
    keys: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    sizes: Vec<u32>,
    /// Per entry, the data blocks indexed up to and including it (root of a multi-level
    /// index only).
    cumulative: Vec<u64>,
    non_root_entries: usize,
    root: usize,
}

/// `HFileBlockIndex.SECONDARY_INDEX_ENTRY_OVERHEAD`: offset and size.
const ENTRY_OVERHEAD: usize = 12;

impl Chunk {
    fn add(&mut self, key: Vec<u8>, offset: u64, size: u32, cumulative: Option<u64>) {
        self.non_root_entries += ENTRY_OVERHEAD + key.len();
        self.root += 12 + vint_size(key.len()) + key.len();
        self.keys.push(key);
        self.offsets.push(offset);
        self.sizes.push(size);
        if let Some(c) = cumulative {
            self.cumulative.push(c);
        }
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    fn non_root_size(&self) -> usize {
        4 + 4 * (self.keys.len() + 1) + self.non_root_entries
    }

    fn write_non_root(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.keys.len() as i32).to_be_bytes());
        let mut at = 0usize;
        for k in &self.keys {
            out.extend_from_slice(&(at as i32).to_be_bytes());
            at += ENTRY_OVERHEAD + k.len();
        }
        out.extend_from_slice(&(at as i32).to_be_bytes());
        for i in 0..self.keys.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            out.extend_from_slice(&self.keys[i]);
        }
    }

    /// Appends the root format of the entries.
    pub fn write_root(&self, out: &mut Vec<u8>) {
        for i in 0..self.keys.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            put_vlong(out, self.keys[i].len() as i64);
            out.extend_from_slice(&self.keys[i]);
        }
    }

    /// Where the middle data block's entry is: the leaf's offset and size and the entry's
    /// position in it (`getMidKeyMetadata`).
    fn mid_key(&self) -> [u8; 16] {
        let total = *self.cumulative.last().expect("a multi-level root has entries");
        let mid = (total - 1) / 2;
        let entry = self.cumulative.partition_point(|&c| c <= mid);
        let before = if entry > 0 { self.cumulative[entry - 1] } else { 0 };
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.offsets[entry].to_be_bytes());
        out[8..12].copy_from_slice(&self.sizes[entry].to_be_bytes());
        out[12..].copy_from_slice(&((mid - before) as i32).to_be_bytes());
        out
    }
}

/// The bytes `WritableUtils.writeVInt` takes for `n`.
fn vint_size(n: usize) -> usize {
    if n <= 127 {
        1
    } else {
        1 + (64 - (n as u64).leading_zeros() as usize).div_ceil(8)
    }
}

/// The data block index of one file.
pub struct DataIndex {
    leaf: Chunk,
    root: Chunk,
    levels: u32,
    entries: u64,
    chunk_size: usize,
    min_entries: usize,
    uncompressed: u64,
    buf: Vec<u8>,
}

/// The written root of a data index.
pub struct Root {
    /// Where the root block is: the start of the load-on-open section.
    pub offset: u64,
    /// Levels, 1 for a single-level index.
    pub levels: u32,
    /// Entries of the root block.
    pub entries: u32,
    /// Payload bytes of every index block, the trailer's `uncompressed_data_index_size`.
    pub uncompressed: u64,
}

impl DataIndex {
    /// An empty index of `chunk_size` byte blocks, intermediate blocks of at least
    /// `min_entries` entries.
    pub fn new(chunk_size: usize, min_entries: usize) -> Self {
        DataIndex {
            leaf: Chunk::default(),
            root: Chunk::default(),
            levels: 1,
            entries: 0,
            chunk_size,
            min_entries,
            uncompressed: 0,
            buf: Vec::new(),
        }
    }

    /// Indexes a data block.
    pub fn add(&mut self, key: Vec<u8>, block: Written) {
        self.leaf.add(key, block.offset, block.on_disk, None);
        self.entries += 1;
    }

    /// Writes the leaf chunk as a leaf block when it is full, or when `closing` and the
    /// index already has leaves (`shouldWriteBlock` and `writeInlineBlock`).
    pub fn write_leaf<W: Write>(&mut self, out: &mut Out<W>, closing: bool) -> std::io::Result<()> {
        if self.leaf.len() == 0 {
            return Ok(());
        }
        let due = if closing {
            self.root.len() > 0
        } else {
            self.leaf.non_root_size() >= self.chunk_size
        };
        if !due {
            return Ok(());
        }
        block::start(&mut self.buf);
        self.leaf.write_non_root(&mut self.buf);
        let w = out.write_block(Kind::LeafIndex, &mut self.buf)?;
        out.uncompressed += (block::HEADER + w.payload as usize) as u64;
        self.uncompressed += w.payload as u64;
        let leaf = std::mem::take(&mut self.leaf);
        let first = leaf.keys.into_iter().next().expect("a leaf has entries");
        self.levels = 2;
        self.root.add(first, w.offset, w.on_disk, Some(self.entries));
        Ok(())
    }

    /// Writes the intermediate levels and the root (`writeIndexBlocks`), after a last
    /// `write_leaf(.., true)`.
    pub fn write_root<W: Write>(&mut self, out: &mut Out<W>) -> std::io::Result<Root> {
        let multi = self.root.len() > 0;
        if !multi {
            self.root = std::mem::take(&mut self.leaf);
        }
        let mid = multi.then(|| self.root.mid_key());
        if multi {
            while self.root.root > self.chunk_size && self.root.len() > self.min_entries && self.levels < 16 {
                self.root = self.write_intermediate(out)?;
                self.levels += 1;
            }
        }
        block::start(&mut self.buf);
        self.root.write_root(&mut self.buf);
        if let Some(mid) = mid {
            self.buf.extend_from_slice(&mid);
        }
        let w = out.write_block(Kind::RootIndex, &mut self.buf)?;
        self.uncompressed += w.payload as u64;
        Ok(Root {
            offset: w.offset,
            levels: self.levels,
            entries: self.root.len() as u32,
            uncompressed: self.uncompressed,
        })
    }

    fn write_intermediate<W: Write>(&mut self, out: &mut Out<W>) -> std::io::Result<Chunk> {
        let level = std::mem::take(&mut self.root);
        let mut parent = Chunk::default();
        let mut cur = Chunk::default();
        let n = level.len();
        for (i, ((key, offset), size)) in level.keys.into_iter().zip(level.offsets).zip(level.sizes).enumerate() {
            cur.add(key, offset, size, None);
            // HBase compares the position in the whole level, not in the block.
            if (i >= self.min_entries && cur.root >= self.chunk_size) || (i + 1 == n && cur.len() > 0) {
                block::start(&mut self.buf);
                cur.write_non_root(&mut self.buf);
                let w = out.write_block(Kind::IntermediateIndex, &mut self.buf)?;
                self.uncompressed += w.payload as u64;
                let done = std::mem::take(&mut cur);
                let first = done.keys.into_iter().next().expect("entries");
                parent.add(first, w.offset, w.on_disk, None);
            }
        }
        Ok(parent)
    }
}

impl Chunk {
    /// Adds an entry to a single-level index (the bloom chunks').
    pub fn push(&mut self, key: Vec<u8>, offset: u64, size: u32) {
        self.add(key, offset, size, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vint_sizes_are_hadoops() {
        assert_eq!(vint_size(0), 1);
        assert_eq!(vint_size(127), 1);
        assert_eq!(vint_size(128), 2);
        assert_eq!(vint_size(255), 2);
        assert_eq!(vint_size(256), 3);
        assert_eq!(vint_size(70_000), 4);
    }

    #[test]
    fn the_mid_key_is_the_middle_data_blocks_entry_in_its_leaf() {
        let mut root = Chunk::default();
        // Leaves of 3, 4 and 2 data blocks: 9 in all, the middle (index 4) is the second
        // leaf's entry 1.
        root.add(b"a".to_vec(), 100, 10, Some(3));
        root.add(b"b".to_vec(), 200, 20, Some(7));
        root.add(b"c".to_vec(), 300, 30, Some(9));
        let m = root.mid_key();
        assert_eq!(&m[..8], &200u64.to_be_bytes());
        assert_eq!(&m[8..12], &20u32.to_be_bytes());
        assert_eq!(&m[12..], &1i32.to_be_bytes());
        // On a leaf boundary (8 blocks, middle index 3): the second leaf's first entry.
        let mut root = Chunk::default();
        root.add(b"a".to_vec(), 100, 10, Some(3));
        root.add(b"b".to_vec(), 200, 20, Some(8));
        assert_eq!(&root.mid_key()[12..], &0i32.to_be_bytes());
    }
}
