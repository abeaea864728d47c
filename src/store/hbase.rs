//! The `hbase` backend: a Store over HBase's Thrift1 server (`hbase thrift start`, or
//! `tallrow serve`), through the `Hbase` service of the `hbase-thrift` crate.
//!
//! Thrift1 carries one timestamp per mutation call, one version per column in row reads and
//! scans, and no cell paging in gets, so the store's model is mapped onto it:
//! - a batch becomes one `mutateRows(Ts)` call per distinct timestamp (per round, where a
//!   round keeps each row's puts-then-deletes order), sent back to back on one connection
//!   and answered together (pipelining), after the batch is validated against the table's
//!   families so that a bad batch changes nothing;
//! - multi-version reads learn a row's columns with one time-bounded read, then read each
//!   column's versions with `getVerTs`, pipelined;
//! - qualifier cursors become a one-row scan with `QualifierFilter`; cell limits are
//!   counted here (HBase filters see every version, so `ColumnPaginationFilter` would count
//!   versions);
//! - scans page with `scannerGetList` and always end with `scannerClose`.
//!
//! Connections are pooled, one per concurrent caller. A call that fails with a reset or a
//! timeout is retried on a fresh connection when repeating it cannot duplicate work (reads,
//! and writes whose every cell carries its own timestamp).

use super::{
    Cell, Column, Error, Get, Mutation as StoreMutation, Result, Row, RowMutation, Scan, Store, TableDescriptor,
    canonical_table_name, first_line, validate_mutations, validate_row_key,
};
use crate::convert::thrift1;
use crate::wire::{self, Outbox, Protocol, Transport};
use hbase_thrift::hbase::{
    AlreadyExists, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument, TCell, THbaseSyncClient, TRowResult,
    TScan,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, RwLock};
use std::time::Duration;
use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier, TMessageType,
    TOutputProtocol, TStructIdentifier, TType,
};
use thrift::{ApplicationError, TThriftClient};

const LATEST: i64 = i64::MAX;
/// Calls sent before their replies are read.
const WINDOW: usize = 1024;
/// Rows per `scannerGetList`.
const SCAN_PAGE: usize = 1000;
/// Largest reply accepted.
const MAX_REPLY: usize = 1 << 30;

/// Where the server is and how to talk to it: `hbase://HOST:PORT?transport=..&protocol=..`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Host name or address.
    pub host: String,
    /// Port (9090 by default, as `hbase thrift start`).
    pub port: u16,
    /// Message delimiting (buffered by default).
    pub transport: Transport,
    /// Encoding (binary by default).
    pub protocol: Protocol,
}

impl Spec {
    /// Parses the part after `hbase://`.
    pub fn parse(rest: &str) -> std::result::Result<Spec, String> {
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = authority.trim_end_matches('/');
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("hbase://{rest}: port {p:?} is not a number from 0 to 65535"))?,
            ),
            None => (authority, 9090),
        };
        if host.is_empty() {
            return Err(format!("hbase://{rest}: no host; expected hbase://HOST:PORT"));
        }
        let mut spec = Spec {
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            port,
            transport: Transport::Buffered,
            protocol: Protocol::Binary,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("transport", v)) => spec.transport = v.parse().map_err(|e| format!("hbase://{rest}: {e}"))?,
                Some(("protocol", v)) => spec.protocol = v.parse().map_err(|e| format!("hbase://{rest}: {e}"))?,
                _ => {
                    return Err(format!(
                        "hbase://{rest}: unknown option {pair:?}; expected transport=buffered|framed or protocol=binary|compact"
                    ));
                }
            }
        }
        Ok(spec)
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

type ThriftClient = HbaseSyncClient<wire::Input<Box<dyn Read + Send>>, Box<dyn TOutputProtocol + Send>>;

/// A connection: the generated client, and the hold on its outgoing bytes that lets a
/// pipeline send a whole window in one write.
struct Client {
    thrift: ThriftClient,
    held: wire::Held,
}

impl std::ops::Deref for Client {
    type Target = ThriftClient;
    fn deref(&self) -> &ThriftClient {
        &self.thrift
    }
}

impl std::ops::DerefMut for Client {
    fn deref_mut(&mut self) -> &mut ThriftClient {
        &mut self.thrift
    }
}

/// The backend.
pub struct Hbase {
    spec: Spec,
    addr: SocketAddr,
    pool: Mutex<Vec<Client>>,
    families: RwLock<HashMap<String, TableDescriptor>>,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for a reply.
    pub read_timeout: Duration,
    /// Attempts of a retryable call.
    pub attempts: u32,
}

/// What a failure means for a retry.
#[derive(Debug)]
enum Failure {
    /// Nothing was sent: always safe to retry, with the same error if it persists.
    NotSent(Error),
    /// The connection broke or timed out during the call.
    Broken(Error),
    /// The server answered with an error.
    Answered(Error),
}

impl Failure {
    fn error(self) -> Error {
        match self {
            Failure::NotSent(e) | Failure::Broken(e) | Failure::Answered(e) => e,
        }
    }
}

impl Hbase {
    /// A backend for `spec`; connects on first use.
    pub fn open(spec: &Spec) -> Result<Hbase> {
        let addr = (spec.host.as_str(), spec.port)
            .to_socket_addrs()
            .map_err(|e| Error::Io(format!("cannot resolve {}: {e}", spec.authority())))?
            .next()
            .ok_or_else(|| Error::Io(format!("cannot resolve {}: no address", spec.authority())))?;
        let store = Hbase {
            spec: spec.clone(),
            addr,
            pool: Mutex::new(Vec::new()),
            families: RwLock::new(HashMap::new()),
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(60),
            attempts: 4,
        };
        // Fail fast with one line when nothing listens there.
        let client = store.connect().map_err(Failure::error)?;
        store.pool.lock().expect("lock").push(client);
        Ok(store)
    }

    fn connect(&self) -> std::result::Result<Client, Failure> {
        let who = self.spec.authority();
        let stream = TcpStream::connect_timeout(&self.addr, self.connect_timeout).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "timed out".to_string(),
                _ => e.to_string(),
            };
            Failure::NotSent(Error::Io(format!("cannot connect to {who}: {why}")))
        })?;
        let setup = |s: &TcpStream| -> std::io::Result<TcpStream> {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(self.read_timeout))?;
            s.set_write_timeout(Some(self.read_timeout))?;
            s.try_clone()
        };
        let reader =
            setup(&stream).map_err(|e| Failure::NotSent(Error::Io(format!("cannot connect to {who}: {e}"))))?;
        let input = wire::input(reader, self.spec.transport, self.spec.protocol, MAX_REPLY);
        let held = wire::Held::new(stream);
        let output = wire::output(Outbox::new(held.clone(), self.spec.transport), self.spec.protocol);
        Ok(Client {
            thrift: HbaseSyncClient::new(input, output),
            held,
        })
    }

    /// Runs `f` on a pooled connection, retrying on a fresh one when `f` fails in transit
    /// and `repeatable` says repeating it is safe.
    fn call<T>(
        &self,
        repeatable: bool,
        mut f: impl FnMut(&mut Client) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        let mut delay = Duration::from_millis(20);
        for attempt in 1..=self.attempts {
            let pooled = self.pool.lock().expect("lock").pop();
            let mut client = match pooled {
                Some(c) => c,
                None => match self.connect() {
                    Ok(c) => c,
                    Err(Failure::NotSent(e)) if attempt == 1 => return Err(e),
                    Err(f) => {
                        if attempt == self.attempts {
                            return Err(f.error());
                        }
                        std::thread::sleep(delay);
                        delay *= 4;
                        continue;
                    }
                },
            };
            match f(&mut client) {
                Ok(v) => {
                    self.pool.lock().expect("lock").push(client);
                    return Ok(v);
                }
                Err(Failure::Answered(e)) => {
                    self.pool.lock().expect("lock").push(client);
                    return Err(e);
                }
                Err(Failure::NotSent(e)) | Err(Failure::Broken(e)) if !repeatable || attempt == self.attempts => {
                    return Err(e);
                }
                Err(_) => {
                    // The connection is dropped: its stream may hold half a message.
                    std::thread::sleep(delay);
                    delay *= 4;
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    fn descriptor(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        if let Some(d) = self.families.read().expect("lock").get(&name) {
            return Ok(d.clone());
        }
        let d = self.describe_table(&name)?;
        self.families.write().expect("lock").insert(name, d.clone());
        Ok(d)
    }

    fn forget(&self, table: &str) {
        if let Ok(name) = canonical_table_name(table) {
            self.families.write().expect("lock").remove(&name);
        }
    }
}

/// A thrift error, classified and worded for the table it concerns.
fn failure(e: thrift::Error, table: &str) -> Failure {
    match e {
        thrift::Error::User(u) => {
            if let Some(io) = u.downcast_ref::<IOError>() {
                let message = io.message.clone().unwrap_or_default();
                let line = first_line(&message);
                let error = if line.contains("TableNotFoundException") {
                    Error::TableNotFound(table.to_string())
                } else if line.contains("NoSuchColumnFamilyException") {
                    let family = line
                        .split("Column family ")
                        .nth(1)
                        .and_then(|r| r.split_whitespace().next())
                        .unwrap_or("?")
                        .to_string();
                    Error::FamilyNotFound {
                        table: table.to_string(),
                        family,
                    }
                } else if line.contains("IllegalArgumentException") {
                    Error::BadArgument(line.to_string())
                } else if io.can_retry == Some(true) {
                    Error::Unavailable(line.to_string())
                } else {
                    Error::Io(format!("table {table}: {line}"))
                };
                Failure::Answered(error)
            } else if let Some(ia) = u.downcast_ref::<IllegalArgument>() {
                Failure::Answered(Error::BadArgument(
                    first_line(ia.message.as_deref().unwrap_or("")).to_string(),
                ))
            } else if u.downcast_ref::<AlreadyExists>().is_some() {
                Failure::Answered(Error::TableExists(table.to_string()))
            } else {
                Failure::Answered(Error::Io(u.to_string()))
            }
        }
        thrift::Error::Application(a) => Failure::Answered(Error::Io(format!(
            "table {table}: server error: {}",
            first_line(&a.message)
        ))),
        thrift::Error::Transport(t) => Failure::Broken(Error::Unavailable(format!("connection lost: {}", t.message))),
        thrift::Error::Protocol(p) => Failure::Broken(Error::Io(format!("bad reply: {}", p.message))),
    }
}

/// The longest row key HBase's client can reach in `table`: to find a row's region it
/// scans `hbase:meta` from `table,row,99999999999999`, and no row key, that one included,
/// may pass `Short.MAX_VALUE` bytes (`ConnectionImplementation.locateRegionInMeta`).
pub fn max_row_key(table: &str) -> usize {
    let name = canonical_table_name(table).unwrap_or_else(|_| table.to_string());
    super::MAX_ROW_LEN.saturating_sub(name.len() + 16)
}

/// Checks `row` against `max`, `max_row_key` of `table`.
fn within_locatable_length(table: &str, max: usize, row: &[u8]) -> Result<()> {
    if row.len() > max {
        return Err(Error::BadArgument(format!(
            "row key is {} bytes; HBase's client locates rows of table {table} only up to {max} bytes (32767 less the table name and 16)",
            row.len()
        )));
    }
    Ok(())
}

/// A selection's columns as HBase's column list: a whole family alone, since HBase's
/// `addColumn` after `addFamily` would narrow the family to that column.
fn column_names(select: &super::Selection) -> Vec<Vec<u8>> {
    select
        .columns
        .iter()
        .filter(|c| c.qualifier.is_none() || !select.wants_whole_family(&c.family))
        .map(thrift1::column_arg)
        .collect()
}

fn to_row(r: TRowResult) -> Result<Row> {
    thrift1::row_of(r).map_err(|e| Error::Io(format!("{e} in reply")))
}

/// Quotes bytes as an argument of the filter language.
fn quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in bytes {
        if b == b'\'' {
            out.push(b'\'');
        }
        out.push(b);
    }
    out.push(b'\'');
    out
}

/// Writes a call's argument fields.
type ArgsWriter<'a> = Box<dyn Fn(&mut dyn TOutputProtocol) -> thrift::Result<()> + 'a>;

/// One pipelined call: its name and a writer of its arguments.
struct Call<'a> {
    name: &'static str,
    args: ArgsWriter<'a>,
}

fn write_field(o: &mut dyn TOutputProtocol, name: &str, t: TType, id: i16) -> thrift::Result<()> {
    o.write_field_begin(&TFieldIdentifier::new(name, t, id))
}

fn write_bytes_field(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: &[u8]) -> thrift::Result<()> {
    write_field(o, name, TType::String, id)?;
    o.write_bytes(v)?;
    o.write_field_end()
}

fn write_no_attributes(o: &mut dyn TOutputProtocol, id: i16) -> thrift::Result<()> {
    write_field(o, "attributes", TType::Map, id)?;
    o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))?;
    o.write_map_end()?;
    o.write_field_end()
}

/// Sends `calls` back to back, then reads their replies in order; `success` reads the
/// result struct's field 0. Sent in windows so that unread replies never fill the socket.
fn pipeline<T>(
    client: &mut Client,
    table: &str,
    calls: &[Call],
    success: impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> std::result::Result<Vec<Option<T>>, Failure> {
    let mut out = Vec::with_capacity(calls.len());
    let mut first_error: Option<Failure> = None;
    for window in calls.chunks(WINDOW) {
        let mut seqs = Vec::with_capacity(window.len());
        let send = |client: &mut Client, seqs: &mut Vec<i32>| -> thrift::Result<()> {
            client.held.hold(true);
            for c in window {
                let seq = client.increment_sequence_number();
                seqs.push(seq);
                let o = client.o_prot_mut();
                o.write_message_begin(&TMessageIdentifier::new(c.name, TMessageType::Call, seq))?;
                o.write_struct_begin(&TStructIdentifier::new(format!("{}_args", c.name)))?;
                (c.args)(o)?;
                o.write_field_stop()?;
                o.write_struct_end()?;
                o.write_message_end()?;
                o.flush()?;
            }
            client.held.hold(false);
            client.held.send()?;
            Ok(())
        };
        send(client, &mut seqs).map_err(|e| match failure(e, table) {
            Failure::Broken(e) if out.is_empty() => Failure::NotSent(e),
            f => f,
        })?;
        for seq in seqs {
            let reply = read_reply(client.i_prot_mut(), seq, &success).map_err(|e| failure(e, table))?;
            match reply {
                Ok(v) => out.push(v),
                Err(e) => {
                    out.push(None);
                    first_error.get_or_insert(failure(e, table));
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Reads one reply: the outer error is the connection's, the inner the call's.
#[allow(clippy::type_complexity)]
fn read_reply<T>(
    i: &mut dyn TInputProtocol,
    seq: i32,
    success: &impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> thrift::Result<std::result::Result<Option<T>, thrift::Error>> {
    let m = i.read_message_begin()?;
    if m.sequence_number != seq {
        return Err(thrift::Error::Application(ApplicationError::new(
            thrift::ApplicationErrorKind::BadSequenceId,
            format!("reply {} to call {seq}", m.sequence_number),
        )));
    }
    if m.message_type == TMessageType::Exception {
        let e = thrift::Error::read_application_error_from_in_protocol(i)?;
        i.read_message_end()?;
        return Ok(Err(thrift::Error::Application(e)));
    }
    i.read_struct_begin()?;
    let mut result: std::result::Result<Option<T>, thrift::Error> = Ok(None);
    loop {
        let f = i.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        match f.id {
            Some(0) => result = Ok(Some(success(i)?)),
            Some(1) if f.field_type == TType::Struct => {
                result = Err(thrift::Error::User(Box::new(IOError::read_from_in_protocol(i)?)))
            }
            Some(2) if f.field_type == TType::Struct => {
                result = Err(thrift::Error::User(Box::new(IllegalArgument::read_from_in_protocol(
                    i,
                )?)))
            }
            _ => i.skip(f.field_type)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    i.read_message_end()?;
    Ok(result)
}

fn read_cells(i: &mut dyn TInputProtocol) -> thrift::Result<Vec<TCell>> {
    let list = i.read_list_begin()?;
    let mut out = Vec::with_capacity(list.size as usize);
    for _ in 0..list.size {
        out.push(TCell::read_from_in_protocol(i)?);
    }
    i.read_list_end()?;
    Ok(out)
}

/// One step of a row's mutations: a timestamp and Thrift mutations (puts, then deletes),
/// or a whole-row delete.
enum Step {
    /// Consecutive mutations of the row, sent in one `BatchMutation`.
    Batch(Option<i64>, std::ops::Range<usize>),
    DeleteRow(Option<i64>),
}

/// A put's cell: row, family, qualifier and timestamp (none: the server's clock).
type CellId<'a> = (&'a [u8], &'a str, &'a [u8], Option<i64>);

fn put_cell<'a>(row: &'a [u8], m: &'a StoreMutation) -> Option<CellId<'a>> {
    match m {
        StoreMutation::Put {
            family,
            qualifier,
            timestamp,
            ..
        } => Some((row, family, qualifier, *timestamp)),
        _ => None,
    }
}

/// The batch without the puts that a later put of the same cell in it overwrites, or None
/// when there are none. HBase, given both in one call, keeps the first; the store keeps the
/// last. (A delete between them hides both or neither, so dropping the first is exact.)
fn without_overwritten(rows: &[RowMutation]) -> Option<Vec<RowMutation>> {
    if !may_overwrite(rows) {
        return None;
    }
    let mut seen: HashSet<CellId> = HashSet::new();
    let mut out: Vec<RowMutation> = rows
        .iter()
        .rev()
        .map(|r| {
            let mut mutations: Vec<StoreMutation> = r
                .mutations
                .iter()
                .rev()
                .filter(|m| put_cell(&r.row, m).is_none_or(|cell| seen.insert(cell)))
                .cloned()
                .collect();
            mutations.reverse();
            RowMutation::new(r.row.clone(), mutations)
        })
        .collect();
    out.reverse();
    out.retain(|r| !r.mutations.is_empty());
    Some(out)
}

/// A cheap screen for `without_overwritten`, run on every batch: one put can overwrite
/// another only when a row has two entries in the batch or one entry puts a cell twice.
fn may_overwrite(rows: &[RowMutation]) -> bool {
    let mut keys: HashSet<&[u8]> = HashSet::with_capacity(rows.len());
    let mut cells: Vec<CellId> = Vec::new();
    rows.iter().any(|r| {
        if !keys.insert(&r.row) {
            return true;
        }
        cells.clear();
        cells.extend(r.mutations.iter().filter_map(|m| put_cell(&r.row, m)));
        cells.sort_unstable();
        cells.windows(2).any(|w| w[0] == w[1])
    })
}

/// Splits a row's mutations into steps that Thrift1 applies as the store would: one
/// timestamp per step, and no put after a delete within one (HBase applies a call's puts
/// first).
fn steps(rm: &RowMutation) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut has_delete = false;
    for (i, m) in rm.mutations.iter().enumerate() {
        let ts = m.timestamp();
        let is_delete = match m {
            StoreMutation::Put { .. } => false,
            StoreMutation::DeleteColumn { .. } | StoreMutation::DeleteFamily { .. } => true,
            StoreMutation::DeleteRow { timestamp } => {
                out.push(Step::DeleteRow(*timestamp));
                has_delete = false;
                continue;
            }
        };
        match out.last_mut() {
            Some(Step::Batch(t, range)) if *t == ts && (is_delete || !has_delete) => range.end = i + 1,
            _ => {
                out.push(Step::Batch(ts, i..i + 1));
                has_delete = false;
            }
        }
        has_delete |= is_delete;
    }
    out
}

/// A row and the mutations of one of its steps.
type RowStep<'a> = (&'a [u8], &'a [StoreMutation]);

/// Writes a row's mutations as a Thrift1 `BatchMutation`, straight from the borrowed
/// cells (`writeToWAL` is left to its default). `column` is scratch space.
fn write_batch(
    o: &mut dyn TOutputProtocol,
    row: &[u8],
    mutations: &[StoreMutation],
    column: &mut Vec<u8>,
) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("BatchMutation"))?;
    write_bytes_field(o, "row", 1, row)?;
    write_field(o, "mutations", TType::List, 2)?;
    o.write_list_begin(&TListIdentifier::new(TType::Struct, mutations.len() as i32))?;
    for m in mutations {
        // `family` alone deletes the family; `family:` would be the empty qualifier.
        let (family, qualifier, value) = match m {
            StoreMutation::Put {
                family,
                qualifier,
                value,
                ..
            } => (family, Some(qualifier.as_slice()), Some(value)),
            StoreMutation::DeleteColumn { family, qualifier, .. } => (family, Some(qualifier.as_slice()), None),
            StoreMutation::DeleteFamily { family, .. } => (family, None, None),
            StoreMutation::DeleteRow { .. } => unreachable!("row deletes are steps of their own"),
        };
        column.clear();
        column.extend_from_slice(family.as_bytes());
        if let Some(qualifier) = qualifier {
            column.push(b':');
            column.extend_from_slice(qualifier);
        }
        o.write_struct_begin(&TStructIdentifier::new("Mutation"))?;
        write_field(o, "isDelete", TType::Bool, 1)?;
        o.write_bool(value.is_none())?;
        o.write_field_end()?;
        write_bytes_field(o, "column", 2, column)?;
        if let Some(v) = value {
            write_bytes_field(o, "value", 3, v)?;
        }
        o.write_field_stop()?;
        o.write_struct_end()?;
    }
    o.write_list_end()?;
    o.write_field_end()?;
    o.write_field_stop()?;
    o.write_struct_end()
}

impl Store for Hbase {
    fn identity(&self) -> String {
        format!(
            "hbase://{} (HBase Thrift1, {}/{})",
            self.spec.authority(),
            self.spec.transport,
            self.spec.protocol
        )
    }

    fn version(&self) -> String {
        let id = self.call(true, |c| c.get_cluster_id().map_err(|e| failure(e, "")));
        match id {
            Ok(id) => format!("HBase Thrift1 server at {} (cluster {id})", self.spec.authority()),
            Err(_) => format!("HBase Thrift1 server at {}", self.spec.authority()),
        }
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        let families: Vec<ColumnDescriptor> = desc
            .families
            .iter()
            .map(|f| {
                // HBase's own defaults for a new family, with the store's VERSIONS.
                ColumnDescriptor::new(
                    format!("{}:", f.name).into_bytes(),
                    f.max_versions.min(i32::MAX as u32) as i32,
                    "NONE".to_string(),
                    false,
                    "ROW".to_string(),
                    0,
                    0,
                    true,
                    i32::MAX,
                )
            })
            .collect();
        self.forget(&desc.name);
        self.call(false, |c| {
            c.create_table(desc.name.clone().into_bytes(), families.clone())
                .map_err(|e| failure(e, &desc.name))
        })
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        self.forget(&name);
        self.call(true, |c| match c.disable_table(name.clone().into_bytes()) {
            Ok(()) => Ok(()),
            Err(e) => match failure(e, &name) {
                // Already disabled.
                Failure::Answered(Error::Io(m)) if m.contains("TableNotEnabledException") => Ok(()),
                f => Err(f),
            },
        })?;
        self.call(true, |c| {
            c.delete_table(name.clone().into_bytes()).map_err(|e| failure(e, &name))
        })
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        let names = self.call(true, |c| c.get_table_names().map_err(|e| failure(e, "")))?;
        let names = names
            .into_iter()
            .map(|n| String::from_utf8(n).map_err(|_| Error::Io("table name in reply is not UTF-8".into())))
            .collect::<Result<Vec<_>>>()?;
        super::describe_all(self, names)
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        let columns = self.call(true, |c| {
            c.get_column_descriptors(name.clone().into_bytes())
                .map_err(|e| failure(e, &name))
        })?;
        let mut families = Vec::new();
        for (key, cd) in columns {
            let raw = cd.name.unwrap_or(key);
            let family = String::from_utf8(raw.strip_suffix(b":").unwrap_or(&raw).to_vec())
                .map_err(|_| Error::Io("family name in reply is not UTF-8".into()))?;
            families.push(super::FamilyDescriptor {
                name: family,
                max_versions: cd.max_versions.unwrap_or(1).max(1) as u32,
            });
        }
        families.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(TableDescriptor { name, families })
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let desc = self.descriptor(table)?;
        validate_mutations(&desc, rows)?;
        let max = max_row_key(&desc.name);
        for r in rows {
            within_locatable_length(&desc.name, max, &r.row)?;
        }
        if rows.is_empty() {
            return Ok(());
        }
        let kept = without_overwritten(rows);
        let rows = kept.as_deref().unwrap_or(rows);
        let name = desc.name.as_bytes();
        // Per row, its steps; round k applies every row's k-th step.
        let per_row: Vec<(&RowMutation, Vec<Step>)> = rows.iter().map(|r| (r, steps(r))).collect();
        let rounds = per_row.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
        let mut calls: Vec<Vec<Call>> = Vec::with_capacity(rounds);
        for k in 0..rounds {
            let mut by_ts: BTreeMap<Option<i64>, Vec<RowStep>> = BTreeMap::new();
            let mut round = Vec::new();
            for (rm, steps) in &per_row {
                match steps.get(k) {
                    Some(Step::Batch(ts, range)) => by_ts
                        .entry(*ts)
                        .or_default()
                        .push((&rm.row, &rm.mutations[range.clone()])),
                    Some(Step::DeleteRow(ts)) => {
                        let (row, ts) = (rm.row.as_slice(), ts.unwrap_or(LATEST));
                        round.push(Call {
                            name: "deleteAllRowTs",
                            args: Box::new(move |o| {
                                write_bytes_field(o, "tableName", 1, name)?;
                                write_bytes_field(o, "row", 2, row)?;
                                write_field(o, "timestamp", TType::I64, 3)?;
                                o.write_i64(ts)?;
                                o.write_field_end()?;
                                write_no_attributes(o, 4)
                            }),
                        });
                    }
                    None => {}
                }
            }
            for (ts, batches) in by_ts {
                let write_batches = move |o: &mut dyn TOutputProtocol| -> thrift::Result<()> {
                    write_bytes_field(o, "tableName", 1, name)?;
                    write_field(o, "rowBatches", TType::List, 2)?;
                    o.write_list_begin(&TListIdentifier::new(TType::Struct, batches.len() as i32))?;
                    let mut column = Vec::with_capacity(64);
                    for (row, mutations) in &batches {
                        write_batch(o, row, mutations, &mut column)?;
                    }
                    o.write_list_end()?;
                    o.write_field_end()
                };
                round.push(match ts {
                    Some(ts) => Call {
                        name: "mutateRowsTs",
                        args: Box::new(move |o| {
                            write_batches(o)?;
                            write_field(o, "timestamp", TType::I64, 3)?;
                            o.write_i64(ts)?;
                            o.write_field_end()?;
                            write_no_attributes(o, 4)
                        }),
                    },
                    None => Call {
                        name: "mutateRows",
                        args: Box::new(move |o| {
                            write_batches(o)?;
                            write_no_attributes(o, 3)
                        }),
                    },
                });
            }
            calls.push(round);
        }
        // Repeating a write is harmless only when every cell names its own timestamp.
        let repeatable = rows.iter().all(|r| r.mutations.iter().all(|m| m.timestamp().is_some()));
        for round in &calls {
            self.call(repeatable, |c| pipeline(c, &desc.name, round, |_| Ok(())).map(|_| ()))?;
        }
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let desc = self.descriptor(table)?;
        let name = desc.name.clone();
        let mut out: Vec<Option<Row>> = vec![None; gets.len()];
        let max = max_row_key(&desc.name);
        // Gets with the same simple selection share one getRowsWithColumnsTs call.
        let mut simple: Vec<(usize, &Get)> = Vec::new();
        for (i, g) in gets.iter().enumerate() {
            validate_row_key(&g.row)?;
            within_locatable_length(&desc.name, max, &g.row)?;
            g.select.validate(&desc)?;
            let s = &g.select;
            if s.max_versions == 1 && s.qualifier_after.is_none() && s.cell_limit.is_none() {
                simple.push((i, g));
            } else if s.qualifier_after.is_some() || s.cell_limit.is_some() {
                out[i] = self.paged_row(&desc, g)?;
            } else {
                out[i] = self.versioned_row(&desc, g)?;
            }
        }
        let mut groups: Vec<(&super::Selection, Vec<(usize, &Get)>)> = Vec::new();
        for (i, g) in simple {
            match groups.iter_mut().find(|(s, _)| **s == g.select) {
                Some((_, list)) => list.push((i, g)),
                None => groups.push((&g.select, vec![(i, g)])),
            }
        }
        for (select, list) in groups {
            let rows: Vec<Vec<u8>> = list.iter().map(|(_, g)| g.row.clone()).collect();
            let columns = column_names(select);
            let ts = select.time_range.map_or(LATEST, |(_, max)| max);
            let results = self.call(true, |c| {
                c.get_rows_with_columns_ts(
                    name.clone().into_bytes(),
                    rows.clone(),
                    columns.clone(),
                    ts,
                    BTreeMap::new(),
                )
                .map_err(|e| failure(e, &name))
            })?;
            let mut by_key: HashMap<Vec<u8>, Row> = HashMap::new();
            for r in results {
                let mut row = to_row(r)?;
                if let Some((min, _)) = select.time_range {
                    row.cells.retain(|c| c.timestamp >= min);
                }
                if !row.cells.is_empty() {
                    by_key.insert(row.key.clone(), row);
                }
            }
            for (i, g) in list {
                out[i] = by_key.get(&g.row).cloned();
            }
        }
        Ok(out)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let desc = self.descriptor(table)?;
        scan.select.validate(&desc)?;
        if scan.select.max_versions > 1 {
            // TScan has no version count: find the rows and columns, then read versions.
            let mut newest = scan.clone();
            newest.select.max_versions = 1;
            newest.select.cell_limit = None;
            let rows = self.scan(&desc.name, &newest)?;
            return self.expand_versions(&desc, rows, &scan.select);
        }
        let limit = scan.limit.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let (mut start, mut stop) = (scan.start.clone(), scan.stop.clone());
        let mut filters: Vec<Vec<u8>> = Vec::new();
        if !scan.prefix.is_empty() {
            // Bounds narrow the range; the filter keeps exactly the prefix's rows (and, in a
            // reversed scan, ends it once rows fall below the prefix).
            let end = crate::keys::next_prefix(&scan.prefix);
            let high = if scan.reversed { &mut start } else { &mut stop };
            if !end.is_empty() && (high.is_empty() || *high > end) {
                *high = end;
            }
            if !scan.reversed && start.as_slice() < scan.prefix.as_slice() {
                start = scan.prefix.clone();
            }
            filters.push([b"PrefixFilter(".as_slice(), &quote(&scan.prefix), b")"].concat());
        }
        // HBase reads a scan whose start equals its stop as a get of that row: an empty range
        // is answered here.
        let empty = match scan.reversed {
            false => !stop.is_empty() && stop <= start,
            true => !start.is_empty() && !stop.is_empty() && start <= stop,
        };
        if empty {
            return Ok(Vec::new());
        }
        let min_ts = scan.select.time_range.map(|(min, _)| min).filter(|&min| min > 0);
        // TScan carries only the range's end, so versions below its start are dropped here.
        // A cell limit is counted here too: HBase runs filters before it counts versions,
        // so ColumnPaginationFilter would spend its limit on older versions of a column.
        let cell_limit = scan.select.cell_limit;
        filters.extend(cell_filters(&scan.select));
        let skip_start = scan.start_exclusive && !scan.start.is_empty() && start == scan.start;
        let page = limit.saturating_add(usize::from(skip_start)).min(SCAN_PAGE);
        // One batch answers the scan when nothing but the start row is dropped on this side
        // (a page after a cursor asks for one row more): then the close goes out with the
        // read, one round trip fewer per page. PageFilter, last so that it counts only rows
        // the other filters keep, lets the region server end its scanner with that batch, so
        // the close costs no call of the Thrift server to the region server.
        let one_batch = min_ts.is_none() && limit.saturating_add(usize::from(skip_start)) <= page;
        if one_batch {
            filters.push(format!("PageFilter({page})").into_bytes());
        }
        let filter = (!filters.is_empty()).then(|| filters.join(&b" AND "[..]));
        let tscan = TScan {
            start_row: (!start.is_empty()).then_some(start.clone()),
            stop_row: (!stop.is_empty()).then_some(stop),
            timestamp: scan.select.time_range.map(|(_, max)| max),
            columns: Some(column_names(&scan.select)),
            caching: Some(page as i32),
            filter_string: filter,
            batch_size: None,
            sort_columns: Some(false),
            reversed: Some(scan.reversed),
            cache_blocks: Some(true),
        };
        let name = desc.name.clone();
        self.call(true, |c| {
            let id = c
                .scanner_open_with_scan(name.clone().into_bytes(), tscan.clone(), BTreeMap::new())
                .map_err(|e| failure(e, &name))?;
            if one_batch {
                let calls = [
                    Call {
                        name: "scannerGetList",
                        args: Box::new(move |o| {
                            write_field(o, "id", TType::I32, 1)?;
                            o.write_i32(id)?;
                            o.write_field_end()?;
                            write_field(o, "nbRows", TType::I32, 2)?;
                            o.write_i32(page as i32)?;
                            o.write_field_end()
                        }),
                    },
                    Call {
                        name: "scannerClose",
                        args: Box::new(move |o| {
                            write_field(o, "id", TType::I32, 1)?;
                            o.write_i32(id)?;
                            o.write_field_end()
                        }),
                    },
                ];
                let mut replies = pipeline(c, &name, &calls, read_row_results)?;
                let mut rows = Vec::with_capacity(limit.min(page));
                for r in replies.swap_remove(0).unwrap_or_default() {
                    let mut row = to_row(r).map_err(Failure::Answered)?;
                    if skip_start && row.key == scan.start {
                        continue;
                    }
                    if let Some(cells) = cell_limit {
                        row.cells.truncate(cells);
                    }
                    if !row.cells.is_empty() && rows.len() < limit {
                        rows.push(row);
                    }
                }
                return Ok(rows);
            }
            let read = (|| {
                let mut rows = Vec::new();
                loop {
                    let want = (limit - rows.len()).saturating_add(usize::from(skip_start)).min(page);
                    let batch = c.scanner_get_list(id, want as i32).map_err(|e| failure(e, &name))?;
                    let got = batch.len();
                    for r in batch {
                        let mut row = to_row(r).map_err(Failure::Answered)?;
                        if skip_start && row.key == scan.start {
                            continue;
                        }
                        if let Some(min) = min_ts {
                            row.cells.retain(|c| c.timestamp >= min);
                        }
                        if let Some(cells) = cell_limit {
                            row.cells.truncate(cells);
                        }
                        if !row.cells.is_empty() && rows.len() < limit {
                            rows.push(row);
                        }
                    }
                    if got < want || rows.len() >= limit {
                        return Ok(rows);
                    }
                }
            })();
            // Always closed, on error too; a broken connection leaves it to the server's lease.
            let closed = c.scanner_close(id);
            match (read, closed) {
                (Ok(rows), Ok(())) => Ok(rows),
                (Ok(_), Err(e)) => Err(failure(e, &name)),
                (Err(e), _) => Err(e),
            }
        })
    }
}

/// A `list<TRowResult>` reply.
fn read_row_results(i: &mut dyn TInputProtocol) -> thrift::Result<Vec<TRowResult>> {
    let list = i.read_list_begin()?;
    // The bounded input has checked the count against the message's size.
    let mut out = Vec::with_capacity(list.size.clamp(0, 4096) as usize);
    for _ in 0..list.size {
        out.push(TRowResult::read_from_in_protocol(i)?);
    }
    i.read_list_end()?;
    Ok(out)
}

/// Filter-language terms for a selection's qualifier cursor.
fn cell_filters(s: &super::Selection) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if let Some(after) = &s.qualifier_after {
        // Not ColumnRangeFilter: its seek hint can jump over a family's delete marker (kept
        // at the empty qualifier) and bring back cells a plain get calls deleted.
        // QualifierFilter only skips, so every marker is seen.
        out.push([b"QualifierFilter(>, 'binary:".as_slice(), &quote(after)[1..], b")"].concat());
    }
    out
}

impl Hbase {
    /// A get with a qualifier cursor or cell limit: a one-row scan with filters.
    fn paged_row(&self, desc: &TableDescriptor, g: &Get) -> Result<Option<Row>> {
        let mut stop = g.row.clone();
        stop.push(0);
        let scan = Scan {
            start: g.row.clone(),
            stop,
            select: g.select.clone(),
            limit: Some(1),
            ..Scan::default()
        };
        Ok(self.scan(&desc.name, &scan)?.pop())
    }

    /// A multi-version get: the row's columns from a time-bounded read, then their versions.
    fn versioned_row(&self, desc: &TableDescriptor, g: &Get) -> Result<Option<Row>> {
        let mut latest = g.clone();
        latest.select.max_versions = 1;
        latest.select.cell_limit = None;
        let Some(newest) = self.get(&desc.name, &[latest])?.pop().flatten() else {
            return Ok(None);
        };
        Ok(self.expand_versions(desc, vec![newest], &g.select)?.pop())
    }

    /// Replaces each cell of `rows` (the newest version of its column below the time
    /// range's end) by the column's versions the selection asks for, read with `getVerTs`,
    /// pipelined.
    fn expand_versions(&self, desc: &TableDescriptor, rows: Vec<Row>, select: &super::Selection) -> Result<Vec<Row>> {
        let ts = select.time_range.map_or(LATEST, |(_, max)| max);
        let min = select.time_range.map_or(i64::MIN, |(min, _)| min);
        let versions = select.max_versions.min(i32::MAX as u32) as i32;
        let name = desc.name.as_bytes().to_vec();
        let mut calls: Vec<Call> = Vec::new();
        for r in &rows {
            for c in &r.cells {
                let (name, row, column) = (
                    name.clone(),
                    r.key.clone(),
                    thrift1::column_arg(&Column::qualifier(&c.family, c.qualifier.clone())),
                );
                calls.push(Call {
                    name: "getVerTs",
                    args: Box::new(move |o| {
                        write_bytes_field(o, "tableName", 1, &name)?;
                        write_bytes_field(o, "row", 2, &row)?;
                        write_bytes_field(o, "column", 3, &column)?;
                        write_field(o, "timestamp", TType::I64, 4)?;
                        o.write_i64(ts)?;
                        o.write_field_end()?;
                        write_field(o, "numVersions", TType::I32, 5)?;
                        o.write_i32(versions)?;
                        o.write_field_end()?;
                        write_no_attributes(o, 6)
                    }),
                });
            }
        }
        let mut replies = self
            .call(true, |c| pipeline(c, &desc.name, &calls, read_cells))?
            .into_iter();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let mut cells = Vec::new();
            for column in &r.cells {
                for tc in replies.next().flatten().unwrap_or_default() {
                    let timestamp = tc.timestamp.unwrap_or(0);
                    if timestamp >= min {
                        cells.push(Cell {
                            family: column.family.clone(),
                            qualifier: column.qualifier.clone(),
                            timestamp,
                            value: tc.value.unwrap_or_default(),
                        });
                    }
                }
            }
            if let Some(limit) = select.cell_limit {
                cells.truncate(limit);
            }
            if !cells.is_empty() {
                out.push(Row { key: r.key, cells });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let s = Spec::parse("127.0.0.1:9191?transport=framed&protocol=compact").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 9191));
        assert_eq!((s.transport, s.protocol), (Transport::Framed, Protocol::Compact));
        let d = Spec::parse("hbase-master").unwrap();
        assert_eq!(
            (d.port, d.transport, d.protocol),
            (9090, Transport::Buffered, Protocol::Binary)
        );
        assert!(Spec::parse("h:99999").unwrap_err().contains("port"));
        assert!(
            Spec::parse("h:1?transport=http")
                .unwrap_err()
                .contains("buffered or framed")
        );
        assert!(Spec::parse("h:1?speed=fast").unwrap_err().contains("unknown option"));
        assert!(Spec::parse(":1").unwrap_err().contains("no host"));
    }

    #[test]
    fn overwritten_puts_are_left_out_and_the_screen_passes_plain_batches() {
        let put = |q: &str, ts: i64, v: &str| StoreMutation::put("f", q, ts, v);
        let plain = [
            RowMutation::new("a", vec![put("x", 1, "1"), put("y", 1, "2"), put("x", 2, "3")]),
            RowMutation::new("b", vec![put("x", 1, "4")]),
        ];
        assert!(!may_overwrite(&plain));
        assert_eq!(without_overwritten(&plain), None);
        // Within one entry, and across two entries of one row: the last put stays.
        let twice = [RowMutation::new(
            "a",
            vec![put("x", 1, "old"), put("y", 1, "y"), put("x", 1, "new")],
        )];
        assert_eq!(
            without_overwritten(&twice),
            Some(vec![RowMutation::new("a", vec![put("y", 1, "y"), put("x", 1, "new")])])
        );
        let across = [
            RowMutation::new("a", vec![put("x", 1, "old")]),
            RowMutation::new("b", vec![put("x", 1, "b")]),
            RowMutation::new("a", vec![put("x", 1, "new"), put("z", 1, "z")]),
        ];
        assert_eq!(
            without_overwritten(&across),
            Some(vec![
                RowMutation::new("b", vec![put("x", 1, "b")]),
                RowMutation::new("a", vec![put("x", 1, "new"), put("z", 1, "z")]),
            ])
        );
        // A row named twice with different cells passes the screen but keeps everything.
        let distinct = [
            RowMutation::new("a", vec![put("x", 1, "1")]),
            RowMutation::new("a", vec![put("y", 1, "2")]),
        ];
        assert!(may_overwrite(&distinct));
        assert_eq!(without_overwritten(&distinct), Some(distinct.to_vec()));
    }

    #[test]
    fn steps_keep_each_rows_order() {
        let rm = RowMutation::new(
            "r",
            vec![
                StoreMutation::put("f", "a", 5, "1"),
                StoreMutation::put("f", "b", 5, "2"),
                StoreMutation::delete_column("f", "c"),
                StoreMutation::DeleteColumn {
                    family: "f".into(),
                    qualifier: b"a".to_vec(),
                    timestamp: Some(5),
                },
                StoreMutation::put("f", "a", 5, "3"),
                StoreMutation::DeleteRow { timestamp: Some(9) },
            ],
        );
        let shape: Vec<String> = steps(&rm)
            .iter()
            .map(|s| match s {
                Step::Batch(ts, range) => format!(
                    "{ts:?}:{}",
                    rm.mutations[range.clone()]
                        .iter()
                        .map(|m| if matches!(m, StoreMutation::Put { .. }) {
                            'p'
                        } else {
                            'd'
                        })
                        .collect::<String>()
                ),
                Step::DeleteRow(ts) => format!("row{ts:?}"),
            })
            .collect();
        assert_eq!(shape, ["Some(5):pp", "None:d", "Some(5):d", "Some(5):p", "rowSome(9)"]);
        assert_eq!(crate::keys::next_prefix(b"ab\xff"), b"ac");
        assert_eq!(crate::keys::next_prefix(b"\xff\xff"), b"");
        assert_eq!(quote(b"it's"), b"'it''s'");
    }
}
