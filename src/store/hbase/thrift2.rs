//! The hbase backend over HBase's Thrift2 service (`hbase thrift2 start`, `THBaseService`,
//! `hbase://HOST:PORT?api=thrift2`). Thrift2 carries a timestamp per cell and versions and
//! time ranges in reads, so the store's model maps onto it directly:
//! - a batch is one `putMultiple` and one `deleteMultiple` per round of the rows' steps (a
//!   row's puts, then its deletes, in order), every round pipelined on one connection, after
//!   the batch is validated;
//! - gets are one `getMultiple` with `maxVersions` and time ranges; qualifier cursors are a
//!   `QualifierFilter`, cell limits are counted here;
//! - a scan that one batch answers is one `getScannerResults` call; longer ones page with
//!   `openScanner`/`getScannerRows`/`closeScanner`.

use super::*;
use crate::convert::thrift2 as t2;
use crate::idl::thrift2::{
    TColumnFamilyDescriptor, THBaseServiceSyncClient, TIOError, TIllegalArgument, TScan as TScan2,
    TTHBaseServiceSyncClient, TTableDescriptor, TTableName, TTimeRange,
};
use thrift::protocol::TSerializable;

type ThriftClient2 = THBaseServiceSyncClient<wire::Input<Box<dyn wire::Source>>, Box<dyn TOutputProtocol + Send>>;

/// A Thrift2 connection.
type Client2 = Connected<ThriftClient2>;

impl Service for ThriftClient2 {
    fn exception(id: i16, t: TType, i: &mut dyn TInputProtocol) -> thrift::Result<Option<thrift::Error>> {
        Ok(match (id, t) {
            (1, TType::Struct) => Some(thrift::Error::User(Box::new(TIOError::read_from_in_protocol(i)?))),
            (2, TType::Struct) => Some(thrift::Error::User(Box::new(TIllegalArgument::read_from_in_protocol(
                i,
            )?))),
            _ => None,
        })
    }

    fn classify(e: thrift::Error, table: &str) -> Failure {
        failure2(e, table)
    }
}

/// A `putMultiple` or `deleteMultiple` call (`name`, its list argument `list`), for a
/// pipeline.
fn multiple<'a, T: 'a>(
    (name, list): (&'static str, &'static str),
    table: &'a [u8],
    items: Vec<T>,
    write: fn(&T, &mut dyn TOutputProtocol) -> thrift::Result<()>,
) -> Call<'a> {
    Call {
        name,
        args: Box::new(move |o| {
            write_bytes_field(o, "table", 1, table)?;
            write_field(o, list, TType::List, 2)?;
            o.write_list_begin(&TListIdentifier::new(TType::Struct, items.len() as i32))?;
            for item in &items {
                write(item, o)?;
            }
            o.write_list_end()?;
            o.write_field_end()
        }),
    }
}

/// The backend over Thrift2.
pub struct Hbase2 {
    spec: Spec,
    dialer: Dialer,
    pool: Pool<Client2>,
    families: Descriptors,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for a reply.
    pub read_timeout: Duration,
    /// Attempts of a retryable call.
    pub attempts: u32,
    /// Writes of requests to the server, all connections together.
    round_trips: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// TIMELINE reads asked for: each get and scan carries `consistency = TIMELINE`, the
    /// gateway's own client hedges them, and an answer a secondary gave comes back stale.
    timeline: std::sync::atomic::AtomicBool,
}

/// `ns:qualifier` as a `TTableName` (no namespace: `default`).
fn table_name(name: &str) -> TTableName {
    match name.split_once(':') {
        Some((ns, q)) => TTableName::new(ns.as_bytes().to_vec(), q.as_bytes().to_vec()),
        None => TTableName::new(None, name.as_bytes().to_vec()),
    }
}

/// A `TTableName` as the store names tables.
fn name_of(t: &TTableName) -> Result<String> {
    let q = String::from_utf8(t.qualifier.clone()).map_err(|_| Error::Io("table name in reply is not UTF-8".into()))?;
    match t.ns.as_deref() {
        None | Some(b"") | Some(b"default") => Ok(q),
        Some(ns) => Ok(format!("{}:{q}", String::from_utf8_lossy(ns))),
    }
}

/// A thrift error from the Thrift2 server, classified and worded for the table.
fn failure2(e: thrift::Error, table: &str) -> Failure {
    match e {
        thrift::Error::User(u) => {
            if let Some(io) = u.downcast_ref::<TIOError>() {
                let message = io.message.clone().unwrap_or_default();
                Failure::Answered(io_error(&message, io.can_retry == Some(true), table))
            } else if let Some(ia) = u.downcast_ref::<TIllegalArgument>() {
                Failure::Answered(Error::BadArgument(
                    first_line(ia.message.as_deref().unwrap_or("")).to_string(),
                ))
            } else {
                Failure::Answered(Error::Io(u.to_string()))
            }
        }
        other => failure(other, table),
    }
}

impl Hbase2 {
    /// A backend for `spec`; fails fast with one line when nothing listens there.
    pub fn open(spec: &Spec) -> Result<Hbase2> {
        let connect_timeout = Duration::from_secs(5);
        let read_timeout = Duration::from_secs(60);
        let store = Hbase2 {
            spec: spec.clone(),
            dialer: Dialer::new(spec, connect_timeout, read_timeout)?,
            pool: Pool::new(),
            families: Descriptors::default(),
            connect_timeout,
            read_timeout,
            attempts: 4,
            round_trips: Default::default(),
            timeline: Default::default(),
        };
        store.dialer.check_plain(store.connect_timeout, |(input, output, _)| {
            THBaseServiceSyncClient::new(input, output).get_cluster_id().map(|_| ())
        })?;
        let client = store.connect().map_err(Failure::error)?;
        store.pool.put(client);
        Ok(store)
    }

    fn connect(&self) -> std::result::Result<Client2, Failure> {
        let (input, output, held) = self.dialer.open(self.connect_timeout, self.read_timeout)?;
        Ok(Connected {
            thrift: THBaseServiceSyncClient::new(input, output),
            held: held.counting(self.round_trips.clone()),
        })
    }

    /// Round trips to the server so far, as [`Hbase::round_trips`] counts them.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `f` on a pooled connection, retrying on a fresh one when `f` fails in transit
    /// and `repeatable` says repeating it is safe.
    fn call<T>(
        &self,
        repeatable: bool,
        mut f: impl FnMut(&mut Client2) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        retrying(self.attempts, repeatable, &self.pool, || self.connect(), &mut f)
    }

    /// Creates `ns` unless it exists, as `load` expects of a schema's namespaced tables
    /// (Thrift1 has no namespace call; there they must be made beforehand).
    fn ensure_namespace(&self, ns: &str) -> Result<()> {
        if self
            .call(true, |c| {
                c.get_namespace_descriptor(ns.to_string()).map_err(|e| failure2(e, ""))
            })
            .is_ok()
        {
            return Ok(());
        }
        let desc = crate::idl::thrift2::TNamespaceDescriptor::new(ns.to_string(), None);
        match self.call(true, |c| c.create_namespace(desc.clone()).map_err(|e| failure2(e, ""))) {
            Err(Error::Io(m)) if m.contains("NamespaceExistException") => Ok(()),
            other => other,
        }
    }

    fn descriptor(&self, table: &str) -> Result<TableDescriptor> {
        self.families.get(table, |name| self.describe_table(name))
    }
}

/// A selection's columns as `TColumn`s (see `added_columns`); `None` reads every family.
fn tcolumns(select: &crate::store::Selection) -> Option<Vec<crate::idl::thrift2::TColumn>> {
    let kept: Vec<_> = added_columns(select)
        .map(|c| crate::idl::thrift2::TColumn::new(c.family.as_bytes().to_vec(), c.qualifier.clone(), None))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// A `TTableDescriptor` as the store describes the table `name`: its families, versions and
/// storage settings.
fn descriptor_of(name: String, d: TTableDescriptor) -> Result<TableDescriptor> {
    let mut families = Vec::new();
    for f in d.columns.unwrap_or_default() {
        let storage = t2::storage_of(&f);
        let family = String::from_utf8(f.name).map_err(|_| Error::Io("family name in reply is not UTF-8".into()))?;
        families.push(crate::store::FamilyDescriptor {
            name: family,
            max_versions: f.max_versions.unwrap_or(1).max(1) as u32,
            storage,
        });
    }
    families.sort_by(|a, b| a.name.cmp(&b.name));
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    let attributes: Vec<(String, String)> = d
        .attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (text(k), text(v)))
        .collect();
    Ok(TableDescriptor {
        name,
        families,
        splits: Vec::new(),
        region_replication: TableDescriptor::replication_in(attributes.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        attributes: TableDescriptor::own_attributes(attributes),
    })
}

fn to_row2(r: crate::idl::thrift2::TResult) -> Result<Row> {
    t2::row_of(r).map_err(|e| Error::Io(format!("{e} in reply")))
}

/// Whether a TIMELINE read's answers are carried: a gateway that reads `TGet.consistency`
/// marks every answer `stale` or not, where one that does not know the field (HBase 2.0's:
/// its `TGet` and `TResult` have neither) leaves `stale` out and reads the primaries alone.
fn timeline_carried(authority: &str, results: &[crate::idl::thrift2::TResult]) -> Result<()> {
    match results.iter().all(|r| r.stale.is_some()) {
        true => Ok(()),
        false => Err(Error::BadArgument(format!(
            "timeline reads: the Thrift2 gateway at {authority} answers without TResult.stale, as HBase 2.0's does: \
             it does not carry TGet.consistency and would read the primaries alone; use a later HBase's gateway or api=native"
        ))),
    }
}

impl Store for Hbase2 {
    fn in_flight(&self) -> usize {
        crate::store::REMOTE_IN_FLIGHT
    }

    /// TIMELINE is sent with every read; a gateway that does not carry it is found by the
    /// first answer (`timeline_carried`). The gateway's own client hedges, after its
    /// `hbase.client.primaryCallTimeout.get` and `hbase.client.replicaCallTimeout.scan`:
    /// the timeouts of `consistency` are for `api=native` and do not travel.
    fn set_consistency(&self, consistency: crate::store::Consistency) -> Result<()> {
        let timeline = matches!(consistency, crate::store::Consistency::Timeline { .. });
        self.timeline.store(timeline, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn identity(&self) -> String {
        format!(
            "hbase://{} (HBase Thrift2, {})",
            self.spec.authority(),
            self.spec.shape()
        )
    }

    fn version(&self) -> String {
        match self.call(true, |c| c.get_cluster_id().map_err(|e| failure2(e, ""))) {
            Ok(id) => format!("HBase Thrift2 server at {} (cluster {id})", self.spec.authority()),
            Err(_) => format!("HBase Thrift2 server at {}", self.spec.authority()),
        }
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        let families: Vec<TColumnFamilyDescriptor> = desc
            .families
            .iter()
            .map(|f| t2::family_with(f.name.as_bytes(), f.max_versions, &f.storage))
            .collect();
        // tallrow's mark among the table's METADATA, as HBase's shell shows it, and the
        // region replication (`ThriftUtilities.tableDescriptorFromThrift` sets each as is).
        let attributes = desc.hbase_attributes();
        let attributes = (!attributes.is_empty()).then(|| {
            attributes
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect::<std::collections::BTreeMap<_, _>>()
        });
        let t = TTableDescriptor::new(table_name(&desc.name), families, attributes, None);
        if let Some((ns, _)) = desc.name.split_once(':') {
            self.ensure_namespace(ns)?;
        }
        self.families.forget(&desc.name);
        self.call(false, |c| {
            c.create_table(t.clone(), desc.splits.clone())
                .map_err(|e| failure2(e, &desc.name))
        })
    }

    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        let name = canonical_table_name(table)?;
        super::regions_of(self, &name, || {
            let locations = self.call(true, |c| {
                c.get_all_region_locations(name.clone().into_bytes())
                    .map_err(|e| failure2(e, &name))
            })?;
            Ok(locations
                .into_iter()
                .map(|l| l.region_info.start_key.unwrap_or_default())
                .collect())
        })
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        self.families.forget(&name);
        let t = table_name(&name);
        self.call(true, |c| match c.disable_table(t.clone()) {
            Ok(()) => Ok(()),
            Err(e) => match failure2(e, &name) {
                Failure::Answered(Error::Io(m)) if m.contains("TableNotEnabledException") => Ok(()),
                f => Err(f),
            },
        })?;
        self.call(true, |c| c.delete_table(t.clone()).map_err(|e| failure2(e, &name)))
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        // Every user table's descriptor in one call.
        let descriptors = self.call(true, |c| {
            c.get_table_descriptors_by_pattern(".*".into(), false)
                .map_err(|e| failure2(e, ""))
        })?;
        let mut tables = descriptors
            .into_iter()
            .map(|d| descriptor_of(name_of(&d.table_name)?, d))
            .collect::<Result<Vec<_>>>()?;
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(tables)
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        let t = table_name(&name);
        let d = match self.call(true, |c| {
            c.get_table_descriptor(t.clone()).map_err(|e| failure2(e, &name))
        }) {
            Ok(d) => d,
            // Thrift2's errors carry the exception's message alone (for a missing table,
            // its name), so whether the table is there is asked.
            Err(e) => {
                let exists = self.call(true, |c| c.table_exists(t.clone()).map_err(|e| failure2(e, &name)));
                return Err(match exists {
                    Ok(false) => Error::TableNotFound(name),
                    _ => e,
                });
            }
        };
        descriptor_of(name, d)
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let desc = self.descriptor(table)?;
        validate_mutations(&desc, rows)?;
        super::locatable_rows(&desc, rows)?;
        if rows.is_empty() {
            return Ok(());
        }
        let kept = without_overwritten(rows);
        let rows = kept.as_deref().unwrap_or(rows);
        let per_row: Vec<(&RowMutation, Vec<Step>)> = rows.iter().map(|r| (r, steps(r))).collect();
        let rounds = per_row.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
        let repeatable = rows.iter().all(|r| r.mutations.iter().all(|m| m.timestamp().is_some()));
        let name = desc.name.as_bytes();
        // Every round's calls, pipelined on one connection: the server applies them in order.
        let mut calls = Vec::new();
        for k in 0..rounds {
            let (mut puts, mut deletes) = (Vec::new(), Vec::new());
            for (rm, steps) in &per_row {
                match steps.get(k) {
                    Some(Step::Batch(_, range)) => {
                        let ms = &rm.mutations[range.clone()];
                        if ms.iter().any(|m| matches!(m, StoreMutation::Put { .. })) {
                            puts.push(t2::tput(&rm.row, ms));
                        }
                        deletes.extend(ms.iter().filter_map(|m| t2::tdelete(&rm.row, m)));
                    }
                    Some(Step::DeleteRow(ts)) => {
                        let m = StoreMutation::DeleteRow { timestamp: *ts };
                        deletes.extend(t2::tdelete(&rm.row, &m));
                    }
                    None => {}
                }
            }
            if !puts.is_empty() {
                calls.push(multiple(("putMultiple", "tputs"), name, puts, |p, o| {
                    p.write_to_out_protocol(o)
                }));
            }
            if !deletes.is_empty() {
                calls.push(multiple(("deleteMultiple", "tdeletes"), name, deletes, |d, o| {
                    d.write_to_out_protocol(o)
                }));
            }
        }
        // deleteMultiple answers the deletes it could not apply: none, since HBase 2.
        self.call(repeatable, |c| {
            pipeline(c, &desc.name, &calls, |i| i.skip(TType::List)).map(|_| ())
        })
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let desc = self.descriptor(table)?;
        let max = max_row_key(&desc.name);
        let timeline = self.timeline.load(std::sync::atomic::Ordering::Relaxed);
        let mut tgets = Vec::with_capacity(gets.len());
        for g in gets {
            super::checked_get(&desc, max, g)?;
            let mut t = t2::tget(g);
            t.columns = tcolumns(&g.select);
            t.filter_string = cell_filters(&g.select).pop();
            t.consistency = timeline.then_some(crate::idl::thrift2::TConsistency::TIMELINE);
            tgets.push(t);
        }
        if tgets.is_empty() {
            return Ok(Vec::new());
        }
        let name = desc.name.as_bytes().to_vec();
        let results = self.call(true, |c| {
            c.get_multiple(name.clone(), tgets.clone())
                .map_err(|e| failure2(e, &desc.name))
        })?;
        let mut out = Vec::with_capacity(gets.len());
        if timeline {
            timeline_carried(&self.spec.authority(), &results)?;
            crate::store::note_stale(results.iter().filter(|r| r.stale == Some(true)).count() as u64);
        }
        for (g, r) in gets.iter().zip(results) {
            let mut row = to_row2(r)?;
            row.key = g.row.clone();
            if let Some(n) = g.select.cell_limit {
                row.cells.truncate(n);
            }
            out.push((!row.cells.is_empty()).then_some(row));
        }
        Ok(out)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let desc = self.descriptor(table)?;
        scan.select.validate(&desc)?;
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
        filters.extend(cell_filters(&scan.select));
        let timeline = self.timeline.load(std::sync::atomic::Ordering::Relaxed);
        // A scan answered stale anywhere counts once, as the native client counts it.
        let stale = std::cell::Cell::new(false);
        let skip_start = scan.start_exclusive && !scan.start.is_empty() && start == scan.start;
        let wanted = limit.saturating_add(usize::from(skip_start));
        let page = wanted.min(SCAN_PAGE);
        let tscan = TScan2 {
            start_row: (!start.is_empty()).then_some(start.clone()),
            stop_row: (!stop.is_empty()).then_some(stop),
            columns: tcolumns(&scan.select),
            caching: Some(page as i32),
            max_versions: Some(scan.select.max_versions.min(i32::MAX as u32) as i32),
            time_range: scan.select.time_range.map(|(min, max)| TTimeRange::new(min, max)),
            filter_string: (!filters.is_empty()).then(|| filters.join(&b" AND "[..])),
            batch_size: None,
            attributes: None,
            authorizations: None,
            reversed: Some(scan.reversed),
            cache_blocks: Some(true),
            col_fam_time_range_map: None,
            read_type: None,
            limit: (wanted <= i32::MAX as usize).then_some(wanted as i32),
            consistency: timeline.then_some(crate::idl::thrift2::TConsistency::TIMELINE),
            target_replica_id: None,
            filter_bytes: None,
        };
        let name = desc.name.as_bytes().to_vec();
        let keep = |rows: &mut Vec<Row>, results: Vec<crate::idl::thrift2::TResult>| -> Result<()> {
            if timeline {
                timeline_carried(&self.spec.authority(), &results)?;
                if results.iter().any(|r| r.stale == Some(true)) {
                    stale.set(true);
                }
            }
            for r in results {
                let mut row = to_row2(r)?;
                if skip_start && row.key == scan.start {
                    continue;
                }
                if let Some(n) = scan.select.cell_limit {
                    row.cells.truncate(n);
                }
                if !row.cells.is_empty() && rows.len() < limit {
                    rows.push(row);
                }
            }
            Ok(())
        };
        let mut rows = Vec::new();
        if wanted <= SCAN_PAGE {
            // One call opens, reads and closes.
            let results = self.call(true, |c| {
                c.get_scanner_results(name.clone(), tscan.clone(), page as i32)
                    .map_err(|e| failure2(e, &desc.name))
            })?;
            keep(&mut rows, results)?;
            crate::store::note_stale(u64::from(stale.get()));
            return Ok(rows);
        }
        let id = self.call(true, |c| {
            c.open_scanner(name.clone(), tscan.clone())
                .map_err(|e| failure2(e, &desc.name))
        })?;
        let read = (|| {
            loop {
                let batch = self.call(true, |c| {
                    c.get_scanner_rows(id, page as i32).map_err(|e| failure2(e, &desc.name))
                })?;
                let got = batch.len();
                keep(&mut rows, batch)?;
                if got < page || rows.len() >= limit {
                    return Ok(());
                }
            }
        })();
        let closed = self.call(true, |c| c.close_scanner(id).map_err(|e| failure2(e, &desc.name)));
        read?;
        closed?;
        crate::store::note_stale(u64::from(stale.get()));
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idl::thrift2::TResult;

    /// Answers that say whether they are stale carry TIMELINE; one answer without the flag
    /// is a gateway that never read it, named in one line.
    #[test]
    fn a_gateway_without_the_stale_flag_does_not_carry_timeline_reads() {
        let answer = |stale: Option<bool>| TResult::new(None, Vec::new(), stale, None);
        assert!(timeline_carried("h:9090", &[]).is_ok());
        assert!(timeline_carried("h:9090", &[answer(Some(false)), answer(Some(true))]).is_ok());
        let e = timeline_carried("h:9090", &[answer(Some(false)), answer(None)]).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::BadArgument(_)), "{msg}");
        assert!(
            msg.contains("Thrift2 gateway at h:9090") && msg.contains("api=native") && !msg.contains('\n'),
            "{msg:?}"
        );
    }
}
