//! The `Hbase` Thrift1 service over a [`Store`], following HBase's
//! `ThriftHBaseServiceHandler`: argument parsing (`family:qualifier` columns), time bounds
//! (a timestamp argument reads cells strictly older than it), error kinds (`IOError` for
//! missing tables and families, `AlreadyExists`, `IllegalArgument`), and table state
//! (enabled or disabled, full column descriptors) kept durably beside the data.
//!
//! Read-modify-write calls (increments, appends, checkAndPut) take a row's stripe lock
//! exclusively; plain mutations take it shared, so they never interleave with one.

mod convert;
mod errors;
mod reads;
mod scanners;
mod tables;
mod thrift1;
mod thrift2;
mod writes;

pub use errors::serving;
pub use thrift2::Thrift2;

use convert::*;
use errors::*;
use scanners::ScannerMap;
use tables::*;
use writes::names_latest;

use super::eval::{Evaluator, Verdict};
use super::filter;
use crate::idl::thrift1::{
    AlreadyExists, BatchMutation, Bytes, ColumnDescriptor, HbaseSyncHandler, IOError, IllegalArgument, Mutation,
    ScannerID, TAppend, TCell, TIncrement, TRegionInfo, TRowResult, TScan, TThriftServerType, Text,
};
use crate::store::{
    self, Cell, Column, Get, Mutation as StoreMutation, Row, RowMutation, Scan, Selection, Store, TableDescriptor,
    canonical_table_name, now_millis,
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
/// Scanners one connection may hold open unless `serve --max-scanners-per-connection` says
/// otherwise.
pub const DEFAULT_SCANNERS_PER_CONNECTION: usize = 1_000;

/// Rows read from the store per step of a scanner.
const SCAN_STEP: usize = 256;

const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";
const NO_SUCH_FAMILY: &str = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
const NOT_ENABLED: &str = "org.apache.hadoop.hbase.TableNotEnabledException";
const NOT_DISABLED: &str = "org.apache.hadoop.hbase.TableNotDisabledException";
const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";

type R<T> = thrift::Result<T>;

/// A family's options beyond `VERSIONS`, as `ColumnDescriptor` carries them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FamilyOptions {
    compression: String,
    in_memory: bool,
    bloom_filter: String,
    block_cache: bool,
    ttl: i32,
    /// What Thrift2's descriptors carry beyond Thrift1's.
    #[serde(default)]
    more: MoreOptions,
}

/// A family's options that only Thrift2 sets and reads; `None` is HBase's default. They are
/// kept and reported, not acted on: the store has no blocks, encodings or replication.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct MoreOptions {
    block_size: Option<i32>,
    dfs_replication: Option<i16>,
    data_block_encoding: Option<i32>,
    keep_deleted_cells: Option<i32>,
    min_versions: Option<i32>,
    scope: Option<i32>,
    cache_blooms_on_write: Option<bool>,
    cache_data_on_write: Option<bool>,
    cache_indexes_on_write: Option<bool>,
    compress_tags: Option<bool>,
    evict_blocks_on_close: Option<bool>,
    configuration: BTreeMap<String, String>,
    #[serde(default, with = "byte_map")]
    attributes: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// A map with byte-string keys, kept as a list of pairs: JSON object keys must be text.
mod byte_map {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(m: &BTreeMap<Vec<u8>, Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Pairs(Vec<(Vec<u8>, Vec<u8>)>),
            /// States written before pairs: always empty, as a non-empty map could not be.
            Object(BTreeMap<String, Vec<u8>>),
        }
        Ok(match Form::deserialize(d)? {
            Form::Pairs(pairs) => pairs.into_iter().collect(),
            Form::Object(m) => m.into_iter().map(|(k, v)| (k.into_bytes(), v)).collect(),
        })
    }
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
            more: MoreOptions::default(),
        }
    }
}

impl FamilyOptions {
    /// What the store acts on: the TTL, which it applies at read as HBase does. The rest is
    /// kept and reported here, since the store has no blocks to compress or encode.
    fn store_storage(&self) -> store::Storage {
        store::Storage {
            ttl: if self.ttl <= 0 {
                store::storage::FOREVER
            } else {
                self.ttl as u32
            },
            ..store::Storage::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct TableState {
    enabled: bool,
    created: i64,
    families: BTreeMap<String, FamilyOptions>,
    /// Thrift2's table attributes and durability, kept and reported.
    #[serde(default, with = "byte_map")]
    attributes: BTreeMap<Vec<u8>, Vec<u8>>,
    #[serde(default)]
    durability: i32,
}

struct Scanner {
    table: String,
    scan: Scan,
    how: ScanOptions,
    ttls: HashMap<String, i32>,
    /// Rows (or, under a batch size, parts of rows) read but not yet returned, each with
    /// whether more of its row follows.
    pending: VecDeque<(Row, bool)>,
    /// Rows the scan's limit still allows.
    left: Option<usize>,
    done: bool,
    /// What every read of this scanner answers instead of rows.
    failure: Option<&'static str>,
    used: Instant,
    /// Store rows read per step under a filter: the rows asked for at first, growing
    /// while the filter drops rows.
    filtered_step: usize,
}

/// How a scanner shapes what it reads beyond the store's [`Scan`].
pub(super) struct ScanOptions {
    filter: Option<Evaluator>,
    /// Cells per returned part of a row.
    batch: Option<usize>,
    /// Thrift1's `sortColumns`.
    sorted: bool,
    /// Versions per column the filter returns (the store scan reads them all under one).
    versions: u32,
    /// Per-family time ranges, `min <= ts < max`, applied before the filter.
    family_ranges: HashMap<String, (i64, i64)>,
    /// Rows at most; `None` for no limit.
    limit: Option<usize>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            filter: None,
            batch: None,
            sorted: false,
            versions: 1,
            family_ranges: HashMap::new(),
            limit: None,
        }
    }
}

/// The service, shared by every connection: cloning it is cheap.
#[derive(Clone)]
pub struct Handler {
    state: Arc<State>,
    /// The connection served, numbered from 1; 0 for a handler of no connection.
    conn: u64,
    /// A connection's mutations awaiting [`Handler::commit`]; `None` applies them at once.
    deferred: Option<Arc<Mutex<Deferred>>>,
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
                StoreMutation::DeleteColumn { family, qualifier, .. }
                | StoreMutation::DeleteVersion { family, qualifier, .. } => 16 + family.len() + qualifier.len(),
                StoreMutation::DeleteFamily { family, .. } | StoreMutation::DeleteFamilyVersion { family, .. } => {
                    16 + family.len()
                }
                StoreMutation::DeleteRow { .. } => 16,
            })
            .sum::<usize>()
}

/// The service's state, in its parts.
pub(super) struct State {
    store: Arc<dyn Store>,
    tables: Tables,
    scanners: Scanners,
    /// Row locks, by [`stripe_of`]: read-modify-write calls take one exclusively, plain
    /// mutations shared.
    stripes: Vec<RwLock<()>>,
}

/// Tables' state beside the store's descriptors: enabled or not, family options (kept in
/// [`META_TABLE`]), the mutation calls' table cache, and the region every table reports.
pub(super) struct Tables {
    store: Arc<dyn Store>,
    states: RwLock<HashMap<String, TableState>>,
    /// Held by calls that change tables, so that they happen one at a time.
    ddl: Mutex<()>,
    /// Enabled tables by the name a call gave, for mutation calls; emptied by every change
    /// of table state.
    writable: RwLock<HashMap<Vec<u8>, Arc<TableDescriptor>>>,
    /// Namespaces created through Thrift2, with their configuration (kept in [`META_TABLE`]
    /// under [`NAMESPACE_PREFIX`]); `default` and `hbase` always exist.
    namespaces: RwLock<BTreeMap<String, BTreeMap<String, String>>>,
    host: String,
    port: i32,
    /// When the server started: its region server's start code.
    started: i64,
}

/// Meta rows that hold a namespace, not a table (no table name starts with a NUL byte).
const NAMESPACE_PREFIX: &[u8] = b"\0namespace:";

/// Open scanners by id, with their lease and limits.
pub(super) struct Scanners {
    map: Mutex<ScannerMap>,
    next: AtomicI32,
    /// Idle time after which a scanner is closed, as HBase's scanner lease.
    lease: Duration,
    /// Most scanners open at once.
    max: usize,
    /// Most scanners one connection may hold.
    per_connection: std::sync::atomic::AtomicUsize,
    /// The last connection number handed out.
    connections: std::sync::atomic::AtomicU64,
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
    /// `lease` are closed by [`Handler::expire_scanners`].
    pub fn new(store: Arc<dyn Store>, host: &str, port: u16, lease: Duration) -> store::Result<Handler> {
        store::ensure_table(store.as_ref(), &TableDescriptor::new(META_TABLE, &[META_FAMILY], 1))?;
        let mut states = HashMap::new();
        let mut namespaces = BTreeMap::new();
        for row in store.scan(META_TABLE, &Scan::default())? {
            if let Some(name) = row.key.strip_prefix(NAMESPACE_PREFIX) {
                let config = row
                    .value(META_FAMILY, META_QUALIFIER)
                    .and_then(|v| serde_json::from_slice(v).ok());
                if let (Ok(name), Some(config)) = (String::from_utf8(name.to_vec()), config) {
                    namespaces.insert(name, config);
                }
                continue;
            }
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
            state: Arc::new(State {
                store: store.clone(),
                tables: Tables {
                    store,
                    states: RwLock::new(states),
                    ddl: Mutex::new(()),
                    writable: RwLock::new(HashMap::new()),
                    namespaces: RwLock::new(namespaces),
                    host: host.to_string(),
                    port: i32::from(port),
                    started: now_millis(),
                },
                scanners: Scanners {
                    map: Mutex::new(ScannerMap::default()),
                    next: AtomicI32::new(0),
                    lease,
                    max: 100_000,
                    per_connection: DEFAULT_SCANNERS_PER_CONNECTION.into(),
                    connections: 0.into(),
                },
                stripes: (0..STRIPES).map(|_| RwLock::new(())).collect(),
            }),
            conn: 0,
            deferred: None,
        })
    }

    /// Caps the scanners one connection may hold open (default
    /// [`DEFAULT_SCANNERS_PER_CONNECTION`]), so that no client takes the server's whole
    /// allowance (100,000) from the others.
    pub fn limit_scanners_per_connection(&self, n: usize) {
        self.state.scanners.per_connection.store(n, Ordering::Relaxed);
    }

    /// Closes the scanners this handler's connection was the last to use: called when
    /// the connection closes. A scanner another connection read since is theirs to close.
    pub fn close_connection(&self) -> usize {
        self.state
            .scanners
            .map
            .lock()
            .expect("lock")
            .close_connection(self.conn)
    }

    /// Closes scanners idle past their lease; how many it closed.
    pub fn expire_scanners(&self) -> usize {
        self.state.expire_scanners()
    }

    /// Scanners open now.
    pub fn open_scanners(&self) -> usize {
        self.state.open_scanners()
    }

    /// A handler for one connection, whose mutation calls wait for [`Handler::commit`].
    /// The connection must commit before it sends their replies and before it serves any
    /// other call, so that nothing is acknowledged unwritten and its reads see its writes.
    pub fn for_connection(&self) -> Handler {
        Handler {
            state: self.state.clone(),
            conn: self.state.scanners.connections.fetch_add(1, Ordering::Relaxed) + 1,
            deferred: Some(Arc::new(Mutex::new(Deferred::default()))),
        }
    }

    /// Whether mutations wait for the connection's next commit.
    pub fn has_deferred(&self) -> bool {
        self.deferred
            .as_ref()
            .is_some_and(|d| !d.lock().expect("lock").runs.is_empty())
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
            self.state.apply(&table, &rows)?;
        }
        Ok(())
    }

    /// Applies a mutation call now, or defers it for a connection after validating it.
    fn mutate_rows<C: AsRef<[u8]>, M: IntoIterator<Item = writes::ThriftMutation<C>>>(
        &self,
        table: &[u8],
        batches: impl IntoIterator<Item = (Vec<u8>, M)>,
        timestamp: i64,
        rows_call: Option<&str>,
    ) -> R<()> {
        let (desc, rows) = self.state.mutation_call(table, batches, timestamp, rows_call)?;
        self.write_rows(&desc, rows)
    }

    /// Serves a Thrift1 mutation call read in place, as its generated handler method would.
    pub fn mutate_in_place(&self, call: &super::fast::Call) -> R<()> {
        let rows_call = matches!(call.method, "mutateRows" | "mutateRowsTs").then_some(call.method);
        let rows = call.rows.iter().map(|(row, range)| {
            let mutations = call.mutations[range.clone()].iter();
            (
                row.to_vec(),
                mutations.map(|&(delete, column, value)| (delete, column, value.to_vec())),
            )
        });
        self.mutate_rows(call.table, rows, call.timestamp, rows_call)
    }

    /// Applies rows now, or defers them for a connection after validating them.
    fn write_rows(&self, desc: &TableDescriptor, rows: Vec<RowMutation>) -> R<()> {
        let Some(deferred) = &self.deferred else {
            return self.state.apply(&desc.name, &rows);
        };
        store::validate_mutations(desc, &rows).map_err(store_error)?;
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
