//! How a column family sits on disk: its codec, data block encoding, bloom filter, block size
//! and TTL, with HBase's names (`COMPRESSION`, `DATA_BLOCK_ENCODING`, `BLOOMFILTER`,
//! `BLOCKSIZE`, `TTL`) and HBase's defaults. Backends create families with them; the HFile
//! writer writes blocks by them; the embedded store applies the TTL at read as HBase does.

use std::fmt;
use std::str::FromStr;

/// `HConstants.FOREVER`: the TTL of a family whose cells never expire.
pub const FOREVER: u32 = i32::MAX as u32;

/// HBase's default `BLOCKSIZE`.
pub const DEFAULT_BLOCK_SIZE: u32 = 64 << 10;

/// A name HBase spells in capitals, parsed case-insensitively; an unknown one is refused with
/// the list of valid names.
macro_rules! names {
    ($(#[$doc:meta])* $ty:ident, $what:literal, { $($(#[$vdoc:meta])* $variant:ident = $name:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
        pub enum $ty {
            $($(#[$vdoc])* #[serde(rename = $name)] $variant),+
        }

        impl $ty {
            /// Every value, in HBase's order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// HBase's name.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(s.trim()))
                    .ok_or_else(|| {
                        let valid: Vec<&str> = $ty::ALL.iter().map(|v| v.name()).collect();
                        format!("{s:?} is not a {} (one of {})", $what, valid.join(", "))
                    })
            }
        }
    };
}

names!(
    /// A block codec (`Compression.Algorithm`).
    Compression, "codec", {
        /// Blocks as they are.
        #[default]
        None = "NONE",
        /// Deflate in gzip framing.
        Gz = "GZ",
        /// Snappy.
        Snappy = "SNAPPY",
        /// LZ4.
        Lz4 = "LZ4",
        /// Zstandard.
        Zstd = "ZSTD",
    }
);

names!(
    /// A data block encoding (`DataBlockEncoding`).
    Encoding, "data block encoding", {
        /// Cells as they are.
        #[default]
        None = "NONE",
        /// Each key after the first stored as the length it shares with the one before.
        Prefix = "PREFIX",
        /// Prefix, and fields unchanged from the key before left out.
        Diff = "DIFF",
        /// Diff, tuned for decoding speed.
        FastDiff = "FAST_DIFF",
        /// Cells as they are, with an index of rows at the block's end.
        RowIndexV1 = "ROW_INDEX_V1",
    }
);

names!(
    /// A bloom filter type (`BloomType`).
    Bloom, "bloom filter type", {
        /// No bloom filter.
        None = "NONE",
        /// Of row keys.
        #[default]
        Row = "ROW",
        /// Of row and column.
        RowCol = "ROWCOL",
    }
);

impl Compression {
    /// `Compression.Algorithm`'s ordinal, as HFile trailers and Thrift2 carry it.
    pub fn ordinal(self) -> i32 {
        match self {
            Compression::Gz => 1,
            Compression::None => 2,
            Compression::Snappy => 3,
            Compression::Lz4 => 4,
            Compression::Zstd => 6,
        }
    }

    /// The codec of `ordinal`, where it is one of ours.
    pub fn from_ordinal(ordinal: i32) -> Option<Compression> {
        Compression::ALL.iter().copied().find(|c| c.ordinal() == ordinal)
    }
}

impl Encoding {
    /// `DataBlockEncoding`'s id, as encoded blocks and Thrift2 carry it.
    pub fn id(self) -> i16 {
        match self {
            Encoding::None => 0,
            Encoding::Prefix => 2,
            Encoding::Diff => 3,
            Encoding::FastDiff => 4,
            Encoding::RowIndexV1 => 7,
        }
    }

    /// The encoding of `id`, where it is one of ours.
    pub fn from_id(id: i32) -> Option<Encoding> {
        Encoding::ALL.iter().copied().find(|e| i32::from(e.id()) == id)
    }
}

impl Bloom {
    /// `BloomType`'s ordinal, as Thrift2 carries it.
    pub fn ordinal(self) -> i32 {
        match self {
            Bloom::None => 0,
            Bloom::Row => 1,
            Bloom::RowCol => 2,
        }
    }

    /// The type of `ordinal`, where it is one of ours.
    pub fn from_ordinal(ordinal: i32) -> Option<Bloom> {
        Bloom::ALL.iter().copied().find(|b| b.ordinal() == ordinal)
    }
}

/// One family's storage settings. [`Default`] is what HBase gives a family created without
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Storage {
    /// `COMPRESSION`.
    pub compression: Compression,
    /// `DATA_BLOCK_ENCODING`.
    pub data_block_encoding: Encoding,
    /// `BLOOMFILTER`.
    pub bloom_filter: Bloom,
    /// `BLOCKSIZE`, bytes.
    pub block_size: u32,
    /// `TTL`, seconds; [`FOREVER`] keeps cells forever.
    pub ttl: u32,
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            compression: Compression::None,
            data_block_encoding: Encoding::None,
            bloom_filter: Bloom::Row,
            block_size: DEFAULT_BLOCK_SIZE,
            ttl: FOREVER,
        }
    }
}

/// Smallest `BLOCKSIZE` HBase takes (`HColumnDescriptor`'s check: 1 KiB).
pub const MIN_BLOCK_SIZE: u32 = 1 << 10;

/// Largest `BLOCKSIZE` HBase takes (16 MiB).
pub const MAX_BLOCK_SIZE: u32 = 16 << 20;

impl Storage {
    /// Whether cells are kept forever.
    pub fn forever(&self) -> bool {
        self.ttl >= FOREVER
    }

    /// The oldest timestamp a read at `now_ms` still returns, as HBase's `ScanQueryMatcher`
    /// computes it: a cell older than `now - TTL` has expired. `None` for [`FOREVER`].
    pub fn oldest_unexpired(&self, now_ms: i64) -> Option<i64> {
        (!self.forever()).then(|| now_ms.saturating_sub(i64::from(self.ttl) * 1000))
    }

    /// Checks the block size and TTL against HBase's limits.
    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size) {
            return Err(format!(
                "BLOCKSIZE {} is outside {MIN_BLOCK_SIZE}..={MAX_BLOCK_SIZE} bytes",
                self.block_size
            ));
        }
        if self.ttl == 0 {
            return Err("TTL must be positive".into());
        }
        Ok(())
    }

    /// The settings that differ from HBase's defaults, as `NAME => 'value'` pairs in the
    /// shell's spelling; empty for a default family.
    pub fn differences(&self) -> Vec<(&'static str, String)> {
        let d = Storage::default();
        let mut out = Vec::new();
        if self.compression != d.compression {
            out.push(("COMPRESSION", self.compression.to_string()));
        }
        if self.data_block_encoding != d.data_block_encoding {
            out.push(("DATA_BLOCK_ENCODING", self.data_block_encoding.to_string()));
        }
        if self.bloom_filter != d.bloom_filter {
            out.push(("BLOOMFILTER", self.bloom_filter.to_string()));
        }
        if self.block_size != d.block_size {
            out.push(("BLOCKSIZE", self.block_size.to_string()));
        }
        if self.ttl != d.ttl {
            out.push(("TTL", self.ttl.to_string()));
        }
        out
    }

    /// The setting in which `self` and `other` first differ, as `NAME a (want b)`.
    pub fn first_difference(&self, want: &Storage) -> Option<String> {
        let pairs = [
            (
                "COMPRESSION",
                self.compression.to_string(),
                want.compression.to_string(),
            ),
            (
                "DATA_BLOCK_ENCODING",
                self.data_block_encoding.to_string(),
                want.data_block_encoding.to_string(),
            ),
            (
                "BLOOMFILTER",
                self.bloom_filter.to_string(),
                want.bloom_filter.to_string(),
            ),
            ("BLOCKSIZE", self.block_size.to_string(), want.block_size.to_string()),
            ("TTL", ttl_text(self.ttl), ttl_text(want.ttl)),
        ];
        pairs
            .into_iter()
            .find(|(_, have, want)| have != want)
            .map(|(name, have, want)| format!("{name} {have} (expected {want})"))
    }

    /// Sets the attribute `name` (HBase's spelling) from its text, as HBase's descriptors
    /// carry it; `Ok(false)` for an attribute that is not a storage setting.
    pub fn set_attribute(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "COMPRESSION" => self.compression = value.parse()?,
            "DATA_BLOCK_ENCODING" => self.data_block_encoding = value.parse()?,
            "BLOOMFILTER" => self.bloom_filter = value.parse()?,
            "BLOCKSIZE" => {
                self.block_size = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("BLOCKSIZE {value:?} is not a byte count"))?
            }
            "TTL" => self.ttl = parse_ttl(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl Storage {
    /// The settings a family's attributes (HBase's names and text) describe; an attribute
    /// that is not a storage setting, or a value tallrow does not model (`LZO`,
    /// `ROWPREFIX_FIXED_LENGTH`), leaves HBase's default in its place, so that any table
    /// describes.
    pub fn from_attributes<'a>(attributes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Storage {
        Storage::default().with_attributes(attributes)
    }

    /// These settings with `attributes` applied, as [`Storage::from_attributes`] applies them.
    pub fn with_attributes<'a>(mut self, attributes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Storage {
        for (k, v) in attributes {
            let before = self;
            if self.set_attribute(k, v).is_err() {
                self = before;
            }
        }
        self
    }
}

/// A TTL as the shell shows it: seconds, or `FOREVER`.
pub fn ttl_text(ttl: u32) -> String {
    if ttl >= FOREVER {
        "FOREVER".into()
    } else {
        ttl.to_string()
    }
}

/// A TTL given as seconds (`86400`) or `FOREVER`, as HBase's descriptors carry it.
pub fn parse_ttl(value: &str) -> Result<u32, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("FOREVER") {
        return Ok(FOREVER);
    }
    match v.parse::<i64>() {
        Ok(s) if s > 0 => Ok(s.min(i64::from(FOREVER)) as u32),
        _ => Err(format!("TTL {value:?} is not a positive number of seconds or FOREVER")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_case_insensitively_and_unknown_ones_list_the_valid() {
        assert_eq!("snappy".parse::<Compression>(), Ok(Compression::Snappy));
        assert_eq!("FAST_DIFF".parse::<Encoding>(), Ok(Encoding::FastDiff));
        assert_eq!("rowcol".parse::<Bloom>(), Ok(Bloom::RowCol));
        assert_eq!(
            "LZO".parse::<Compression>().unwrap_err(),
            "\"LZO\" is not a codec (one of NONE, GZ, SNAPPY, LZ4, ZSTD)"
        );
        assert_eq!(
            "fastdiff".parse::<Encoding>().unwrap_err(),
            "\"fastdiff\" is not a data block encoding (one of NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1)"
        );
        assert_eq!(
            "ROWPREFIX".parse::<Bloom>().unwrap_err(),
            "\"ROWPREFIX\" is not a bloom filter type (one of NONE, ROW, ROWCOL)"
        );
    }

    #[test]
    fn attributes_describe_any_table_leaving_defaults_for_what_is_not_modelled() {
        let s = Storage::from_attributes([
            ("VERSIONS", "3"),
            ("COMPRESSION", "LZO"),
            ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
            ("BLOOMFILTER", "ROWPREFIX_FIXED_LENGTH"),
            ("BLOCKSIZE", "16384"),
            ("TTL", "86400"),
        ]);
        assert_eq!(
            s,
            Storage {
                data_block_encoding: Encoding::FastDiff,
                block_size: 16384,
                ttl: 86_400,
                ..Storage::default()
            }
        );
    }

    #[test]
    fn ordinals_and_ids_are_hbases() {
        // Compression.Algorithm: LZO, GZ, NONE, SNAPPY, LZ4, BZIP2, ZSTD.
        let ordinals: Vec<i32> = Compression::ALL.iter().map(|c| c.ordinal()).collect();
        assert_eq!(ordinals, [2, 1, 3, 4, 6]);
        let ids: Vec<i16> = Encoding::ALL.iter().map(|e| e.id()).collect();
        assert_eq!(ids, [0, 2, 3, 4, 7]);
        for c in Compression::ALL {
            assert_eq!(Compression::from_ordinal(c.ordinal()), Some(*c));
        }
        for e in Encoding::ALL {
            assert_eq!(Encoding::from_id(e.id().into()), Some(*e));
        }
        assert_eq!(Bloom::from_ordinal(3), None);
    }

    #[test]
    fn defaults_are_hbases_and_ttl_expires_as_hbase_counts() {
        let d = Storage::default();
        assert_eq!(d.differences(), vec![]);
        assert_eq!(d.oldest_unexpired(1_000_000), None);
        let s = Storage { ttl: 60, ..d };
        assert_eq!(s.oldest_unexpired(1_000_000), Some(940_000));
        assert_eq!(s.differences(), vec![("TTL", "60".to_string())]);
        assert_eq!(s.first_difference(&d).unwrap(), "TTL 60 (expected FOREVER)");
        assert_eq!(parse_ttl("forever"), Ok(FOREVER));
        assert_eq!(
            parse_ttl("0").unwrap_err(),
            "TTL \"0\" is not a positive number of seconds or FOREVER"
        );
        assert!(Storage { block_size: 512, ..d }.validate().is_err());
    }
}
