//! One DAO per seed design, on the `Store` trait: the table layouts of the seeds and the
//! operations their write-ups define. The loader, the query runner, the verifier and the
//! server all go through these.

pub mod actions;
pub mod blog;
pub mod microblog;
pub mod series;

use crate::keys::{self, Order};
use crate::store::{self, Scan, Store, TableDescriptor};

/// A DAO error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A key could not be built or read.
    #[error(transparent)]
    Key(#[from] keys::Error),
    /// A row of a design could not be built from an entity's fields.
    #[error(transparent)]
    Design(#[from] crate::design::key::Error),
    /// A stored row is not what the design writes.
    #[error("table {table}, row {row}: {reason}")]
    Corrupt {
        /// Table.
        table: &'static str,
        /// Row key in HBase's `toStringBinary` form.
        row: String,
        /// What is wrong.
        reason: String,
    },
}

/// Result of a DAO call.
pub type Result<T> = std::result::Result<T, Error>;

/// One page of a listing, and the cursor that resumes after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The items, newest first.
    pub items: Vec<T>,
    /// The row key to resume after; `None` when this page reached the end.
    pub next: Option<Vec<u8>>,
}

impl<T> Page<T> {
    fn new(items: Vec<T>, last_key: Option<Vec<u8>>, limit: usize) -> Self {
        let next = if items.len() >= limit && limit > 0 {
            last_key
        } else {
            None
        };
        Page { items, next }
    }
}

/// Every table a schema creates, with HBase's default storage settings and the microblog's
/// default inbox versions.
pub fn all_tables() -> Vec<TableDescriptor> {
    let mut out = microblog::Microblog::tables(&microblog::Config::default());
    out.extend(actions::Actions::tables());
    out.extend(blog::Blog::tables());
    out.extend(series::Series::tables());
    out
}

/// Creates each table unless it exists.
pub fn create_tables(store: &dyn Store, tables: &[TableDescriptor]) -> Result<()> {
    for t in tables {
        store::ensure_table(store, t)?;
    }
    Ok(())
}

/// A scan of the rows in `[low, high)` newest first: a forward scan when time is reversed in
/// the key (the seeds' layout), a reversed scan when it is not. `low` and `high` are prefixes,
/// shorter than any full key.
fn newest_first(order: Order, low: Vec<u8>, high: Vec<u8>) -> Scan {
    match order {
        Order::Reverse => Scan::range(low, high),
        Order::Forward => Scan {
            start: high,
            start_exclusive: true,
            stop: low,
            reversed: true,
            ..Scan::default()
        },
    }
}

/// The rows of one prefix, newest first.
fn newest_first_in(order: Order, prefix: Vec<u8>) -> Scan {
    let high = keys::next_prefix(&prefix);
    let mut scan = newest_first(order, prefix.clone(), high);
    scan.prefix = prefix;
    scan
}

fn corrupt(table: &'static str, row: &[u8], reason: impl Into<String>) -> Error {
    Error::Corrupt {
        table,
        row: keys::to_string_binary(row),
        reason: reason.into(),
    }
}
