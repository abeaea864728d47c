//! HBase's bulk load, end to end: the HFiles tallrow writes and the hand-over to HBase.
//!
//! - [`fs`]: where an `hfile:` directory lives, local or in HDFS.
//! - [`hfile`]: the HFile v3 format, written (and read back, for the tests and the counts).
//! - [`output`]: `hfile:DIR`, the load's output that writes a table's rows as HFiles, one
//!   per region per family per shard, in the layout HBase's bulk-load tool takes.
//! - [`manifest`]: `DIR/bulkload.json`, what a shard's files hold.
//! - [`tool`]: `tallrow bulkload`, which creates the tables, hands the files to the region
//!   servers (through HBase's own RPC, or HBase's bulk-load tool) and counts what HBase then
//!   holds.

pub mod fs;
pub mod hfile;
pub mod manifest;
pub mod output;
pub mod tool;

pub use tool::{Error, Via, run};
