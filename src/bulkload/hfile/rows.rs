//! The rows of an HFile, streamed: its data blocks read one at a time (each checksum
//! checked), each row once, in order. What `tallrow bulkload` counts the rows of several
//! shards' files with.

use super::block::HEADER;
use super::proto;
use super::writer::TRAILER;
use crate::bulkload::fs::{Dir, ReadSeek};
use crate::store::storage::Encoding;
use prost::Message;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The distinct rows of one file, in order.
pub struct Rows {
    path: String,
    file: BufReader<Box<dyn ReadSeek>>,
    /// Offset of the next block, and one past the last data block's.
    pos: u64,
    end: u64,
    /// The rows of the current data block, and how many were returned.
    rows: Vec<Vec<u8>>,
    at: usize,
    /// The last row seen.
    last: Vec<u8>,
    codec: crate::store::storage::Compression,
    /// Whether the cells carry tags (file info names `hfile.MAX_TAGS_LEN`).
    tags: bool,
}

fn bad(path: &str, what: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{path}: {what}"))
}

impl Rows {
    /// Opens local file `path` and reads its trailer.
    pub fn open(path: &Path) -> std::io::Result<Rows> {
        let file = std::fs::File::open(path)?;
        Rows::read(Box::new(file), path.display().to_string())
    }

    /// Reads the trailer of `file`, named `path` in errors.
    pub fn read(file: Box<dyn ReadSeek>, path: String) -> std::io::Result<Rows> {
        let path = path.as_str();
        let mut file = BufReader::with_capacity(256 << 10, file);
        let len = file.seek(SeekFrom::End(0))?;
        if len < TRAILER as u64 {
            return Err(bad(path, "shorter than an HFile trailer"));
        }
        file.seek(SeekFrom::Start(len - TRAILER as u64))?;
        let mut t = vec![0u8; TRAILER];
        file.read_exact(&mut t)?;
        if &t[..8] != b"TRABLK\"$" {
            return Err(bad(path, "no HFile trailer"));
        }
        let trailer = proto::Trailer::decode_length_delimited(&t[8..]).map_err(|e| bad(path, e))?;
        let end = trailer.load_on_open_data_offset.unwrap_or(0);
        let ordinal = trailer.compression_codec.unwrap_or(2) as i32;
        let codec = crate::store::storage::Compression::from_ordinal(ordinal)
            .ok_or_else(|| bad(path, format!("compression codec {ordinal} is not one tallrow reads")))?;
        let mut rows = Rows {
            path: path.to_string(),
            file,
            pos: trailer.file_info_offset.unwrap_or(0),
            end: len,
            rows: Vec::new(),
            at: 0,
            last: Vec::new(),
            codec,
            tags: false,
        };
        rows.file.seek(SeekFrom::Start(rows.pos))?;
        let info = rows.read_block()?;
        if info.0 != *b"FILEINF2" || info.1.get(..4) != Some(b"PBUF") {
            return Err(bad(path, "no file info where the trailer puts it"));
        }
        let info = proto::FileInfo::decode_length_delimited(&info.1[4..]).map_err(|e| bad(path, e))?;
        rows.tags = info.map_entry.iter().any(|p| p.first == b"hfile.MAX_TAGS_LEN");
        rows.file.seek(SeekFrom::Start(0))?;
        (rows.pos, rows.end) = (0, end);
        Ok(rows)
    }

    /// Reads the block at `pos`, where the file stands (its checksums checked), moving past
    /// it: its magic and its payload, decompressed.
    fn read_block(&mut self) -> std::io::Result<([u8; 8], Vec<u8>)> {
        let at = self.pos;
        let mut h = [0u8; HEADER];
        self.file.read_exact(&mut h)?;
        let int = |at: usize| i32::from_be_bytes(h[at..at + 4].try_into().expect("4 bytes"));
        let (on_disk, data) = (int(8), int(29));
        if on_disk < 0
            || data < HEADER as i32
            || data > HEADER as i32 + on_disk
            || at + (HEADER + on_disk as usize) as u64 > self.end
        {
            return Err(bad(&self.path, format!("a bad block header at {at}")));
        }
        let mut rest = vec![0u8; on_disk as usize];
        self.file.read_exact(&mut rest)?;
        let payload = data as usize - HEADER;
        let mut framed = h.to_vec();
        framed.extend_from_slice(&rest[..payload]);
        let sums = &rest[payload..];
        let ok = framed
            .chunks(16 << 10)
            .zip(sums.chunks(4))
            .all(|(c, s)| crc32c::crc32c(c).to_be_bytes() == s);
        if !ok {
            return Err(bad(&self.path, format!("checksum mismatch in the block at {at}")));
        }
        self.pos += (HEADER + on_disk as usize) as u64;
        let magic: [u8; 8] = h[..8].try_into().expect("8 bytes");
        let size = int(12).max(0) as usize;
        let block = super::codec::decompress(self.codec, &framed[HEADER..], size)
            .map_err(|e| bad(&self.path, format!("the block at {at}: {e}")))?;
        Ok((magic, block))
    }

    /// Reads the next data block's rows; `false` past the last.
    fn next_block(&mut self) -> std::io::Result<bool> {
        while self.pos < self.end {
            let at = self.pos;
            let (magic, block) = self.read_block()?;
            if &magic == b"DATABLK*" || &magic == b"DATABLKE" {
                let encoding = if &magic == b"DATABLK*" {
                    Encoding::None
                } else {
                    let id = block.get(..2).map_or(-1, |b| i16::from_be_bytes([b[0], b[1]]));
                    Encoding::from_id(id.into()).ok_or_else(|| {
                        bad(
                            &self.path,
                            format!("the block at {at}: encoding {id} is not one tallrow reads"),
                        )
                    })?
                };
                // The rows of the block, each once; a row the last block ended with is not new.
                let (rows, last) = (&mut self.rows, &mut self.last);
                rows.clear();
                super::encode::decode(encoding, self.tags, &block, &mut |row, _, _, _| {
                    if last.as_slice() != row {
                        last.clear();
                        last.extend_from_slice(row);
                        rows.push(row.to_vec());
                    }
                })
                .map_err(|e| bad(&self.path, format!("the block at {at}: {e}")))?;
                self.at = 0;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The next row not seen before, or `None` at the end.
    pub fn next_row(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            if self.at < self.rows.len() {
                self.at += 1;
                return Ok(Some(&self.rows[self.at - 1]));
            }
            if !self.next_block()? {
                return Ok(None);
            }
        }
    }
}

/// The distinct rows over several local files (of one table's region, say), merged.
pub fn count_distinct(paths: &[PathBuf]) -> std::io::Result<u64> {
    merged(paths.iter().map(|p| Rows::open(p)).collect::<std::io::Result<_>>()?)
}

/// The distinct rows over several files, each a path inside a directory (local or HDFS).
pub fn count_distinct_in(files: &[(Dir, String)]) -> std::io::Result<u64> {
    merged(
        files
            .iter()
            .map(|(d, rel)| Rows::read(d.open(rel)?, d.at(rel)))
            .collect::<std::io::Result<_>>()?,
    )
}

fn merged(mut files: Vec<Rows>) -> std::io::Result<u64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap = BinaryHeap::new();
    for (i, f) in files.iter_mut().enumerate() {
        if let Some(r) = f.next_row()? {
            heap.push(Reverse((r.to_vec(), i)));
        }
    }
    let (mut n, mut last): (u64, Option<Vec<u8>>) = (0, None);
    while let Some(Reverse((row, i))) = heap.pop() {
        if last.as_ref() != Some(&row) {
            n += 1;
        }
        if let Some(r) = files[i].next_row()? {
            heap.push(Reverse((r.to_vec(), i)));
        }
        last = Some(row);
    }
    Ok(n)
}
