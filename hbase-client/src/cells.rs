//! Cells, and the cell blocks that carry them beside a call's protobuf message: HBase's
//! `KeyValueCodec`, each cell a `KeyValue` behind its length.
//!
//! A cell on the wire (`KeyValueCodec.KeyValueEncoder`, `KeyValueUtil.oswrite`):
//!
//! ```text
//! i32 length of what follows       (8 + key length + value length)
//! i32 key length, i32 value length
//! key:   i16 row length, row, u8 family length, family, qualifier, i64 timestamp, u8 type
//! value
//! ```
//!
//! all integers big-endian. Decoding slices the block it reads, so a decoded cell shares its
//! bytes with the reply instead of copying them.

use bytes::{Buf, Bytes};

/// What a cell is (`KeyValue.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CellType {
    /// A value.
    Put = 4,
    /// Deletes one version of a column: the cell at exactly its timestamp.
    Delete = 8,
    /// Deletes the cells of every column of a family at exactly its timestamp.
    DeleteFamilyVersion = 10,
    /// Deletes every version of a column at or below its timestamp.
    DeleteColumn = 12,
    /// Deletes every cell of a family at or below its timestamp.
    DeleteFamily = 14,
}

impl CellType {
    /// The type of a type byte.
    pub fn from_byte(b: u8) -> Option<CellType> {
        Some(match b {
            4 => CellType::Put,
            8 => CellType::Delete,
            10 => CellType::DeleteFamilyVersion,
            12 => CellType::DeleteColumn,
            14 => CellType::DeleteFamily,
            _ => return None,
        })
    }
}

/// `HConstants.LATEST_TIMESTAMP`: a cell sent with it is stamped by the region server.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;

/// One cell, its parts sharing the bytes of the block it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Row key.
    pub row: Bytes,
    /// Family.
    pub family: Bytes,
    /// Qualifier.
    pub qualifier: Bytes,
    /// Version, ms since the epoch.
    pub timestamp: i64,
    /// What it is.
    pub kind: CellType,
    /// Value.
    pub value: Bytes,
}

/// A cell block that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cell block: {0}")]
pub struct Malformed(pub String);

/// The bytes a cell takes in a block, its length prefix included.
pub fn encoded_len(row: usize, family: usize, qualifier: usize, value: usize) -> usize {
    4 + 8 + key_len(row, family, qualifier) + value
}

fn key_len(row: usize, family: usize, qualifier: usize) -> usize {
    2 + row + 1 + family + qualifier + 8 + 1
}

/// Appends one cell to a block. Rows are at most 32,767 bytes and families 127, as HBase
/// requires (callers validate them first).
pub fn encode(
    out: &mut Vec<u8>,
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: i64,
    kind: CellType,
    value: &[u8],
) {
    debug_assert!(row.len() <= i16::MAX as usize && family.len() <= i8::MAX as usize);
    let key = key_len(row.len(), family.len(), qualifier.len());
    out.reserve(4 + 8 + key + value.len());
    out.extend_from_slice(&((8 + key + value.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(key as u32).to_be_bytes());
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.push(kind as u8);
    out.extend_from_slice(value);
}

/// Reads `count` cells from the front of `block`, leaving the rest.
pub fn decode(block: &mut Bytes, count: usize) -> Result<Vec<Cell>, Malformed> {
    let mut out = Vec::with_capacity(count.min(block.len() / 21));
    for _ in 0..count {
        out.push(decode_one(block)?);
    }
    Ok(out)
}

/// Reads every cell of `block`.
pub fn decode_all(mut block: Bytes) -> Result<Vec<Cell>, Malformed> {
    let mut out = Vec::new();
    while !block.is_empty() {
        out.push(decode_one(&mut block)?);
    }
    Ok(out)
}

fn take(block: &mut Bytes, n: usize, what: &str) -> Result<Bytes, Malformed> {
    if block.len() < n {
        return Err(Malformed(format!("{what} of {n} bytes with {} left", block.len())));
    }
    Ok(block.split_to(n))
}

fn decode_one(block: &mut Bytes) -> Result<Cell, Malformed> {
    let mut head = take(block, 12, "a cell's lengths")?;
    let total = head.get_u32() as usize;
    let key = head.get_u32() as usize;
    let value = head.get_u32() as usize;
    if total < 8 || total - 8 != key + value || key < key_len(0, 0, 0) {
        return Err(Malformed(format!(
            "a cell of {total} bytes with a key of {key} and a value of {value}"
        )));
    }
    let mut k = take(block, key, "a cell's key")?;
    let row_len = k.get_u16() as usize;
    if key < key_len(row_len, 0, 0) {
        return Err(Malformed(format!("a row of {row_len} bytes in a key of {key}")));
    }
    let row = k.split_to(row_len);
    let fam_len = k.get_u8() as usize;
    if k.len() < fam_len + 9 {
        return Err(Malformed(format!("a family of {fam_len} bytes in a key of {key}")));
    }
    let family = k.split_to(fam_len);
    let qualifier = k.split_to(k.len() - 9);
    let timestamp = k.get_i64();
    let type_byte = k.get_u8();
    let kind = CellType::from_byte(type_byte).ok_or_else(|| Malformed(format!("cell type {type_byte}")))?;
    let value = take(block, value, "a cell's value")?;
    Ok(Cell {
        row,
        family,
        qualifier,
        timestamp,
        kind,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_a_key_value_behind_its_length() {
        let mut out = Vec::new();
        encode(&mut out, b"r1", b"f", b"q", 7, CellType::Put, b"val");
        let want: Vec<u8> = [
            &[0, 0, 0, 27][..], // 8 + 16 + 3
            &[0, 0, 0, 16],     // key: 2 + 2 + 1 + 1 + 1 + 8 + 1
            &[0, 0, 0, 3],
            &[0, 2],
            b"r1",
            &[1],
            b"f",
            b"q",
            &[0, 0, 0, 0, 0, 0, 0, 7],
            &[4],
            b"val",
        ]
        .concat();
        assert_eq!(out, want);
        assert_eq!(out.len(), encoded_len(2, 1, 1, 3));
        let cells = decode_all(Bytes::from(out)).unwrap();
        assert_eq!(
            cells,
            [Cell {
                row: Bytes::from_static(b"r1"),
                family: Bytes::from_static(b"f"),
                qualifier: Bytes::from_static(b"q"),
                timestamp: 7,
                kind: CellType::Put,
                value: Bytes::from_static(b"val"),
            }]
        );
    }

    #[test]
    fn every_kind_and_empty_parts_round_trip() {
        let mut out = Vec::new();
        let kinds = [
            CellType::Put,
            CellType::Delete,
            CellType::DeleteFamilyVersion,
            CellType::DeleteColumn,
            CellType::DeleteFamily,
        ];
        for (i, k) in kinds.iter().enumerate() {
            encode(
                &mut out,
                b"row",
                b"fam",
                &vec![b'q'; i],
                i as i64 - 2,
                *k,
                &vec![0xff; i * 3],
            );
        }
        encode(&mut out, b"", b"", b"", LATEST_TIMESTAMP, CellType::Put, b"");
        let mut block = Bytes::from(out);
        let cells = decode(&mut block, 5).unwrap();
        assert_eq!(cells.iter().map(|c| c.kind).collect::<Vec<_>>(), kinds);
        assert_eq!(cells[4].qualifier.len(), 4);
        assert_eq!(cells[0].timestamp, -2);
        let last = decode_all(block).unwrap();
        assert_eq!(last[0].timestamp, LATEST_TIMESTAMP);
        assert!(last[0].row.is_empty() && last[0].value.is_empty());
    }

    #[test]
    fn a_truncated_or_inconsistent_block_is_refused() {
        let mut out = Vec::new();
        encode(&mut out, b"r1", b"f", b"q", 7, CellType::Put, b"val");
        for cut in 0..out.len() {
            let r = decode_all(Bytes::copy_from_slice(&out[..cut]));
            assert!(cut == 0 || r.is_err(), "cut at {cut}");
        }
        let mut bad = out.clone();
        bad[3] += 1; // total no longer key + value + 8
        assert!(decode_all(Bytes::from(bad)).is_err());
        let mut bad = out.clone();
        bad[13] = 0xff; // a row longer than the key
        assert!(decode_all(Bytes::from(bad)).is_err());
        let mut bad = out;
        let type_at = 4 + 8 + 16 - 1;
        bad[type_at] = 5;
        assert!(decode_all(Bytes::from(bad)).unwrap_err().0.contains("cell type 5"));
    }
}
