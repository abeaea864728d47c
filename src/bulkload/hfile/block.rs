//! Blocks as HBase frames them (`HFileBlock.Writer`): a 33-byte header, the payload, and one
//! big-endian CRC32C per 16 KiB of header and payload.
//!
//! Header: magic (8 bytes), on-disk size without header (payload and checksums, i32),
//! uncompressed size without header (i32), offset of the previous block of the same type
//! (i64, -1 for none), checksum type (2: CRC32C), bytes per checksum (i32), on-disk size of
//! header and payload (i32).

use crate::store::storage::Compression;
use std::io::Write;

/// Header length.
pub const HEADER: usize = 33;

/// `hbase.bytes.per.checksum`'s default.
pub const BYTES_PER_CHECKSUM: usize = 16 << 10;

/// `ChecksumType.CRC32C`.
const CRC32C: u8 = 2;

/// The block types a file of ours has, with their magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Cells.
    Data,
    /// Cells encoded with a data block encoding.
    EncodedData,
    /// A leaf of the multi-level data index, written between data blocks.
    LeafIndex,
    /// A chunk of the bloom filter, written between data blocks.
    BloomChunk,
    /// An index level between the leaves and the root.
    IntermediateIndex,
    /// A root index: of data blocks, and of meta blocks.
    RootIndex,
    /// File info.
    FileInfo,
    /// The bloom filter's parameters and chunk index.
    BloomMeta,
}

impl Kind {
    /// `BlockType`'s magic.
    pub fn magic(self) -> &'static [u8; 8] {
        match self {
            Kind::Data => b"DATABLK*",
            Kind::EncodedData => b"DATABLKE",
            Kind::LeafIndex => b"IDXLEAF2",
            Kind::BloomChunk => b"BLMFBLK2",
            Kind::IntermediateIndex => b"IDXINTE2",
            Kind::RootIndex => b"IDXROOT2",
            Kind::FileInfo => b"FILEINF2",
            Kind::BloomMeta => b"BLMFMET2",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// Where a block went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Its offset in the file.
    pub offset: u64,
    /// Header, payload and checksums.
    pub on_disk: u32,
    /// The payload's length.
    pub payload: u32,
}

/// The file being written: its position, the last offset of each block type, and the
/// uncompressed bytes the trailer reports.
pub struct Out<W: Write> {
    inner: W,
    pos: u64,
    prev: [i64; 8],
    /// Header and payload of every block counted so far, as `HFileWriterImpl` counts them.
    pub uncompressed: u64,
    checksums: Vec<u8>,
    codec: Compression,
    /// Header and compressed payload of the block being written.
    packed: Vec<u8>,
}

impl<W: Write> Out<W> {
    /// A file starting at offset 0 whose every block's payload is compressed with `codec`.
    pub fn new(inner: W, codec: Compression) -> Self {
        Out {
            inner,
            pos: 0,
            prev: [-1; 8],
            uncompressed: 0,
            checksums: Vec::new(),
            codec,
            packed: Vec::new(),
        }
    }

    /// The offset the next write lands at.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Writes raw bytes (the trailer).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Frames and writes one block. `block` holds [`HEADER`] bytes of room followed by the
    /// payload; the header is filled in place.
    /// Every block type is compressed with the file's codec, as HBase compresses them all;
    /// the checksums cover the header and the compressed payload.
    pub fn write_block(&mut self, kind: Kind, block: &mut [u8]) -> std::io::Result<Written> {
        let payload = block.len() - HEADER;
        let block: &mut [u8] = if self.codec == Compression::None {
            block
        } else {
            self.packed.clear();
            self.packed.extend_from_slice(&block[..HEADER]);
            super::codec::compress(self.codec, &block[HEADER..], &mut self.packed)?;
            &mut self.packed
        };
        let chunks = block.len().div_ceil(BYTES_PER_CHECKSUM);
        let on_disk = block.len() + 4 * chunks;
        let offset = self.pos;
        fill_header(block, kind, on_disk, payload, self.prev[kind.slot()]);
        self.checksums.clear();
        for chunk in block.chunks(BYTES_PER_CHECKSUM) {
            self.checksums.extend_from_slice(&crc32c::crc32c(chunk).to_be_bytes());
        }
        self.inner.write_all(block)?;
        self.inner.write_all(&self.checksums)?;
        self.pos += on_disk as u64;
        self.prev[kind.slot()] = offset as i64;
        Ok(Written {
            offset,
            on_disk: on_disk as u32,
            payload: payload as u32,
        })
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// `block` is the header and the payload as stored (compressed, where the file is).
fn fill_header(block: &mut [u8], kind: Kind, on_disk: usize, payload: usize, prev: i64) {
    let stored = block.len();
    let h = &mut block[..HEADER];
    h[..8].copy_from_slice(kind.magic());
    h[8..12].copy_from_slice(&((on_disk - HEADER) as i32).to_be_bytes());
    h[12..16].copy_from_slice(&(payload as i32).to_be_bytes());
    h[16..24].copy_from_slice(&prev.to_be_bytes());
    h[24] = CRC32C;
    h[25..29].copy_from_slice(&(BYTES_PER_CHECKSUM as i32).to_be_bytes());
    h[29..33].copy_from_slice(&(stored as i32).to_be_bytes());
}

/// A block's buffer: header room, then the payload written by the caller.
pub fn start(buf: &mut Vec<u8>) {
    buf.clear();
    buf.resize(HEADER, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_framed_with_its_sizes_the_previous_offset_and_a_checksum_per_chunk() {
        let mut out = Out::new(Vec::new(), Compression::None);
        let mut b = Vec::new();
        start(&mut b);
        b.extend_from_slice(b"hello");
        let w = out.write_block(Kind::Data, &mut b).unwrap();
        assert_eq!(
            w,
            Written {
                offset: 0,
                on_disk: 33 + 5 + 4,
                payload: 5
            }
        );
        start(&mut b);
        b.resize(HEADER + BYTES_PER_CHECKSUM, 7);
        let w2 = out.write_block(Kind::Data, &mut b).unwrap();
        // Header and payload are one byte past a chunk: two checksums.
        assert_eq!(w2.on_disk as usize, HEADER + BYTES_PER_CHECKSUM + 8);
        let bytes = out.finish().unwrap();
        let first = &bytes[..42];
        assert_eq!(&first[..8], b"DATABLK*");
        assert_eq!(&first[8..12], &9i32.to_be_bytes());
        assert_eq!(&first[12..16], &5i32.to_be_bytes());
        assert_eq!(&first[16..24], &(-1i64).to_be_bytes());
        assert_eq!(first[24], 2);
        assert_eq!(&first[25..29], &16384i32.to_be_bytes());
        assert_eq!(&first[29..33], &38i32.to_be_bytes());
        assert_eq!(&first[38..42], &crc32c::crc32c(&first[..38]).to_be_bytes());
        // The second names the first as the previous data block.
        assert_eq!(&bytes[42 + 16..42 + 24], &0i64.to_be_bytes());
        let end = bytes.len();
        let second = &bytes[42..];
        assert_eq!(
            &bytes[end - 8..end - 4],
            &crc32c::crc32c(&second[..BYTES_PER_CHECKSUM]).to_be_bytes()
        );
        assert_eq!(
            &bytes[end - 4..],
            &crc32c::crc32c(&second[BYTES_PER_CHECKSUM..HEADER + BYTES_PER_CHECKSUM]).to_be_bytes()
        );
    }
}
