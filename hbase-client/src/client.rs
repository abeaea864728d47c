//! The client: finds the cluster, keeps one connection per server and service, locates
//! regions through `hbase:meta`, and runs batches of gets and mutations as HBase's batch
//! caller does (`AsyncBatchRpcRetryingCaller`): the actions are grouped by region server and
//! region, one `Multi` call goes to each server at once, and only the actions that failed are
//! located again and resent, after HBase's backoff.

use crate::cells::{self, Cell, CellType};
use crate::conn::{Conn, Options as ConnOptions, Pending, Reply, Service};
use crate::error::{Error, Result, Retry, pause};
use crate::locate::{self, Cache, Region};
use crate::pb;
use crate::zk::{Cluster, ServerName};
use bytes::Bytes;
use prost::Message;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// How the client finds the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registry {
    /// Through ZooKeeper (`hbase.zookeeper.quorum`, `zookeeper.znode.parent`).
    ZooKeeper {
        /// `host:port,...`.
        quorum: String,
        /// The znode HBase keeps its state under.
        parent: String,
    },
    /// Through masters' or region servers' `ClientMetaService` (`RpcConnectionRegistry`).
    Rpc {
        /// `host:port` of each bootstrap server.
        servers: Vec<String>,
    },
}

impl std::fmt::Display for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Registry::ZooKeeper { quorum, parent } => write!(f, "ZooKeeper {quorum}{parent}"),
            Registry::Rpc { servers } => write!(f, "RPC registry {}", servers.join(",")),
        }
    }
}

/// The client's settings, with HBase's defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// Connecting to a server (`hbase.ipc.client.socket.timeout.connect`, 10 s), the RPC
    /// registry's bootstrap, and the check that a quorum is ZooKeeper.
    pub connect_timeout: Duration,
    /// One call (`hbase.rpc.timeout`, 60 s).
    pub rpc_timeout: Duration,
    /// Retries after the first try (`hbase.client.retries.number`, 15).
    pub retries: u32,
    /// The base pause between tries (`hbase.client.pause`, 100 ms).
    pub pause: Duration,
    /// The user calls run as.
    pub user: String,
    /// Kerberos (`hbase.security.authentication=kerberos`): the SASL mechanism of each
    /// connection; `None` for simple authentication.
    pub sasl: Option<Arc<dyn crate::sasl::Authenticator>>,
    /// TLS on every connection (`hbase.client.netty.tls.enabled`).
    pub tls: Option<crate::tls::Tls>,
    /// HBase's AES in place of SASL's privacy wrap (`hbase.rpc.crypto.encryption.aes.enabled`);
    /// see [`crate::crypto`].
    pub crypto_aes: bool,
    /// SASL GSSAPI to ZooKeeper, for a quorum that requires it: the first part of its
    /// servers' principals (`zookeeper.sasl.client.username`, `zookeeper`); `None` reads
    /// anonymously.
    pub zk_sasl: Option<String>,
    /// How ZooKeeper is waited for (`zookeeper.session.timeout`, `zookeeper.recovery.*`).
    pub zk: crate::zk::ZkSettings,
    /// Addresses dialled in place of those the cluster names (`host:port` as meta and the
    /// registry name it, then `host:port` to connect to), as curl's `--connect-to`: a
    /// tunnel or a port forward to a cluster whose servers' names do not resolve here. The
    /// named address stays the server's identity (its Kerberos principal, its certificate).
    pub connect_to: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect_timeout: Duration::from_secs(10),
            rpc_timeout: Duration::from_secs(60),
            retries: 15,
            pause: Duration::from_millis(100),
            user: ConnOptions::default().user,
            sasl: None,
            tls: None,
            crypto_aes: false,
            zk_sasl: None,
            zk: crate::zk::ZkSettings::default(),
            connect_to: Vec::new(),
        }
    }
}

/// A row and its cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Row key.
    pub key: Bytes,
    /// Its cells, in HBase's order (family, qualifier, newest first).
    pub cells: Vec<Cell>,
}

/// A put or a delete of one row: its cells go in the call's cell block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// Row key.
    pub row: Bytes,
    /// Whether it puts or deletes.
    pub kind: MutationKind,
    /// The cells: values for a put, markers for a delete (empty: the whole row).
    pub cells: Vec<MutationCell>,
    /// The whole-row delete's timestamp ([`cells::LATEST_TIMESTAMP`]: now).
    pub timestamp: i64,
}

/// What a mutation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutationKind {
    /// Writes cells.
    Put,
    /// Writes delete markers.
    Delete,
}

/// One cell of a mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationCell {
    /// Family.
    pub family: Bytes,
    /// Qualifier.
    pub qualifier: Bytes,
    /// Timestamp ([`cells::LATEST_TIMESTAMP`]: stamped by the server).
    pub timestamp: i64,
    /// Put, or a delete type.
    pub kind: CellType,
    /// Value (puts only).
    pub value: Bytes,
}

/// An action of a batch.
#[derive(Debug, Clone)]
pub enum Action {
    /// Read a row.
    Get(pb::Get),
    /// Write a row.
    Mutate(Mutation),
}

/// What a batch sends: its actions' rows, and each action as a `Multi` carries it.
pub trait Actions: Sync {
    /// How many actions.
    fn count(&self) -> usize;
    /// Action `i`'s row.
    fn row(&self, i: usize) -> &[u8];
    /// The bytes action `i` adds to the call's cell block.
    fn block_len(&self, i: usize) -> usize;
    /// Appends action `i` to `out` as an `Action` message's fields (its index included),
    /// and its cells to `block`.
    fn encode(&self, i: usize, out: &mut Vec<u8>, block: &mut Vec<u8>);
}

impl Actions for [Action] {
    fn count(&self) -> usize {
        self.len()
    }

    fn row(&self, i: usize) -> &[u8] {
        match &self[i] {
            Action::Get(g) => &g.row,
            Action::Mutate(m) => &m.row,
        }
    }

    fn block_len(&self, i: usize) -> usize {
        match &self[i] {
            Action::Get(_) => 0,
            Action::Mutate(m) => m
                .cells
                .iter()
                .map(|c| cells::encoded_len(m.row.len(), c.family.len(), c.qualifier.len(), c.value.len()))
                .sum(),
        }
    }

    fn encode(&self, i: usize, out: &mut Vec<u8>, block: &mut Vec<u8>) {
        let mut a = pb::Action {
            index: Some(i as u32),
            ..Default::default()
        };
        match &self[i] {
            Action::Get(g) => a.get = Some(g.clone()),
            Action::Mutate(m) => a.mutation = Some(encode_mutation(m, block)),
        }
        a.encode(out).expect("a Vec grows");
    }
}

/// Builds mutations into one buffer as they are described, each cell encoded once: what
/// a loader sends without the allocations and copies of a [`Mutation`] per cell.
#[derive(Debug, Default)]
pub struct Encoder {
    rows: Vec<u8>,
    block: Vec<u8>,
    marks: Vec<Mark>,
}

/// One mutation of an [`Encoder`]: where its row and cells are.
#[derive(Debug)]
struct Mark {
    row: std::ops::Range<usize>,
    kind: MutationKind,
    timestamp: i64,
    cells: u32,
    block: std::ops::Range<usize>,
}

impl Encoder {
    /// An encoder with room for `rows` bytes of row keys and `block` bytes of cells.
    pub fn with_capacity(rows: usize, block: usize) -> Encoder {
        Encoder {
            rows: Vec::with_capacity(rows),
            block: Vec::with_capacity(block),
            marks: Vec::new(),
        }
    }

    /// Starts a mutation of `row`; `timestamp` is a whole-row delete's (one without cells).
    pub fn start(&mut self, row: &[u8], kind: MutationKind, timestamp: i64) {
        let at = self.rows.len();
        self.rows.extend_from_slice(row);
        let b = self.block.len();
        self.marks.push(Mark {
            row: at..self.rows.len(),
            kind,
            timestamp,
            cells: 0,
            block: b..b,
        });
    }

    /// Adds a cell to the mutation started last. Rows are at most 32,767 bytes and
    /// families 127, as HBase requires (callers validate them first).
    pub fn cell(&mut self, family: &[u8], qualifier: &[u8], timestamp: i64, kind: CellType, value: &[u8]) {
        let Encoder { rows, block, marks } = self;
        let m = marks.last_mut().expect("a cell after Encoder::start");
        cells::encode(block, &rows[m.row.clone()], family, qualifier, timestamp, kind, value);
        m.cells += 1;
        m.block.end = block.len();
    }

    /// Whether no mutation was started.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// The mutations, ready for [`Client::batch`].
    pub fn finish(self) -> Encoded {
        Encoded {
            rows: Bytes::from(self.rows),
            block: self.block,
            marks: self.marks,
        }
    }
}

/// Mutations an [`Encoder`] built: a batch's actions, a resend's cells copied as they are.
#[derive(Debug)]
pub struct Encoded {
    rows: Bytes,
    block: Vec<u8>,
    marks: Vec<Mark>,
}

impl Actions for Encoded {
    fn count(&self) -> usize {
        self.marks.len()
    }

    fn row(&self, i: usize) -> &[u8] {
        &self.rows[self.marks[i].row.clone()]
    }

    fn block_len(&self, i: usize) -> usize {
        self.marks[i].block.len()
    }

    /// By hand, as prost would write the `Action` of [`mutation_proto`]: this runs once per
    /// row a load writes, and prost's messages cost a large move and a length computed at
    /// every level of nesting.
    fn encode(&self, i: usize, out: &mut Vec<u8>, block: &mut Vec<u8>) {
        use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
        let m = &self.marks[i];
        block.extend_from_slice(&self.block[m.block.clone()]);
        let row = &self.rows[m.row.clone()];
        let kind = match m.kind {
            MutationKind::Put => pb::mutation_proto::MutationType::Put,
            MutationKind::Delete => pb::mutation_proto::MutationType::Delete,
        } as u64;
        let ts = m.timestamp as u64;
        let durability = pb::mutation_proto::Durability::UseDefault as u64;
        let cells = i64::from(m.cells as i32) as u64;
        // Fields 1 (row), 2 (type), 4 (timestamp), 6 (durability), 8 (cell count): one
        // byte of key each.
        let len = 1
            + encoded_len_varint(row.len() as u64)
            + row.len()
            + 1
            + encoded_len_varint(kind)
            + 1
            + encoded_len_varint(ts)
            + 1
            + encoded_len_varint(durability)
            + 1
            + encoded_len_varint(cells);
        encode_key(1, WireType::Varint, out);
        encode_varint(i as u64, out);
        encode_key(2, WireType::LengthDelimited, out);
        encode_varint(len as u64, out);
        encode_key(1, WireType::LengthDelimited, out);
        encode_varint(row.len() as u64, out);
        out.extend_from_slice(row);
        for (tag, v) in [(2, kind), (4, ts), (6, durability), (8, cells)] {
            encode_key(tag, WireType::Varint, out);
            encode_varint(v, out);
        }
    }
}

/// `MultiResponse` as a batch reads it: prost skips the fields left out (the servers' load
/// statistics), and an answer's `Result` (empty for a mutation) is boxed, so that a reply
/// of thousands of answers does not move a whole `Result` struct for each.
#[derive(Clone, PartialEq, prost::Message)]
struct MultiReply {
    #[prost(message, repeated, tag = "1")]
    region_action_result: Vec<RegionReply>,
}

/// `RegionActionResult`, as [`MultiReply`] reads it.
#[derive(Clone, PartialEq, prost::Message)]
struct RegionReply {
    #[prost(message, repeated, tag = "1")]
    result_or_exception: Vec<ActionReply>,
    #[prost(message, optional, tag = "2")]
    exception: Option<pb::NameBytesPair>,
}

/// `ResultOrException`, as [`MultiReply`] reads it.
#[derive(Clone, PartialEq, prost::Message)]
struct ActionReply {
    #[prost(uint32, optional, tag = "1")]
    index: Option<u32>,
    #[prost(message, optional, tag = "2")]
    result: Option<ResultReply>,
    #[prost(message, optional, tag = "3")]
    exception: Option<pb::NameBytesPair>,
}

/// `Result`, as [`ActionReply`] reads it: its cells, nothing allocated for a mutation's
/// empty answer (`exists`, `stale` and `partial` are not asked of a batch).
#[derive(Clone, PartialEq, prost::Message)]
struct ResultReply {
    #[prost(message, repeated, tag = "1")]
    cell: Vec<pb::Cell>,
    #[prost(int32, optional, tag = "2")]
    associated_cell_count: Option<i32>,
}

/// A batch's actions on one region, by index.
pub(crate) type RegionGroup = (Arc<Region>, Vec<usize>);
/// A `Multi` sent to a server: its regions' actions, and the call or why it was not sent.
type Sent = (Vec<RegionGroup>, Result<(Arc<Conn>, Pending)>);

/// Retries the client made, by what made them.
#[derive(Debug, Default)]
pub struct Retries {
    total: AtomicU64,
    by_kind: Mutex<BTreeMap<String, u64>>,
}

impl Retries {
    fn count(&self, kind: &str, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
        *self
            .by_kind
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(kind.to_string())
            .or_default() += n;
    }

    /// Actions and calls tried again, in all.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Per error kind (the exception's class, `connection`, `timeout`).
    pub fn by_kind(&self) -> BTreeMap<String, u64> {
        self.by_kind.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A client of one cluster. Shared between threads.
pub struct Client {
    registry: Registry,
    /// The ZooKeeper session, where the cluster is found through ZooKeeper.
    quorum: Option<crate::zk::Quorum>,
    opts: Options,
    cluster: RwLock<Cluster>,
    conns: Mutex<HashMap<(String, Service), Arc<Conn>>>,
    pub(crate) cache: Cache,
    retries: Retries,
    nonce_group: u64,
    calls: Arc<std::sync::atomic::AtomicU64>,
}

impl Client {
    /// Finds the cluster through `registry`.
    pub fn connect(registry: Registry, opts: Options) -> Result<Client> {
        let quorum = match &registry {
            Registry::ZooKeeper { quorum, parent } => Some(crate::zk::Quorum::open(
                quorum,
                parent,
                opts.zk,
                opts.connect_timeout,
                opts.zk_sasl.clone(),
            )?),
            Registry::Rpc { .. } => None,
        };
        let cluster = find(&registry, quorum.as_ref(), &opts)?;
        let nonce_group = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 ^ std::process::id() as u64)
            | 1;
        Ok(Client {
            registry,
            quorum,
            opts,
            cluster: RwLock::new(cluster),
            conns: Mutex::new(HashMap::new()),
            cache: Cache::default(),
            retries: Retries::default(),
            calls: Arc::default(),
            nonce_group,
        })
    }

    /// The cluster as last found.
    pub fn cluster(&self) -> Cluster {
        self.cluster.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How the cluster was found.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The retries made so far.
    pub fn retries(&self) -> &Retries {
        &self.retries
    }

    pub(crate) fn nonce_group(&self) -> u64 {
        self.nonce_group
    }

    /// Calls sent to the cluster's servers so far (round trips), bootstrap left out.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Reads the cluster's master and meta location again (after they moved).
    pub(crate) fn refind(&self) -> Result<()> {
        let c = find(&self.registry, self.quorum.as_ref(), &self.opts)?;
        *self.cluster.write().unwrap_or_else(|e| e.into_inner()) = c;
        Ok(())
    }

    /// The connection to `addr` for `service`, opened if there is none (or it broke).
    pub(crate) fn conn(&self, addr: &str, service: Service) -> Result<Arc<Conn>> {
        let key = (addr.to_string(), service);
        if let Some(c) = self.conns.lock().unwrap_or_else(|e| e.into_inner()).get(&key)
            && !c.is_broken()
        {
            return Ok(c.clone());
        }
        let opts = ConnOptions {
            user: self.opts.user.clone(),
            connect_timeout: self.opts.connect_timeout,
            calls: self.calls.clone(),
            sasl: self.opts.sasl.clone(),
            tls: self.opts.tls.clone(),
            crypto_aes: self.opts.crypto_aes,
            dial: self
                .opts
                .connect_to
                .iter()
                .find(|(named, _)| named == addr)
                .map(|(_, to)| to.clone()),
        };
        let c = Arc::new(Conn::open(addr, service, &opts)?);
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        match conns.get(&key) {
            // Another thread opened one meanwhile: use it, drop ours.
            Some(existing) if !existing.is_broken() => Ok(existing.clone()),
            _ => {
                conns.insert(key, c.clone());
                Ok(c)
            }
        }
    }

    /// Sleeps before retry `tries` after `e`, counting it; fails when retries ran out or `e`
    /// is not retried.
    pub(crate) fn backoff(&self, e: Error, tries: u32, started: Instant, actions: u64) -> Result<()> {
        let retry = e.retry();
        self.backoff_as(e, retry, tries, started, actions)
    }

    /// [`Client::backoff`] for an error the caller classified as `retry`.
    pub(crate) fn backoff_as(&self, e: Error, retry: Retry, tries: u32, started: Instant, actions: u64) -> Result<()> {
        if retry == Retry::Never {
            return Err(e);
        }
        if tries > self.opts.retries {
            return Err(Error::Exhausted {
                last: Box::new(e),
                tries,
                elapsed: started.elapsed(),
            });
        }
        self.retries.count(&e.kind(), actions);
        let immediate = matches!(
            e.class(),
            Some("RetryImmediatelyException" | "MultiActionResultTooLarge")
        );
        if !immediate {
            std::thread::sleep(pause(self.opts.pause, tries - 1));
        }
        Ok(())
    }

    /// What `e` on `region` means for the cache.
    pub(crate) fn learn(&self, region: &Region, e: &Error) {
        match e {
            Error::Remote { class, message, .. } if class.ends_with("RegionMovedException") => {
                match locate::moved_to(message) {
                    Some(server) => {
                        let mut moved = region.clone();
                        moved.server = Some(server);
                        self.cache.put(moved);
                    }
                    None => self.cache.forget(&region.table, &region.name),
                }
            }
            Error::Connection { .. } | Error::Timeout { .. } => {
                if let Some(s) = &region.server {
                    self.cache.forget_server(s);
                }
            }
            _ if e.retry() == Retry::Relocate => self.cache.forget(&region.table, &region.name),
            _ => {}
        }
    }

    /// Forgets `region`'s cache entry: the next read looks it up in `hbase:meta` again.
    pub(crate) fn forget_region(&self, region: &Region) {
        self.cache.forget(&region.table, &region.name);
    }

    /// Forgets every cached region of `table` (after it split or moved).
    pub(crate) fn forget_table(&self, table: &str) {
        self.cache.forget_table(table);
    }

    /// The region of `table` holding `row`: from the cache, or looked up in `hbase:meta`.
    pub fn locate(&self, table: &str, row: &[u8]) -> Result<Arc<Region>> {
        self.locate_as(table, row, false)
    }

    /// The region of `table` just before `row` (holding the rows below it); the table's
    /// last region when `row` is empty. What a reversed scan moves to.
    pub fn locate_before(&self, table: &str, row: &[u8]) -> Result<Arc<Region>> {
        self.locate_as(table, row, true)
    }

    fn cached(&self, table: &str, row: &[u8], before: bool) -> Option<Arc<Region>> {
        let r = match (before, row.is_empty()) {
            (false, _) => self.cache.find(table, row),
            (true, _) => self.cache.find_before(table, row),
        }?;
        r.server.is_some().then_some(r)
    }

    fn locate_as(&self, table: &str, row: &[u8], before: bool) -> Result<Arc<Region>> {
        if let Some(r) = self.cached(table, row, before) {
            return Ok(r);
        }
        let lock = self.cache.lookup_lock(table);
        let _one = lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = self.cached(table, row, before) {
            return Ok(r);
        }
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            match self.lookup(table, row, before) {
                Ok(r) => return Ok(r),
                Err(e) => {
                    if matches!(e, Error::Connection { .. } | Error::Timeout { .. }) || e.retry() == Retry::Relocate {
                        // hbase:meta itself may have moved.
                        let _ = self.refind();
                    }
                    let retry = meta_retry(&e);
                    self.backoff_as(e, retry, tries, started, 1)?;
                }
            }
        }
    }

    /// One reversed scan of `hbase:meta` for the region holding `row` (or just before it),
    /// caching it and its neighbours.
    fn lookup(&self, table: &str, row: &[u8], before: bool) -> Result<Arc<Region>> {
        let t = locate::canonical(table);
        let start = match (before, row.is_empty()) {
            (true, true) => [t.as_bytes(), b"\x00"].concat(),
            (true, false) => locate::meta_key(t, row, b"00000000000000"),
            (false, _) => locate::meta_key(t, row, locate::NINES),
        };
        let stop = locate::meta_key(t, b"", b"");
        let scan = pb::Scan {
            column: vec![pb::Column {
                family: Bytes::from_static(locate::CATALOG_FAMILY),
                qualifier: Vec::new(),
            }],
            start_row: Some(Bytes::from(start)),
            stop_row: Some(Bytes::from(stop)),
            include_stop_row: Some(true),
            reversed: Some(true),
            caching: Some(10),
            max_versions: Some(1),
            ..Default::default()
        };
        let rows = self.meta_scan(scan, 10)?;
        let mut answer = None;
        for (key, cells) in &rows {
            let Some(region) = locate::parse_meta_row(key, cells) else {
                continue;
            };
            if region.table != t {
                break;
            }
            let r = self.cache.put(region);
            if answer.is_none() {
                answer = Some(r);
            }
        }
        let Some(r) = answer else {
            return Err(if rows.is_empty() {
                Error::TableNotFound(t.to_string())
            } else {
                Error::Remote {
                    class: "org.apache.hadoop.hbase.NotServingRegionException".into(),
                    message: format!("no region of {t} found for row {}", printable(row)),
                    do_not_retry: false,
                }
            });
        };
        let found = match before {
            false => r.holds(row),
            // `TableCache.tryComplete`: the region ends at the row, or holds rows below it.
            true if row.is_empty() => r.end.is_empty(),
            true => &r.end[..] == row || ((r.end.is_empty() || &r.end[..] > row) && &r.start[..] < row),
        };
        if !found {
            return Err(Error::Remote {
                class: "org.apache.hadoop.hbase.NotServingRegionException".into(),
                message: format!("hbase:meta has no region of {t} for row {} yet", printable(row)),
                do_not_retry: false,
            });
        }
        if r.server.is_none() {
            // Being assigned: HBase's client retries until it is.
            self.cache.forget(&r.table, &r.name);
            return Err(Error::Remote {
                class: "org.apache.hadoop.hbase.exceptions.RegionOpeningException".into(),
                message: format!("region {} is not assigned to a server yet", printable(&r.name)),
                do_not_retry: false,
            });
        }
        Ok(r)
    }

    /// Every region of `table`, in key order, from `hbase:meta` (split parents left out).
    pub fn regions(&self, table: &str) -> Result<Vec<Region>> {
        let t = locate::canonical(table);
        let scan = pb::Scan {
            column: vec![pb::Column {
                family: Bytes::from_static(locate::CATALOG_FAMILY),
                qualifier: Vec::new(),
            }],
            start_row: Some(Bytes::from(locate::meta_key(t, b"", b""))),
            stop_row: Some(Bytes::from([t.as_bytes(), b" ,,"].concat())),
            max_versions: Some(1),
            caching: Some(100),
            ..Default::default()
        };
        let started = Instant::now();
        let mut tries = 0;
        let rows = loop {
            tries += 1;
            match self.meta_scan(scan.clone(), u32::MAX) {
                Ok(rows) => break rows,
                Err(e) => {
                    let _ = self.refind();
                    let retry = meta_retry(&e);
                    self.backoff_as(e, retry, tries, started, 1)?;
                }
            }
        };
        let regions: Vec<Region> = rows
            .iter()
            .filter_map(|(k, c)| locate::parse_meta_row(k, c))
            .filter(|r| r.table == t)
            .collect();
        if regions.is_empty() {
            return Err(Error::TableNotFound(t.to_string()));
        }
        Ok(regions)
    }

    /// Scans `hbase:meta` on its server, up to `max` rows, in as many calls as it takes.
    ///
    /// Where `max` rows fit in one reply the scanner is opened and closed in one call. A
    /// reply may be a heartbeat, though (the server's time limit ran out before it found
    /// a row, as on a busy server or among many deleted rows): HBase's client scans on from
    /// one, so a heartbeat that closed the scanner is followed by the same scan again,
    /// kept open until it has its rows, and only a scan that ran to its end with no row
    /// says that there is none.
    fn meta_scan(&self, scan: pb::Scan, max: u32) -> Result<Vec<MetaRow>> {
        let caching = scan.caching.unwrap_or(100).min(max);
        let (rows, whole) = self.meta_scan_once(scan.clone(), max, caching, max <= caching)?;
        if whole {
            return Ok(rows);
        }
        Ok(self.meta_scan_once(scan, max, caching, false)?.0)
    }

    /// One meta scan; with `close_at_open`, whether its one reply was whole (not a
    /// heartbeat cut short).
    fn meta_scan_once(
        &self,
        scan: pb::Scan,
        max: u32,
        caching: u32,
        close_at_open: bool,
    ) -> Result<(Vec<MetaRow>, bool)> {
        let meta = self.cluster().meta.addr();
        let conn = self.conn(&meta, Service::Client)?;
        let mut req = pb::ScanRequest {
            region: Some(locate::specifier(Bytes::from_static(locate::META_REGION))),
            scan: Some(scan),
            number_of_rows: Some(caching),
            close_scanner: Some(close_at_open),
            client_handles_partials: Some(true),
            client_handles_heartbeats: Some(true),
            ..Default::default()
        };
        let mut out: Vec<MetaRow> = Vec::new();
        let mut seq = 0;
        loop {
            let reply = conn
                .send("Scan", &req, b"", self.opts.rpc_timeout)?
                .wait(self.opts.rpc_timeout)?;
            let resp: pb::ScanResponse = reply.decode(conn.addr())?;
            for (row, _partial) in scan_results(&resp, reply.cells.clone())? {
                match out.last_mut() {
                    Some(last) if last.0 == row.key => last.1.extend(row.cells),
                    _ => out.push((row.key, row.cells)),
                }
            }
            let more = resp.more_results.unwrap_or(true) && resp.more_results_in_region.unwrap_or(false);
            let heartbeat = resp.heartbeat_message.unwrap_or(false);
            if close_at_open {
                return Ok((out, !(heartbeat && more)));
            }
            if !more {
                return Ok((out, true));
            }
            if out.len() as u32 >= max && !heartbeat {
                if let Some(id) = resp.scanner_id {
                    let close = pb::ScanRequest {
                        scanner_id: Some(id),
                        number_of_rows: Some(0),
                        close_scanner: Some(true),
                        ..Default::default()
                    };
                    let _ = conn.call("Scan", &close, b"", self.opts.rpc_timeout);
                }
                return Ok((out, true));
            }
            req = pb::ScanRequest {
                scanner_id: resp.scanner_id,
                number_of_rows: Some(caching),
                next_call_seq: Some(seq),
                client_handles_partials: Some(true),
                client_handles_heartbeats: Some(true),
                ..Default::default()
            };
            seq += 1;
        }
    }

    /// Runs `actions` on `table`: each get's cells (empty when the row has none) or a
    /// mutation's acknowledgement, in the order given. Actions that fail for a retriable
    /// reason are located again and resent alone; the batch fails with the first error
    /// that is not retried, or when retries run out.
    pub fn batch(&self, table: &str, actions: &(impl Actions + ?Sized)) -> Result<Vec<Vec<Cell>>> {
        let mut results: Vec<Option<Vec<Cell>>> = vec![None; actions.count()];
        let mut pending: Vec<usize> = (0..actions.count()).collect();
        let started = Instant::now();
        let mut tries = 0;
        while !pending.is_empty() {
            tries += 1;
            // Group by region, then server; a row that cannot be located fails with it. A
            // row in the region of the action before needs no lookup (a batch's rows come
            // mostly in key order).
            let mut regions: Vec<RegionGroup> = Vec::new();
            let mut by_name: HashMap<Bytes, usize> = HashMap::new();
            let mut last: Option<usize> = None;
            let mut failed: Vec<(usize, Error, Option<Arc<Region>>)> = Vec::new();
            for &i in &pending {
                let row = actions.row(i);
                let g = match last {
                    Some(g) if regions[g].0.holds(row) => g,
                    _ => match self.locate(table, row) {
                        Ok(r) => match by_name.get(&r.name[..]) {
                            Some(&g) => g,
                            None => {
                                by_name.insert(r.name.clone(), regions.len());
                                regions.push((r, Vec::new()));
                                regions.len() - 1
                            }
                        },
                        Err(e) if e.retry() == Retry::Never => return Err(e),
                        Err(e) => {
                            failed.push((i, e, None));
                            continue;
                        }
                    },
                };
                // Ascending within a region, as `pending` is: `read_multi` searches them.
                regions[g].1.push(i);
                last = Some(g);
            }
            let mut groups: BTreeMap<ServerName, Vec<RegionGroup>> = BTreeMap::new();
            for g in regions {
                let server = g.0.server.clone().expect("located regions have a server");
                groups.entry(server).or_default().push(g);
            }
            let sent: Vec<Sent> = groups
                .into_iter()
                .map(|(server, regions)| {
                    let r = self.send_multi(&server, &regions, actions);
                    (regions, r)
                })
                .collect();
            for (regions, s) in sent {
                let reply = s.and_then(|(c, p)| {
                    let reply = p.wait(self.opts.rpc_timeout)?;
                    Ok((c, reply))
                });
                match reply {
                    Err(e) => {
                        for (r, idx) in &regions {
                            self.learn(r, &e);
                            failed.extend(idx.iter().map(|&i| (i, e.clone(), Some(r.clone()))));
                        }
                    }
                    Ok((conn, reply)) => {
                        self.read_multi(&conn, reply, &regions, &mut results, &mut failed)?;
                    }
                }
            }
            if failed.is_empty() {
                break;
            }
            // The first error that is not retried fails the batch; otherwise retry the rest.
            if let Some((_, e, _)) = failed.iter().find(|(_, e, _)| e.retry() == Retry::Never) {
                return Err(e.clone());
            }
            let (_, e, _) = failed[0].clone();
            pending = failed.iter().map(|(i, _, _)| *i).collect();
            pending.sort_unstable();
            pending.dedup();
            self.backoff(e, tries, started, pending.len() as u64)?;
        }
        Ok(results.into_iter().map(|r| r.unwrap_or_default()).collect())
    }

    pub(crate) fn send_multi(
        &self,
        server: &ServerName,
        regions: &[RegionGroup],
        actions: &(impl Actions + ?Sized),
    ) -> Result<(Arc<Conn>, Pending)> {
        let size = regions
            .iter()
            .flat_map(|(_, idx)| idx)
            .map(|&i| actions.block_len(i))
            .sum();
        let mut cellblock = Vec::with_capacity(size);
        // A `MultiRequest` of one `RegionAction` per region, written as prost would.
        use prost::encoding::{WireType, encode_key, encode_varint};
        // Room for a put's action (its row, type and cell count) per action, grown past it.
        let n: usize = regions.iter().map(|(_, idx)| idx.len()).sum();
        let (mut req, mut region_action, mut action) = (Vec::with_capacity(64 * n + 64), Vec::new(), Vec::new());
        for (region, idx) in regions {
            region_action.clear();
            let spec = region.specifier();
            encode_key(1, WireType::LengthDelimited, &mut region_action);
            encode_varint(spec.encoded_len() as u64, &mut region_action);
            spec.encode(&mut region_action).expect("a Vec grows");
            for &i in idx {
                action.clear();
                actions.encode(i, &mut action, &mut cellblock);
                encode_key(3, WireType::LengthDelimited, &mut region_action);
                encode_varint(action.len() as u64, &mut region_action);
                region_action.extend_from_slice(&action);
            }
            encode_key(1, WireType::LengthDelimited, &mut req);
            encode_varint(region_action.len() as u64, &mut req);
            req.extend_from_slice(&region_action);
        }
        let conn = self.conn(&server.addr(), Service::Client)?;
        let p = conn.send_encoded("Multi", &req, &cellblock, self.opts.rpc_timeout)?;
        Ok((conn, p))
    }

    pub(crate) fn read_multi(
        &self,
        conn: &Conn,
        reply: Reply,
        regions: &[RegionGroup],
        results: &mut [Option<Vec<Cell>>],
        failed: &mut Vec<(usize, Error, Option<Arc<Region>>)>,
    ) -> Result<()> {
        let resp: MultiReply = reply.decode(conn.addr())?;
        if resp.region_action_result.len() != regions.len() {
            return Err(Error::Protocol(format!(
                "{}: {} region results for {} region actions",
                conn.addr(),
                resp.region_action_result.len(),
                regions.len()
            )));
        }
        let mut block = reply.cells;
        for (rar, (region, idx)) in resp.region_action_result.iter().zip(regions) {
            if let Some(ex) = &rar.exception {
                let e = name_bytes_error(ex);
                self.learn(region, &e);
                failed.extend(idx.iter().map(|&i| (i, e.clone(), Some(region.clone()))));
                continue;
            }
            let mut seen = vec![false; idx.len()];
            for roe in &rar.result_or_exception {
                let i = roe.index.unwrap_or(0) as usize;
                let Ok(pos) = idx.binary_search(&i) else {
                    return Err(Error::Protocol(format!(
                        "{}: a result for action {i}, which was not sent there",
                        conn.addr()
                    )));
                };
                seen[pos] = true;
                if let Some(ex) = &roe.exception {
                    let e = name_bytes_error(ex);
                    self.learn(region, &e);
                    failed.push((i, e, Some(region.clone())));
                    continue;
                }
                let cells = match &roe.result {
                    Some(r) => cells_of(&r.cell, r.associated_cell_count, &mut block)?,
                    None => Vec::new(),
                };
                results[i] = Some(cells);
            }
            // An action the server did not answer is retried (HBase: "Invalid response").
            for (pos, s) in seen.iter().enumerate() {
                if !s {
                    failed.push((
                        idx[pos],
                        Error::Remote {
                            class: "InvalidResponse".into(),
                            message: format!("{}: no result for action {}", conn.addr(), idx[pos]),
                            do_not_retry: false,
                        },
                        Some(region.clone()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Gets rows; each answer's cells (none for a row without any).
    pub fn get(&self, table: &str, gets: Vec<pb::Get>) -> Result<Vec<Vec<Cell>>> {
        let actions: Vec<Action> = gets.into_iter().map(Action::Get).collect();
        self.batch(table, &actions[..])
    }

    /// Applies mutations (each row's own, as one action).
    pub fn mutate(&self, table: &str, mutations: Vec<Mutation>) -> Result<()> {
        let actions: Vec<Action> = mutations.into_iter().map(Action::Mutate).collect();
        self.batch(table, &actions[..]).map(|_| ())
    }
}

/// Finds the cluster through a registry (through ZooKeeper, on the client's session).
fn find(registry: &Registry, quorum: Option<&crate::zk::Quorum>, opts: &Options) -> Result<Cluster> {
    match (registry, quorum) {
        (Registry::Rpc { servers }, _) => crate::registry::bootstrap(servers, opts),
        (Registry::ZooKeeper { .. }, Some(q)) => q.cluster(),
        (Registry::ZooKeeper { .. }, None) => Err(Error::Bootstrap("no ZooKeeper session".into())),
    }
}

/// A mutation as `MutationProto`, its cells appended to `block` (`toMutationNoData`).
fn encode_mutation(m: &Mutation, block: &mut Vec<u8>) -> pb::MutationProto {
    for c in &m.cells {
        cells::encode(block, &m.row, &c.family, &c.qualifier, c.timestamp, c.kind, &c.value);
    }
    mutation_proto(m.row.clone(), m.kind, m.timestamp, m.cells.len() as u32)
}

/// A mutation's `MutationProto`, its `cells` in the call's cell block.
fn mutation_proto(row: Bytes, kind: MutationKind, timestamp: i64, cells: u32) -> pb::MutationProto {
    use pb::mutation_proto::MutationType;
    pb::MutationProto {
        row: Some(row),
        mutate_type: Some(match kind {
            MutationKind::Put => MutationType::Put as i32,
            MutationKind::Delete => MutationType::Delete as i32,
        }),
        timestamp: Some(timestamp as u64),
        durability: Some(pb::mutation_proto::Durability::UseDefault as i32),
        associated_cell_count: Some(cells as i32),
        ..Default::default()
    }
}

/// A `Result`'s cells: its `associated_cell_count` from the shared cell block, then any
/// given inline.
pub(crate) fn result_cells(r: &pb::Result, block: &mut Bytes) -> Result<Vec<Cell>> {
    cells_of(&r.cell, r.associated_cell_count, block)
}

/// A result's cells: `count` from the front of the cell block, then those sent inline.
fn cells_of(inline: &[pb::Cell], count: Option<i32>, block: &mut Bytes) -> Result<Vec<Cell>> {
    let n = count.unwrap_or(0).max(0) as usize;
    if n == 0 && inline.is_empty() {
        return Ok(Vec::new());
    }
    let mut cells = cells::decode(block, n).map_err(|e| Error::Protocol(e.to_string()))?;
    for c in inline {
        cells.push(inline_cell(c)?);
    }
    Ok(cells)
}

fn inline_cell(c: &pb::Cell) -> Result<Cell> {
    let kind = c
        .cell_type
        .and_then(|t| match pb::CellType::try_from(t).ok()? {
            pb::CellType::Put => Some(CellType::Put),
            pb::CellType::Delete => Some(CellType::Delete),
            pb::CellType::DeleteFamilyVersion => Some(CellType::DeleteFamilyVersion),
            pb::CellType::DeleteColumn => Some(CellType::DeleteColumn),
            pb::CellType::DeleteFamily => Some(CellType::DeleteFamily),
            _ => None,
        })
        .unwrap_or(CellType::Put);
    Ok(Cell {
        row: c.row.clone().unwrap_or_default(),
        family: c.family.clone().unwrap_or_default(),
        qualifier: c.qualifier.clone().unwrap_or_default(),
        timestamp: c.timestamp.unwrap_or(0) as i64,
        kind,
        value: c.value.clone().unwrap_or_default(),
    })
}

/// A row of `hbase:meta`: its key and cells.
type MetaRow = (Bytes, Vec<Cell>);

/// How a failed meta lookup is retried: as any call, except that a meta scanner the server
/// reset or lost (`ScannerResetException`, `UnknownScannerException`,
/// `OutOfOrderScannerNextException`) is scanned again from the start, as HBase's client
/// restarts a scan, where a user's scan would fail.
fn meta_retry(e: &Error) -> Retry {
    match e.class() {
        Some("ScannerResetException" | "UnknownScannerException" | "OutOfOrderScannerNextException") => Retry::Same,
        _ => e.retry(),
    }
}

/// A scan response's results, each with whether the row goes on in the next one.
pub(crate) fn scan_results(resp: &pb::ScanResponse, mut block: Bytes) -> Result<Vec<(Row, bool)>> {
    let mut out = Vec::new();
    if !resp.cells_per_result.is_empty() {
        for (i, &n) in resp.cells_per_result.iter().enumerate() {
            let cells = cells::decode(&mut block, n as usize).map_err(|e| Error::Protocol(e.to_string()))?;
            let Some(key) = cells.first().map(|c| c.row.clone()) else {
                continue;
            };
            let partial = resp.partial_flag_per_result.get(i).copied().unwrap_or(false);
            out.push((Row { key, cells }, partial));
        }
    } else {
        for r in &resp.results {
            let cells = result_cells(r, &mut block)?;
            let Some(key) = cells.first().map(|c| c.row.clone()) else {
                continue;
            };
            out.push((Row { key, cells }, r.partial.unwrap_or(false)));
        }
    }
    Ok(out)
}

/// A per-action or per-region exception (`NameBytesPair`: the class, the stringified
/// exception).
fn name_bytes_error(ex: &pb::NameBytesPair) -> Error {
    let class = ex.name.clone();
    let message = ex
        .value
        .as_ref()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default();
    let short = class.rsplit('.').next().unwrap_or(&class).to_string();
    Error::Remote {
        do_not_retry: crate::error::classify(&short, false) == Retry::Never,
        class,
        message,
    }
}

/// A key for messages: printable ASCII as is, other bytes as `\xNN` (`Bytes.toStringBinary`).
pub fn printable(key: &[u8]) -> String {
    let mut s = String::new();
    for &b in key {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02X}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoder_writes_the_bytes_prost_writes_of_the_same_mutations() {
        let cell = |q: &'static [u8], ts: i64, kind: CellType, v: &'static [u8]| MutationCell {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(q),
            timestamp: ts,
            kind,
            value: Bytes::from_static(v),
        };
        let long = vec![7u8; 300];
        let mutations = vec![
            Mutation {
                row: Bytes::from_static(b"row-1"),
                kind: MutationKind::Put,
                cells: vec![
                    cell(b"a", 1_767_225_600_000, CellType::Put, b"x"),
                    cell(b"", cells::LATEST_TIMESTAMP, CellType::Put, b""),
                ],
                timestamp: cells::LATEST_TIMESTAMP,
            },
            Mutation {
                row: Bytes::from(long),
                kind: MutationKind::Delete,
                cells: vec![cell(b"q", 5, CellType::DeleteColumn, b"")],
                timestamp: cells::LATEST_TIMESTAMP,
            },
            // A whole-row delete: no cells, its own timestamp.
            Mutation {
                row: Bytes::from_static(b"r"),
                kind: MutationKind::Delete,
                cells: Vec::new(),
                timestamp: 42,
            },
        ];
        let mut e = Encoder::default();
        for m in &mutations {
            e.start(&m.row, m.kind, m.timestamp);
            for c in &m.cells {
                e.cell(&c.family, &c.qualifier, c.timestamp, c.kind, &c.value);
            }
        }
        let encoded = e.finish();
        let plain: Vec<Action> = mutations.into_iter().map(Action::Mutate).collect();
        assert_eq!(encoded.count(), plain.len());
        // Index 200 and a 300-byte row take two-byte varints.
        for (i, at) in [(0, 0), (1, 200), (2, 2)] {
            let (mut a, mut block_a, mut b, mut block_b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let shifted = |actions: &[Action]| {
                let mut v = vec![Action::Get(pb::Get::default()); at];
                v.push(actions[i].clone());
                v
            };
            let plain_at = shifted(&plain);
            plain_at[..].encode(at, &mut a, &mut block_a);
            encoded.encode(i, &mut b, &mut block_b);
            let prost_index = pb::Action::decode(&a[..]).unwrap().index;
            assert_eq!(prost_index, Some(at as u32));
            // Ours at index `i`: the same message but for the index.
            let mut ours = pb::Action::decode(&b[..]).unwrap();
            assert_eq!(ours.encode_to_vec(), b, "action {i}: prost's field order and varints");
            assert_eq!(ours.index, Some(i as u32));
            ours.index = Some(at as u32);
            assert_eq!(ours.encode_to_vec(), a, "action {i}");
            assert_eq!(block_b, block_a, "cells of action {i}");
            assert_eq!(encoded.block_len(i), block_a.len());
            assert_eq!(plain[..].block_len(i), block_a.len());
            assert_eq!(encoded.row(i), plain[..].row(i));
        }
    }

    #[test]
    fn retries_add_up_by_kind() {
        let r = Retries::default();
        r.count("RegionTooBusyException", 3);
        r.count("connection", 1);
        r.count("RegionTooBusyException", 2);
        assert_eq!(r.total(), 6);
        assert_eq!(
            r.by_kind().into_iter().collect::<Vec<_>>(),
            [("RegionTooBusyException".to_string(), 5), ("connection".to_string(), 1)]
        );
    }

    mod meta {
        use super::super::*;
        use crate::fake;
        use prost::Message;
        use std::sync::atomic::AtomicUsize;

        /// The meta row of table `t`'s one region, served by `rs1:16020`: a scan reply.
        fn the_region() -> fake::Answer {
            region_on("rs1:16020")
        }

        /// A Multi's reply with one action's empty result: a get that found nothing, or a
        /// mutation done.
        fn one_answer() -> fake::Answer {
            let resp = pb::MultiResponse {
                region_action_result: vec![pb::RegionActionResult {
                    result_or_exception: vec![pb::ResultOrException {
                        index: Some(0),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
            Ok((resp.encode_to_vec(), Vec::new()))
        }

        /// The meta row of table `t`'s one region, served by `server` (`host:port`).
        fn region_on(server: &str) -> fake::Answer {
            let row = b"t,,1.x.";
            let info = pb::RegionInfo {
                region_id: 1,
                table_name: locate::table_name("t"),
                ..Default::default()
            };
            let mut cells = Vec::new();
            let mut cell = |q: &[u8], v: &[u8]| {
                crate::cells::encode(&mut cells, row, b"info", q, 1, crate::cells::CellType::Put, v)
            };
            cell(b"regioninfo", &[crate::zk::PB_MAGIC, &info.encode_to_vec()].concat());
            cell(b"server", server.as_bytes());
            cell(b"serverstartcode", &7u64.to_be_bytes());
            let resp = pb::ScanResponse {
                cells_per_result: vec![3],
                partial_flag_per_result: vec![false],
                more_results: Some(true),
                more_results_in_region: Some(false),
                ..Default::default()
            };
            Ok((resp.encode_to_vec(), cells))
        }

        /// A reply with no row yet: the server's time limit ran out.
        fn heartbeat() -> fake::Answer {
            let resp = pb::ScanResponse {
                scanner_id: Some(7),
                more_results: Some(true),
                more_results_in_region: Some(true),
                heartbeat_message: Some(true),
                ..Default::default()
            };
            Ok((resp.encode_to_vec(), Vec::new()))
        }

        /// A client of a fake cluster whose meta scans are answered by `scan(n, request)`,
        /// `n` counting them from 0; and that count.
        fn client(
            scan: impl Fn(usize, pb::ScanRequest) -> fake::Answer + Send + Sync + 'static,
        ) -> (Client, Arc<AtomicUsize>) {
            let scans = Arc::new(AtomicUsize::new(0));
            let n = scans.clone();
            let addr = fake::serve(Arc::new(move |method: &str, req: Bytes| {
                assert_eq!(method, "Scan");
                scan(n.fetch_add(1, Ordering::SeqCst), pb::ScanRequest::decode(req).unwrap())
            }));
            let opts = Options {
                pause: Duration::from_millis(1),
                ..Options::default()
            };
            (
                Client::connect(Registry::Rpc { servers: vec![addr] }, opts).unwrap(),
                scans,
            )
        }

        #[test]
        fn a_heartbeat_is_scanned_on_from_not_taken_for_a_missing_table() {
            let (client, scans) = client(|n, req| match n {
                // The lookup's one call, opened and closed at once, cut short.
                0 => {
                    assert_eq!(req.close_scanner, Some(true));
                    heartbeat()
                }
                // The same scan again, kept open: cut short again, then the row.
                1 => {
                    assert_eq!(req.close_scanner, Some(false));
                    assert!(req.scan.is_some());
                    heartbeat()
                }
                2 => {
                    assert_eq!((req.scanner_id, req.next_call_seq), (Some(7), Some(0)));
                    the_region()
                }
                _ => panic!("a fourth scan"),
            });
            let r = client.locate("t", b"r").unwrap();
            assert_eq!(r.server.as_ref().unwrap().to_string(), "rs1,16020,7");
            assert_eq!(scans.load(Ordering::SeqCst), 3);
        }

        #[test]
        fn a_reset_scanner_is_scanned_again_from_the_start() {
            let (client, scans) = client(|n, _| match n {
                0 => Err("org.apache.hadoop.hbase.exceptions.ScannerResetException"),
                1 => Err("org.apache.hadoop.hbase.UnknownScannerException"),
                _ => the_region(),
            });
            assert_eq!(&client.locate("t", b"r").unwrap().name[..], b"t,,1.x.");
            assert_eq!(scans.load(Ordering::SeqCst), 3);
            assert_eq!(client.retries().total(), 2);
        }

        /// A scanner the server resets as it opens (its region closing under the open's
        /// first read) is opened again, as HBase's `ClientScanner.handleScanError` does, and
        /// the scan goes on: seen in a rolling restart as `ScannerResetException: Scanner is
        /// closed on the server-side`, which failed the read.
        #[test]
        fn a_scanner_reset_as_it_opens_is_opened_again() {
            for class in [
                "org.apache.hadoop.hbase.exceptions.ScannerResetException",
                "org.apache.hadoop.hbase.UnknownScannerException",
            ] {
                let me: Arc<std::sync::OnceLock<String>> = Arc::default();
                let scans = Arc::new(AtomicUsize::new(0));
                let (at, n) = (me.clone(), scans.clone());
                let addr = fake::serve(Arc::new(move |method: &str, _req: Bytes| {
                    assert_eq!(method, "Scan");
                    match n.fetch_add(1, Ordering::SeqCst) {
                        // The region's lookup in meta, then the table's scan: reset, then done.
                        0 => region_on(at.get().expect("the fake's address")),
                        1 => Err(class),
                        _ => {
                            let resp = pb::ScanResponse {
                                more_results: Some(false),
                                ..Default::default()
                            };
                            Ok((resp.encode_to_vec(), Vec::new()))
                        }
                    }
                }));
                me.set(addr.clone()).unwrap();
                let opts = Options {
                    pause: Duration::from_millis(1),
                    ..Options::default()
                };
                let client = Client::connect(Registry::Rpc { servers: vec![addr] }, opts).unwrap();
                let rows = client.scan("t", crate::scan::ScanSpec::default()).collect_rows();
                assert!(rows.unwrap().is_empty(), "{class}");
                assert_eq!(scans.load(Ordering::SeqCst), 3, "{class}");
            }
        }

        /// A region opening where the cache says is tried there again, its location kept,
        /// as HBase's client does (`ClientExceptionsUtil.isMetaClearingException`); one that
        /// is not served there any more is looked up again.
        #[test]
        fn a_region_opening_keeps_its_location_and_one_not_served_is_looked_up_again() {
            for (class, lookups) in [
                ("org.apache.hadoop.hbase.exceptions.RegionOpeningException", 1),
                ("org.apache.hadoop.hbase.NotServingRegionException", 2),
            ] {
                let me: Arc<std::sync::OnceLock<String>> = Arc::default();
                let (scans, multis) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
                let (at, s, m) = (me.clone(), scans.clone(), multis.clone());
                let addr = fake::serve(Arc::new(move |method: &str, _req: Bytes| match method {
                    "Scan" => {
                        s.fetch_add(1, Ordering::SeqCst);
                        region_on(at.get().expect("the fake's address"))
                    }
                    "Multi" if m.fetch_add(1, Ordering::SeqCst) == 0 => Err(class),
                    "Multi" => one_answer(),
                    other => panic!("an unexpected {other}"),
                }));
                me.set(addr.clone()).unwrap();
                let opts = Options {
                    pause: Duration::from_millis(1),
                    ..Options::default()
                };
                let client = Client::connect(Registry::Rpc { servers: vec![addr] }, opts).unwrap();
                let got = client.get(
                    "t",
                    vec![pb::Get {
                        row: Bytes::from_static(b"r"),
                        ..Default::default()
                    }],
                );
                assert_eq!(got.unwrap(), vec![Vec::<Cell>::new()], "{class}");
                assert_eq!(multis.load(Ordering::SeqCst), 2, "{class}");
                assert_eq!(scans.load(Ordering::SeqCst), lookups, "{class}: meta lookups");
                assert_eq!(client.retries().total(), 1, "{class}");
            }
        }

        /// A region meta names at an address that does not resolve here is reached where
        /// `connect_to` says.
        #[test]
        fn a_server_is_dialled_where_connect_to_says() {
            let multis = Arc::new(AtomicUsize::new(0));
            let m = multis.clone();
            let addr = fake::serve(Arc::new(move |method: &str, _req: Bytes| match method {
                "Scan" => region_on("rs.invalid:16020"),
                "Multi" => {
                    m.fetch_add(1, Ordering::SeqCst);
                    one_answer()
                }
                other => panic!("an unexpected {other}"),
            }));
            let get = || {
                vec![pb::Get {
                    row: Bytes::from_static(b"r"),
                    ..Default::default()
                }]
            };
            let opts = |connect_to| Options {
                pause: Duration::from_millis(1),
                retries: 0,
                connect_to,
                ..Options::default()
            };
            let registry = Registry::Rpc {
                servers: vec![addr.clone()],
            };
            let lost = Client::connect(registry.clone(), opts(Vec::new())).unwrap();
            let e = lost.get("t", get()).unwrap_err().to_string();
            assert!(e.contains("rs.invalid:16020"), "{e}");
            let client = Client::connect(registry, opts(vec![("rs.invalid:16020".into(), addr)])).unwrap();
            assert_eq!(client.get("t", get()).unwrap(), vec![Vec::<Cell>::new()]);
            assert_eq!(multis.load(Ordering::SeqCst), 1);
        }

        #[test]
        fn a_scan_that_ends_with_no_row_is_a_missing_table() {
            let (client, scans) = client(|_, _| {
                let resp = pb::ScanResponse {
                    more_results: Some(true),
                    more_results_in_region: Some(false),
                    ..Default::default()
                };
                Ok((resp.encode_to_vec(), Vec::new()))
            });
            assert!(matches!(client.locate("t", b"r"), Err(Error::TableNotFound(t)) if t == "t"));
            assert_eq!(scans.load(Ordering::SeqCst), 1);
        }
    }

    #[test]
    fn keys_print_as_hbase_prints_them() {
        assert_eq!(printable(b"row\x00\xff\\"), "row\\x00\\xFF\\x5C");
    }
}
