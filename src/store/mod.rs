//! The `Store` trait, its data model, and the backends behind it.
//!
//! Everything above this module (DAOs, loader, runner, verifier, server) talks to a
//! `dyn Store` and never knows which backend answers. Every backend honours HBase's semantics
//! as the design sets them out; the contract tests hold each one to them, with the embedded
//! backend as the reference.

pub mod backend;
pub mod bigtable;
pub(crate) mod cellkey;
pub mod counted;
pub mod delay;
pub mod embedded;
pub mod hbase;
pub mod layer;
pub mod memory;
mod model;
pub mod null;
pub mod prefixed;
pub mod runs;
pub mod storage;

pub use model::*;
pub use storage::Storage;

/// A store error, with the table, family or argument it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The table does not exist.
    #[error("table {0} does not exist")]
    TableNotFound(String),
    /// The table exists already.
    #[error("table {0} already exists")]
    TableExists(String),
    /// The family is not one of the table's.
    #[error("table {table} has no column family {family}")]
    FamilyNotFound {
        /// Table.
        table: String,
        /// Family.
        family: String,
    },
    /// A request the store cannot honour (bad name, key, timestamp or limit).
    #[error("{0}")]
    BadArgument(String),
    /// The storage engine or the connection failed.
    #[error("{0}")]
    Io(String),
    /// The store is briefly unable to answer (timeout, connection reset, busy region); the
    /// same call may succeed when retried.
    #[error("{0}")]
    Unavailable(String),
    /// The server refused this client's credentials or its TLS failed (an expired Kerberos
    /// ticket, a certificate that does not verify): no call will succeed until that is
    /// fixed, so a run stops at the first.
    #[error("{0}")]
    Denied(String),
}

impl Error {
    /// Whether retrying the same call may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::Unavailable(_))
    }
}

/// Result of a store call.
pub type Result<T> = std::result::Result<T, Error>;

/// Batches a load worker keeps in flight to a store over the network ([`Store::in_flight`]).
pub const REMOTE_IN_FLIGHT: usize = 2;

/// Which copy of a region reads may come from (HBase's `Consistency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consistency {
    /// The primary alone: every read sees every acknowledged write.
    #[default]
    Strong,
    /// HBase's TIMELINE: the primary first, then, when it has not answered within its
    /// timeout, every secondary replica too; the first answer wins, stale when a secondary
    /// gave it.
    Timeline {
        /// How long a get waits on the primary alone (`hbase.client.primaryCallTimeout.get`).
        get: std::time::Duration,
        /// How long a scan's call waits on the primary alone
        /// (`hbase.client.replicaCallTimeout.scan`).
        scan: std::time::Duration,
    },
}

impl Consistency {
    /// HBase's name for it: `strong` or `timeline`.
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Strong => "strong",
            Consistency::Timeline { .. } => "timeline",
        }
    }
}

thread_local! {
    static STALE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts reads a secondary replica answered on this thread (TIMELINE reads): the runner
/// looks before and after each operation, which runs on its worker's thread.
pub fn note_stale(reads: u64) {
    STALE.with(|s| s.set(s.get() + reads));
}

/// Reads a secondary replica answered on this thread so far.
pub fn stale_reads() -> u64 {
    STALE.with(std::cell::Cell::get)
}

/// A table store with HBase's semantics. Implementations are shared between threads.
pub trait Store: Send + Sync {
    /// What this backend is and where its data lives, for reports.
    fn identity(&self) -> String;

    /// Where its data lives, for a load's journal: what a `--resume` must write to. A layer
    /// that only delays or counts the calls (`delay:`) is not part of it.
    fn target(&self) -> String {
        self.identity()
    }

    /// The software and version answering, for reports.
    fn version(&self) -> String {
        concat!("tallrow ", env!("CARGO_PKG_VERSION")).to_string()
    }

    /// The calls (or actions of a batch) the backend tried again after an error it could
    /// retry, by the error's kind; empty where it does not count them.
    fn retries(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// The store's own flushes and compactions that finished since the last call, oldest
    /// first, as events of a run's time line; empty where the store does not tell them (all
    /// but the embedded one: HBase's are the observer's, `crate::observe`).
    fn take_events(&self) -> Vec<crate::observe::events::Event> {
        Vec::new()
    }

    /// How many batches each load worker keeps in flight. Over a network, more than one:
    /// the worker generates the next batch while one is written, and the servers get more
    /// than one batch of each worker at once. An in-process store's writes take the
    /// worker's own CPU: one.
    fn in_flight(&self) -> usize {
        1
    }

    /// The clock a run over this store is timed by: the machine's unless a layer simulates
    /// one (`delay:...,clock=virtual:`).
    fn clock(&self) -> Option<std::sync::Arc<dyn crate::clock::Clock>> {
        None
    }

    /// Sets the consistency of the reads that follow. Only a store that keeps region
    /// replicas reads TIMELINE; the rest refuse it in one line.
    fn set_consistency(&self, consistency: Consistency) -> Result<()> {
        match consistency {
            Consistency::Strong => Ok(()),
            Consistency::Timeline { .. } => Err(Error::BadArgument(format!(
                "timeline reads need HBase's region replicas, read through api=native or api=thrift2; {} keeps one copy of each row",
                self.identity()
            ))),
        }
    }

    /// Creates a table; [`Error::TableExists`] if it exists.
    fn create_table(&self, table: &TableDescriptor) -> Result<()>;

    /// Drops a table and its data.
    fn delete_table(&self, table: &str) -> Result<()>;

    /// Every table, by name.
    fn list_tables(&self) -> Result<Vec<TableDescriptor>>;

    /// One table's descriptor.
    fn describe_table(&self, table: &str) -> Result<TableDescriptor>;

    /// Where the table's regions begin, read from the backend: the sorted start keys of every
    /// region but the first (whose start is empty). A table of one region answers none.
    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        Ok(self.describe_table(table)?.splits)
    }

    /// Applies a batch of row mutations. When this returns `Ok`, all of it is durable; when
    /// it returns a validation error, none of it was applied.
    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()>;

    /// Reads rows by key: one answer per get, `None` where nothing is selected.
    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>>;

    /// Reads a range of rows in key order (or reversed); rows with nothing selected are
    /// skipped.
    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>>;

    /// Visits every row of a scan in order while holding a bounded number of rows: by
    /// default, in `scan` calls of `page` rows. `visit` returns `false` to stop early. A
    /// backend that can stream one long read does so.
    fn scan_each(&self, table: &str, scan: &Scan, page: usize, visit: &mut dyn FnMut(Row) -> bool) -> Result<()> {
        scan_pages(self, table, scan, page, visit)
    }

    /// How many rows `table` holds: rows with a cell a read returns (none expired). By
    /// default a scan of one cell per row; a backend that can count without building rows
    /// does so.
    fn row_count(&self, table: &str) -> Result<u64> {
        count_rows_scanning(self, table)
    }

    /// A bulk load of puts into those of `tables` that are empty, where the backend writes
    /// one faster than it applies batches (as HBase's bulk load writes sorted files and adds
    /// them whole). `None` where it has none, or none of the tables is empty.
    fn bulk_load(&self, tables: &[&str]) -> Result<Option<Box<dyn BulkLoad>>> {
        let _ = tables;
        Ok(None)
    }

    /// Leaves what `tables` hold durable outside the write-ahead log, as a finished load
    /// leaves a store: the embedded store flushes their memtables and its own, so that the
    /// next open has no journal to replay. Elsewhere nothing: HBase's region servers flush
    /// on their own, and their logs are replayed only after a crash.
    fn flush(&self, tables: &[&str]) -> Result<()> {
        let _ = tables;
        Ok(())
    }

    /// Whether [`Store::load_hfiles`] hands HFiles over here (HBase's own RPC does; elsewhere
    /// HBase's bulk-load tool must).
    fn loads_hfiles(&self) -> bool {
        false
    }

    /// Hands HFiles already in the cluster's file system to the regions of `table` that hold
    /// their rows, one call per region as HBase's bulk-load tool makes them; the server
    /// moves them into the table. Refused where [`Store::loads_hfiles`] is false.
    fn load_hfiles(&self, table: &str, regions: &[HFileRegion]) -> Result<()> {
        let _ = (table, regions);
        Err(Error::BadArgument(format!(
            "{}: HFiles are handed over through HBase's own RPC (api=native) or HBase's bulk-load tool",
            self.identity()
        )))
    }

    /// Takes over the bulk load of `tables` that a [`BulkLoad::checkpoint`] of an unfinished
    /// load described as `state`: what it had staged stays, and a later `add` adds to it.
    /// Refused where the backend's bulk load cannot be resumed.
    fn resume_bulk_load(&self, tables: &[&str], state: &serde_json::Value) -> Result<Box<dyn BulkLoad>> {
        let _ = (tables, state);
        Err(Error::BadArgument(format!(
            "{}: a bulk load here cannot be resumed",
            self.identity()
        )))
    }
}

/// HFiles of one region, for [`Store::load_hfiles`]: their rows lie in `[start, end)` (`end`
/// empty: to the table's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HFileRegion {
    /// The region's first row.
    pub start: Vec<u8>,
    /// The row after its last (empty: the table's end).
    pub end: Vec<u8>,
    /// Each file's family and path, as the cluster's file system names it.
    pub files: Vec<(String, String)>,
}

/// Puts staged for a bulk load. Nothing added is acknowledged until [`BulkLoad::finish`]
/// returns `Ok`: then all of it is durable, and until then none of it is readable.
pub trait BulkLoad: Send + Sync {
    /// Whether `table` is loaded in bulk (it was empty when the bulk load began).
    fn covers(&self, table: &str) -> bool;

    /// Stages a batch of puts into a covered table; a later put of the same cell wins. A
    /// batch with anything but puts is refused whole.
    fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()>;

    /// Writes everything staged into the store and acknowledges it. Returns the distinct
    /// rows written into each covered table, by name: what the table holds, as it was empty.
    fn finish(&self) -> Result<Vec<(String, u64)>>;

    /// Makes everything added so far durable, and returns what [`Store::resume_bulk_load`]
    /// takes over should the load stop before it finishes; called again while `finish` runs,
    /// it says what `finish` has written so far. `None` where this bulk load cannot be
    /// resumed (its staged puts are lost with the process).
    fn checkpoint(&self) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }
}

/// The descriptors of the tables named, sorted by name; a table dropped while this runs is
/// left out. What a remote backend's `list_tables` does with the names its service lists.
pub fn describe_all(store: &dyn Store, names: impl IntoIterator<Item = String>) -> Result<Vec<TableDescriptor>> {
    let mut out = Vec::new();
    for name in names {
        match store.describe_table(&name) {
            Ok(d) => out.push(d),
            Err(Error::TableNotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Region start keys as a backend lists them, as [`Store::regions`] answers: sorted, without
/// the first region's empty start, each once.
pub(crate) fn split_keys(starts: impl IntoIterator<Item = Vec<u8>>) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = starts.into_iter().filter(|k| !k.is_empty()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The first line of a service's error message, trimmed: the rest is a stack trace.
pub(crate) fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}

/// Creates `table` unless a table of that name exists; an existing table must have the
/// same families.
pub fn ensure_table(store: &dyn Store, table: &TableDescriptor) -> Result<()> {
    match store.create_table(table) {
        Err(Error::TableExists(_)) => {
            let want = table.validated()?;
            let have = store.describe_table(&want.name)?;
            let names = |d: &TableDescriptor| d.families.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
            if names(&have) != names(&want) {
                return Err(Error::BadArgument(format!(
                    "table {} exists with families {:?}, expected {:?}",
                    want.name,
                    names(&have),
                    names(&want)
                )));
            }
            Ok(())
        }
        other => other,
    }
}

/// Visits every row of a scan, holding a bounded number of rows whatever the range holds
/// (see [`Store::scan_each`]). `visit` returns `false` to stop early.
pub fn scan_each(
    store: &dyn Store,
    table: &str,
    scan: &Scan,
    page: usize,
    mut visit: impl FnMut(Row) -> bool,
) -> Result<()> {
    store.scan_each(table, scan, page, &mut visit)
}

/// The rows of `table` (as `cbt count` or HBase's RowCounter count them): a scan that
/// returns one cell of each row.
pub fn count_rows(store: &dyn Store, table: &str) -> Result<u64> {
    store.row_count(table)
}

/// [`Store::row_count`] by a scan of one cell per row.
pub fn count_rows_scanning<S: Store + ?Sized>(store: &S, table: &str) -> Result<u64> {
    let scan = Scan {
        select: Selection {
            cell_limit: Some(1),
            ..Selection::default()
        },
        ..Scan::default()
    };
    let mut n = 0u64;
    store.scan_each(table, &scan, 10_000, &mut |_| {
        n += 1;
        true
    })?;
    Ok(n)
}

/// Visits every row of a scan in `scan` calls of `page` rows.
pub fn scan_pages<S: Store + ?Sized>(
    store: &S,
    table: &str,
    scan: &Scan,
    page: usize,
    visit: &mut dyn FnMut(Row) -> bool,
) -> Result<()> {
    let mut next = scan.clone();
    let mut remaining = scan.limit;
    loop {
        let want = remaining.map_or(page, |r| r.min(page));
        if want == 0 {
            return Ok(());
        }
        next.limit = Some(want);
        let rows = store.scan(table, &next)?;
        let got = rows.len();
        let last = rows.last().map(|r| r.key.clone());
        for row in rows {
            if !visit(row) {
                return Ok(());
            }
        }
        if got < want {
            return Ok(());
        }
        remaining = remaining.map(|r| r - got);
        next = next.after(last.expect("a full page has a last row"));
    }
}
