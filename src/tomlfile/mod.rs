//! A TOML file a person wrote (a workload, a table design): reading it, and errors that name
//! its file, line, column and field ([`locate`] finds them in the text).

pub(crate) mod locate;

use std::path::{Path, PathBuf};

/// A workload (or design) file that cannot be used: where, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read {}: {reason}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The file is not a valid workload.
    #[error("{}:{line}:{column}: {}{message}", file.display(), field.as_ref().map(|f| format!("{f}: ")).unwrap_or_default())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted path of the field, when the problem has one.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A `--set` (or a flag lowered to one) cannot apply, or gives a value the workload
    /// refuses.
    #[error("{set}: {message}")]
    Set {
        /// The setting as given.
        set: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The error at byte `offset` of `src`, the text of `file`.
    pub(crate) fn at(file: &Path, src: &str, offset: usize, field: Option<String>, message: String) -> Error {
        let (line, column) = locate::line_col(src, offset);
        Error::Invalid {
            file: file.to_path_buf(),
            line,
            column,
            field,
            message,
        }
    }

    /// The text of a TOML file, without a byte-order mark; an error for one that cannot be
    /// read or is not UTF-8 (naming the place of its first bad byte).
    pub(crate) fn read_toml(path: &Path) -> Result<String, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::Read {
            file: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if let Some((at, message)) = locate::not_utf8(&bytes) {
            // The place counts the characters before the bad byte, which are valid UTF-8.
            let before = String::from_utf8_lossy(&bytes[..at]);
            return Err(Error::at(path, &before, before.len(), None, message));
        }
        let src = String::from_utf8(bytes).expect("checked above");
        Ok(match src.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => src,
        })
    }
}
