//! What tallrow prints and writes for people and tools: aligned text tables and number
//! formats, run report folders (JSON, CSV, HdrHistogram files, plot), reading them back,
//! merging the reports of shards, and comparing two runs.

pub mod cluster;
pub mod compare;
pub mod console;
pub mod findmax;
mod hgrm;
pub mod history;
pub mod history_page;
pub mod keys;
pub mod load;
mod plot;
mod read;
pub mod run;
mod servers;
pub mod slo;
pub mod summary;
pub mod sweep;
pub mod text;
pub mod verdict;

pub use read::{Merged, find, merge, read};
pub use run::RunData;
pub use summary::RunSummary;
pub use text::{TextTable, fmt_ns, retries_line, retries_since, thousands};

use std::path::{Path, PathBuf};

/// A report that cannot be written or read: which file, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", file.display())]
pub struct Error {
    /// The file or folder.
    pub file: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl Error {
    /// An error about `file`.
    pub fn new(file: &str, message: impl Into<String>) -> Error {
        Error {
            file: PathBuf::from(file),
            message: message.into(),
        }
    }

    fn at(file: &Path, e: impl std::fmt::Display) -> Error {
        Error {
            file: file.to_path_buf(),
            message: e.to_string(),
        }
    }
}
