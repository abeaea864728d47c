//! The hbase backend over HBase's own RPC (`hbase://QUORUM[/ZNODE_PARENT]?api=native`): the
//! store's calls as the `hbase-client` crate makes them, straight to the region servers and
//! the master, with no Thrift gateway. This is the one place that knows both the store's
//! model and the client's.
//!
//! - a batch is each row's steps (puts, then deletes, in order, as the Thrift backends
//!   apply them): per round, one batch of the rows' puts, then one of their deletes, each
//!   grouped by region server into one `Multi` call per server;
//! - gets are one batch of `Get` actions, with versions, time ranges, columns and, for a
//!   qualifier cursor, a `QualifierFilter`; cell limits are counted here;
//! - scans are the client's scanners, region after region, with a `PrefixFilter` for a
//!   prefix; `scan_each` streams them.

use super::mutations::{Step, by_row, overwrites, overwritten_dropped, steps_into};
use super::versions::added_columns;
use super::{Descriptors, max_row_key};
use crate::store::{
    Cell, Error, Get, Mutation as StoreMutation, Result, Row, RowMutation, Scan, Store, TableDescriptor,
    canonical_table_name, validate_mutations,
};
use bytes::Bytes;
use hbase_client::cells::{CellType, LATEST_TIMESTAMP};
use hbase_client::{Encoder, MutationKind, Registry, pb};
use std::time::Duration;

/// Where the cluster is: `hbase://QUORUM[/ZNODE_PARENT]?api=native[&registry=rpc]`, and
/// how to authenticate to it (`sasl=gssapi[&service=NAME][&qop=auth|auth-int|auth-conf]`,
/// with `&crypto=aes` after `qop=auth-conf`)
/// and protect it (`tls=true[&ca=PATH]`); `zk_sasl=gssapi[&zk_service=NAME]` authenticates
/// to a ZooKeeper quorum that requires it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// How the client finds the cluster.
    pub registry: Registry,
    /// Kerberos on HBase's RPC (`hbase.security.authentication=kerberos`).
    pub kerberos: Option<Kerberos>,
    /// TLS on HBase's RPC (`hbase.server.netty.tls.enabled`), to every server.
    pub tls: Option<super::Tls>,
    /// SASL GSSAPI to ZooKeeper (`zk_sasl=gssapi[&zk_service=NAME]`), for a quorum that
    /// requires it: the first part of its servers' principals (`zookeeper`).
    pub zk_sasl: Option<String>,
    /// How long the client waits and how often it tries again, as the URL sets them.
    pub client: ClientSettings,
    /// `connect_to=HOST:PORT:HOST2:PORT2`, as curl's `--connect-to`: a server the cluster
    /// names `HOST:PORT` is dialled at `HOST2:PORT2` (a tunnel, a port forward).
    pub connect_to: Vec<(String, String)>,
}

/// The HBase client settings a native URL may set, by their names in `hbase-site.xml`
/// (milliseconds for times), each at HBase 2.6's client default where the URL is silent:
/// `zookeeper.session.timeout` (90000), `zookeeper.recovery.retry` (30),
/// `zookeeper.recovery.retry.intervalmill` (1000), `zookeeper.keep-alive.time` (60000),
/// `hbase.client.retries.number` (15), `hbase.client.pause` (100) and `hbase.rpc.timeout`
/// (60000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSettings {
    /// ZooKeeper's session, retries and keep-alive.
    pub zk: hbase_client::zk::ZkSettings,
    /// `hbase.client.retries.number`.
    pub retries: u32,
    /// `hbase.client.pause`.
    pub pause: Duration,
    /// `hbase.rpc.timeout`.
    pub rpc_timeout: Duration,
}

impl Default for ClientSettings {
    fn default() -> Self {
        let o = hbase_client::Options::default();
        ClientSettings {
            zk: o.zk,
            retries: o.retries,
            pause: o.pause,
            rpc_timeout: o.rpc_timeout,
        }
    }
}

impl ClientSettings {
    /// The settings' names, each with its value in the URL's unit.
    fn values(&self) -> [(&'static str, u64); 7] {
        let ms = |d: Duration| d.as_millis() as u64;
        [
            ("zookeeper.session.timeout", ms(self.zk.session_timeout)),
            ("zookeeper.recovery.retry", self.zk.retries as u64),
            ("zookeeper.recovery.retry.intervalmill", ms(self.zk.retry_interval)),
            ("zookeeper.keep-alive.time", ms(self.zk.keep_alive)),
            ("hbase.client.retries.number", self.retries as u64),
            ("hbase.client.pause", ms(self.pause)),
            ("hbase.rpc.timeout", ms(self.rpc_timeout)),
        ]
    }

    /// Sets `name` to `value`; `None` for a name that is not one of them.
    fn set(&mut self, name: &str, value: &str) -> Option<std::result::Result<(), String>> {
        let known = self.values().iter().any(|(n, _)| *n == name);
        if !known {
            return None;
        }
        let n = match value.parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                return Some(Err(format!(
                    "{name} {value:?} is not a whole number from 0 to 4294967295"
                )));
            }
        };
        let ms = Duration::from_millis(n as u64);
        match name {
            "zookeeper.session.timeout" => self.zk.session_timeout = ms,
            "zookeeper.recovery.retry" => self.zk.retries = n,
            "zookeeper.recovery.retry.intervalmill" => self.zk.retry_interval = ms,
            "zookeeper.keep-alive.time" => self.zk.keep_alive = ms,
            "hbase.client.retries.number" => self.retries = n,
            "hbase.client.pause" => self.pause = ms,
            _ => self.rpc_timeout = ms,
        }
        Some(Ok(()))
    }
}

/// Kerberos towards the master and the region servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kerberos {
    /// The first part of the servers' principals (`service=`, `hbase` as in `hbase/_HOST`).
    pub service: String,
    /// The protection asked for (`qop=`, as the cluster's `hbase.rpc.protection`); without
    /// it, the strongest the servers offer.
    pub qop: Option<super::Qop>,
    /// HBase's AES in place of GSSAPI's privacy wrap (`crypto=aes`, as the cluster's
    /// `hbase.rpc.crypto.encryption.aes.enabled`).
    pub crypto_aes: bool,
}

/// Makes each connection's GSSAPI mechanism, towards the principal of the server it reaches.
#[derive(Debug)]
struct Gssapi(Kerberos);

impl hbase_client::sasl::Authenticator for Gssapi {
    fn mechanism(&self, addr: &str) -> std::result::Result<Box<dyn hbase_client::sasl::Mechanism>, String> {
        crate::secure::gssapi(&self.0.service, &principal_host(addr), self.0.qop)
    }
}

/// The host part of a server's principal (`hbase/_HOST`): the name the server is reached by,
/// lowercased, as HBase's client takes it with
/// `hbase.unsafe.client.kerberos.hostname.disable.reversedns` (a region server's address is
/// the host name it registered under).
fn principal_host(addr: &str) -> String {
    hbase_client::conn::host_of(addr).to_lowercase()
}

/// ZooKeeper's client port (`hbase.zookeeper.property.clientPort`).
pub const ZK_PORT: u16 = 2181;
/// The master's RPC port (`hbase.master.port`), the RPC registry's default.
pub const MASTER_PORT: u16 = 16000;
/// The options a native URL takes, for its errors.
/// The options a native URL takes, as its parser lists them (also `tallrow help backends`).
pub const OPTIONS: &str = "api=native, registry=zk|rpc, sasl=gssapi, service=NAME, qop=auth|auth-int|auth-conf, crypto=aes, tls=true, ca=PATH, zk_sasl=gssapi, zk_service=NAME, and the client settings zookeeper.session.timeout, zookeeper.recovery.retry, zookeeper.recovery.retry.intervalmill, zookeeper.keep-alive.time, hbase.client.retries.number, hbase.client.pause, hbase.rpc.timeout, connect_to=HOST:PORT:HOST2:PORT2";

impl Spec {
    /// Whether the part after `hbase://` asks for the native API.
    pub fn wanted(rest: &str) -> bool {
        rest.split_once('?')
            .is_some_and(|(_, q)| q.split('&').any(|p| p == "api=native"))
    }

    /// Parses the part after `hbase://` of a native URL.
    pub fn parse(rest: &str) -> std::result::Result<Spec, String> {
        let bad = |e: String| format!("hbase://{rest}: {e}");
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (hosts, parent) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        let mut rpc = false;
        let (mut kerberos, mut service, mut qop, mut crypto_aes) = (false, None, None, false);
        let (mut tls, mut ca) = (false, None);
        let (mut zk_sasl, mut zk_service) = (false, None);
        let mut client = ClientSettings::default();
        let mut connect_to = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            if let Some((name, value)) = pair.split_once('=')
                && let Some(set) = client.set(name, value)
            {
                set.map_err(bad)?;
                continue;
            }
            match pair.split_once('=') {
                Some(("api", "native")) => {}
                Some(("registry", "rpc")) => rpc = true,
                Some(("registry", "zk" | "zookeeper")) => rpc = false,
                Some(("registry", v)) => return Err(bad(format!("registry {v:?} is not zk or rpc"))),
                Some(("sasl", "gssapi")) | Some(("auth", "kerberos")) => kerberos = true,
                Some(("sasl", v)) => {
                    return Err(bad(format!(
                        "sasl {v:?} is not a mechanism HBase's RPC takes from a client: sasl=gssapi (Kerberos)"
                    )));
                }
                Some(("service", v)) if !v.is_empty() => service = Some(v.to_string()),
                Some(("qop", v)) => qop = Some(v.parse::<super::Qop>().map_err(bad)?),
                Some(("crypto", "aes")) => crypto_aes = true,
                Some(("crypto", v)) => {
                    return Err(bad(format!(
                        "crypto {v:?} is not a cipher HBase's RPC runs: crypto=aes (AES/CTR/NoPadding)"
                    )));
                }
                Some(("tls", "true")) => tls = true,
                Some(("tls", "false")) => tls = false,
                Some(("tls", v)) => return Err(bad(format!("tls {v:?} is not true or false"))),
                Some(("ca", v)) if !v.is_empty() => ca = Some(std::path::PathBuf::from(v)),
                Some(("zk_sasl", "gssapi")) => zk_sasl = true,
                Some(("zk_sasl", v)) => {
                    return Err(bad(format!(
                        "zk_sasl {v:?} is not a mechanism tallrow speaks to ZooKeeper: zk_sasl=gssapi (Kerberos)"
                    )));
                }
                Some(("zk_service", v)) if !v.is_empty() => zk_service = Some(v.to_string()),
                Some(("connect_to", v)) => connect_to.push(parse_connect_to(v).map_err(bad)?),
                Some(("transport" | "protocol", _)) => {
                    return Err(bad(format!(
                        "{pair:?} is a Thrift gateway's option; api=native speaks HBase's RPC"
                    )));
                }
                _ => return Err(bad(format!("unknown option {pair:?}; expected {OPTIONS}"))),
            }
        }
        if !kerberos && (service.is_some() || qop.is_some()) {
            return Err(bad("service= and qop= go with sasl=gssapi".into()));
        }
        if crypto_aes && qop != Some(super::Qop::AuthConf) {
            return Err(bad(
                "crypto=aes goes with sasl=gssapi&qop=auth-conf: HBase encrypts with AES only under SASL privacy"
                    .into(),
            ));
        }
        if ca.is_some() && !tls {
            return Err(bad("ca= goes with tls=true".into()));
        }
        if zk_service.is_some() && !zk_sasl {
            return Err(bad("zk_service= goes with zk_sasl=gssapi".into()));
        }
        if zk_sasl && rpc {
            return Err(bad("zk_sasl= is ZooKeeper's, which registry=rpc does not read".into()));
        }
        if zk_sasl && !crate::secure::KERBEROS {
            return Err(bad(crate::secure::NO_KERBEROS.into()));
        }
        let zk_sasl = zk_sasl.then(|| zk_service.unwrap_or_else(|| "zookeeper".to_string()));
        let tls = tls.then_some(super::Tls { ca });
        if kerberos && !crate::secure::KERBEROS {
            return Err(bad(crate::secure::NO_KERBEROS.into()));
        }
        let kerberos = kerberos.then(|| Kerberos {
            service: service.unwrap_or_else(|| "hbase".to_string()),
            qop,
            crypto_aes,
        });
        let default_port = if rpc { MASTER_PORT } else { ZK_PORT };
        let mut servers = Vec::new();
        for h in hosts.split(',') {
            if h.is_empty() {
                return Err(bad(format!(
                    "no host; expected hbase://HOST[:PORT][,HOST[:PORT]...][/ZNODE_PARENT]?{OPTIONS}"
                )));
            }
            let (host, port) = match h.rsplit_once(':') {
                Some((host, p)) if !host.ends_with(':') => (
                    host,
                    p.parse::<u16>()
                        .map_err(|_| bad(format!("port {p:?} is not a number from 0 to 65535")))?,
                ),
                _ => (h, default_port),
            };
            servers.push(format!("{host}:{port}"));
        }
        let registry = if rpc {
            if !parent.is_empty() {
                return Err(bad(format!("{parent} names a znode, which registry=rpc does not read")));
            }
            Registry::Rpc { servers }
        } else {
            let parent = match parent.trim_end_matches('/') {
                "" => "/hbase".to_string(),
                p => p.to_string(),
            };
            Registry::ZooKeeper {
                quorum: servers.join(","),
                parent,
            }
        };
        Ok(Spec {
            registry,
            kerberos,
            tls,
            zk_sasl,
            client,
            connect_to,
        })
    }

    /// The URL's canonical form, for reports.
    pub fn url(&self) -> String {
        let mut url = match &self.registry {
            Registry::ZooKeeper { quorum, parent } => format!("hbase://{quorum}{parent}?api=native"),
            Registry::Rpc { servers } => format!("hbase://{}?api=native&registry=rpc", servers.join(",")),
        };
        if let Some(k) = &self.kerberos {
            url.push_str("&sasl=gssapi");
            if k.service != "hbase" {
                url.push_str(&format!("&service={}", k.service));
            }
            if let Some(q) = k.qop {
                url.push_str(&format!("&qop={q}"));
            }
            if k.crypto_aes {
                url.push_str("&crypto=aes");
            }
        }
        if let Some(service) = &self.zk_sasl {
            url.push_str("&zk_sasl=gssapi");
            if service != "zookeeper" {
                url.push_str(&format!("&zk_service={service}"));
            }
        }
        let defaults = ClientSettings::default().values();
        for ((name, v), (_, d)) in self.client.values().into_iter().zip(defaults) {
            if v != d {
                url.push_str(&format!("&{name}={v}"));
            }
        }
        for (named, to) in &self.connect_to {
            url.push_str(&format!("&connect_to={named}:{to}"));
        }
        if let Some(t) = &self.tls {
            url.push_str("&tls=true");
            if let Some(ca) = &t.ca {
                url.push_str(&format!("&ca={}", ca.display()));
            }
        }
        url
    }
}

/// `HOST:PORT:HOST2:PORT2` as the server's address and the one to dial in its place.
fn parse_connect_to(v: &str) -> std::result::Result<(String, String), String> {
    let parts: Vec<&str> = v.split(':').collect();
    let port = |p: &str| p.parse::<u16>().is_ok();
    match parts[..] {
        [h1, p1, h2, p2] if !h1.is_empty() && !h2.is_empty() && port(p1) && port(p2) => {
            Ok((format!("{h1}:{p1}"), format!("{h2}:{p2}")))
        }
        _ => Err(format!(
            "connect_to {v:?} is not HOST:PORT:HOST2:PORT2 (the server's address, then the one to dial)"
        )),
    }
}

/// The backend.
pub struct Native {
    spec: Spec,
    client: hbase_client::Client,
    families: Descriptors,
    consistency: std::sync::RwLock<crate::store::Consistency>,
}

impl Native {
    /// Connects: finds the cluster within the connect timeout, or fails in one line.
    pub fn open(spec: &Spec) -> Result<Native> {
        if spec.zk_sasl.is_some() {
            crate::secure::keep_renewed();
        }
        let sasl = spec.kerberos.clone().map(|k| {
            crate::secure::keep_renewed();
            std::sync::Arc::new(Gssapi(k)) as std::sync::Arc<dyn hbase_client::sasl::Authenticator>
        });
        let tls = match &spec.tls {
            None => None,
            Some(t) => Some(
                match &t.ca {
                    Some(ca) => hbase_client::tls::Tls::with_ca_file(ca),
                    None => hbase_client::tls::Tls::with_public_roots(),
                }
                .map_err(Error::BadArgument)?,
            ),
        };
        let opts = hbase_client::Options {
            connect_timeout: Duration::from_secs(10),
            crypto_aes: spec.kerberos.as_ref().is_some_and(|k| k.crypto_aes),
            zk_sasl: spec.zk_sasl.clone(),
            zk: spec.client.zk,
            retries: spec.client.retries,
            pause: spec.client.pause,
            rpc_timeout: spec.client.rpc_timeout,
            connect_to: spec.connect_to.clone(),
            sasl,
            tls,
            ..Default::default()
        };
        let client =
            hbase_client::Client::connect(spec.registry.clone(), opts).map_err(|e| Error::Io(e.to_string()))?;
        // The master answers, or the cluster is not usable: say so now rather than at the
        // first write.
        client.table_names().map_err(|e| error(e, ""))?;
        Ok(Native {
            spec: spec.clone(),
            client,
            families: Descriptors::default(),
            consistency: Default::default(),
        })
    }

    /// Round trips to the cluster's servers so far, as [`super::Hbase::round_trips`] counts
    /// them.
    pub fn round_trips(&self) -> u64 {
        self.client.calls()
    }

    /// The client, for callers that need more than the store's calls.
    pub fn client(&self) -> &hbase_client::Client {
        &self.client
    }

    fn consistency(&self) -> crate::store::Consistency {
        *self.consistency.read().unwrap_or_else(|e| e.into_inner())
    }

    fn descriptor(&self, table: &str) -> Result<TableDescriptor> {
        self.families.get(table, |name| self.describe_table(name))
    }

    /// Under Kerberos, a delegation token for the HDFS the files are in, which a region
    /// server whose Hadoop runs Kerberos moves them with, as the caller (HBase's bulk-load
    /// tool sends one too); `None` for local files, or an HDFS that issues none.
    fn fs_token(&self, regions: &[crate::store::HFileRegion]) -> Result<Option<pb::DelegationToken>> {
        use crate::bulkload::fs::{Dir, Location};
        if self.spec.kerberos.is_none() {
            return Ok(None);
        }
        let Some(path) = regions
            .iter()
            .flat_map(|r| &r.files)
            .map(|(_, p)| p)
            .find(|p| p.starts_with("hdfs://"))
        else {
            return Ok(None);
        };
        let Dir::Hdfs(hdfs) = Location::parse(path)
            .map_err(Error::BadArgument)?
            .open()
            .map_err(|e| Error::Io(e.to_string()))?
        else {
            return Ok(None);
        };
        // The renewer HBase's bulk-load tool names (`new FsDelegationToken(userProvider, "renewer")`).
        let token = hdfs.delegation_token("renewer").map_err(|e| Error::Io(e.to_string()))?;
        Ok(token.map(|t| pb::DelegationToken {
            identifier: Some(t.identifier.into()),
            password: Some(t.password.into()),
            kind: Some(t.kind),
            service: Some(t.service),
        }))
    }

    /// Fails once the Kerberos ticket expired with nothing to renew it: the connections
    /// authenticated before stay open, but the credentials they stand for are gone.
    fn live(&self) -> Result<()> {
        match (&self.spec.kerberos, crate::secure::expired()) {
            (Some(_), Some(why)) => Err(Error::Denied(format!("{}: {why}", self.spec.url()))),
            _ => Ok(()),
        }
    }

    fn ensure_namespace(&self, ns: &str) -> Result<()> {
        match self.client.create_namespace(ns) {
            Err(e) if e.class() == Some("NamespaceExistException") => Ok(()),
            other => other.map_err(|e| error(e, "")),
        }
    }
}

/// A client error as the store's.
fn error(e: hbase_client::Error, table: &str) -> Error {
    use hbase_client::Error as E;
    let text = e.to_string();
    match e {
        E::TableNotFound(t) => Error::TableNotFound(t),
        E::Connection { .. } | E::Timeout { .. } => Error::Unavailable(text),
        E::Exhausted { ref last, .. } if matches!(**last, E::Connection { .. } | E::Timeout { .. }) => {
            Error::Unavailable(text)
        }
        E::BadRequest(m) => Error::BadArgument(m),
        E::Auth { .. } => Error::Denied(text),
        E::Remote { .. } => match e.class() {
            Some("TableNotFoundException") => Error::TableNotFound(table.to_string()),
            Some("TableExistsException") => Error::TableExists(table.to_string()),
            Some("NoSuchColumnFamilyException" | "FailedSanityCheckException" | "DoNotRetryIOException") => {
                Error::BadArgument(text)
            }
            _ if e.retry() != hbase_client::error::Retry::Never => Error::Unavailable(text),
            _ => Error::Io(text),
        },
        _ => Error::Io(text),
    }
}

/// A table's name as the client takes it.
fn name(table: &str) -> Result<String> {
    canonical_table_name(table)
}

fn bytes(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}

/// A cell of a put or a delete: family, qualifier, timestamp, type and value.
type CellParts<'a> = (&'a [u8], &'a [u8], i64, CellType, &'a [u8]);

/// A store mutation as a cell of a put or a delete.
fn cell_of(m: &StoreMutation) -> Option<CellParts<'_>> {
    let ts = |t: &Option<i64>| t.unwrap_or(LATEST_TIMESTAMP);
    Some(match m {
        StoreMutation::Put {
            family,
            qualifier,
            timestamp,
            value,
        } => (family.as_bytes(), qualifier, ts(timestamp), CellType::Put, value),
        StoreMutation::DeleteColumn {
            family,
            qualifier,
            timestamp,
        } => (family.as_bytes(), qualifier, ts(timestamp), CellType::DeleteColumn, &[]),
        StoreMutation::DeleteVersion {
            family,
            qualifier,
            timestamp,
        } => (family.as_bytes(), qualifier, *timestamp, CellType::Delete, &[]),
        StoreMutation::DeleteFamily { family, timestamp } => {
            (family.as_bytes(), &[], ts(timestamp), CellType::DeleteFamily, &[])
        }
        StoreMutation::DeleteFamilyVersion { family, timestamp } => {
            (family.as_bytes(), &[], *timestamp, CellType::DeleteFamilyVersion, &[])
        }
        StoreMutation::DeleteRow { .. } => return None,
    })
}

/// A selection's columns, versions, time range and qualifier cursor as a `Get`'s.
fn get_of(g: &Get) -> pb::Get {
    let mut columns: Vec<pb::Column> = Vec::new();
    for c in added_columns(&g.select) {
        let family = bytes(c.family.as_bytes());
        let at = match columns.iter().position(|x| x.family == family) {
            Some(i) => i,
            None => {
                columns.push(pb::Column {
                    family,
                    qualifier: Vec::new(),
                });
                columns.len() - 1
            }
        };
        if let Some(q) = &c.qualifier {
            columns[at].qualifier.push(bytes(q));
        }
    }
    pb::Get {
        row: bytes(&g.row),
        column: columns,
        max_versions: Some(g.select.max_versions.max(1)),
        time_range: g.select.time_range.map(|(from, to)| pb::TimeRange {
            from: Some(from as u64),
            to: Some(to as u64),
        }),
        filter: g
            .select
            .qualifier_after
            .as_ref()
            .map(|q| hbase_client::filter::qualifier(pb::CompareType::Greater, q)),
        cache_blocks: Some(true),
        ..Default::default()
    }
}

/// Cells as the store's row, keeping at most `limit`.
fn row_of(key: &[u8], cells: Vec<hbase_client::cells::Cell>, limit: Option<usize>) -> Result<Option<Row>> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        if limit.is_some_and(|n| out.len() >= n) {
            break;
        }
        out.push(Cell {
            family: String::from_utf8(c.family.to_vec())
                .map_err(|_| Error::Io("a family name in a reply is not UTF-8".into()))?,
            qualifier: c.qualifier.to_vec(),
            timestamp: c.timestamp,
            value: c.value.to_vec(),
        });
    }
    Ok((!out.is_empty()).then(|| Row {
        key: key.to_vec(),
        cells: out,
    }))
}

/// `scan` as the client's scan, or `None` when its bounds hold no row.
fn scan_spec(desc: &TableDescriptor, scan: &Scan, caching: u32) -> Result<Option<hbase_client::ScanSpec>> {
    scan.select.validate(desc)?;
    let (mut start, mut stop) = (scan.start.clone(), scan.stop.clone());
    let mut filters = Vec::new();
    let mut exclude_start = scan.start_exclusive && !scan.start.is_empty();
    if !scan.prefix.is_empty() {
        let end = crate::keys::next_prefix(&scan.prefix);
        let high = if scan.reversed { &mut start } else { &mut stop };
        if !end.is_empty() && (high.is_empty() || *high > end) {
            *high = end.clone();
            if scan.reversed {
                // The prefix's end is past every row of it.
                exclude_start = true;
            }
        }
        if !scan.reversed && start.as_slice() < scan.prefix.as_slice() {
            start = scan.prefix.clone();
            exclude_start = false;
        }
        // Bounds inside the prefix's rows leave its filter nothing to do but cost the
        // server a test per row (a forward scan of one user, the common page).
        // (A forward scan's stop is exclusive, a reversed scan's start only when asked.)
        let (lo, hi, hi_open) = match scan.reversed {
            false => (&start, &stop, true),
            true => (&stop, &start, exclude_start),
        };
        let below_end = !hi.is_empty() && (*hi < end || (*hi == end && hi_open));
        let inside = !end.is_empty() && below_end && lo.as_slice() >= scan.prefix.as_slice();
        if !inside {
            filters.push(hbase_client::filter::prefix(&scan.prefix));
        }
    }
    let empty = match scan.reversed {
        false => !stop.is_empty() && stop <= start,
        true => !start.is_empty() && !stop.is_empty() && start <= stop,
    };
    if empty || scan.limit == Some(0) {
        return Ok(None);
    }
    if let Some(q) = &scan.select.qualifier_after {
        filters.push(hbase_client::filter::qualifier(pb::CompareType::Greater, q));
    }
    let probe = get_of(&Get {
        row: Vec::new(),
        select: scan.select.clone(),
    });
    Ok(Some(hbase_client::ScanSpec {
        start: Bytes::from(start),
        exclude_start,
        stop: Bytes::from(stop),
        reversed: scan.reversed,
        limit: scan.limit.map(|l| l as u64),
        caching,
        template: pb::Scan {
            column: probe.column,
            time_range: probe.time_range,
            max_versions: probe.max_versions,
            filter: hbase_client::filter::all(filters),
            cache_blocks: Some(true),
            ..Default::default()
        },
        timeline: None,
    }))
}

impl Store for Native {
    fn in_flight(&self) -> usize {
        crate::store::REMOTE_IN_FLIGHT
    }

    fn identity(&self) -> String {
        format!(
            "{} (HBase native RPC, cluster {})",
            self.spec.url(),
            self.client.cluster().id
        )
    }

    fn version(&self) -> String {
        format!("HBase (native RPC, cluster {})", self.client.cluster().id)
    }

    fn retries(&self) -> Vec<(String, u64)> {
        self.client.retries().by_kind().into_iter().collect()
    }

    fn set_consistency(&self, consistency: crate::store::Consistency) -> Result<()> {
        *self.consistency.write().unwrap_or_else(|e| e.into_inner()) = consistency;
        Ok(())
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        if let Some((ns, _)) = desc.name.split_once(':') {
            self.ensure_namespace(ns)?;
        }
        self.families.forget(&desc.name);
        let families: Vec<hbase_client::admin::Family> = desc
            .families
            .iter()
            .map(|f| {
                let mut family = hbase_client::admin::Family::new(&f.name, f.max_versions);
                // HBase's attribute names and spellings (`ColumnFamilyDescriptorBuilder`); a
                // default is left out, as HBase's own client leaves it.
                family
                    .attributes
                    .extend(f.storage.differences().into_iter().map(|(k, v)| (k.to_string(), v)));
                family
            })
            .collect();
        self.client
            .create_table_with(&desc.name, &desc.hbase_attributes(), &families, &desc.splits)
            .map_err(|e| error(e, &desc.name))
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = name(table)?;
        self.families.forget(&name);
        self.client.delete_table(&name).map_err(|e| error(e, &name))
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        let names = self.client.table_names().map_err(|e| error(e, ""))?;
        crate::store::describe_all(self, names)
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = name(table)?;
        let t = self.client.describe(&name).map_err(|e| error(e, &name))?;
        let mut families: Vec<crate::store::FamilyDescriptor> = t
            .families
            .iter()
            .map(|f| crate::store::FamilyDescriptor {
                name: f.name.clone(),
                max_versions: f.attribute("VERSIONS").and_then(|v| v.parse().ok()).unwrap_or(1).max(1),
                storage: crate::store::Storage::from_attributes(
                    f.attributes.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                ),
            })
            .collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(TableDescriptor {
            name,
            families,
            splits: Vec::new(),
            region_replication: TableDescriptor::replication_in(
                t.attributes.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            ),
            attributes: TableDescriptor::own_attributes(t.attributes),
        })
    }

    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        let name = name(table)?;
        let regions = self.client.regions(&name).map_err(|e| error(e, &name))?;
        Ok(crate::store::split_keys(regions.into_iter().map(|r| r.start.to_vec())))
    }

    fn loads_hfiles(&self) -> bool {
        true
    }

    fn load_hfiles(&self, table: &str, regions: &[crate::store::HFileRegion]) -> Result<()> {
        self.live()?;
        let name = name(table)?;
        let mut load = self.client.bulk_load(&name).map_err(|e| error(e, &name))?;
        if let Some(token) = self.fs_token(regions)? {
            load = load.with_fs_token(token);
        }
        for r in regions {
            let files: Vec<(Bytes, String)> = r
                .files
                .iter()
                .map(|(family, path)| (Bytes::from(family.clone()), path.clone()))
                .collect();
            load.load(&r.start, &r.end, &files).map_err(|e| error(e, &name))?;
        }
        load.finish().map_err(|e| error(e, &name))
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.live()?;
        let desc = self.descriptor(table)?;
        validate_mutations(&desc, rows)?;
        super::locatable_rows(&desc, rows)?;
        if rows.is_empty() {
            return Ok(());
        }
        // Sent in row order. The region server sorts a region's mutations by row before it
        // applies them (HBASE-17924, `RSRpcServices.doBatchOp`), with a stable sort: sorted
        // here the same way, its sort is one pass and its memstore inserts walk forward.
        let mut sorted = by_row(rows);
        let kept;
        if overwrites(&sorted) {
            kept = overwritten_dropped(rows);
            sorted = by_row(&kept);
        }
        let rows = &sorted[..];
        // Every row's steps in one list, each row's a range of it.
        let mut all_steps = Vec::with_capacity(rows.len());
        let per_row: Vec<(&RowMutation, std::ops::Range<usize>)> = rows
            .iter()
            .map(|&r| {
                let from = all_steps.len();
                steps_into(r, &mut all_steps);
                (r, from..all_steps.len())
            })
            .collect();
        let rounds = per_row.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
        // Room for the puts of a batch of one step per row, the common case.
        let row_bytes: usize = rows.iter().map(|r| r.row.len()).sum();
        let block_bytes: usize = rows
            .iter()
            .map(|r| {
                let (cells, bytes) = r.size();
                // A cell's framing and row, beside what `size` counts.
                bytes as usize + cells as usize * hbase_client::cells::encoded_len(r.row.len(), 0, 0, 0)
            })
            .sum();
        for k in 0..rounds {
            // Encoded as they go: no copy of a cell but the one into the call's cell block.
            let (mut puts, mut deletes) = (Encoder::with_capacity(row_bytes, block_bytes), Encoder::default());
            for (rm, steps) in &per_row {
                match all_steps[steps.clone()].get(k) {
                    Some(Step::Batch(_, range)) => {
                        let cells = || rm.mutations[range.clone()].iter().filter_map(cell_of);
                        for (put, kind, out) in [
                            (true, MutationKind::Put, &mut puts),
                            (false, MutationKind::Delete, &mut deletes),
                        ] {
                            let mut mine = cells().filter(|c| (c.3 == CellType::Put) == put).peekable();
                            if mine.peek().is_none() {
                                continue;
                            }
                            out.start(&rm.row, kind, LATEST_TIMESTAMP);
                            for (family, qualifier, ts, kind, value) in mine {
                                out.cell(family, qualifier, ts, kind, value);
                            }
                        }
                    }
                    Some(Step::DeleteRow(ts)) => {
                        deletes.start(&rm.row, MutationKind::Delete, ts.unwrap_or(LATEST_TIMESTAMP))
                    }
                    None => {}
                }
            }
            for batch in [puts, deletes] {
                if !batch.is_empty() {
                    self.client
                        .batch(&desc.name, &batch.finish())
                        .map_err(|e| error(e, &desc.name))?;
                }
            }
        }
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        self.live()?;
        let desc = self.descriptor(table)?;
        let max = max_row_key(&desc.name);
        for g in gets {
            super::checked_get(&desc, max, g)?;
        }
        if gets.is_empty() {
            return Ok(Vec::new());
        }
        let pb_gets = gets.iter().map(get_of).collect();
        let results = match self.consistency() {
            crate::store::Consistency::Strong => self.client.get(&desc.name, pb_gets),
            crate::store::Consistency::Timeline { get, .. } => {
                self.client.get_timeline(&desc.name, pb_gets, get).map(|answers| {
                    crate::store::note_stale(answers.iter().filter(|(_, stale)| *stale).count() as u64);
                    answers.into_iter().map(|(cells, _)| cells).collect()
                })
            }
        }
        .map_err(|e| error(e, &desc.name))?;
        gets.iter()
            .zip(results)
            .map(|(g, cells)| row_of(&g.row, cells, g.select.cell_limit))
            .collect()
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.live()?;
        let mut rows = Vec::new();
        let page = scan.limit.unwrap_or(1000).clamp(1, 1000);
        self.scan_each(table, scan, page, &mut |r| {
            rows.push(r);
            true
        })?;
        Ok(rows)
    }

    fn scan_each(&self, table: &str, scan: &Scan, page: usize, visit: &mut dyn FnMut(Row) -> bool) -> Result<()> {
        self.live()?;
        let desc = self.descriptor(table)?;
        let Some(mut spec) = scan_spec(&desc, scan, page.clamp(1, 100_000) as u32)? else {
            return Ok(());
        };
        if let crate::store::Consistency::Timeline { scan, .. } = self.consistency() {
            spec.timeline = Some(scan);
        }
        let mut scanner = self.client.scan(&desc.name, spec);
        let visited = (|| {
            while let Some(r) = scanner.next_row().map_err(|e| error(e, &desc.name))? {
                if let Some(row) = row_of(&r.key, r.cells, scan.select.cell_limit)?
                    && !visit(row)
                {
                    return Ok(());
                }
            }
            Ok(())
        })();
        if scanner.stale() {
            crate::store::note_stale(1);
        }
        visited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_scan_inside_its_bounds_sends_no_prefix_filter() {
        let desc = TableDescriptor::new("t", &["f"], 1);
        let spec = |scan: Scan| scan_spec(&desc, &scan, 10).unwrap().expect("a scan");
        let filtered = |scan: Scan| spec(scan).template.filter.is_some();
        // One user's page after a cursor: the bounds say it all.
        let page = spec(Scan::prefix(b"u1".to_vec()).after(b"u1-7".to_vec()).limit(10));
        assert_eq!(
            (&page.start[..], &page.stop[..], page.exclude_start),
            (&b"u1-7"[..], &b"u2"[..], true)
        );
        assert!(page.template.filter.is_none());
        assert!(!filtered(Scan::prefix(b"u1".to_vec())));
        // A start before the prefix moves to it; a stop past it comes back to its end.
        let wide = spec(Scan {
            prefix: b"u1".to_vec(),
            ..Scan::range(b"a".to_vec(), b"z".to_vec())
        });
        assert_eq!((&wide.start[..], &wide.stop[..]), (&b"u1"[..], &b"u2"[..]));
        assert!(wide.template.filter.is_none());
        // Where the bounds cannot say it, the filter does: a prefix of 0xFF bytes has no
        // end, and a reversed scan without a low bound runs past the prefix.
        assert!(filtered(Scan::prefix(vec![0xff, 0xff])));
        assert!(filtered(Scan::prefix(b"u1".to_vec()).reversed()));
        // A reversed scan's start is inclusive: "u2" itself would be read but for the filter.
        let reversed = |start: &[u8], exclusive: bool| Scan {
            prefix: b"u1".to_vec(),
            start_exclusive: exclusive,
            ..Scan::range(start.to_vec(), b"u1".to_vec()).reversed()
        };
        assert!(filtered(reversed(b"u2", false)));
        assert!(!filtered(reversed(b"u2", true)));
        assert!(!filtered(reversed(b"u1-9", false)));
    }

    #[test]
    fn native_urls_name_a_quorum_or_bootstrap_servers() {
        let s = Spec::parse("zk1,zk2:2182/hbase-unsecure?api=native").unwrap();
        assert_eq!(
            s.registry,
            Registry::ZooKeeper {
                quorum: "zk1:2181,zk2:2182".into(),
                parent: "/hbase-unsecure".into()
            }
        );
        assert_eq!(s.url(), "hbase://zk1:2181,zk2:2182/hbase-unsecure?api=native");
        let s = Spec::parse("127.0.0.1:2181?api=native").unwrap();
        assert_eq!(s.url(), "hbase://127.0.0.1:2181/hbase?api=native");
        let s = Spec::parse("m1,m2:16001?api=native&registry=rpc").unwrap();
        assert_eq!(
            s.registry,
            Registry::Rpc {
                servers: vec!["m1:16000".into(), "m2:16001".into()]
            }
        );
        assert!(Spec::wanted("h:1?transport=framed&api=native"));
        assert!(!Spec::wanted("h:1?api=thrift2"));
        for (url, says) in [
            ("h:x?api=native", "port \"x\""),
            ("?api=native", "no host"),
            ("h?api=native&registry=etcd", "not zk or rpc"),
            ("h/hbase?api=native&registry=rpc", "does not read"),
            ("h?api=native&sasl=plain", "not a mechanism HBase's RPC takes"),
            ("h?api=native&qop=auth", "go with sasl=gssapi"),
            ("h?api=native&sasl=gssapi&qop=auth-secret", "qop"),
            ("h?api=native&transport=framed", "Thrift gateway's option"),
            ("h?api=native&x=1", "unknown option"),
            ("h?api=native&tls=yes", "not true or false"),
            ("h?api=native&ca=/etc/ca.pem", "ca= goes with tls=true"),
            ("h?api=native&crypto=des", "not a cipher HBase's RPC runs"),
            (
                "h?api=native&sasl=gssapi&crypto=aes",
                "goes with sasl=gssapi&qop=auth-conf",
            ),
            (
                "h?api=native&sasl=gssapi&qop=auth-int&crypto=aes",
                "only under SASL privacy",
            ),
            (
                "h?api=native&zk_sasl=digest",
                "not a mechanism tallrow speaks to ZooKeeper",
            ),
            ("h?api=native&zk_service=zk", "zk_service= goes with zk_sasl=gssapi"),
            ("h?api=native&registry=rpc&zk_sasl=gssapi", "registry=rpc does not read"),
            (
                "h?api=native&connect_to=rs1:16020:127.0.0.1",
                "not HOST:PORT:HOST2:PORT2",
            ),
            ("h?api=native&connect_to=rs1:x:127.0.0.1:1", "not HOST:PORT:HOST2:PORT2"),
        ] {
            let e = Spec::parse(url).unwrap_err();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains('\n'), "{url}: one line");
        }
        let kerberized = Spec::parse("zk1?api=native&sasl=gssapi&qop=auth-conf");
        if crate::secure::KERBEROS {
            let s = kerberized.unwrap();
            assert_eq!(
                s.kerberos,
                Some(Kerberos {
                    service: "hbase".into(),
                    qop: Some(super::super::Qop::AuthConf),
                    crypto_aes: false,
                })
            );
            assert_eq!(s.url(), "hbase://zk1:2181/hbase?api=native&sasl=gssapi&qop=auth-conf");
            assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
            let s = Spec::parse("zk1?api=native&sasl=gssapi&qop=auth-conf&crypto=aes").unwrap();
            assert!(s.kerberos.as_ref().unwrap().crypto_aes);
            assert_eq!(
                s.url(),
                "hbase://zk1:2181/hbase?api=native&sasl=gssapi&qop=auth-conf&crypto=aes"
            );
            assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
            let s = Spec::parse("zk1?api=native&zk_sasl=gssapi").unwrap();
            assert_eq!(s.zk_sasl.as_deref(), Some("zookeeper"));
            assert_eq!(s.url(), "hbase://zk1:2181/hbase?api=native&zk_sasl=gssapi");
            let s = Spec::parse("zk1?api=native&sasl=gssapi&zk_sasl=gssapi&zk_service=zk").unwrap();
            assert_eq!(s.zk_sasl.as_deref(), Some("zk"));
            assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
        } else {
            assert!(kerberized.unwrap_err().contains("built without Kerberos"));
        }
    }

    #[test]
    fn connect_to_dials_a_named_server_elsewhere() {
        let s = Spec::parse("zk1?api=native&connect_to=rs1:16020:127.0.0.1:31020&connect_to=m:16000:tun:1").unwrap();
        assert_eq!(
            s.connect_to,
            [
                ("rs1:16020".into(), "127.0.0.1:31020".into()),
                ("m:16000".into(), "tun:1".into())
            ]
        );
        assert_eq!(
            s.url(),
            "hbase://zk1:2181/hbase?api=native&connect_to=rs1:16020:127.0.0.1:31020&connect_to=m:16000:tun:1"
        );
        assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
    }

    #[test]
    fn tls_takes_a_ca_file_or_the_public_roots() {
        let s = Spec::parse("zk1?api=native&tls=true&ca=/etc/hbase/ca.pem").unwrap();
        assert_eq!(
            s.tls,
            Some(super::super::Tls {
                ca: Some("/etc/hbase/ca.pem".into())
            })
        );
        assert_eq!(
            s.url(),
            "hbase://zk1:2181/hbase?api=native&tls=true&ca=/etc/hbase/ca.pem"
        );
        assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
        let s = Spec::parse("zk1?api=native&tls=true").unwrap();
        assert_eq!(s.tls, Some(super::super::Tls { ca: None }));
        assert_eq!(Spec::parse("zk1?api=native&tls=false").unwrap().tls, None);
    }

    #[test]
    fn client_settings_go_by_their_hbase_site_names() {
        let s = Spec::parse("zk1?api=native").unwrap();
        assert_eq!(s.client, ClientSettings::default());
        assert_eq!(s.client.zk.session_timeout, Duration::from_secs(90));
        assert_eq!((s.client.zk.retries, s.client.retries), (30, 15));
        let s = Spec::parse(
            "zk1?api=native&zookeeper.session.timeout=20000&zookeeper.recovery.retry=3&hbase.client.pause=50&hbase.rpc.timeout=5000",
        )
        .unwrap();
        assert_eq!(s.client.zk.session_timeout, Duration::from_secs(20));
        assert_eq!(s.client.zk.retries, 3);
        assert_eq!(s.client.zk.retry_interval, Duration::from_secs(1));
        assert_eq!(s.client.pause, Duration::from_millis(50));
        assert_eq!(s.client.rpc_timeout, Duration::from_secs(5));
        // The URL names what differs from the defaults, and reads back the same.
        assert_eq!(
            s.url(),
            "hbase://zk1:2181/hbase?api=native&zookeeper.session.timeout=20000&zookeeper.recovery.retry=3&hbase.client.pause=50&hbase.rpc.timeout=5000"
        );
        assert_eq!(Spec::parse(&s.url()["hbase://".len()..]).unwrap(), s);
        let e = Spec::parse("zk1?api=native&hbase.client.pause=soon").unwrap_err();
        assert!(e.contains("hbase.client.pause \"soon\" is not a whole number"), "{e}");
        let e = Spec::parse("zk1?api=native&hbase.client.operation.timeout=1").unwrap_err();
        assert!(e.contains("unknown option") && e.contains("hbase.client.pause"), "{e}");
    }

    #[test]
    fn a_principal_names_the_server_as_it_is_reached() {
        assert_eq!(principal_host("RS1.Example.COM:16020"), "rs1.example.com");
        assert_eq!(principal_host("[::1]:16020"), "::1");
    }
}
