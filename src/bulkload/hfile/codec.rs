//! Block payloads compressed as HBase 2.6.1's codecs write them (everything after the
//! 33-byte header; the header stays as it is).
//!
//! - GZ (`ReusableStreamGzipCodec`): one gzip member per block, level 6.
//! - SNAPPY, LZ4 (Hadoop's `SnappyCodec`, `Lz4Codec`) and ZSTD (HBase's `ZstdCodec`):
//!   Hadoop's `BlockCompressorStream` framing over a 256 KiB buffer: the payload's length
//!   (big-endian u32), then each segment of at most the codec's largest input compressed on
//!   its own, as its length (u32) and bytes; a payload longer than one segment ends with a
//!   zero u32, and an empty one is the zero u32 alone. Segments are raw Snappy blocks, raw
//!   LZ4 blocks, and zstd frames at level 3.

use crate::store::storage::Compression;
use std::io::Write;

/// Largest input one segment takes: the 256 KiB buffer less the codec's overhead
/// (`SnappyCodec`: B/6 + 32; `Lz4Codec`: B/255 + 16; `ZstdCodec`: compressBound(B) - B).
fn max_input(codec: Compression) -> usize {
    const B: usize = 256 << 10;
    match codec {
        Compression::Snappy => B - (B / 6 + 32),
        Compression::Lz4 => B - (B / 255 + 16),
        _ => B - (B >> 8),
    }
}

/// `ZstdCodec`'s default level (`hbase.io.compress.zstd.level`).
const ZSTD_LEVEL: i32 = 3;

/// Appends `payload` compressed with `codec` to `out`.
pub fn compress(codec: Compression, payload: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    match codec {
        Compression::None => out.extend_from_slice(payload),
        Compression::Gz => {
            let mut z = flate2::write::GzEncoder::new(std::mem::take(out), flate2::Compression::new(6));
            z.write_all(payload)?;
            *out = z.finish()?;
        }
        Compression::Snappy | Compression::Lz4 | Compression::Zstd => {
            let most = max_input(codec);
            out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            if payload.is_empty() {
                return Ok(());
            }
            for segment in payload.chunks(most) {
                let chunk = match codec {
                    Compression::Snappy => snap::raw::Encoder::new()
                        .compress_vec(segment)
                        .map_err(std::io::Error::other)?,
                    Compression::Lz4 => lz4_flex::block::compress(segment),
                    _ => zstd::bulk::compress(segment, ZSTD_LEVEL)?,
                };
                out.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
                out.extend_from_slice(&chunk);
            }
            if payload.len() > most {
                out.extend_from_slice(&[0; 4]);
            }
        }
    }
    Ok(())
}

/// The payload of `size` bytes that `data` holds compressed with `codec`, as HBase's
/// readers take it: exactly `size` bytes, trailing framing left unread. Damaged input is an
/// error, never more than `size` bytes of memory.
pub fn decompress(codec: Compression, data: &[u8], size: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let out = match codec {
        Compression::None => data.get(..size).ok_or_else(|| bad("a block cut short"))?.to_vec(),
        Compression::Gz => {
            let mut out = Vec::with_capacity(size);
            flate2::read::GzDecoder::new(data)
                .take(size as u64 + 1)
                .read_to_end(&mut out)?;
            out
        }
        _ => {
            let u32_at = |at: usize| -> std::io::Result<usize> {
                data.get(at..at + 4)
                    .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
                    .ok_or_else(|| bad("framing runs past the block"))
            };
            if u32_at(0)? != size {
                return Err(bad("framed length differs from the header's"));
            }
            let (mut at, mut out) = (4, Vec::with_capacity(size));
            while out.len() < size {
                let len = u32_at(at)?;
                let chunk = data
                    .get(at + 4..at + 4 + len)
                    .ok_or_else(|| bad("chunk runs past the block"))?;
                at += 4 + len;
                let piece = match codec {
                    Compression::Snappy => {
                        if snap::raw::decompress_len(chunk).map_err(std::io::Error::other)? > 256 << 10 {
                            return Err(bad("a chunk decompresses past the codec's buffer"));
                        }
                        snap::raw::Decoder::new()
                            .decompress_vec(chunk)
                            .map_err(std::io::Error::other)?
                    }
                    Compression::Lz4 => {
                        lz4_flex::block::decompress(chunk, max_input(codec)).map_err(std::io::Error::other)?
                    }
                    _ => zstd::bulk::decompress(chunk, 256 << 10)?,
                };
                if piece.len() > 256 << 10 {
                    return Err(bad("a chunk decompresses past the codec's buffer"));
                }
                if out.len() + piece.len() > size {
                    return Err(bad("chunks decompress past the block's length"));
                }
                out.extend_from_slice(&piece);
            }
            out
        }
    };
    if out.len() != size {
        return Err(bad("a block decompresses to another length than its header's"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_hadoops_block_stream() {
        let mut out = Vec::new();
        compress(Compression::Snappy, b"", &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0], "an empty payload is its length alone");
        let payload: Vec<u8> = (0..100u8).cycle().take(1000).collect();
        for codec in [Compression::Snappy, Compression::Lz4, Compression::Zstd] {
            out.clear();
            compress(codec, &payload, &mut out).unwrap();
            assert_eq!(&out[..4], &1000u32.to_be_bytes());
            let c = u32::from_be_bytes(out[4..8].try_into().unwrap()) as usize;
            assert_eq!(out.len(), 8 + c, "{codec}: one segment, no trailing zero");
            assert_eq!(decompress(codec, &out, 1000).unwrap(), payload);
        }
        assert_eq!(&out[8..12], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
        out.clear();
        compress(Compression::Gz, &payload, &mut out).unwrap();
        assert_eq!(&out[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
        assert_eq!(decompress(Compression::Gz, &out, 1000).unwrap(), payload);
    }

    #[test]
    fn a_payload_past_one_segment_is_split_where_the_codec_splits_it_and_ends_with_zero() {
        // Incompressible, so that segment sizes show.
        let mut x = 1u64;
        let payload: Vec<u8> = (0..600_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for (codec, most) in [
            (Compression::Snappy, 218_422),
            (Compression::Lz4, 261_100),
            (Compression::Zstd, 261_120),
        ] {
            assert_eq!(max_input(codec), most);
            let mut out = Vec::new();
            compress(codec, &payload, &mut out).unwrap();
            assert_eq!(&out[out.len() - 4..], &[0; 4], "{codec}");
            let mut at = 4;
            let mut segments = 0;
            while at < out.len() - 4 {
                at += 4 + u32::from_be_bytes(out[at..at + 4].try_into().unwrap()) as usize;
                segments += 1;
            }
            assert_eq!(segments, payload.len().div_ceil(most), "{codec}");
            assert_eq!(decompress(codec, &out, payload.len()).unwrap(), payload, "{codec}");
        }
    }
}
