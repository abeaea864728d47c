//! The writer against a file HBase itself wrote: `tests/fixtures/hfile/hbase.hfile`, made by
//! `scripts/hbase.sh java dev.tallrow.hfile.Fixture tests/fixtures/hfile/hbase.hfile`
//! (HBase 2.6.1's `StoreFileWriter`, as `HFileOutputFormat2` sets it up, with tiny block,
//! index and bloom sizes so that one small file has every structure).

use super::block::HEADER;
use super::read::{self, Block};
use super::{Options, Writer};
use crate::store::storage::Compression;
use proptest::prelude::*;

fn fixture() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hfile/hbase.hfile");
    std::fs::read(path).expect("the HFile fixture")
}

/// The path of the fixture HBase wrote with `variant` (`tests/fixtures/hfile/hbase-VARIANT.hfile`).
fn fixture_path(variant: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!(
        "{}/tests/fixtures/hfile/hbase-{variant}.hfile",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// The options the fixture was written with (`Fixture.java`).
fn fixture_options() -> Options {
    Options {
        family: b"f".to_vec(),
        block_size: 128,
        index_chunk_size: 200,
        index_min_entries: 16,
        bloom_chunk_size: 64,
        create_time: 1767225600000,
        bulkload_time: 1767225600123,
        task: "tallrow-fixture".into(),
        compression: Compression::None,
        encoding: crate::store::storage::Encoding::None,
        bloom: crate::store::storage::Bloom::Row,
    }
}

fn data_cells(blocks: &[Block]) -> Vec<read::Cell> {
    blocks
        .iter()
        .filter(|b| &b.magic == b"DATABLK*")
        .flat_map(|b| read::cells(&b.payload))
        .collect()
}

fn write(opts: Options, cells: &[read::Cell]) -> (super::Summary, Vec<u8>) {
    let mut w = Writer::new(Vec::new(), opts);
    for (row, _, q, ts, _, v) in cells {
        w.append(row, q, *ts, v).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn the_fixture_has_every_structure() {
    let file = fixture();
    let blocks = read::blocks(&file);
    let count = |m: &[u8; 8]| blocks.iter().filter(|b| &b.magic == m).count();
    assert!(count(b"DATABLK*") > 100);
    assert!(count(b"IDXLEAF2") > 10);
    assert_eq!(
        count(b"IDXINTE2"),
        6,
        "leaves, six intermediate blocks, a root over them"
    );
    assert_eq!(count(b"BLMFBLK2"), 3);
    assert_eq!(count(b"IDXROOT2"), 2, "the data index's root and the empty meta index");
    assert_eq!(count(b"FILEINF2"), 1);
    assert_eq!(count(b"BLMFMET2"), 1);
}

#[test]
fn block_headers_and_checksums_are_hbases() {
    let file = fixture();
    let mut last: std::collections::HashMap<[u8; 8], i64> = Default::default();
    for b in read::blocks(&file) {
        assert_eq!(b.checksum_type, 2, "CRC32C");
        assert_eq!(b.bytes_per_checksum, 16384);
        assert_eq!(b.on_disk_data_with_header as usize, HEADER + b.payload.len());
        assert_eq!(b.uncompressed_without_header as usize, b.payload.len());
        assert_eq!(b.on_disk_without_header as usize, b.payload.len() + b.checksums.len());
        assert_eq!(b.prev, *last.get(&b.magic).unwrap_or(&-1), "previous block of its type");
        last.insert(b.magic, b.offset as i64);
        let sums: Vec<u8> = b
            .framed
            .chunks(16384)
            .flat_map(|c| crc32c::crc32c(c).to_be_bytes())
            .collect();
        assert_eq!(b.checksums, sums, "block at {}", b.offset);
    }
}

#[test]
fn the_trailer_is_hbases() {
    let file = fixture();
    let (t, version) = read::trailer(&file);
    assert_eq!(version, 0x0300_0003, "major 3, minor 3");
    let blocks = read::blocks(&file);
    let data: Vec<&Block> = blocks.iter().filter(|b| &b.magic == b"DATABLK*").collect();
    assert_eq!(t.first_data_block_offset, Some(data[0].offset));
    assert_eq!(t.last_data_block_offset, Some(data.last().unwrap().offset));
    assert_eq!(t.entry_count, Some(data_cells(&blocks).len() as u64));
    assert_eq!(t.num_data_index_levels, Some(3));
    assert_eq!(t.compression_codec, Some(2), "NONE");
    assert_eq!(t.comparator_class_name.as_deref(), Some(super::writer::COMPARATOR));
    let info = blocks.iter().find(|b| &b.magic == b"FILEINF2").unwrap();
    assert_eq!(t.file_info_offset, Some(info.offset));
    // Load-on-open: the data index root, the meta index, file info, the bloom meta.
    let roots: Vec<&Block> = blocks.iter().filter(|b| &b.magic == b"IDXROOT2").collect();
    assert_eq!(t.load_on_open_data_offset, Some(roots[0].offset));
    let tail: Vec<&[u8; 8]> = blocks.iter().rev().take(4).map(|b| &b.magic).collect();
    assert_eq!(tail, [b"BLMFMET2", b"FILEINF2", b"IDXROOT2", b"IDXROOT2"]);
    assert!(roots[1].payload.is_empty(), "no meta blocks");
}

#[test]
fn file_info_is_what_hbase_writes_for_a_bulk_load() {
    let file = fixture();
    let blocks = read::blocks(&file);
    let info = read::file_info(&blocks.iter().find(|b| &b.magic == b"FILEINF2").unwrap().payload);
    let keys: Vec<String> = info.iter().map(|(k, _)| String::from_utf8_lossy(k).into()).collect();
    assert_eq!(
        keys,
        [
            "BLOOM_FILTER_TYPE",
            "BULKLOAD_SOURCE_TASK",
            "BULKLOAD_TIMESTAMP",
            "DELETE_FAMILY_COUNT",
            "EARLIEST_PUT_TS",
            "EXCLUDE_FROM_MINOR_COMPACTION",
            "HISTORICAL",
            "KEY_VALUE_VERSION",
            "LAST_BLOOM_KEY",
            "MAJOR_COMPACTION_KEY",
            "MAX_MEMSTORE_TS_KEY",
            "TIMERANGE",
            "hfile.AVG_KEY_LEN",
            "hfile.AVG_VALUE_LEN",
            "hfile.CREATE_TIME_TS",
            "hfile.KEY_OF_BIGGEST_CELL",
            "hfile.LASTKEY",
            "hfile.LEN_OF_BIGGEST_CELL",
        ]
    );
}

/// Every block our writer writes for the fixture's cells, compared one by one, then the
/// whole file: the same bytes as HBase's.
#[test]
fn the_writer_writes_the_fixture_byte_for_byte() {
    let file = fixture();
    let theirs = read::blocks(&file);
    let (summary, ours) = write(fixture_options(), &data_cells(&theirs));
    let mine = read::blocks(&ours);
    for (a, b) in mine.iter().zip(&theirs) {
        assert_eq!(
            (a.offset, &a.magic, a.prev),
            (b.offset, &b.magic, b.prev),
            "block at {}",
            b.offset
        );
        assert_eq!(
            a.payload,
            b.payload,
            "{} block at {}",
            String::from_utf8_lossy(&b.magic),
            b.offset
        );
    }
    assert_eq!(mine.len(), theirs.len());
    assert_eq!(read::trailer(&ours), read::trailer(&file));
    assert!(ours == file, "the whole file");
    assert_eq!(summary.cells, 960);
    assert_eq!(summary.rows, 240);
    assert_eq!(summary.bytes, file.len() as u64);
}

/// For each data block encoding, the file HBase's writer wrote from the fixture's cells
/// (`Fixture OUT ENCODING`): ours is the same, block by block and whole.
#[test]
fn encoded_files_are_hbases_byte_for_byte() {
    use crate::store::storage::Encoding;
    let cells = data_cells(&read::blocks(&fixture()));
    for encoding in [
        Encoding::Prefix,
        Encoding::Diff,
        Encoding::FastDiff,
        Encoding::RowIndexV1,
    ] {
        let file = std::fs::read(fixture_path(encoding.name())).expect("an encoded fixture");
        let theirs = read::blocks(&file);
        assert!(theirs.iter().any(|b| &b.magic == b"DATABLKE"), "{encoding}");
        let mut opts = fixture_options();
        opts.encoding = encoding;
        let (_, ours) = write(opts, &cells);
        let mine = read::blocks(&ours);
        for (a, b) in mine.iter().zip(&theirs) {
            assert_eq!(
                (a.offset, &a.magic, a.prev),
                (b.offset, &b.magic, b.prev),
                "{encoding}: block at {}",
                b.offset
            );
            assert_eq!(
                a.payload,
                b.payload,
                "{encoding}: {} block at {}",
                String::from_utf8_lossy(&b.magic),
                b.offset
            );
        }
        assert_eq!(mine.len(), theirs.len(), "{encoding}");
        assert!(ours == file, "{encoding}: the whole file");
        // HBase's blocks decode to the cells, and their rows count as the plain file's.
        let mut decoded = Vec::new();
        for b in theirs.iter().filter(|b| &b.magic == b"DATABLKE") {
            super::encode::decode(encoding, false, &b.payload, &mut |r, q, ts, v| {
                decoded.push((r.to_vec(), b"f".to_vec(), q.to_vec(), ts, 4u8, v.to_vec()))
            })
            .unwrap();
        }
        assert_eq!(decoded, cells, "{encoding}");
        assert_eq!(
            super::rows::count_distinct(&[fixture_path(encoding.name())]).unwrap(),
            240,
            "{encoding}"
        );
    }
}

/// ROWCOL and no bloom filter, against the files HBase's writer wrote from the fixture's
/// cells (`Fixture OUT NONE ROWCOL`, `Fixture OUT NONE NONE`): the same bytes.
#[test]
fn rowcol_and_bloomless_files_are_hbases_byte_for_byte() {
    use crate::store::storage::Bloom;
    let cells = data_cells(&read::blocks(&fixture()));
    for (bloom, name) in [(Bloom::RowCol, "ROWCOL"), (Bloom::None, "NOBLOOM")] {
        let file = std::fs::read(fixture_path(name)).expect("a bloom fixture");
        let theirs = read::blocks(&file);
        let mut opts = fixture_options();
        opts.bloom = bloom;
        let (_, ours) = write(opts, &cells);
        let mine = read::blocks(&ours);
        for (a, b) in mine.iter().zip(&theirs) {
            assert_eq!(
                (a.offset, &a.magic, &a.payload),
                (b.offset, &b.magic, &b.payload),
                "{name}: {} block at {}",
                String::from_utf8_lossy(&b.magic),
                b.offset
            );
        }
        assert_eq!(mine.len(), theirs.len(), "{name}");
        let count = |m: &[u8; 8]| mine.iter().filter(|b| &b.magic == m).count();
        match bloom {
            Bloom::None => assert_eq!((count(b"BLMFBLK2"), count(b"BLMFMET2")), (0, 0)),
            _ => assert!(count(b"BLMFBLK2") > 3, "ROWCOL has more keys than ROW"),
        }
        assert!(ours == file, "{name}: the whole file");
    }
}

/// Cells from arbitrary bytes, sorted and without duplicate coordinates.
fn sorted_cells() -> impl Strategy<Value = Vec<read::Cell>> {
    let byte = prop_oneof![Just(0u8), Just(1), Just(0xFF), Just(b'a'), any::<u8>()];
    let cell = (
        proptest::collection::vec(byte.clone(), 1..6),
        proptest::collection::vec(byte, 0..4),
        0i64..50,
        proptest::collection::vec(any::<u8>(), 0..300),
    );
    proptest::collection::vec(cell, 1..400).prop_map(|cells| {
        let mut out: Vec<read::Cell> = cells
            .into_iter()
            .map(|(r, q, ts, v)| (r, b"f".to_vec(), q, ts, 4, v))
            .collect();
        out.sort_by(|a, b| (&a.0, &a.2).cmp(&(&b.0, &b.2)).then(b.3.cmp(&a.3)));
        out.dedup_by(|a, b| (&a.0, &a.2, a.3) == (&b.0, &b.2, b.3));
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the cells and block sizes, the data blocks hold exactly the cells in order,
    /// every checksum holds, and the trailer counts them.
    #[test]
    fn written_cells_read_back(cells in sorted_cells(), block in 16usize..2000, chunk in 40usize..400) {
        let mut opts = fixture_options();
        opts.block_size = block;
        opts.index_chunk_size = chunk;
        let (summary, file) = write(opts, &cells);
        let blocks = read::blocks(&file);
        prop_assert_eq!(data_cells(&blocks), cells.clone());
        for b in &blocks {
            let sums: Vec<u8> = b.framed.chunks(16384).flat_map(|c| crc32c::crc32c(c).to_be_bytes()).collect();
            prop_assert_eq!(&b.checksums, &sums);
        }
        let (t, _) = read::trailer(&file);
        prop_assert_eq!(t.entry_count, Some(cells.len() as u64));
        prop_assert_eq!(summary.first_row, cells[0].0.clone());
        prop_assert_eq!(summary.last_row, cells.last().unwrap().0.clone());
        // Streamed back: each row once, in order; two files merge into their union.
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, &file).unwrap();
        let half: Vec<read::Cell> = cells.iter().step_by(2).cloned().collect();
        std::fs::write(&b, write(fixture_options(), &half).1).unwrap();
        let mut rows = super::rows::Rows::open(&a).unwrap();
        let mut seen = Vec::new();
        while let Some(r) = rows.next_row().unwrap() {
            seen.push(r.to_vec());
        }
        let mut distinct: Vec<Vec<u8>> = cells.iter().map(|c| c.0.clone()).collect();
        distinct.dedup();
        prop_assert_eq!(&seen, &distinct);
        prop_assert_eq!(super::rows::count_distinct(&[a, b]).unwrap(), distinct.len() as u64);
    }
}

/// Checks that `file`, compressed with `codec`, holds the blocks of `plain` (the same file
/// uncompressed, of `cells`): the same blocks at the same uncompressed sizes, the payloads
/// that name no offset byte for byte, every checksum over the compressed bytes, the codec and
/// the uncompressed total in the trailer, and the rows. Returns its blocks.
fn holds_the_plain_files_blocks(codec: Compression, file: &[u8], plain: &[u8], cells: &[read::Cell]) -> Vec<Block> {
    let plain_blocks = read::blocks(plain);
    let blocks = read::blocks_with(file, codec);
    assert_eq!(blocks.len(), plain_blocks.len(), "{codec}");
    for (b, p) in blocks.iter().zip(&plain_blocks) {
        let what = format!("{codec} {} block at {}", String::from_utf8_lossy(&b.magic), b.offset);
        assert_eq!(b.magic, p.magic, "{what}");
        assert_eq!(b.uncompressed_without_header, p.uncompressed_without_header, "{what}");
        assert_ne!(b.framed[HEADER..], p.framed[HEADER..], "{what}: compressed");
        // Index blocks name offsets and sizes on disk, which the codec changes.
        if [b"DATABLK*", b"BLMFBLK2", b"FILEINF2"].contains(&&b.magic) {
            assert_eq!(b.payload, p.payload, "{what}");
        }
        let sums: Vec<u8> = b
            .framed
            .chunks(16384)
            .flat_map(|c| crc32c::crc32c(c).to_be_bytes())
            .collect();
        assert_eq!(b.checksums, sums, "{what}");
        assert_eq!(
            b.on_disk_without_header as usize,
            b.framed.len() - HEADER + b.checksums.len(),
            "{what}"
        );
    }
    let (t, _) = read::trailer(file);
    assert_eq!(t.compression_codec, Some(codec.ordinal() as u32), "{codec}");
    assert_eq!(
        t.total_uncompressed_bytes,
        read::trailer(plain).0.total_uncompressed_bytes,
        "{codec}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, file).unwrap();
    let mut distinct: Vec<Vec<u8>> = cells.iter().map(|c| c.0.clone()).collect();
    distinct.dedup();
    assert_eq!(
        super::rows::count_distinct(&[path]).unwrap(),
        distinct.len() as u64,
        "{codec}"
    );
    blocks
}

/// With a codec, every block is compressed (the load-on-open ones too) and framed as HBase's
/// codec frames it: the same blocks, the same uncompressed payloads where no offset is
/// written into them, checksums over the compressed bytes, the codec in the trailer, and the
/// rows stream back.
#[test]
fn compressed_files_hold_the_uncompressed_files_blocks() {
    let cells = data_cells(&read::blocks(&fixture()));
    let (_, plain) = write(fixture_options(), &cells);
    for codec in [
        Compression::Gz,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut opts = fixture_options();
        opts.compression = codec;
        let (summary, packed) = write(opts, &cells);
        holds_the_plain_files_blocks(codec, &packed, &plain, &cells);
        assert!(
            summary.bytes < plain.len() as u64,
            "{codec}: {} of {}",
            summary.bytes,
            plain.len()
        );
    }
}

/// Files HBase's own writer compressed (`Fixture.java` with a codec: the codec classes HBase's
/// default configuration picks, `tests/fixtures/hfile/hbase-CODEC.hfile`) hold the plain
/// fixture's blocks as our own compressed files do. The writer's file of the same cells and
/// codec holds HBase's blocks, each the same bytes once uncompressed. (Not the same file: no
/// codec here compresses as the Java one HBase loads does, byte for byte.)
#[test]
fn compressed_files_hbase_wrote_read_as_the_plain_fixture() {
    let plain = fixture();
    let cells = data_cells(&read::blocks(&plain));
    for codec in [
        Compression::Gz,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let file = std::fs::read(fixture_path(codec.name())).expect("a compressed fixture");
        let theirs = holds_the_plain_files_blocks(codec, &file, &plain, &cells);
        let mut opts = fixture_options();
        opts.compression = codec;
        let (_, ours) = write(opts, &cells);
        let mine = read::blocks_with(&ours, codec);
        assert_eq!(mine.len(), theirs.len(), "{codec}");
        for (a, b) in mine.iter().zip(&theirs) {
            let what = format!("{codec} {} block at {}", String::from_utf8_lossy(&b.magic), b.offset);
            assert_eq!(
                (&a.magic, a.uncompressed_without_header),
                (&b.magic, b.uncompressed_without_header),
                "{what}"
            );
            if [b"DATABLK*", b"BLMFBLK2", b"FILEINF2"].contains(&&b.magic) {
                assert_eq!(a.payload, b.payload, "{what}");
            }
        }
    }
}

#[test]
fn a_damaged_file_is_refused_when_its_rows_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let good = fixture();
    // A byte of the second data block's cells, then one of its header's sizes.
    for (at, says) in [
        (250, "checksum mismatch in the block at 169"),
        (200, "a bad block header at 169"),
    ] {
        let mut file = good.clone();
        file[at] ^= 1;
        std::fs::write(&path, &file).unwrap();
        let e = super::rows::count_distinct(std::slice::from_ref(&path)).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    std::fs::write(&path, &good[..5000]).unwrap();
    assert!(super::rows::Rows::open(&path).is_err(), "no trailer");
}

#[test]
fn cells_out_of_order_are_refused() {
    let mut w = Writer::new(Vec::new(), fixture_options());
    w.append(b"b", b"q", 5, b"v").unwrap();
    let e = w.append(b"a", b"q", 5, b"v").unwrap_err();
    assert!(e.to_string().contains("does not sort after"), "{e}");
    // The same coordinates twice, and an older version before a newer one.
    w.append(b"b", b"q", 4, b"v").unwrap();
    assert!(w.append(b"b", b"q", 4, b"v").is_err());
    assert!(w.append(b"b", b"q", 6, b"v").is_err());
    assert!(w.append(b"", b"q", 1, b"v").is_err(), "an empty row");
    let empty = Writer::new(Vec::new(), fixture_options());
    assert!(empty.finish().is_err(), "a file of no cells");
}

/// A file with tags, as HBase's MapReduce bulk load writes one (`Fixture OUT FAST_DIFF ROW
/// tags`), reads back the same rows as the same cells without them.
#[test]
fn rows_of_a_file_with_tags_read_as_without() {
    let rows = |name: &str| {
        let mut r = super::rows::Rows::open(&fixture_path(name)).unwrap();
        let mut out = Vec::new();
        while let Some(row) = r.next_row().unwrap() {
            out.push(row.to_vec());
        }
        out
    };
    let plain = rows("FAST_DIFF");
    assert_eq!(plain.len(), 240);
    assert_eq!(rows("FAST_DIFF-tags"), plain);
}
