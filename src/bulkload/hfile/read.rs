//! Reads an HFile's parts back, for the format tests: its blocks in file order, the cells of
//! its data blocks, its file info and trailer.

use super::block::HEADER;
use super::proto;
use super::writer::TRAILER;
use prost::Message;

/// One block as it lies in the file.
#[derive(Debug, Clone)]
pub struct Block {
    pub offset: u64,
    pub magic: [u8; 8],
    pub on_disk_without_header: i32,
    pub uncompressed_without_header: i32,
    pub prev: i64,
    pub checksum_type: u8,
    pub bytes_per_checksum: i32,
    pub on_disk_data_with_header: i32,
    /// Header and payload.
    pub framed: Vec<u8>,
    pub payload: Vec<u8>,
    pub checksums: Vec<u8>,
}

fn be32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b[..4].try_into().unwrap())
}

fn be64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b[..8].try_into().unwrap())
}

/// Every block before the trailer.
pub fn blocks(file: &[u8]) -> Vec<Block> {
    blocks_with(file, crate::store::storage::Compression::None)
}

/// Every block before the trailer, payloads decompressed with `codec`.
pub fn blocks_with(file: &[u8], codec: crate::store::storage::Compression) -> Vec<Block> {
    let end = file.len() - TRAILER;
    let mut at = 0usize;
    let mut out = Vec::new();
    while at < end {
        let h = &file[at..at + HEADER];
        let on_disk = be32(&h[8..]);
        let data = be32(&h[29..]) as usize;
        let framed = file[at..at + data].to_vec();
        out.push(Block {
            offset: at as u64,
            magic: h[..8].try_into().unwrap(),
            on_disk_without_header: on_disk,
            uncompressed_without_header: be32(&h[12..]),
            prev: be64(&h[16..]),
            checksum_type: h[24],
            bytes_per_checksum: be32(&h[25..]),
            on_disk_data_with_header: data as i32,
            payload: super::codec::decompress(codec, &framed[HEADER..], be32(&h[12..]) as usize).unwrap(),
            framed,
            checksums: file[at + data..at + HEADER + on_disk as usize].to_vec(),
        });
        at += HEADER + on_disk as usize;
    }
    assert_eq!(at, end, "the blocks end where the trailer begins");
    out
}

/// The trailer's fields and version.
pub fn trailer(file: &[u8]) -> (proto::Trailer, u32) {
    let t = &file[file.len() - TRAILER..];
    assert_eq!(&t[..8], b"TRABLK\"$");
    let msg = proto::Trailer::decode_length_delimited(&t[8..]).unwrap();
    let version = u32::from_be_bytes(t[TRAILER - 4..].try_into().unwrap());
    (msg, version)
}

/// A cell: row, family, qualifier, timestamp, type, value.
pub type Cell = (Vec<u8>, Vec<u8>, Vec<u8>, i64, u8, Vec<u8>);

/// The cells of a data block's payload (tags and memstore timestamps included, both empty).
pub fn cells(payload: &[u8]) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let klen = be32(&payload[at..]) as usize;
        let vlen = be32(&payload[at + 4..]) as usize;
        let key = &payload[at + 8..at + 8 + klen];
        let value = payload[at + 8 + klen..at + 8 + klen + vlen].to_vec();
        let rlen = u16::from_be_bytes([key[0], key[1]]) as usize;
        let row = key[2..2 + rlen].to_vec();
        let flen = key[2 + rlen] as usize;
        let family = key[3 + rlen..3 + rlen + flen].to_vec();
        let qualifier = key[3 + rlen + flen..klen - 9].to_vec();
        let ts = be64(&key[klen - 9..]);
        let kind = key[klen - 1];
        at += 8 + klen + vlen;
        assert_eq!(payload[at], 0, "no tags, memstore timestamp 0");
        at += 1;
        out.push((row, family, qualifier, ts, kind, value));
    }
    out
}

/// The entries of a file info block's payload.
pub fn file_info(payload: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    assert_eq!(&payload[..4], b"PBUF");
    let info = proto::FileInfo::decode_length_delimited(&payload[4..]).unwrap();
    info.map_entry.into_iter().map(|p| (p.first, p.second)).collect()
}
