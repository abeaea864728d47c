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
//! Connections are pooled, one per concurrent caller, and closed once idle for 30 s (the
//! servers close them at 60 s). A call that fails with a reset or a timeout is retried on a
//! fresh connection when repeating it cannot duplicate work (reads, and writes whose every
//! cell carries its own timestamp).

mod http;
mod mutations;
pub mod native;
mod pipeline;
mod pool;
mod thrift2;
mod versions;

pub use thrift2::Hbase2;

use mutations::*;
use pipeline::*;
use pool::*;
use versions::*;

use super::{
    Cell, Column, Error, Get, Mutation as StoreMutation, Result, Row, RowMutation, Scan, Store, TableDescriptor,
    canonical_table_name, first_line, validate_mutations, validate_row_key,
};
use crate::convert::thrift1;
use crate::idl::thrift1::{
    AlreadyExists, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument, TCell, THbaseSyncClient, TRowResult,
    TScan,
};
use crate::wire::{self, Outbox, Protocol, Transport};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};
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
    /// Which of HBase's Thrift services: `Hbase` (Thrift1, the default, as `hbase thrift
    /// start`) or `THBaseService` (Thrift2, `hbase thrift2 start`).
    pub api: Api,
    /// Thrift over HTTP POSTs (`transport=http`), as HBase's HTTP mode serves it.
    pub http: bool,
    /// Kerberos (`sasl=gssapi`): SASL on the socket, SPNEGO over HTTP.
    pub sasl: Option<Sasl>,
    /// TLS (`tls=true`), HTTP mode only, as HBase serves it.
    pub tls: Option<Tls>,
}

/// Kerberos towards the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sasl {
    /// The first part of the server's principal (`service=`; `hbase` on the socket, `HTTP`
    /// over HTTP by default); its host part is the URL's host.
    pub service: Option<String>,
    /// The quality of protection asked for (`qop=`); without it, the strongest the server
    /// offers.
    pub qop: Option<Qop>,
}

/// TLS towards the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// The PEM file of the CA(s) the server's certificate must chain to (`ca=`); Mozilla's
    /// roots without it.
    pub ca: Option<std::path::PathBuf>,
}

pub use crate::secure::Qop;

/// The options of an `hbase://` URL, for its errors.
/// The options a gateway URL takes, as its parser lists them (also `tallrow help backends`).
pub const OPTIONS: &str = "transport=buffered|framed|http, protocol=binary|compact, api=thrift1|thrift2, sasl=gssapi, service=NAME, qop=auth|auth-int|auth-conf, tls=true, ca=PATH";

pub use crate::wire::Api;

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
            api: Api::Thrift1,
            http: false,
            sasl: None,
            tls: None,
        };
        let bad = |e: String| format!("hbase://{rest}: {e}");
        let (mut framed, mut service, mut qop, mut ca, mut tls) = (false, None, None, None, false);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("transport", "http")) => spec.http = true,
                Some(("transport", v)) => {
                    spec.transport = v.parse().map_err(|e: String| bad(format!("{e} or http")))?;
                    framed = spec.transport == Transport::Framed;
                }
                Some(("protocol", v)) => spec.protocol = v.parse().map_err(bad)?,
                Some(("api", "thrift1")) => spec.api = Api::Thrift1,
                Some(("api", "thrift2")) => spec.api = Api::Thrift2,
                Some(("api", v)) => return Err(bad(format!("api {v:?} is not thrift1, thrift2 or native"))),
                Some(("sasl", "gssapi")) | Some(("auth", "kerberos")) => {
                    spec.sasl = Some(Sasl {
                        service: None,
                        qop: None,
                    })
                }
                Some(("sasl", v)) => {
                    return Err(bad(format!(
                        "sasl {v:?} is not a mechanism HBase's Thrift servers take: sasl=gssapi (Kerberos)"
                    )));
                }
                Some(("auth", v)) => return Err(bad(format!("auth {v:?}: expected auth=kerberos"))),
                Some(("service", v)) if !v.is_empty() => service = Some(v.to_string()),
                Some(("qop", v)) => qop = Some(v.parse::<Qop>().map_err(bad)?),
                Some(("tls", "true")) => tls = true,
                Some(("tls", "false")) => tls = false,
                Some(("tls", v)) => return Err(bad(format!("tls {v:?} is not true or false"))),
                Some(("ca", v)) if !v.is_empty() => ca = Some(std::path::PathBuf::from(v)),
                _ => return Err(bad(format!("unknown option {pair:?}; expected {OPTIONS}"))),
            }
        }
        // The combinations HBase's Thrift servers serve (ThriftServer in 2.x): SASL only
        // unframed on the socket, with a QOP; TLS and SPNEGO only in HTTP mode.
        if let Some(sasl) = spec.sasl.as_mut() {
            if !crate::secure::KERBEROS {
                return Err(bad(crate::secure::NO_KERBEROS.to_string()));
            }
            if framed && !spec.http {
                return Err(bad("HBase's Thrift servers take SASL only unframed (they refuse hbase.thrift.security.qop with framed transport): drop transport=framed".into()));
            }
            if qop.is_some() && spec.http {
                return Err(bad("qop= is SASL's, on the socket: over HTTP SPNEGO authenticates each request and tls=true protects it".into()));
            }
            sasl.service = service;
            sasl.qop = qop;
        } else if service.is_some() || qop.is_some() {
            return Err(bad("service= and qop= go with sasl=gssapi".into()));
        }
        if tls {
            if !spec.http {
                return Err(bad("HBase's Thrift servers serve TLS only in HTTP mode (hbase.thrift.ssl.enabled with hbase.regionserver.thrift.http): add transport=http".into()));
            }
            spec.tls = Some(Tls { ca });
        } else if ca.is_some() {
            return Err(bad("ca= goes with tls=true".into()));
        }
        Ok(spec)
    }

    /// The transport, protocol and security, for identities and reports:
    /// `buffered/binary`, `buffered/binary, sasl gssapi auth-conf`, `https/binary, spnego`.
    pub fn shape(&self) -> String {
        let transport = match (self.http, self.tls.is_some()) {
            (true, true) => "https".to_string(),
            (true, false) => "http".to_string(),
            (false, _) => self.transport.to_string(),
        };
        let mut parts = vec![format!("{transport}/{}", self.protocol)];
        if let Some(s) = &self.sasl {
            if self.http {
                parts.push("spnego".to_string());
            } else {
                parts.push(match s.qop {
                    Some(q) => format!("sasl gssapi {q}"),
                    None => "sasl gssapi".to_string(),
                });
            }
        }
        parts.join(", ")
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The backend.
pub struct Hbase {
    spec: Spec,
    dialer: Dialer,
    pool: Pool<Client>,
    families: Descriptors,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for a reply.
    pub read_timeout: Duration,
    /// Attempts of a retryable call.
    pub attempts: u32,
    /// Writes of requests to the server, all connections together.
    round_trips: std::sync::Arc<std::sync::atomic::AtomicU64>,
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

/// Checks that HBase's client can locate every row of a batch on `desc` (the families are
/// checked by `validate_mutations`).
fn locatable_rows(desc: &TableDescriptor, rows: &[RowMutation]) -> Result<()> {
    let max = max_row_key(&desc.name);
    rows.iter()
        .try_for_each(|r| within_locatable_length(&desc.name, max, &r.row))
}

/// Checks a get against `desc`: its row key, which HBase's client must be able to locate, and
/// its selection.
fn checked_get(desc: &TableDescriptor, max: usize, g: &Get) -> Result<()> {
    validate_row_key(&g.row)?;
    within_locatable_length(&desc.name, max, &g.row)?;
    g.select.validate(desc)
}

/// A selection's columns as HBase's Thrift1 column list (see `added_columns`).
fn column_names(select: &crate::store::Selection) -> Vec<Vec<u8>> {
    added_columns(select).map(thrift1::column_arg).collect()
}

fn to_row(r: TRowResult) -> Result<Row> {
    thrift1::row_of(r).map_err(|e| Error::Io(format!("{e} in reply")))
}

/// A table's split keys from the region start keys `ask` lists, asked again while HBase
/// lists none for a table that exists: HBase answers an empty list for a missing table, and
/// for a table just created under the name of one just dropped, until its Thrift server's
/// cached locations are reloaded.
pub(crate) fn regions_of(
    store: &dyn Store,
    name: &str,
    mut ask: impl FnMut() -> Result<Vec<Vec<u8>>>,
) -> Result<Vec<Vec<u8>>> {
    for _ in 0..50 {
        let starts = ask()?;
        if !starts.is_empty() {
            return Ok(super::split_keys(starts));
        }
        store.describe_table(name)?;
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(Error::Io(format!(
        "HBase lists no regions for table {name}, which exists"
    )))
}

impl Store for Hbase {
    fn in_flight(&self) -> usize {
        crate::store::REMOTE_IN_FLIGHT
    }

    fn identity(&self) -> String {
        format!(
            "hbase://{} (HBase Thrift1, {})",
            self.spec.authority(),
            self.spec.shape()
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
        crate::store::one_copy(&desc, "HBase's Thrift1 API creates tables without their attributes")?;
        if !desc.splits.is_empty() {
            return Err(Error::BadArgument(format!(
                "table {}: HBase's Thrift1 API cannot create a table of {} regions; use api=thrift2 (hbase://HOST:PORT?api=thrift2)",
                desc.name,
                desc.splits.len() + 1
            )));
        }
        let defaults = crate::store::Storage::default();
        for f in &desc.families {
            let s = &f.storage;
            let unset = if s.data_block_encoding != defaults.data_block_encoding {
                Some(format!("DATA_BLOCK_ENCODING {}", s.data_block_encoding))
            } else if s.block_size != defaults.block_size {
                Some(format!("BLOCKSIZE {}", s.block_size))
            } else {
                None
            };
            if let Some(unset) = unset {
                return Err(Error::BadArgument(format!(
                    "table {}, family {}: HBase's Thrift1 API cannot set {unset}; use api=thrift2 or api=native",
                    desc.name, f.name
                )));
            }
        }
        let families: Vec<ColumnDescriptor> = desc
            .families
            .iter()
            .map(|f| {
                // What Thrift1's ColumnDescriptor carries: codec, bloom type and TTL; HBase's
                // defaults for the rest.
                ColumnDescriptor::new(
                    format!("{}:", f.name).into_bytes(),
                    f.max_versions.min(i32::MAX as u32) as i32,
                    f.storage.compression.to_string(),
                    false,
                    f.storage.bloom_filter.to_string(),
                    0,
                    0,
                    true,
                    f.storage.ttl.min(crate::store::storage::FOREVER) as i32,
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
            // Thrift1 reports no encoding or block size: HBase's defaults stand for them.
            let mut storage = crate::store::Storage::default();
            let attrs = [
                ("COMPRESSION", cd.compression.clone()),
                ("BLOOMFILTER", cd.bloom_filter_type.clone()),
                ("TTL", cd.time_to_live.map(|t| t.to_string())),
            ];
            for (k, v) in attrs {
                if let Some(v) = v {
                    storage = storage.with_attributes([(k, v.as_str())]);
                }
            }
            families.push(super::FamilyDescriptor {
                name: family,
                max_versions: cd.max_versions.unwrap_or(1).max(1) as u32,
                storage,
            });
        }
        families.sort_by(|a, b| a.name.cmp(&b.name));
        // No table attributes here: tallrow's mark cannot be kept.
        Ok(TableDescriptor {
            name,
            families,
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        })
    }

    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        let name = canonical_table_name(table)?;
        regions_of(self, &name, || {
            let regions = self.call(true, |c| {
                c.get_table_regions(name.clone().into_bytes())
                    .map_err(|e| failure(e, &name))
            })?;
            Ok(regions.into_iter().map(|r| r.start_key.unwrap_or_default()).collect())
        })
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let desc = self.descriptor(table)?;
        validate_mutations(&desc, rows)?;
        if rows
            .iter()
            .any(|r| r.mutations.iter().any(StoreMutation::is_version_delete))
        {
            return Err(Error::BadArgument(
                "HBase's Thrift1 API deletes a column's or family's versions at or below a timestamp, \
                 never one version alone: use api=thrift2 for one-version deletes"
                    .into(),
            ));
        }
        locatable_rows(&desc, rows)?;
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
                        thrift1::write_batch(o, row, mutations, &mut column)?;
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
            checked_get(&desc, max, g)?;
            let s = &g.select;
            if s.max_versions == 1 && s.qualifier_after.is_none() && s.cell_limit.is_none() {
                simple.push((i, g));
            } else if s.qualifier_after.is_some() || s.cell_limit.is_some() {
                out[i] = self.paged_row(&desc, g)?;
            } else {
                out[i] = self.versioned_row(&desc, g)?;
            }
        }
        let mut groups: Vec<(&crate::store::Selection, Vec<(usize, &Get)>)> = Vec::new();
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
        let Some(Bounds {
            start,
            stop,
            mut filters,
        }) = scan_bounds(scan)
        else {
            return Ok(Vec::new());
        };
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
            Spec::parse("h:1?transport=udp")
                .unwrap_err()
                .contains("buffered or framed or http")
        );
        assert!(Spec::parse("h:1?speed=fast").unwrap_err().contains("unknown option"));
        assert!(Spec::parse(":1").unwrap_err().contains("no host"));
        assert_eq!(d.api, Api::Thrift1);
        assert_eq!(Spec::parse("h:1?api=thrift2").unwrap().api, Api::Thrift2);
        assert!(
            Spec::parse("h:1?api=rest")
                .unwrap_err()
                .contains("thrift1, thrift2 or native")
        );
    }

    #[test]
    fn secured_urls_take_what_hbase_serves() {
        let h = Spec::parse("gw:9090?api=thrift2&transport=http&tls=true&ca=/etc/ca.pem").unwrap();
        assert!(h.http && h.sasl.is_none());
        assert_eq!(
            h.tls.as_ref().unwrap().ca.as_deref(),
            Some(std::path::Path::new("/etc/ca.pem"))
        );
        assert_eq!(h.shape(), "https/binary");
        let no_ca = Spec::parse("gw:9090?transport=http&tls=true").unwrap();
        assert_eq!(no_ca.tls, Some(Tls { ca: None }));
        // TLS on the socket, a CA without TLS: HBase serves neither.
        assert!(Spec::parse("gw:1?tls=true").unwrap_err().contains("only in HTTP mode"));
        assert!(
            Spec::parse("gw:1?transport=http&ca=/x")
                .unwrap_err()
                .contains("ca= goes with tls=true")
        );
        assert!(Spec::parse("gw:1?tls=yes").unwrap_err().contains("true or false"));
        assert!(Spec::parse("gw:1?sasl=plain").unwrap_err().contains("sasl=gssapi"));
        assert!(
            Spec::parse("gw:1?qop=auth")
                .unwrap_err()
                .contains("go with sasl=gssapi")
        );
        assert!(
            Spec::parse("gw:1?service=hbase")
                .unwrap_err()
                .contains("go with sasl=gssapi")
        );
        if !crate::secure::KERBEROS {
            let e = Spec::parse("gw:1?sasl=gssapi").unwrap_err();
            assert!(e.contains("--features kerberos"), "{e}");
            crate::testkit::absent("a kerberos build", "built without the cargo feature kerberos");
            return;
        }
        let s = Spec::parse("gw:9090?sasl=gssapi&qop=auth-conf&service=hbase2").unwrap();
        assert_eq!(
            s.sasl,
            Some(Sasl {
                service: Some("hbase2".into()),
                qop: Some(Qop::AuthConf)
            })
        );
        assert_eq!(s.shape(), "buffered/binary, sasl gssapi auth-conf");
        let k = Spec::parse("gw:1?transport=http&auth=kerberos&tls=true").unwrap();
        assert_eq!(k.shape(), "https/binary, spnego");
        assert!(
            Spec::parse("gw:1?sasl=gssapi&transport=framed")
                .unwrap_err()
                .contains("only unframed")
        );
        assert!(
            Spec::parse("gw:1?sasl=gssapi&transport=http&qop=auth")
                .unwrap_err()
                .contains("SASL's, on the socket")
        );
        assert!(
            Spec::parse("gw:1?sasl=gssapi&qop=privacy")
                .unwrap_err()
                .contains("auth-conf")
        );
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
        // A row named twice with different cells, or one cell at two timestamps, passes.
        let distinct = [
            RowMutation::new("a", vec![put("x", 1, "1")]),
            RowMutation::new("a", vec![put("y", 1, "2"), put("x", 2, "3")]),
        ];
        assert!(!may_overwrite(&distinct));
        assert_eq!(without_overwritten(&distinct), None);
    }

    proptest::proptest! {
        /// A batch in row order as a stable sort by its bytes puts it, short rows and rows
        /// alike in their first 8 bytes included; overwrites found as a set finds them.
        #[test]
        fn a_batch_sorts_by_row_and_finds_its_overwrites(
            rows in proptest::collection::vec(
                (proptest::collection::vec(0u8..3, 0..11), 0u8..3, 0i64..2),
                0..40,
            )
        ) {
            let batch: Vec<RowMutation> = rows
                .iter()
                .map(|(row, q, ts)| RowMutation::new(row.clone(), vec![StoreMutation::put("f", q.to_string(), *ts, "v")]))
                .collect();
            let mut want: Vec<&RowMutation> = batch.iter().collect();
            want.sort_by(|a, b| a.row.cmp(&b.row));
            let got = by_row(&batch);
            proptest::prop_assert!(got.iter().zip(&want).all(|(a, b)| std::ptr::eq(*a, *b)));
            let mut seen = HashSet::new();
            let twice = !rows.iter().all(|cell| seen.insert(cell));
            proptest::prop_assert_eq!(overwrites(&got), twice);
        }
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
