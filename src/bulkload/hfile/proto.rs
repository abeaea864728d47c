//! The two protobuf messages of an HFile (HBase's `HFile.proto`): the trailer and file
//! info. Fields are declared in tag order, as Java's generated code writes them; every
//! field HBase sets is present.

/// `hbase.pb.FileTrailerProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trailer {
    /// Offset of the file info block.
    #[prost(uint64, optional, tag = "1")]
    pub file_info_offset: Option<u64>,
    /// Offset of the load-on-open section (the root data index).
    #[prost(uint64, optional, tag = "2")]
    pub load_on_open_data_offset: Option<u64>,
    /// Payload bytes of every data index block.
    #[prost(uint64, optional, tag = "3")]
    pub uncompressed_data_index_size: Option<u64>,
    /// Header and payload bytes of the blocks, plus the trailer.
    #[prost(uint64, optional, tag = "4")]
    pub total_uncompressed_bytes: Option<u64>,
    /// Entries of the root data index.
    #[prost(uint32, optional, tag = "5")]
    pub data_index_count: Option<u32>,
    /// Meta blocks.
    #[prost(uint32, optional, tag = "6")]
    pub meta_index_count: Option<u32>,
    /// Cells.
    #[prost(uint64, optional, tag = "7")]
    pub entry_count: Option<u64>,
    /// Levels of the data index.
    #[prost(uint32, optional, tag = "8")]
    pub num_data_index_levels: Option<u32>,
    /// Offset of the first data block.
    #[prost(uint64, optional, tag = "9")]
    pub first_data_block_offset: Option<u64>,
    /// Offset of the last data block.
    #[prost(uint64, optional, tag = "10")]
    pub last_data_block_offset: Option<u64>,
    /// The cell comparator, by its HBase 1 name.
    #[prost(string, optional, tag = "11")]
    pub comparator_class_name: Option<String>,
    /// `Compression.Algorithm` ordinal.
    #[prost(uint32, optional, tag = "12")]
    pub compression_codec: Option<u32>,
}

/// `hbase.pb.BytesBytesPair`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Pair {
    /// Key.
    #[prost(bytes = "vec", required, tag = "1")]
    pub first: Vec<u8>,
    /// Value.
    #[prost(bytes = "vec", required, tag = "2")]
    pub second: Vec<u8>,
}

/// `hbase.pb.FileInfoProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileInfo {
    /// Entries, sorted by key.
    #[prost(message, repeated, tag = "1")]
    pub map_entry: Vec<Pair>,
}
