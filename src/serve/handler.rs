//! The `Hbase` Thrift1 service over a [`Store`], following HBase's
//! `ThriftHBaseServiceHandler`: argument parsing (`family:qualifier` columns), time bounds
//! (a timestamp argument reads cells strictly older than it), error kinds (`IOError` for
//! missing tables and families, `AlreadyExists`, `IllegalArgument`), and table state
//! (enabled or disabled, full column descriptors) kept durably beside the data.
//!
//! Read-modify-write calls (increments, appends, checkAndPut) take a row's stripe lock
//! exclusively; plain mutations take it shared, so they never interleave with one.

use super::eval::{Evaluator, Verdict};
use super::filter;
use crate::store::{
    self, Cell, Column, Get, Mutation as StoreMutation, Row, RowMutation, Scan, Selection, Store, TableDescriptor,
    canonical_table_name, now_millis,
};
use hbase_thrift::hbase::{
    AlreadyExists, BatchMutation, Bytes, ColumnDescriptor, HbaseSyncHandler, IOError, IllegalArgument, Mutation,
    ScannerID, TAccessControlEntity, TAppend, TCell, TColumn, TIncrement, TRegionInfo, TRowResult, TScan,
    TThriftServerType, Text,
};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// HBase's `LATEST_TIMESTAMP`: "now" when given as a mutation timestamp, "no bound" for reads.
const LATEST: i64 = i64::MAX;
/// HBase's `HConstants.FOREVER`: a family without TTL.
const FOREVER: i32 = i32::MAX;
/// Where the server keeps table state, hidden from `getTableNames` as HBase hides its own.
pub const META_TABLE: &str = "hbase:thrift";
const META_FAMILY: &str = "m";
const META_QUALIFIER: &[u8] = b"state";
const STRIPES: usize = 256;
/// Rows read from the store per step of a scanner.
const SCAN_STEP: usize = 256;

const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";
const NO_SUCH_FAMILY: &str = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
const NOT_ENABLED: &str = "org.apache.hadoop.hbase.TableNotEnabledException";
const NOT_DISABLED: &str = "org.apache.hadoop.hbase.TableNotDisabledException";
const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";

fn io_error(message: impl Into<String>) -> thrift::Error {
    thrift::Error::User(Box::new(IOError::new(message.into(), false)))
}

fn illegal(message: impl Into<String>) -> thrift::Error {
    thrift::Error::User(Box::new(IllegalArgument::new(message.into())))
}

/// A store error as HBase's Thrift server reports the matching Java exception.
pub fn store_error(e: store::Error) -> thrift::Error {
    match e {
        store::Error::TableNotFound(t) => io_error(format!("{TABLE_NOT_FOUND}: {t}")),
        store::Error::TableExists(_) => {
            thrift::Error::User(Box::new(AlreadyExists::new("table name already in use".to_string())))
        }
        store::Error::FamilyNotFound { table, family } => io_error(format!(
            "{NO_SUCH_FAMILY}: Column family {family} does not exist in table {table}"
        )),
        store::Error::BadArgument(m) => illegal(m),
        store::Error::Io(m) => io_error(m),
        store::Error::Unavailable(m) => thrift::Error::User(Box::new(IOError::new(m, true))),
    }
}

type R<T> = thrift::Result<T>;

/// HBase's Thrift1 handler builds scans with the deprecated `Scan.setStartRow`/`setStopRow`,
/// which keep the old rule that a scan whose start equals its stop reads that one row.
fn get_scan(mut scan: Scan) -> Scan {
    if !scan.start.is_empty() && scan.start == scan.stop {
        scan.stop.push(0);
        scan.reversed = false;
    }
    scan
}

/// A `family[:qualifier]` column argument as HBase's `CellUtil.parseColumn` reads it:
/// `family` names the whole family, `family:` the empty qualifier.
fn parse_column(column: &[u8]) -> R<(String, Option<Vec<u8>>)> {
    let (family, qualifier) = match column.iter().position(|&b| b == b':') {
        Some(i) => (&column[..i], Some(column[i + 1..].to_vec())),
        None => (column, None),
    };
    let family = String::from_utf8(family.to_vec()).map_err(|_| {
        illegal(format!(
            "column family {:?} is not UTF-8",
            String::from_utf8_lossy(family)
        ))
    })?;
    if family.is_empty() {
        return Err(illegal("column family is empty"));
    }
    Ok((family, qualifier))
}

/// A delete of a column (every version at or below `ts`) or, for `family`, of the whole
/// family.
fn delete_of(column: &[u8], timestamp: Option<i64>) -> R<StoreMutation> {
    let (family, qualifier) = parse_column(column)?;
    Ok(match qualifier {
        Some(qualifier) => StoreMutation::DeleteColumn {
            family,
            qualifier,
            timestamp,
        },
        None => StoreMutation::DeleteFamily { family, timestamp },
    })
}

/// A put's column: `family:qualifier`, where `family:` is the empty qualifier.
fn parse_put_column(column: &[u8]) -> R<(String, Vec<u8>)> {
    if !column.contains(&b':') {
        return Err(illegal(format!(
            "Invalid famAndQf provided: {:?} has no qualifier; only deletes take a whole family",
            String::from_utf8_lossy(column)
        )));
    }
    let (family, qualifier) = parse_column(column)?;
    Ok((family, qualifier.unwrap_or_default()))
}

/// A column list as HBase's `Get`/`Scan` build it, in order: `addFamily` selects the whole
/// family (dropping its columns), and `addColumn` on a whole family narrows it to that
/// column.
fn columns(list: &[Text]) -> R<Vec<Column>> {
    let mut families: Vec<(String, Option<Vec<Vec<u8>>>)> = Vec::new();
    for c in list {
        let (family, qualifier) = parse_column(c)?;
        let i = match families.iter().position(|(f, _)| *f == family) {
            Some(i) => i,
            None => {
                families.push((family, Some(Vec::new())));
                families.len() - 1
            }
        };
        let entry = &mut families[i].1;
        match qualifier {
            None => *entry = None,
            Some(q) => match entry {
                Some(qs) => qs.push(q),
                None => *entry = Some(vec![q]),
            },
        }
    }
    Ok(families
        .into_iter()
        .flat_map(|(family, qualifiers)| match qualifiers {
            None => vec![Column {
                family,
                qualifier: None,
            }],
            Some(qs) => qs
                .into_iter()
                .map(|q| Column {
                    family: family.clone(),
                    qualifier: Some(q),
                })
                .collect(),
        })
        .collect())
}

fn column_name(c: &Cell) -> Vec<u8> {
    let mut name = Vec::with_capacity(c.family.len() + 1 + c.qualifier.len());
    name.extend_from_slice(c.family.as_bytes());
    name.push(b':');
    name.extend_from_slice(&c.qualifier);
    name
}

fn tcell(c: Cell) -> TCell {
    TCell::new(c.value, c.timestamp)
}

fn row_result(row: Row, sorted: bool) -> TRowResult {
    if sorted {
        let list: Vec<TColumn> = row
            .cells
            .into_iter()
            .map(|c| TColumn::new(column_name(&c), tcell(c)))
            .collect();
        TRowResult::new(row.key, None, list)
    } else {
        // One entry per column, as HBase's map keeps: the newest version is the first seen.
        let mut map = BTreeMap::new();
        for c in row.cells {
            map.entry(column_name(&c)).or_insert_with(|| tcell(c));
        }
        TRowResult::new(row.key, map, None)
    }
}

/// A family's options beyond `VERSIONS`, as `ColumnDescriptor` carries them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FamilyOptions {
    compression: String,
    in_memory: bool,
    bloom_filter: String,
    block_cache: bool,
    ttl: i32,
}

impl Default for FamilyOptions {
    /// What HBase gives a family created without options.
    fn default() -> Self {
        FamilyOptions {
            compression: "NONE".into(),
            in_memory: false,
            bloom_filter: "ROW".into(),
            block_cache: true,
            ttl: FOREVER,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct TableState {
    enabled: bool,
    created: i64,
    families: BTreeMap<String, FamilyOptions>,
}

struct Scanner {
    table: String,
    scan: Scan,
    filter: Option<Evaluator>,
    batch: Option<usize>,
    sorted: bool,
    ttls: HashMap<String, i32>,
    pending: VecDeque<TRowResult>,
    done: bool,
    /// What every read of this scanner answers instead of rows.
    failure: Option<&'static str>,
    used: Instant,
    /// Store rows read per step under a filter: the rows asked for at first, growing
    /// while the filter drops rows.
    filtered_step: usize,
}

/// The service, shared by every connection: cloning it is cheap.
#[derive(Clone)]
pub struct Handler {
    inner: Arc<Inner>,
    /// A connection's mutations awaiting [`Handler::commit`]; `None` applies them at once.
    deferred: Option<Arc<Mutex<Deferred>>>,
}

impl std::ops::Deref for Handler {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

/// Validated mutation calls of one connection whose success replies are written but not
/// yet sent. Applied together, one store batch per run of calls on the same table, just
/// before the replies go out: a loader's pipelined calls, one per row when every row has
/// its own timestamp, then cost one store commit per read of the socket, not one each.
#[derive(Default)]
struct Deferred {
    runs: Vec<(String, Vec<RowMutation>)>,
    bytes: usize,
}

/// Deferred bytes beyond which they are applied at once.
const DEFER_LIMIT: usize = 8 << 20;

fn approximate_size(row: &RowMutation) -> usize {
    row.row.len()
        + row
            .mutations
            .iter()
            .map(|m| match m {
                StoreMutation::Put {
                    family,
                    qualifier,
                    value,
                    ..
                } => 16 + family.len() + qualifier.len() + value.len(),
                StoreMutation::DeleteColumn { family, qualifier, .. } => 16 + family.len() + qualifier.len(),
                StoreMutation::DeleteFamily { family, .. } => 16 + family.len(),
                StoreMutation::DeleteRow { .. } => 16,
            })
            .sum::<usize>()
}

/// The service state.
pub struct Inner {
    store: Arc<dyn Store>,
    host: String,
    port: i32,
    states: RwLock<HashMap<String, TableState>>,
    ddl: Mutex<()>,
    stripes: Vec<RwLock<()>>,
    scanners: Mutex<HashMap<i32, Arc<Mutex<Scanner>>>>,
    next_scanner: AtomicI32,
    /// Idle time after which a scanner is closed, as HBase's scanner lease.
    pub lease: Duration,
    /// Most scanners open at once.
    pub max_scanners: usize,
    /// Enabled tables by the name a call gave, for mutation calls; emptied by every change
    /// of table state.
    writable: RwLock<HashMap<Vec<u8>, Arc<TableDescriptor>>>,
}

fn stripe_of(row: &[u8]) -> usize {
    // FNV-1a: cheap and spreads neighbouring keys.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in row {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h % STRIPES as u64) as usize
}

impl Handler {
    /// Serves `store`, reporting `host:port` as the region server; scanners idle for
    /// `lease` are closed by [`Inner::expire_scanners`].
    pub fn new(store: Arc<dyn Store>, host: &str, port: u16, lease: Duration) -> store::Result<Handler> {
        store::ensure_table(store.as_ref(), &TableDescriptor::new(META_TABLE, &[META_FAMILY], 1))?;
        let mut states = HashMap::new();
        for row in store.scan(META_TABLE, &Scan::default())? {
            let (Ok(name), Some(value)) = (
                String::from_utf8(row.key.clone()),
                row.value(META_FAMILY, META_QUALIFIER),
            ) else {
                continue;
            };
            if let Ok(state) = serde_json::from_slice::<TableState>(value) {
                states.insert(name, state);
            }
        }
        Ok(Handler {
            inner: Arc::new(Inner {
                store,
                host: host.to_string(),
                port: i32::from(port),
                states: RwLock::new(states),
                ddl: Mutex::new(()),
                stripes: (0..STRIPES).map(|_| RwLock::new(())).collect(),
                scanners: Mutex::new(HashMap::new()),
                next_scanner: AtomicI32::new(0),
                lease,
                max_scanners: 100_000,
                writable: RwLock::new(HashMap::new()),
            }),
            deferred: None,
        })
    }

    /// A handler for one connection, whose mutation calls wait for [`Handler::commit`].
    /// The connection must commit before it sends their replies and before it serves any
    /// other call, so that nothing is acknowledged unwritten and its reads see its writes.
    pub fn for_connection(&self) -> Handler {
        Handler {
            inner: self.inner.clone(),
            deferred: Some(Arc::new(Mutex::new(Deferred::default()))),
        }
    }

    /// Applies the deferred mutations, in the order their calls came.
    pub fn commit(&self) -> R<()> {
        let Some(deferred) = &self.deferred else {
            return Ok(());
        };
        let runs = {
            let mut d = deferred.lock().expect("lock");
            d.bytes = 0;
            std::mem::take(&mut d.runs)
        };
        for (table, rows) in runs {
            self.apply(&table, &rows)?;
        }
        Ok(())
    }

    /// Applies a mutation call now, or defers it for a connection after validating it.
    fn mutate_rows(&self, table: &[u8], batches: Vec<BatchMutation>, timestamp: i64, rows_call: Option<&str>) -> R<()> {
        let (desc, rows) = self.mutation_call(table, batches, timestamp, rows_call)?;
        let Some(deferred) = &self.deferred else {
            return self.apply(&desc.name, &rows);
        };
        store::validate_mutations(&desc, &rows).map_err(store_error)?;
        let full = {
            let mut d = deferred.lock().expect("lock");
            d.bytes += rows.iter().map(approximate_size).sum::<usize>();
            match d.runs.last_mut() {
                Some((t, run)) if *t == desc.name => run.extend(rows),
                _ => d.runs.push((desc.name.clone(), rows)),
            }
            d.bytes > DEFER_LIMIT
        };
        if full { self.commit() } else { Ok(()) }
    }
}

thread_local! {
    /// The call this connection's thread is serving, for errors that HBase words by it.
    static CALL: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Notes the call about to be served on this thread (one thread serves one connection).
pub fn serving(method: &str) {
    CALL.with(|c| {
        let mut c = c.borrow_mut();
        c.clear();
        c.push_str(method);
    });
}

/// A table name HBase refuses: `TableName.valueOf` throws IllegalArgumentException. The
/// calls that catch it answer IllegalArgument; elsewhere it escapes the handler and the
/// Thrift server answers "Internal error processing CALL".
fn bad_table_name(message: String) -> thrift::Error {
    CALL.with(|c| {
        let call = c.borrow();
        match call.as_str() {
            "mutateRow" | "mutateRowTs" | "mutateRows" | "mutateRowsTs" | "checkAndPut" => illegal(message),
            _ => thrift::Error::Application(thrift::ApplicationError::new(
                thrift::ApplicationErrorKind::InternalError,
                format!("Internal error processing {call}"),
            )),
        }
    })
}

impl Inner {
    fn table_name(name: &[u8]) -> R<String> {
        let name = std::str::from_utf8(name).map_err(|_| bad_table_name("table name is not UTF-8".into()))?;
        canonical_table_name(name).map_err(|e| match e {
            store::Error::BadArgument(m) => bad_table_name(m),
            e => store_error(e),
        })
    }

    /// The table's descriptor and state; a state written for an older table of the same
    /// name (other families) is ignored.
    fn lookup(&self, name: &[u8]) -> R<(TableDescriptor, TableState)> {
        let name = Self::table_name(name)?;
        if name.starts_with("hbase:") {
            return Err(io_error(format!("{TABLE_NOT_FOUND}: {name}")));
        }
        let desc = self.store.describe_table(&name).map_err(store_error)?;
        let state = self.states.read().expect("lock").get(&name).cloned();
        let state = match state {
            Some(s) if s.families.keys().eq(desc.families.iter().map(|f| &f.name)) => s,
            _ => TableState {
                enabled: true,
                created: 0,
                families: desc
                    .families
                    .iter()
                    .map(|f| (f.name.clone(), FamilyOptions::default()))
                    .collect(),
            },
        };
        Ok((desc, state))
    }

    /// An enabled table, for data calls.
    fn data_table(&self, name: &[u8]) -> R<(TableDescriptor, TableState)> {
        let (desc, state) = self.lookup(name)?;
        if !state.enabled {
            return Err(io_error(format!("{NOT_ENABLED}: {} is disabled.", desc.name)));
        }
        Ok((desc, state))
    }

    fn save_state(&self, name: &str, state: Option<&TableState>) -> R<()> {
        let mutation = match state {
            Some(s) => StoreMutation::put_now(
                META_FAMILY,
                META_QUALIFIER,
                serde_json::to_vec(s).expect("state serializes"),
            ),
            None => StoreMutation::DeleteRow { timestamp: None },
        };
        self.store
            .mutate(META_TABLE, &[RowMutation::new(name.as_bytes(), vec![mutation])])
            .map_err(store_error)?;
        let mut states = self.states.write().expect("lock");
        match state {
            Some(s) => states.insert(name.to_string(), s.clone()),
            None => states.remove(name),
        };
        drop(states);
        self.writable.write().expect("lock").clear();
        Ok(())
    }

    fn set_enabled(&self, name: &[u8], enabled: bool) -> R<()> {
        let _ddl = self.ddl.lock().expect("lock");
        let (desc, mut state) = self.lookup(name)?;
        if state.enabled == enabled {
            let kind = if enabled { NOT_DISABLED } else { NOT_ENABLED };
            return Err(io_error(format!("{kind}: {}", desc.name)));
        }
        state.enabled = enabled;
        self.save_state(&desc.name, Some(&state))
    }

    /// Drops cells older than their family's TTL.
    fn expire(ttls: &HashMap<String, i32>, cells: &mut Vec<Cell>) {
        if ttls.values().all(|&t| t == FOREVER) {
            return;
        }
        let now = now_millis();
        cells.retain(|c| match ttls.get(&c.family) {
            Some(&ttl) if ttl != FOREVER => c.timestamp > now - i64::from(ttl) * 1000,
            _ => true,
        });
    }

    fn ttls(state: &TableState) -> HashMap<String, i32> {
        state.families.iter().map(|(f, o)| (f.clone(), o.ttl)).collect()
    }

    fn read(&self, table: &[u8], gets: Vec<Get>) -> R<Vec<Option<Row>>> {
        let (desc, state) = self.data_table(table)?;
        let ttls = Self::ttls(&state);
        let rows = self.store.get(&desc.name, &gets).map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| {
                r.and_then(|mut r| {
                    Self::expire(&ttls, &mut r.cells);
                    (!r.cells.is_empty()).then_some(r)
                })
            })
            .collect())
    }

    fn selection(columns: Option<&[Text]>, timestamp: i64, versions: u32) -> R<Selection> {
        Ok(Selection {
            columns: match columns {
                Some(c) => self::columns(c)?,
                None => Vec::new(),
            },
            max_versions: versions,
            time_range: (timestamp != LATEST).then_some((0, timestamp.max(0))),
            ..Selection::default()
        })
    }

    fn cells(&self, table: &[u8], row: Text, column: &[u8], timestamp: i64, versions: i32) -> R<Vec<TCell>> {
        if versions <= 0 {
            return Err(io_error(format!("{DO_NOT_RETRY}: maxVersions must be positive")));
        }
        let select = Self::selection(Some(&[column.to_vec()]), timestamp, versions as u32)?;
        let row = self.read(table, vec![Get { row, select }])?.pop().flatten();
        Ok(row.map_or_else(Vec::new, |r| r.cells.into_iter().map(tcell).collect()))
    }

    fn rows(&self, table: &[u8], rows: Vec<Text>, columns: Option<Vec<Text>>, timestamp: i64) -> R<Vec<TRowResult>> {
        let select = Self::selection(columns.as_deref(), timestamp, 1)?;
        let gets = rows
            .into_iter()
            .map(|row| Get {
                row,
                select: select.clone(),
            })
            .collect();
        Ok(self
            .read(table, gets)?
            .into_iter()
            .flatten()
            .map(|r| row_result(r, false))
            .collect())
    }

    /// Applies row mutations under shared stripe locks.
    fn apply(&self, table: &str, rows: &[RowMutation]) -> R<()> {
        let mut stripes: Vec<usize> = rows.iter().map(|r| stripe_of(&r.row)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _guards: Vec<_> = stripes.iter().map(|&s| self.stripes[s].read().expect("lock")).collect();
        self.store.mutate(table, rows).map_err(store_error)
    }

    /// A Thrift row batch as store mutations: puts first, then deletes, as HBase applies them.
    /// `rows_call` names a mutateRows(Ts) call, where HBase refuses a put that names only a
    /// family; mutateRow(Ts) skips it.
    fn batch(row: Vec<u8>, mutations: Vec<Mutation>, timestamp: i64, rows_call: Option<&str>) -> R<RowMutation> {
        if row.is_empty() {
            return Err(illegal("Row length is 0"));
        }
        let ts = (timestamp != LATEST).then_some(timestamp);
        let mut puts = Vec::new();
        let mut deletes = Vec::new();
        for m in mutations {
            let column = m.column.unwrap_or_default();
            if m.is_delete.unwrap_or(false) {
                deletes.push(delete_of(&column, ts)?);
            } else {
                // HBase logs and skips a put that names only a family in mutateRow(Ts).
                let (family, Some(qualifier)) = parse_column(&column)? else {
                    match rows_call {
                        Some(_) => return Err(illegal("Invalid famAndQf provided.")),
                        None => continue,
                    }
                };
                puts.push(StoreMutation::Put {
                    family,
                    qualifier,
                    timestamp: ts,
                    value: m.value.unwrap_or_default(),
                });
            }
        }
        puts.extend(deletes);
        Ok(RowMutation::new(row, puts))
    }

    /// An enabled table for a mutation call. A miss is looked up under the cache's lock,
    /// so a state change that clears the cache cannot interleave with it.
    fn writable_table(&self, name: &[u8]) -> R<Arc<TableDescriptor>> {
        if let Some(desc) = self.writable.read().expect("lock").get(name) {
            return Ok(desc.clone());
        }
        let mut cache = self.writable.write().expect("lock");
        let desc = Arc::new(self.data_table(name)?.0);
        cache.insert(name.to_vec(), desc.clone());
        Ok(desc)
    }

    /// A mutation call's table and rows, checked against the table's state.
    /// mutateRows(Ts) (`rows_call`) builds its rows before it looks at the table, outside the
    /// handler's error mapping: a bad row there reaches HBase's Thrift processor as an
    /// unchecked exception, an internal error without detail.
    fn mutation_call(
        &self,
        table: &[u8],
        batches: Vec<BatchMutation>,
        timestamp: i64,
        rows_call: Option<&str>,
    ) -> R<(Arc<TableDescriptor>, Vec<RowMutation>)> {
        let rows = batches
            .into_iter()
            .map(|b| {
                Self::batch(
                    b.row.unwrap_or_default(),
                    b.mutations.unwrap_or_default(),
                    timestamp,
                    rows_call,
                )
            })
            .collect::<R<Vec<_>>>()
            .map_err(|e| match (rows_call, e) {
                (Some(name), thrift::Error::User(u)) if u.downcast_ref::<IllegalArgument>().is_some() => {
                    thrift::Error::Application(thrift::ApplicationError::new(
                        thrift::ApplicationErrorKind::InternalError,
                        format!("Internal error processing {name}"),
                    ))
                }
                (_, e) => e,
            })?;
        let desc = self.writable_table(table)?;
        Ok((desc, rows))
    }

    fn delete(&self, table: &[u8], row: Vec<u8>, mutation: StoreMutation) -> R<()> {
        let (desc, _) = self.data_table(table)?;
        self.apply(&desc.name, &[RowMutation::new(row, vec![mutation])])
    }

    /// Runs `f` on the newest cells of `columns` in `row` under the row's exclusive lock.
    fn read_modify_write<T>(
        &self,
        table: &[u8],
        row: &[u8],
        columns: &[(String, Vec<u8>)],
        f: impl FnOnce(&[Option<Cell>]) -> R<(Vec<StoreMutation>, T)>,
    ) -> R<T> {
        if row.is_empty() {
            return Err(illegal("Row length is 0"));
        }
        let (desc, state) = self.data_table(table)?;
        let _guard = self.stripes[stripe_of(row)].write().expect("lock");
        let get = Get {
            row: row.to_vec(),
            select: Selection {
                columns: columns.iter().map(|(f, q)| Column::qualifier(f, q.clone())).collect(),
                ..Selection::default()
            },
        };
        let mut current = self.store.get(&desc.name, &[get]).map_err(store_error)?;
        let mut cells = current.pop().flatten().map(|r| r.cells).unwrap_or_default();
        Self::expire(&Self::ttls(&state), &mut cells);
        let found: Vec<Option<Cell>> = columns
            .iter()
            .map(|(f, q)| cells.iter().find(|c| c.family == *f && c.qualifier == *q).cloned())
            .collect();
        let (mutations, out) = f(&found)?;
        if !mutations.is_empty() {
            self.store
                .mutate(&desc.name, &[RowMutation::new(row.to_vec(), mutations)])
                .map_err(store_error)?;
        }
        Ok(out)
    }

    fn increment(&self, table: &[u8], row: &[u8], column: &[u8], amount: i64) -> R<i64> {
        let (family, qualifier) = parse_column(column)?;
        let columns = [(family.clone(), qualifier.unwrap_or_default())];
        self.read_modify_write(table, row, &columns, |found| {
            let (old, ts) = match &found[0] {
                None => (0, 0),
                Some(c) => {
                    let bytes: [u8; 8] = c.value.as_slice().try_into().map_err(|_| {
                        io_error(format!(
                            "{DO_NOT_RETRY}: Field is not a long, it's {} bytes wide",
                            c.value.len()
                        ))
                    })?;
                    (i64::from_be_bytes(bytes), c.timestamp)
                }
            };
            let new = old.wrapping_add(amount);
            let ts = now_millis().max(ts + 1);
            let put = StoreMutation::put(&columns[0].0, columns[0].1.clone(), ts, new.to_be_bytes());
            Ok((vec![put], new))
        })
    }

    fn open_scanner(
        &self,
        table: &[u8],
        scan: Scan,
        filter: Option<Evaluator>,
        batch: Option<usize>,
        sorted: bool,
    ) -> R<i32> {
        let (desc, state) = self.data_table(table)?;
        scan.select.validate(&desc).map_err(store_error)?;
        let mut scanners = self.scanners.lock().expect("lock");
        if scanners.len() >= self.max_scanners {
            return Err(io_error(format!(
                "too many open scanners ({}); close scanners when done",
                self.max_scanners
            )));
        }
        let id = loop {
            let id = self.next_scanner.fetch_add(1, Ordering::Relaxed) & i32::MAX;
            if !scanners.contains_key(&id) {
                break id;
            }
        };
        scanners.insert(
            id,
            Arc::new(Mutex::new(Scanner {
                table: desc.name,
                scan,
                filter,
                batch,
                sorted,
                ttls: Self::ttls(&state),
                pending: VecDeque::new(),
                filtered_step: 0,
                done: false,
                failure: None,
                used: Instant::now(),
            })),
        );
        Ok(id)
    }

    fn scanner(&self, id: i32) -> R<Arc<Mutex<Scanner>>> {
        self.scanners
            .lock()
            .expect("lock")
            .get(&id)
            .cloned()
            .ok_or_else(|| illegal("scanner ID is invalid"))
    }

    /// Closes scanners idle for longer than the lease; returns how many.
    pub fn expire_scanners(&self) -> usize {
        let mut scanners = self.scanners.lock().expect("lock");
        let before = scanners.len();
        scanners.retain(|_, s| match s.try_lock() {
            Ok(s) => s.used.elapsed() < self.lease,
            Err(_) => true, // in use right now
        });
        before - scanners.len()
    }

    /// Open scanners.
    pub fn open_scanners(&self) -> usize {
        self.scanners.lock().expect("lock").len()
    }

    fn next_rows(&self, id: i32, n: i32) -> R<Vec<TRowResult>> {
        let scanner = self.scanner(id)?;
        let mut s = scanner.lock().expect("lock");
        s.used = Instant::now();
        if let Some(why) = s.failure {
            return Err(io_error(why));
        }
        let want = n.max(0) as usize;
        let mut out = Vec::with_capacity(want.min(1024));
        while out.len() < want {
            if let Some(r) = s.pending.pop_front() {
                out.push(r);
                continue;
            }
            if s.done {
                break;
            }
            let mut step = s.scan.clone();
            let asked = (want - out.len()).min(SCAN_STEP * 4);
            step.limit = Some(if s.filter.is_some() {
                // A page of 10 reads 10 rows, not a whole step, when the filter keeps them.
                s.filtered_step = (s.filtered_step * 4).clamp(asked, SCAN_STEP * 4);
                s.filtered_step
            } else {
                asked
            });
            let rows = self.store.scan(&s.table, &step).map_err(store_error)?;
            if rows.len() < step.limit.unwrap_or(0) {
                s.done = true;
            }
            if let Some(last) = rows.last() {
                let resume = std::mem::take(&mut s.scan).after(last.key.clone());
                s.scan = resume;
            }
            for mut row in rows {
                Self::expire(&s.ttls, &mut row.cells);
                if row.cells.is_empty() {
                    continue;
                }
                let reversed = s.scan.reversed;
                let row = match &mut s.filter {
                    None => row,
                    Some(f) => match f.row(row, 1, reversed) {
                        Verdict::Keep(r) => r,
                        Verdict::Drop => continue,
                        Verdict::Stop => {
                            s.done = true;
                            break;
                        }
                    },
                };
                let (sorted, batch) = (s.sorted, s.batch);
                match batch {
                    Some(b) if row.cells.len() > b => {
                        let key = row.key;
                        let mut cells = row.cells;
                        while !cells.is_empty() {
                            let rest = cells.split_off(b.min(cells.len()));
                            s.pending.push_back(row_result(
                                Row {
                                    key: key.clone(),
                                    cells,
                                },
                                sorted,
                            ));
                            cells = rest;
                        }
                    }
                    _ => s.pending.push_back(row_result(row, sorted)),
                }
            }
        }
        Ok(out)
    }

    fn region(&self, desc: &TableDescriptor, state: &TableState) -> TRegionInfo {
        let id = state.created;
        TRegionInfo::new(
            Vec::new(),
            Vec::new(),
            id,
            format!("{},,{id}.", desc.name).into_bytes(),
            1i8,
            self.host.clone().into_bytes(),
            self.port,
        )
    }
}

fn family_options(cd: &ColumnDescriptor) -> R<(String, u32, FamilyOptions)> {
    let name = cd.name.clone().unwrap_or_default();
    if name.is_empty() {
        return Err(illegal("column name is empty"));
    }
    let (family, _) = parse_column(&name)?;
    let versions = cd.max_versions.unwrap_or(3);
    if versions <= 0 {
        return Err(illegal(format!("Maximum versions must be positive (family {family})")));
    }
    let compression = cd.compression.clone().unwrap_or_else(|| "NONE".into()).to_uppercase();
    const COMPRESSIONS: [&str; 7] = ["NONE", "GZ", "LZO", "SNAPPY", "LZ4", "BZIP2", "ZSTD"];
    if !COMPRESSIONS.contains(&compression.as_str()) {
        return Err(illegal(format!(
            "Unsupported compression algorithm name: {}",
            cd.compression.as_deref().unwrap_or_default().to_lowercase()
        )));
    }
    let bloom = cd.bloom_filter_type.clone().unwrap_or_else(|| "NONE".into());
    const BLOOMS: [&str; 4] = ["NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH"];
    if !BLOOMS.contains(&bloom.as_str()) {
        return Err(illegal(format!(
            "No enum constant org.apache.hadoop.hbase.regionserver.BloomType.{bloom}"
        )));
    }
    let ttl = cd.time_to_live.unwrap_or(FOREVER);
    Ok((
        family,
        versions as u32,
        FamilyOptions {
            compression,
            in_memory: cd.in_memory.unwrap_or(false),
            bloom_filter: bloom,
            block_cache: cd.block_cache_enabled.unwrap_or(false),
            ttl: if ttl > 0 { ttl } else { FOREVER },
        },
    ))
}

impl HbaseSyncHandler for Handler {
    fn handle_enable_table(&self, table_name: Bytes) -> R<()> {
        self.set_enabled(&table_name, true)
    }

    fn handle_disable_table(&self, table_name: Bytes) -> R<()> {
        self.set_enabled(&table_name, false)
    }

    fn handle_is_table_enabled(&self, table_name: Bytes) -> R<bool> {
        Ok(self.lookup(&table_name)?.1.enabled)
    }

    fn handle_compact(&self, table_name_or_region_name: Bytes) -> R<()> {
        let name = table_name_or_region_name;
        let table = name.split(|&b| b == b',').next().unwrap_or_default();
        self.lookup(table).map(|_| ())
    }

    fn handle_major_compact(&self, table_name_or_region_name: Bytes) -> R<()> {
        self.handle_compact(table_name_or_region_name)
    }

    fn handle_get_table_names(&self) -> R<Vec<Text>> {
        Ok(self
            .store
            .list_tables()
            .map_err(store_error)?
            .into_iter()
            .filter(|t| !t.name.starts_with("hbase:"))
            .map(|t| t.name.into_bytes())
            .collect())
    }

    fn handle_get_table_names_with_is_table_enabled(&self) -> R<BTreeMap<Text, bool>> {
        let mut out = BTreeMap::new();
        for name in self.handle_get_table_names()? {
            let enabled = self.lookup(&name).map(|(_, s)| s.enabled).unwrap_or(true);
            out.insert(name, enabled);
        }
        Ok(out)
    }

    fn handle_get_column_descriptors(&self, table_name: Text) -> R<BTreeMap<Text, ColumnDescriptor>> {
        let (desc, state) = self.lookup(&table_name)?;
        let mut out = BTreeMap::new();
        for f in &desc.families {
            let o = state.families.get(&f.name).cloned().unwrap_or_default();
            let name = format!("{}:", f.name).into_bytes();
            out.insert(
                name.clone(),
                ColumnDescriptor::new(
                    name,
                    f.max_versions.min(i32::MAX as u32) as i32,
                    o.compression,
                    o.in_memory,
                    o.bloom_filter,
                    0,
                    0,
                    o.block_cache,
                    o.ttl,
                ),
            );
        }
        Ok(out)
    }

    fn handle_get_table_regions(&self, table_name: Text) -> R<Vec<TRegionInfo>> {
        Inner::table_name(&table_name)?;
        match self.lookup(&table_name) {
            Ok((desc, state)) => Ok(vec![self.region(&desc, &state)]),
            // HBase answers an empty list for a table that does not exist.
            Err(_) => Ok(Vec::new()),
        }
    }

    fn handle_create_table(&self, table_name: Text, column_families: Vec<ColumnDescriptor>) -> R<()> {
        let name = Inner::table_name(&table_name)?;
        if name.starts_with("hbase:") {
            return Err(illegal(format!("table {name} is in the reserved namespace hbase")));
        }
        let _ddl = self.ddl.lock().expect("lock");
        // HBase asks whether the table exists before it reads the families.
        if self.store.describe_table(&name).is_ok() {
            return Err(store_error(store::Error::TableExists(name)));
        }
        let mut families = Vec::new();
        let mut options = BTreeMap::new();
        for cd in &column_families {
            let (family, versions, o) = family_options(cd)?;
            families.push(store::FamilyDescriptor {
                name: family.clone(),
                max_versions: versions,
            });
            if options.insert(family.clone(), o).is_some() {
                return Err(illegal(format!("Column Family {family} already exists")));
            }
        }
        if families.is_empty() {
            // HBase's master refuses it in its sanity checks, as an IOError.
            return Err(io_error(format!(
                "{DO_NOT_RETRY}: Table should have at least one column family. Set hbase.table.sanity.checks to false at conf or table descriptor if you want to bypass sanity checks"
            )));
        }
        let desc = TableDescriptor { name, families };
        self.store.create_table(&desc).map_err(store_error)?;
        let state = TableState {
            enabled: true,
            created: now_millis(),
            families: options,
        };
        self.save_state(&desc.validated().map_err(store_error)?.name, Some(&state))
    }

    fn handle_delete_table(&self, table_name: Text) -> R<()> {
        let _ddl = self.ddl.lock().expect("lock");
        let (desc, state) = self.lookup(&table_name)?;
        if state.enabled {
            return Err(io_error(format!("{NOT_DISABLED}: {}", desc.name)));
        }
        self.store.delete_table(&desc.name).map_err(store_error)?;
        self.save_state(&desc.name, None)
    }

    fn handle_get(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.cells(&table_name, row, &column, LATEST, 1)
    }

    fn handle_get_ver(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.cells(&table_name, row, &column, LATEST, num_versions)
    }

    fn handle_get_ver_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.cells(&table_name, row, &column, timestamp, num_versions)
    }

    fn handle_get_row(&self, table_name: Text, row: Text, _attributes: BTreeMap<Text, Text>) -> R<Vec<TRowResult>> {
        self.rows(&table_name, vec![row], None, LATEST)
    }

    fn handle_get_row_with_columns(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, vec![row], Some(columns), LATEST)
    }

    fn handle_get_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, vec![row], None, timestamp)
    }

    fn handle_get_row_with_columns_ts(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, vec![row], Some(columns), timestamp)
    }

    fn handle_get_rows(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, rows, None, LATEST)
    }

    fn handle_get_rows_with_columns(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, rows, Some(columns), LATEST)
    }

    fn handle_get_rows_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, rows, None, timestamp)
    }

    fn handle_get_rows_with_columns_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.rows(&table_name, rows, Some(columns), timestamp)
    }

    fn handle_mutate_row(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(&table_name, vec![BatchMutation::new(row, mutations)], LATEST, None)
    }

    fn handle_mutate_row_ts(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(&table_name, vec![BatchMutation::new(row, mutations)], timestamp, None)
    }

    fn handle_mutate_rows(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(&table_name, row_batches, LATEST, Some("mutateRows"))
    }

    fn handle_mutate_rows_ts(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(&table_name, row_batches, timestamp, Some("mutateRowsTs"))
    }

    fn handle_atomic_increment(&self, table_name: Text, row: Text, column: Text, value: i64) -> R<i64> {
        self.increment(&table_name, &row, &column, value)
    }

    fn handle_delete_all(&self, table_name: Text, row: Text, column: Text, attributes: BTreeMap<Text, Text>) -> R<()> {
        self.handle_delete_all_ts(table_name, row, column, LATEST, attributes)
    }

    fn handle_delete_all_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        let m = delete_of(&column, (timestamp != LATEST).then_some(timestamp))?;
        self.delete(&table_name, row, m)
    }

    fn handle_delete_all_row(&self, table_name: Text, row: Text, attributes: BTreeMap<Text, Text>) -> R<()> {
        self.handle_delete_all_row_ts(table_name, row, LATEST, attributes)
    }

    fn handle_increment(&self, increment: TIncrement) -> R<()> {
        let (table, row) = (increment.table.unwrap_or_default(), increment.row.unwrap_or_default());
        if table.is_empty() || row.is_empty() {
            return Err(illegal("Must supply a table and a row key; can't increment"));
        }
        let column = increment.column.unwrap_or_default();
        self.increment(&table, &row, &column, increment.ammount.unwrap_or(0))
            .map(|_| ())
    }

    fn handle_increment_rows(&self, increments: Vec<TIncrement>) -> R<()> {
        increments.into_iter().try_for_each(|i| self.handle_increment(i))
    }

    fn handle_delete_all_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        let ts = (timestamp != LATEST).then_some(timestamp);
        self.delete(&table_name, row, StoreMutation::DeleteRow { timestamp: ts })
    }

    fn handle_scanner_open_with_scan(
        &self,
        table_name: Text,
        scan: TScan,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let reversed = scan.reversed.unwrap_or(false);
        let timestamp = scan.timestamp.unwrap_or(LATEST);
        let parsed = match scan.filter_string.as_deref() {
            // HBase's ParseFilter throws an unchecked IllegalArgumentException, which
            // reaches libthrift's processor: the client gets this and no detail.
            Some(s) if !s.is_empty() => Some(filter::parse(s).map_err(|_| {
                thrift::Error::Application(thrift::ApplicationError::new(
                    thrift::ApplicationErrorKind::InternalError,
                    "Internal error processing scannerOpenWithScan",
                ))
            })?),
            _ => None,
        };
        let row_filter = parsed.as_ref().is_some_and(filter::Filter::has_filter_row);
        let filter = parsed.map(Evaluator::new);
        let mut select = Inner::selection(scan.columns.as_deref().filter(|c| !c.is_empty()), timestamp, 1)?;
        if filter.is_some() {
            // The filter sees every stored version; one is returned per column after it.
            select.max_versions = u32::MAX;
        }
        let batch = match scan.batch_size {
            Some(b) if b > 0 => Some(b as usize),
            _ => None,
        };
        let scan_ = get_scan(Scan {
            start: scan.start_row.unwrap_or_default(),
            stop: scan.stop_row.unwrap_or_default(),
            reversed,
            select,
            ..Scan::default()
        });
        let id = self.open_scanner(&table_name, scan_, filter, batch, scan.sort_columns.unwrap_or(false))?;
        if batch.is_some() && row_filter {
            // The region server refuses such a scan when it reaches it, so the open succeeds
            // and every read fails (HBase's client retries it for about 48 s first).
            self.scanner(id)?.lock().expect("lock").failure = Some(
                "org.apache.hadoop.hbase.filter.IncompatibleFilterException: Cannot set batch on a scan using a filter that returns true for filter.hasFilterRow",
            );
        }
        Ok(id)
    }

    fn handle_scanner_open(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, Vec::new(), columns, LATEST, BTreeMap::new())
    }

    fn handle_scanner_open_with_stop(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, stop_row, columns, LATEST, BTreeMap::new())
    }

    fn handle_scanner_open_with_prefix(
        &self,
        table_name: Text,
        start_and_prefix: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let select = Inner::selection(
            Some(&columns).filter(|c| !c.is_empty()).map(|c| c.as_slice()),
            LATEST,
            1,
        )?;
        let scan = Scan {
            start: start_and_prefix.clone(),
            prefix: start_and_prefix,
            select,
            ..Scan::default()
        };
        self.open_scanner(&table_name, scan, None, None, false)
    }

    fn handle_scanner_open_ts(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, Vec::new(), columns, timestamp, BTreeMap::new())
    }

    fn handle_scanner_open_with_stop_ts(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let select = Inner::selection(
            Some(&columns).filter(|c| !c.is_empty()).map(|c| c.as_slice()),
            timestamp,
            1,
        )?;
        let scan = get_scan(Scan {
            start: start_row,
            stop: stop_row,
            select,
            ..Scan::default()
        });
        self.open_scanner(&table_name, scan, None, None, false)
    }

    fn handle_scanner_get(&self, id: ScannerID) -> R<Vec<TRowResult>> {
        self.next_rows(id, 1)
    }

    fn handle_scanner_get_list(&self, id: ScannerID, nb_rows: i32) -> R<Vec<TRowResult>> {
        self.next_rows(id, nb_rows)
    }

    fn handle_scanner_close(&self, id: ScannerID) -> R<()> {
        self.scanners
            .lock()
            .expect("lock")
            .remove(&id)
            .map(|_| ())
            .ok_or_else(|| illegal("scanner ID is invalid"))
    }

    fn handle_get_region_info(&self, row: Text) -> R<TRegionInfo> {
        // A meta row key: `table,row,...`.
        let table = row.split(|&b| b == b',').next().unwrap_or_default();
        let (desc, state) = self.lookup(table).map_err(|_| {
            io_error(format!(
                "Cannot find row in hbase:meta, row={}",
                String::from_utf8_lossy(&row)
            ))
        })?;
        Ok(self.region(&desc, &state))
    }

    fn handle_append(&self, append: TAppend) -> R<Vec<TCell>> {
        let (table, row) = (append.table.unwrap_or_default(), append.row.unwrap_or_default());
        if table.is_empty() || row.is_empty() {
            return Err(illegal("Must supply a table and a row key; can't append"));
        }
        let (names, values) = (append.columns.unwrap_or_default(), append.values.unwrap_or_default());
        if names.len() != values.len() {
            return Err(illegal("TAppend needs one value per column"));
        }
        let mut columns = Vec::new();
        for c in &names {
            let (family, qualifier) = parse_column(c)?;
            columns.push((family, qualifier.unwrap_or_default()));
        }
        self.read_modify_write(&table, &row, &columns, |found| {
            let now = now_millis();
            let mut puts = Vec::new();
            let mut cells = Vec::new();
            for (((family, qualifier), old), add) in columns.iter().zip(found).zip(values) {
                let mut value = old.as_ref().map(|c| c.value.clone()).unwrap_or_default();
                value.extend_from_slice(&add);
                let ts = now.max(old.as_ref().map_or(0, |c| c.timestamp + 1));
                puts.push(StoreMutation::put(family, qualifier.clone(), ts, value.clone()));
                cells.push(Cell {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: ts,
                    value,
                });
            }
            cells.sort();
            Ok((puts, cells.into_iter().map(tcell).collect()))
        })
    }

    fn handle_check_and_put(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<bool> {
        let (put_family, put_qualifier) = parse_put_column(&mput.column.clone().unwrap_or_default())?;
        let (family, qualifier) = parse_column(&column)?;
        let checked = [(family, qualifier.unwrap_or_default())];
        let put_value = mput.value.unwrap_or_default();
        self.read_modify_write(&table_name, &row, &checked, |found| {
            // As in HBase, an empty expected value matches a missing or empty cell.
            let matches = match &found[0] {
                None => value.is_empty(),
                Some(c) => c.value == value,
            };
            if !matches {
                return Ok((Vec::new(), false));
            }
            Ok((
                vec![StoreMutation::put_now(
                    &put_family,
                    put_qualifier.clone(),
                    put_value.clone(),
                )],
                true,
            ))
        })
    }

    fn handle_get_thrift_server_type(&self) -> R<TThriftServerType> {
        Ok(TThriftServerType::ONE)
    }

    fn handle_get_cluster_id(&self) -> R<String> {
        Ok(format!("tallrow-{}", self.store.identity()))
    }

    fn handle_grant(&self, _info: TAccessControlEntity) -> R<bool> {
        Err(io_error("access control is not enabled on this server"))
    }

    fn handle_revoke(&self, _info: TAccessControlEntity) -> R<bool> {
        Err(io_error("access control is not enabled on this server"))
    }
}
