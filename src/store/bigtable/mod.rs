//! The `bigtable` backend: a Store over Cloud Bigtable's data API (`bigtable_rs`) and its
//! table admin API, or over Google's Bigtable emulator when `BIGTABLE_EMULATOR_HOST` is set.
//!
//! HBase's model is mapped onto Bigtable's as follows:
//! - table names become table ids through [`names`];
//! - a family's `VERSIONS` becomes a `MaxNumVersions` GC rule. Bigtable collects garbage
//!   lazily, so every read also caps each column at its family's versions with a filter;
//! - HBase milliseconds are Bigtable microseconds × 1000 (Bigtable's granularity is the
//!   millisecond). A write without a timestamp is stamped by this client with one time per
//!   call, as a region server stamps a batch;
//! - a column delete at or below `ts` is `DeleteFromColumn` over `[0, (ts+1)·1000)`. Bigtable
//!   deletes whole families and rows only without a time bound, so a family or row delete
//!   first reads the row's columns: with nothing newer than `ts` it becomes
//!   `DeleteFromFamily`/`DeleteFromRow`, otherwise one bounded column delete per column;
//! - the mutations of one row in one call go in one `MutateRows` entry, in order, because
//!   Bigtable applies each entry atomically but orders no two entries;
//! - reads are `ReadRows` over a row set (gets) or one row range (scans), with a filter chain
//!   per family for columns, qualifier cursors, versions, time ranges and cell limits.
//!
//! All mutations carry explicit timestamps, so every write is idempotent and is retried when
//! the service answers with a transient error.

mod filters;
mod mutations;
pub mod names;
mod tables;

use filters::*;
use mutations::*;
use tables::*;

use super::{
    Cell, Error, FamilyDescriptor, Get, Mutation as StoreMutation, Result, Row, RowMutation, Scan, Selection, Store,
    TableDescriptor, canonical_table_name, first_line, now_millis, validate_mutations, validate_row_key,
};
use bigtable_rs::bigtable::{BigTable, BigTableConnection, RowCell};
use bigtable_rs::google::bigtable::v2::{
    ColumnRange, MutateRowsRequest, Mutation, ReadRowsRequest, RowFilter, RowRange, RowSet, SampleRowKeysRequest,
    TimestampRange, column_range, mutate_rows_request::Entry, mutation, row_filter, row_range,
};
use futures_util::StreamExt;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tonic::Code;
use tonic::transport::Channel;

type AdminClient = admin::bigtable_table_admin_client::BigtableTableAdminClient<Channel>;

/// Bigtable's limit on a row key's length.
pub const MAX_ROW_KEY: usize = 4096;
/// Bigtable's limit on the mutations of one `MutateRows` request.
const MAX_MUTATIONS: usize = 100_000;
/// The largest HBase timestamp that still fits in microseconds.
const MAX_MILLIS: i64 = i64::MAX / 1000 - 1;
/// Tries of a call the service answers with a transient error.
const ATTEMPTS: u32 = 5;
/// How an `Unimplemented` answer begins.
const UNSUPPORTED: &str = "Bigtable does not support this request: ";
const ADMIN_SCOPE: &str = "https://www.googleapis.com/auth/bigtable.admin.table";

/// Which instance to use: `bigtable://PROJECT/INSTANCE[?channels=N]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Google Cloud project id.
    pub project: String,
    /// Bigtable instance id.
    pub instance: String,
    /// gRPC connections to balance data calls over.
    pub channels: usize,
}

impl Spec {
    /// Parses the part after `bigtable://`.
    pub fn parse(rest: &str) -> std::result::Result<Spec, String> {
        let usage = "expected bigtable://PROJECT/INSTANCE[?channels=N]";
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let path = path.trim_end_matches('/');
        let (project, instance) = path
            .split_once('/')
            .ok_or_else(|| format!("bigtable://{rest}: no instance; {usage}"))?;
        let id_ok = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' || b == b':')
        };
        if !id_ok(project) || !id_ok(instance) {
            return Err(format!(
                "bigtable://{rest}: project and instance are ids of letters, digits, '-', '_', '.' and ':'; {usage}"
            ));
        }
        let mut spec = Spec {
            project: project.to_string(),
            instance: instance.to_string(),
            channels: 1,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("channels", n)) => {
                    spec.channels = n
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=64).contains(n))
                        .ok_or_else(|| format!("bigtable://{rest}: channels={n:?} is not a number from 1 to 64"))?
                }
                _ => return Err(format!("bigtable://{rest}: unknown option {pair:?}; {usage}")),
            }
        }
        Ok(spec)
    }
}

/// The Bigtable store.
pub struct Bigtable {
    spec: Spec,
    /// Set when talking to the emulator.
    emulator: Option<String>,
    rt: tokio::runtime::Runtime,
    data: BigTable,
    admin: AdminClient,
    auth: Option<Arc<dyn gcp_auth::TokenProvider>>,
    /// Known tables' descriptors, by canonical name: writes are validated against them.
    tables: RwLock<HashMap<String, TableDescriptor>>,
}

/// A failed call, worded for the table it concerns.
fn status_error(code: Code, message: &str, table: &str) -> Error {
    let message = first_line(message);
    match code {
        Code::NotFound if !table.is_empty() => Error::TableNotFound(table.to_string()),
        Code::AlreadyExists if !table.is_empty() => Error::TableExists(table.to_string()),
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
            Error::BadArgument(format!("Bigtable refused the request: {message}"))
        }
        Code::Unavailable | Code::DeadlineExceeded | Code::Aborted | Code::ResourceExhausted => {
            Error::Unavailable(format!("Bigtable is unavailable ({code:?}): {message}"))
        }
        Code::Unimplemented => Error::BadArgument(format!("{UNSUPPORTED}{message}")),
        Code::Unauthenticated | Code::PermissionDenied => {
            Error::Io(format!("Bigtable denied access ({code:?}): {message}"))
        }
        _ => Error::Io(format!("Bigtable failed ({code:?}): {message}")),
    }
}

fn client_error(e: bigtable_rs::bigtable::Error, table: &str) -> Error {
    use bigtable_rs::bigtable::Error as E;
    match e {
        E::RpcError(s) => status_error(s.code(), s.message(), table),
        E::TimeoutError(s) => Error::Unavailable(format!("Bigtable did not answer within {s} s")),
        E::TransportError(e) => Error::Unavailable(format!("cannot reach Bigtable: {e}")),
        E::GCPAuthError(e) => Error::Io(format!(
            "no Google credentials for Bigtable ({}); set GOOGLE_APPLICATION_CREDENTIALS, or BIGTABLE_EMULATOR_HOST for the emulator",
            first_line(&e.to_string())
        )),
        other => Error::Io(first_line(&other.to_string()).to_string()),
    }
}

impl Bigtable {
    /// Connects to `spec`'s instance, or to the emulator `BIGTABLE_EMULATOR_HOST` names, and
    /// checks that it answers.
    pub fn open(spec: &Spec) -> Result<Bigtable> {
        let emulator = std::env::var("BIGTABLE_EMULATOR_HOST").ok().filter(|h| !h.is_empty());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tallrow-bigtable")
            .enable_all()
            .build()
            .map_err(|e| Error::Io(format!("cannot start the Bigtable client: {e}")))?;
        let timeout = Duration::from_secs(60);
        let (data, admin, auth) = rt.block_on(async {
            let conn = BigTableConnection::new(&spec.project, &spec.instance, false, spec.channels, Some(timeout))
                .await
                .map_err(|e| client_error(e, ""))?;
            let mut data = conn.client();
            data.configure_inner_client(|c| c.max_decoding_message_size(256 << 20));
            let (channel, auth) = match &emulator {
                Some(host) => {
                    let channel = Channel::from_shared(format!("http://{host}"))
                        .map_err(|e| Error::BadArgument(format!("BIGTABLE_EMULATOR_HOST={host:?}: {e}")))?
                        .timeout(timeout)
                        .connect_lazy();
                    (channel, None)
                }
                None => {
                    let tls = tonic::transport::ClientTlsConfig::new()
                        .with_webpki_roots()
                        .domain_name("bigtableadmin.googleapis.com");
                    let channel = Channel::from_static("https://bigtableadmin.googleapis.com")
                        .tls_config(tls)
                        .map_err(|e| Error::Io(format!("cannot set up TLS for Bigtable: {e}")))?
                        .timeout(timeout)
                        .connect_lazy();
                    let auth = gcp_auth::provider().await.map_err(|e| client_error(e.into(), ""))?;
                    (channel, Some(auth))
                }
            };
            let admin = AdminClient::new(channel).max_decoding_message_size(64 << 20);
            Ok::<_, Error>((data, admin, auth))
        })?;
        let store = Bigtable {
            spec: spec.clone(),
            emulator,
            rt,
            data,
            admin,
            auth,
            tables: RwLock::new(HashMap::new()),
        };
        // Fail fast, in one line, when nothing answers there.
        store.table_ids().map_err(|e| match e {
            Error::Unavailable(m) | Error::Io(m) => Error::Io(format!("cannot use {}: {m}", store.where_())),
            e => e,
        })?;
        Ok(store)
    }

    fn where_(&self) -> String {
        match &self.emulator {
            Some(host) => format!("the Bigtable emulator at {host}"),
            None => format!("Bigtable instance {}/{}", self.spec.project, self.spec.instance),
        }
    }

    fn parent(&self) -> String {
        format!("projects/{}/instances/{}", self.spec.project, self.spec.instance)
    }

    fn table_path(&self, id: &str) -> String {
        format!("{}/tables/{id}", self.parent())
    }

    /// A data-call failure; a missing table is forgotten.
    fn data_error(&self, e: Error, name: &str) -> Error {
        if matches!(e, Error::TableNotFound(_)) {
            self.forget(name);
        }
        e
    }

    /// Reads rows, retrying transient failures (reads are idempotent).
    fn read(&self, name: &str, req: ReadRowsRequest) -> Result<Vec<(Vec<u8>, Vec<RowCell>)>> {
        self.rt.block_on(async {
            let mut delay = Duration::from_millis(20);
            for attempt in 1..=ATTEMPTS {
                let mut client = self.data.clone();
                match client.read_rows(req.clone()).await {
                    Ok(rows) => return Ok(rows),
                    Err(e) => {
                        let e = client_error(e, name);
                        if !e.is_transient() || attempt == ATTEMPTS {
                            return Err(self.data_error(e, name));
                        }
                    }
                }
                tokio::time::sleep(delay).await;
                delay *= 4;
            }
            unreachable!("the last attempt returns")
        })
    }
}

impl Store for Bigtable {
    fn in_flight(&self) -> usize {
        crate::store::REMOTE_IN_FLIGHT
    }

    fn identity(&self) -> String {
        let url = format!("bigtable://{}/{}", self.spec.project, self.spec.instance);
        match &self.emulator {
            Some(host) => format!("{url} (Bigtable emulator at {host})"),
            None => format!("{url} (Cloud Bigtable)"),
        }
    }

    fn version(&self) -> String {
        match &self.emulator {
            Some(host) => format!("Bigtable emulator at {host}"),
            None => "Cloud Bigtable (bigtable.googleapis.com)".to_string(),
        }
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        crate::store::one_copy(&desc, "Bigtable replicates whole instances, not a table's regions")?;
        let id = names::table_id(&desc.name)?;
        let mut column_families = HashMap::new();
        for f in &desc.families {
            validate_family(&f.name)?;
            column_families.insert(
                f.name.clone(),
                admin::ColumnFamily {
                    gc_rule: Some(gc_rule(f.max_versions, &f.storage)),
                    ..Default::default()
                },
            );
        }
        let req = admin::CreateTableRequest {
            parent: self.parent(),
            table_id: id,
            table: Some(admin::Table {
                column_families,
                ..Default::default()
            }),
            initial_splits: desc
                .splits
                .iter()
                .map(|k| admin::create_table_request::Split { key: k.clone() })
                .collect(),
        };
        self.forget(&desc.name);
        self.admin_call(req, &desc.name, async |mut c, r| c.create_table(r).await)?;
        self.tables.write().expect("lock").insert(desc.name.clone(), desc);
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        let id = names::table_id(&name)?;
        self.forget(&name);
        let req = admin::DeleteTableRequest {
            name: self.table_path(&id),
        };
        self.admin_call(req, &name, async |mut c, r| c.delete_table(r).await)
            .map(|_| ())
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        // Tables this mapping never names belong to other tools.
        let known = self.table_ids()?.into_iter().filter_map(|id| names::table_name(&id));
        super::describe_all(self, known.collect::<Vec<_>>())
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        let id = names::table_id(&name)?;
        let req = admin::GetTableRequest {
            name: self.table_path(&id),
            view: admin::table::View::SchemaView as i32,
        };
        let t = self.admin_call(req, &name, async |mut c, r| c.get_table(r).await)?;
        let mut families: Vec<FamilyDescriptor> = t
            .column_families
            .into_iter()
            .map(|(name, cf)| FamilyDescriptor {
                name,
                max_versions: cf.gc_rule.as_ref().and_then(max_versions).unwrap_or(i32::MAX as u32),
                storage: crate::store::Storage {
                    ttl: cf
                        .gc_rule
                        .as_ref()
                        .and_then(max_age)
                        .unwrap_or(crate::store::storage::FOREVER),
                    ..crate::store::Storage::default()
                },
            })
            .collect();
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

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let desc = self.descriptor(table)?;
        validate_mutations(&desc, rows)?;
        for rm in rows {
            if rm.row.len() > MAX_ROW_KEY {
                return Err(Error::BadArgument(format!(
                    "row key is {} bytes, Bigtable's limit is {MAX_ROW_KEY}",
                    rm.row.len()
                )));
            }
            if let Some(ts) = rm
                .mutations
                .iter()
                .filter_map(StoreMutation::timestamp)
                .find(|ts| *ts > MAX_MILLIS)
            {
                return Err(Error::BadArgument(format!(
                    "timestamp {ts} ms does not fit Bigtable's microseconds"
                )));
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        let table_path = self.table_path(&names::table_id(&desc.name)?);
        let now = now_millis();
        // One entry per row, its mutations in call order.
        let mut order: Vec<&[u8]> = Vec::new();
        let mut by_row: HashMap<&[u8], Vec<&RowMutation>> = HashMap::new();
        for rm in rows {
            by_row
                .entry(&rm.row)
                .or_insert_with(|| {
                    order.push(&rm.row);
                    Vec::new()
                })
                .push(rm);
        }
        let deleting: Vec<Vec<u8>> = order
            .iter()
            .filter(|row| {
                by_row[*row].iter().any(|rm| {
                    rm.mutations.iter().any(|m| {
                        matches!(
                            m,
                            StoreMutation::DeleteFamily { .. }
                                | StoreMutation::DeleteFamilyVersion { .. }
                                | StoreMutation::DeleteRow { .. }
                        )
                    })
                })
            })
            .map(|row| row.to_vec())
            .collect();
        let mut held = self.columns_of(&desc.name, &table_path, deleting)?;
        let mut chunks: Vec<Vec<Entry>> = vec![Vec::new()];
        let mut in_chunk = 0;
        for row in order {
            let mut known = held.remove(row).unwrap_or_default();
            let mut mutations = Vec::new();
            for rm in &by_row[row] {
                row_mutations(&rm.mutations, now, &mut known, &mut mutations);
            }
            if mutations.is_empty() {
                continue;
            }
            if mutations.len() > MAX_MUTATIONS {
                return Err(Error::BadArgument(format!(
                    "row {} needs {} mutations in one call, Bigtable's limit is {MAX_MUTATIONS}",
                    String::from_utf8_lossy(row),
                    mutations.len()
                )));
            }
            if in_chunk + mutations.len() > MAX_MUTATIONS {
                chunks.push(Vec::new());
                in_chunk = 0;
            }
            in_chunk += mutations.len();
            chunks.last_mut().expect("a chunk").push(Entry {
                row_key: row.to_vec(),
                mutations,
                idempotency: None,
            });
        }
        for entries in chunks.into_iter().filter(|c| !c.is_empty()) {
            self.write(&desc.name, &table_path, entries)?;
        }
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let desc = self.descriptor(table)?;
        for g in gets {
            validate_row_key(&g.row)?;
            g.select.validate(&desc)?;
        }
        let table_path = self.table_path(&names::table_id(&desc.name)?);
        let mut answers: Vec<Option<Row>> = vec![None; gets.len()];
        // One read per distinct selection; usually there is one.
        let mut groups: Vec<(&Selection, Vec<usize>)> = Vec::new();
        for (i, g) in gets.iter().enumerate() {
            if g.row.len() > MAX_ROW_KEY {
                continue; // Bigtable can hold no such row.
            }
            match groups.iter_mut().find(|(s, _)| **s == g.select) {
                Some((_, idx)) => idx.push(i),
                None => groups.push((&g.select, vec![i])),
            }
        }
        for (sel, idx) in groups {
            let mut keys: Vec<Vec<u8>> = idx.iter().map(|i| gets[*i].row.clone()).collect();
            keys.sort();
            keys.dedup();
            let req = ReadRowsRequest {
                table_name: table_path.clone(),
                rows: Some(RowSet {
                    row_keys: keys,
                    row_ranges: Vec::new(),
                }),
                filter: Some(selection_filter(&desc, sel)),
                ..Default::default()
            };
            let found: HashMap<Vec<u8>, Row> = self
                .read(&desc.name, req)?
                .into_iter()
                .filter_map(|(key, cells)| to_row(key.clone(), cells, sel).map(|r| (key, r)))
                .collect();
            for i in idx {
                answers[i] = found.get(&gets[i].row).cloned();
            }
        }
        Ok(answers)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let desc = self.descriptor(table)?;
        let Some(req) = self.scan_request(&desc, scan)? else {
            return Ok(Vec::new());
        };
        let rows = self.read(&desc.name, req).map_err(|e| self.scan_error(e, scan))?;
        Ok(rows
            .into_iter()
            .filter_map(|(key, cells)| to_row(key, cells, &scan.select))
            .collect())
    }

    /// `SampleRowKeys`: the keys the service reports as dividing the table into contiguous
    /// sections (its tablets' boundaries). The emulator has no tablets: it answers with a
    /// random 1% of the row keys and the last one, different on every call, so a table there
    /// is one region (the call still reports a missing table).
    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        let name = canonical_table_name(table)?;
        let req = SampleRowKeysRequest {
            table_name: self.table_path(&names::table_id(&name)?),
            ..Default::default()
        };
        let keys = self.rt.block_on(async {
            let mut client = self.data.clone();
            let mut stream = client.sample_row_keys(req).await.map_err(|e| client_error(e, &name))?;
            let mut keys = Vec::new();
            while let Some(sample) = stream.next().await {
                let sample = sample.map_err(|e| client_error(e.into(), &name))?;
                keys.push(sample.row_key);
            }
            Ok::<_, Error>(keys)
        })?;
        if self.emulator.is_some() {
            return Ok(Vec::new());
        }
        Ok(super::split_keys(keys))
    }

    /// One streamed `ReadRows` for the whole scan rather than a request per page: the
    /// service reads the range once. A transient failure resumes after the last row seen.
    fn scan_each(&self, table: &str, scan: &Scan, _page: usize, visit: &mut dyn FnMut(Row) -> bool) -> Result<()> {
        let desc = self.descriptor(table)?;
        let mut rest = scan.clone();
        let mut delay = Duration::from_millis(20);
        let mut attempt = 1;
        loop {
            let Some(req) = self.scan_request(&desc, &rest)? else {
                return Ok(());
            };
            // Rows are pulled one at a time so that `visit` runs outside the runtime.
            let mut client = self.data.clone();
            let streamed = self
                .rt
                .block_on(async move { client.stream_rows(req).await.map(Box::pin) });
            let failure = match streamed {
                Err(e) => client_error(e, &desc.name),
                Ok(mut stream) => loop {
                    match self.rt.block_on(stream.next()) {
                        None => return Ok(()),
                        Some(Err(e)) => break client_error(e, &desc.name),
                        Some(Ok((key, cells))) => {
                            // Seen, even when the filter left nothing of it.
                            let last = key.clone();
                            if let Some(row) = to_row(key, cells, &scan.select) {
                                if !visit(row) {
                                    return Ok(());
                                }
                                rest.limit = rest.limit.map(|n| n - 1);
                            }
                            rest = rest.after(last);
                            // Progress: the next failure starts a fresh series of tries.
                            attempt = 1;
                            delay = Duration::from_millis(20);
                        }
                    }
                },
            };
            if !failure.is_transient() || attempt == ATTEMPTS {
                return Err(self.scan_error(self.data_error(failure, &desc.name), scan));
            }
            attempt += 1;
            std::thread::sleep(delay);
            delay *= 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            Spec::parse("my-project/my-instance").unwrap(),
            Spec {
                project: "my-project".into(),
                instance: "my-instance".into(),
                channels: 1
            }
        );
        assert_eq!(Spec::parse("p/i?channels=4").unwrap().channels, 4);
        assert_eq!(Spec::parse("p/i/").unwrap().instance, "i");
        for bad in ["p", "/i", "p/", "p/i?channels=0", "p/i?x=1", "p q/i"] {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scan_ranges() {
        let key = |k: &row_range::StartKey| match k {
            row_range::StartKey::StartKeyClosed(k) => (k.clone(), true),
            row_range::StartKey::StartKeyOpen(k) => (k.clone(), false),
        };
        let end = |k: &row_range::EndKey| match k {
            row_range::EndKey::EndKeyClosed(k) => (k.clone(), true),
            row_range::EndKey::EndKeyOpen(k) => (k.clone(), false),
        };
        let r = scan_range(&Scan::range("ab", "b")).unwrap();
        assert_eq!(r.start_key.as_ref().map(key), Some((b"ab".to_vec(), true)));
        assert_eq!(r.end_key.as_ref().map(end), Some((b"b".to_vec(), false)));
        let r = scan_range(&Scan::prefix(&b"a\xff"[..])).unwrap();
        assert_eq!(r.start_key.as_ref().map(key), Some((b"a\xff".to_vec(), true)));
        assert_eq!(r.end_key.as_ref().map(end), Some((b"b".to_vec(), false)));
        let r = scan_range(&Scan::prefix(&b"\xff"[..])).unwrap();
        assert_eq!(r.end_key, None, "no key follows every 0xff… key");
        // Reversed: start is the high end, inclusive; stop the low end, exclusive.
        let r = scan_range(&Scan::range("b", "a").reversed()).unwrap();
        assert_eq!(r.start_key.as_ref().map(key), Some((b"a".to_vec(), false)));
        assert_eq!(r.end_key.as_ref().map(end), Some((b"b".to_vec(), true)));
        let r = scan_range(&Scan::default().reversed().after("m")).unwrap();
        assert_eq!(r.end_key.as_ref().map(end), Some((b"m".to_vec(), false)));
        assert!(scan_range(&Scan::range("b", "a")).is_none());
        assert!(scan_range(&Scan::range("a", "a")).is_none());
        assert!(scan_range(&Scan::default().after("a").limit(1)).is_some());
        let r = scan_range(&Scan {
            prefix: b"a".to_vec(),
            ..Scan::range("ab", "")
        })
        .unwrap();
        assert_eq!(r.start_key.as_ref().map(key), Some((b"ab".to_vec(), true)));
        assert_eq!(r.end_key.as_ref().map(end), Some((b"b".to_vec(), false)));
    }

    #[test]
    fn deletes_map_to_time_ranges() {
        let mut known: Columns = [
            (("f".to_string(), b"a".to_vec()), 5),
            (("g".to_string(), b"b".to_vec()), 9),
        ]
        .into_iter()
        .collect();
        let mut out = Vec::new();
        row_mutations(
            &[
                StoreMutation::DeleteColumn {
                    family: "f".into(),
                    qualifier: b"a".to_vec(),
                    timestamp: Some(20),
                },
                StoreMutation::DeleteFamily {
                    family: "f".into(),
                    timestamp: Some(6),
                },
                StoreMutation::DeleteRow { timestamp: Some(6) },
                StoreMutation::DeleteRow { timestamp: None },
            ],
            100,
            &mut known,
            &mut out,
        );
        let shown: Vec<String> = out
            .iter()
            .map(|m| match m.mutation.as_ref().unwrap() {
                mutation::Mutation::DeleteFromColumn(d) => format!(
                    "col {}:{} [{}, {})",
                    d.family_name,
                    String::from_utf8_lossy(&d.column_qualifier),
                    d.time_range.unwrap().start_timestamp_micros,
                    d.time_range.unwrap().end_timestamp_micros
                ),
                mutation::Mutation::DeleteFromFamily(d) => format!("family {}", d.family_name),
                mutation::Mutation::DeleteFromRow(_) => "row".to_string(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "col f:a [0, 21000)",
                "family f",
                "col f:a [0, 7000)",
                "col g:b [0, 7000)",
                "row"
            ]
        );
    }

    #[test]
    fn gc_rules_to_versions() {
        use admin::gc_rule::{Intersection, Rule, Union};
        let n = |n| admin::GcRule {
            rule: Some(Rule::MaxNumVersions(n)),
        };
        let age = admin::GcRule {
            rule: Some(Rule::MaxAge(prost_types::Duration { seconds: 60, nanos: 0 })),
        };
        assert_eq!(max_versions(&n(3)), Some(3));
        assert_eq!(max_versions(&age), None);
        let union = admin::GcRule {
            rule: Some(Rule::Union(Union {
                rules: vec![n(3), age, n(2)],
            })),
        };
        assert_eq!(max_versions(&union), Some(2));
        let inter = admin::GcRule {
            rule: Some(Rule::Intersection(Intersection {
                rules: vec![n(3), admin::GcRule { rule: None }],
            })),
        };
        assert_eq!(max_versions(&inter), None);
    }

    #[test]
    fn versions_and_ttl_make_a_union_rule_and_read_back() {
        use admin::gc_rule::Rule;
        let forever = crate::store::Storage::default();
        let r = gc_rule(3, &forever);
        assert_eq!(r.rule, Some(Rule::MaxNumVersions(3)));
        assert_eq!(max_age(&r), None);
        let day = crate::store::Storage { ttl: 86_400, ..forever };
        let r = gc_rule(2, &day);
        let Some(Rule::Union(u)) = &r.rule else { panic!("{r:?}") };
        assert_eq!(u.rules.len(), 2);
        assert_eq!(max_versions(&r), Some(2));
        assert_eq!(max_age(&r), Some(86_400));
    }

    #[test]
    fn family_names_as_regexes() {
        assert_eq!(literal("cf"), "cf");
        assert_eq!(literal("a.b-c_d"), "a\\.b\\-c_d");
        assert!(validate_family("info").is_ok());
        assert!(validate_family("a-b.c_1").is_ok());
        for bad in ["", "-a", ".a", "a b", "é"] {
            assert!(validate_family(bad).is_err(), "{bad}");
        }
    }
}
