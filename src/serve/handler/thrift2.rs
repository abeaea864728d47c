//! The `THBaseService` (Thrift2) service over the same state as Thrift1's, following HBase's
//! Thrift2 `ThriftHBaseServiceHandler`: errors are `TIOError`s carrying the exception's
//! message, an `IllegalArgumentException` (which that handler does not catch) reaches the
//! client as "Internal error processing CALL", `TIllegalArgument` answers only an unknown
//! scanner id, closing an unknown scanner succeeds, and descriptors come back with HBase's
//! defaults and attribute maps.

use super::*;
use crate::convert::thrift2 as t2;
use crate::idl::thrift2::{
    TAppend, TBloomFilterType, TColumnFamilyDescriptor, TCompareOp, TCompressionAlgorithm, TDataBlockEncoding, TDelete,
    TDeleteType, TDurability, TGet, THBaseServiceSyncHandler, THRegionInfo, THRegionLocation, TIOError,
    TIllegalArgument, TIncrement, TKeepDeletedCells, TLogQueryFilter, TMutation, TNamespaceDescriptor,
    TOnlineLogRecord, TPut, TResult, TRowMutations, TScan as TScan2, TServerName, TTableDescriptor, TTableName,
    TThriftServerType as TServerType2,
};
use std::collections::BTreeSet;

/// The Thrift2 face of a [`Handler`]: the same tables, scanners and deferred writes.
#[derive(Clone)]
pub struct Thrift2(pub Handler);

fn tio(message: impl Into<String>) -> thrift::Error {
    thrift::Error::User(Box::new(TIOError::new(message.into(), false)))
}

/// An error of the parts shared with Thrift1, which word errors as HBase's Thrift1 server
/// does, as the Thrift2 server words it.
fn two(e: thrift::Error) -> thrift::Error {
    let thrift::Error::User(u) = e else {
        return e;
    };
    if let Some(io) = u.downcast_ref::<IOError>() {
        // Named by its exception class, as HBase's master-side errors are (its client-side
        // ones carry the message alone).
        let message = io.message.clone().unwrap_or_default();
        return thrift::Error::User(Box::new(TIOError::new(message, io.can_retry.unwrap_or(false))));
    }
    if u.downcast_ref::<AlreadyExists>().is_some() {
        return tio("table already exists");
    }
    if u.downcast_ref::<IllegalArgument>().is_some() {
        return internal_error();
    }
    thrift::Error::User(u)
}

fn two_r<T>(r: R<T>) -> R<T> {
    r.map_err(two)
}

/// A `TTableName` as the name the shared parts take: `ns:qualifier`, or the qualifier
/// alone in the default namespace.
fn name_of(t: &TTableName) -> Vec<u8> {
    match t.ns.as_deref() {
        Some(ns) if !ns.is_empty() => [ns, b":".as_slice(), &t.qualifier].concat(),
        _ => t.qualifier.clone(),
    }
}

fn tname(name: &str) -> TTableName {
    let (ns, qualifier) = name.split_once(':').unwrap_or(("default", name));
    TTableName::new(ns.as_bytes().to_vec(), qualifier.as_bytes().to_vec())
}

fn namespace_of(name: &str) -> &str {
    name.split_once(':').map_or("default", |(ns, _)| ns)
}

fn utf8(bytes: Vec<u8>, what: &str) -> R<String> {
    String::from_utf8(bytes).map_err(|_| tio(format!("{what} is not UTF-8")))
}

/// LATEST_TIMESTAMP on a mutation means "the server's clock", except on a one-version
/// column delete, where it means the newest version (see `State::resolve_latest`).
fn now_if_latest(mut m: StoreMutation) -> StoreMutation {
    match &mut m {
        StoreMutation::Put { timestamp, .. }
        | StoreMutation::DeleteColumn { timestamp, .. }
        | StoreMutation::DeleteFamily { timestamp, .. }
        | StoreMutation::DeleteRow { timestamp } => {
            if *timestamp == Some(LATEST) {
                *timestamp = None;
            }
        }
        StoreMutation::DeleteFamilyVersion { timestamp, .. } => {
            if *timestamp == LATEST {
                *timestamp = now_millis();
            }
        }
        StoreMutation::DeleteVersion { .. } => {}
    }
    m
}

const COMPRESSIONS: [(&str, TCompressionAlgorithm); 7] = [
    ("LZO", TCompressionAlgorithm::LZO),
    ("GZ", TCompressionAlgorithm::GZ),
    ("NONE", TCompressionAlgorithm::NONE),
    ("SNAPPY", TCompressionAlgorithm::SNAPPY),
    ("LZ4", TCompressionAlgorithm::LZ4),
    ("BZIP2", TCompressionAlgorithm::BZIP2),
    ("ZSTD", TCompressionAlgorithm::ZSTD),
];
const BLOOMS: [(&str, TBloomFilterType); 4] = [
    ("NONE", TBloomFilterType::NONE),
    ("ROW", TBloomFilterType::ROW),
    ("ROWCOL", TBloomFilterType::ROWCOL),
    ("ROWPREFIX_FIXED_LENGTH", TBloomFilterType::ROWPREFIX_FIXED_LENGTH),
];
const ENCODINGS: [(&str, TDataBlockEncoding); 5] = [
    ("NONE", TDataBlockEncoding::NONE),
    ("PREFIX", TDataBlockEncoding::PREFIX),
    ("DIFF", TDataBlockEncoding::DIFF),
    ("FAST_DIFF", TDataBlockEncoding::FAST_DIFF),
    ("ROW_INDEX_V1", TDataBlockEncoding::ROW_INDEX_V1),
];
const KEEP_DELETED: [&str; 3] = ["FALSE", "TRUE", "TTL"];

/// A family descriptor as HBase's `columnFamilyDescriptorFromThrift` builds it; unknown
/// enum values fall back to HBase's defaults, as there.
fn family_in(cd: TColumnFamilyDescriptor) -> R<(String, u32, FamilyOptions)> {
    let name = String::from_utf8(cd.name).map_err(|_| internal_error())?;
    // ColumnFamilyDescriptorBuilder refuses these with IllegalArgumentException.
    if name.is_empty() || name.starts_with('.') || name.contains(':') || name.chars().any(char::is_control) {
        return Err(internal_error());
    }
    let versions = cd.max_versions.unwrap_or(1);
    if versions <= 0 {
        return Err(internal_error());
    }
    let compression = COMPRESSIONS
        .iter()
        .find(|(_, t)| Some(*t) == cd.compression_type)
        .map_or("NONE", |(n, _)| n);
    let bloom = BLOOMS
        .iter()
        .find(|(_, t)| Some(*t) == cd.bloomn_filter_type)
        .map_or("ROW", |(n, _)| n);
    let more = MoreOptions {
        block_size: cd.block_size,
        dfs_replication: cd.dfs_replication,
        data_block_encoding: cd
            .data_block_encoding
            .map(|e| if ENCODINGS.iter().any(|(_, t)| *t == e) { e.0 } else { 0 }),
        keep_deleted_cells: cd
            .keep_deleted_cells
            .map(|k| if (0..3).contains(&k.0) { k.0 } else { 0 }),
        min_versions: cd.min_versions,
        scope: cd.scope,
        cache_blooms_on_write: cd.cache_blooms_on_write,
        cache_data_on_write: cd.cache_data_on_write,
        cache_indexes_on_write: cd.cache_indexes_on_write,
        compress_tags: cd.compress_tags,
        evict_blocks_on_close: cd.evict_blocks_on_close,
        configuration: cd.configuration.unwrap_or_default(),
        attributes: cd.attributes.unwrap_or_default(),
    };
    Ok((
        name,
        versions as u32,
        FamilyOptions {
            compression: compression.to_string(),
            in_memory: cd.in_memory.unwrap_or(false),
            bloom_filter: bloom.to_string(),
            block_cache: cd.block_cache_enabled.unwrap_or(true),
            ttl: cd.time_to_live.unwrap_or(FOREVER),
            more,
        },
    ))
}

/// HBase's sanity checks on a new table, which its master answers with an IOException.
fn sanity_check(families: &[(String, u32, FamilyOptions)]) -> R<()> {
    if families.is_empty() {
        return Err(tio(format!(
            "{DO_NOT_RETRY}: Table should have at least one column family. Set hbase.table.sanity.checks to false at conf or table descriptor if you want to bypass sanity checks"
        )));
    }
    for (name, versions, o) in families {
        if o.ttl <= 0 {
            return Err(tio(format!(
                "{DO_NOT_RETRY}: TTL for column family {name} must be positive."
            )));
        }
        if o.more.min_versions.unwrap_or(0) > *versions as i32 {
            return Err(tio(format!(
                "{DO_NOT_RETRY}: Min versions for column family {name} must be less than the Max versions."
            )));
        }
    }
    Ok(())
}

/// A family as HBase's `columnFamilyDescriptorFromHBase` reports it, with the descriptor's
/// values map as HBase fills it.
fn tfamily(name: &str, versions: u32, o: &FamilyOptions) -> TColumnFamilyDescriptor {
    let m = &o.more;
    let compression = COMPRESSIONS
        .iter()
        .find(|(n, _)| *n == o.compression)
        .map_or(TCompressionAlgorithm::NONE, |(_, t)| *t);
    let bloom = BLOOMS
        .iter()
        .find(|(n, _)| *n == o.bloom_filter)
        .map_or(TBloomFilterType::ROW, |(_, t)| *t);
    let encoding = TDataBlockEncoding(m.data_block_encoding.unwrap_or(0));
    let encoding_name = ENCODINGS
        .iter()
        .find(|(_, t)| *t == encoding)
        .map_or("NONE", |(n, _)| n);
    let keep = m.keep_deleted_cells.unwrap_or(0);
    let versions = versions.min(i32::MAX as u32) as i32;
    let mut values: BTreeMap<Vec<u8>, Vec<u8>> = [
        ("BLOCKCACHE", o.block_cache.to_string()),
        ("BLOCKSIZE", m.block_size.unwrap_or(65536).to_string()),
        ("BLOOMFILTER", o.bloom_filter.clone()),
        ("COMPRESSION", o.compression.clone()),
        ("DATA_BLOCK_ENCODING", encoding_name.to_string()),
        ("INDEX_BLOCK_ENCODING", "NONE".to_string()),
        ("IN_MEMORY", o.in_memory.to_string()),
        ("KEEP_DELETED_CELLS", KEEP_DELETED[keep as usize].to_string()),
        ("MIN_VERSIONS", m.min_versions.unwrap_or(0).to_string()),
        ("REPLICATION_SCOPE", m.scope.unwrap_or(0).to_string()),
        ("TTL", o.ttl.to_string()),
        ("VERSIONS", versions.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.as_bytes().to_vec(), v.into_bytes()))
    .collect();
    let flags = [
        ("DFS_REPLICATION", m.dfs_replication.map(|v| v.to_string())),
        ("CACHE_BLOOMS_ON_WRITE", m.cache_blooms_on_write.map(|v| v.to_string())),
        ("CACHE_DATA_ON_WRITE", m.cache_data_on_write.map(|v| v.to_string())),
        ("CACHE_INDEX_ON_WRITE", m.cache_indexes_on_write.map(|v| v.to_string())),
        ("COMPRESS_TAGS", m.compress_tags.map(|v| v.to_string())),
        ("EVICT_BLOCKS_ON_CLOSE", m.evict_blocks_on_close.map(|v| v.to_string())),
    ];
    for (k, v) in flags {
        if let Some(v) = v {
            values.insert(k.as_bytes().to_vec(), v.into_bytes());
        }
    }
    values.extend(m.attributes.clone());
    TColumnFamilyDescriptor::new(
        name.as_bytes().to_vec(),
        values,
        (!m.configuration.is_empty()).then(|| m.configuration.clone()),
        m.block_size.unwrap_or(65536),
        bloom,
        compression,
        m.dfs_replication.unwrap_or(0),
        encoding,
        TKeepDeletedCells(keep),
        versions,
        m.min_versions.unwrap_or(0),
        m.scope.unwrap_or(0),
        o.ttl,
        o.block_cache,
        m.cache_blooms_on_write.unwrap_or(false),
        m.cache_data_on_write.unwrap_or(false),
        m.cache_indexes_on_write.unwrap_or(false),
        m.compress_tags.unwrap_or(true),
        m.evict_blocks_on_close.unwrap_or(false),
        o.in_memory,
    )
}

fn tdescriptor(desc: &TableDescriptor, state: &TableState) -> TTableDescriptor {
    let columns = desc
        .families
        .iter()
        .map(|f| {
            let o = state.families.get(&f.name).cloned().unwrap_or_default();
            tfamily(&f.name, f.max_versions, &o)
        })
        .collect::<Vec<_>>();
    let mut attributes: BTreeMap<Vec<u8>, Vec<u8>> = [
        (b"IS_META".to_vec(), b"false".to_vec()),
        (b"hbase.store.file-tracker.impl".to_vec(), b"DEFAULT".to_vec()),
    ]
    .into_iter()
    .collect();
    attributes.extend(state.attributes.clone());
    TTableDescriptor::new(tname(&desc.name), columns, attributes, TDurability(state.durability))
}

/// A cell check as HBase's `HRegion.checkAndMutate` makes it: an empty expected value
/// matches a missing or empty cell, and the comparison is the expected value against the
/// cell's (`LESS` holds when the expected value is the smaller).
fn matches(found: Option<&Cell>, op: TCompareOp, value: &[u8]) -> R<bool> {
    let not_equal = op == TCompareOp::NOT_EQUAL;
    if value.is_empty() {
        return Ok(match found {
            None => !not_equal,
            Some(c) => c.value.is_empty() != not_equal,
        });
    }
    let Some(cell) = found else {
        return Ok(false);
    };
    let order = value.cmp(&cell.value);
    Ok(match op {
        TCompareOp::LESS => order.is_lt(),
        TCompareOp::LESS_OR_EQUAL => order.is_le(),
        TCompareOp::EQUAL => order.is_eq(),
        TCompareOp::NOT_EQUAL => order.is_ne(),
        TCompareOp::GREATER_OR_EQUAL => order.is_ge(),
        TCompareOp::GREATER => order.is_gt(),
        other => return Err(tio(format!("Unknown Compare op {other:?}"))),
    })
}

/// The cell a check-and-mutate call compares, and how.
struct Check {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    op: TCompareOp,
    value: Vec<u8>,
}

/// What a get does beyond the store's selection.
struct GetShape {
    filter: Option<Evaluator>,
    versions: u32,
    offset: usize,
    limit: Option<usize>,
}

fn parse_filter(text: Option<Vec<u8>>, bytes: Option<Vec<u8>>) -> R<Option<filter::Filter>> {
    if bytes.is_some() {
        return Err(tio(
            "filterBytes (a serialized Java filter) is not read by tallrow serve; send the filter as filterString",
        ));
    }
    match text {
        // ParseFilter's IllegalArgumentException escapes HBase's handler.
        Some(s) if !s.is_empty() => filter::parse(&s).map(Some).map_err(|_| internal_error()),
        _ => Ok(None),
    }
}

/// A `TGet` as HBase's `getFromThrift` builds it.
fn get_in(mut g: TGet) -> R<(Get, GetShape)> {
    if g.row.is_empty() {
        return Err(internal_error());
    }
    if let Some(ts) = g.timestamp
        && (ts < 0 || ts == LATEST)
    {
        return Err(internal_error());
    }
    if g.timestamp.is_none()
        && let Some(r) = &g.time_range
        && (r.min_stamp < 0 || r.max_stamp < r.min_stamp)
    {
        return Err(internal_error());
    }
    if let Some(v) = g.max_versions
        && v <= 0
    {
        return Err(tio("versions must be positive"));
    }
    let parsed = parse_filter(g.filter_string.take(), g.filter_bytes.take())?;
    let shape = GetShape {
        versions: g.max_versions.unwrap_or(1) as u32,
        filter: parsed.map(Evaluator::new),
        offset: g.store_offset.unwrap_or(0).max(0) as usize,
        // The region server adds a cell before it checks the limit: 0 keeps one.
        limit: g.store_limit.filter(|&l| l >= 0).map(|l| (l as usize).max(1)),
    };
    let mut get = t2::get_of(g).map_err(tio)?;
    if shape.filter.is_some() {
        // The filter sees every version; it returns the asked number per column.
        get.select.max_versions = u32::MAX;
    }
    Ok((get, shape))
}

/// `storeOffset` and `storeLimit`: cells skipped and kept per family of a row.
fn per_family(cells: &mut Vec<Cell>, offset: usize, limit: Option<usize>) {
    if offset == 0 && limit.is_none() {
        return;
    }
    let mut family = None::<String>;
    let mut seen = 0usize;
    cells.retain(|c| {
        if family.as_deref() != Some(c.family.as_str()) {
            family = Some(c.family.clone());
            seen = 0;
        }
        seen += 1;
        seen > offset && limit.is_none_or(|l| seen - offset <= l)
    });
}

fn empty_result() -> TResult {
    TResult::new(None, Vec::new(), false, false)
}

impl Thrift2 {
    fn state(&self) -> &State {
        &self.0.state
    }

    /// The rows of `gets`, shaped; `None` where nothing is left.
    fn read(&self, table: &[u8], tgets: Vec<TGet>) -> R<Vec<Option<Row>>> {
        Tables::table_name(table).map_err(two)?;
        let (gets, mut shapes): (Vec<Get>, Vec<GetShape>) = tgets
            .into_iter()
            .map(get_in)
            .collect::<R<Vec<_>>>()?
            .into_iter()
            .unzip();
        let rows = two_r(self.state().read(table, gets))?;
        Ok(rows
            .into_iter()
            .zip(&mut shapes)
            .map(|(row, shape)| {
                let mut row = row?;
                if let Some(f) = &mut shape.filter {
                    row = match f.row(row, shape.versions, false) {
                        Verdict::Keep(r) => r,
                        Verdict::Drop | Verdict::Stop => return None,
                    };
                }
                per_family(&mut row.cells, shape.offset, shape.limit);
                (!row.cells.is_empty()).then_some(row)
            })
            .collect())
    }

    fn results(&self, table: &[u8], tgets: Vec<TGet>) -> R<Vec<TResult>> {
        let existence_only: Vec<bool> = tgets.iter().map(|g| g.existence_only.unwrap_or(false)).collect();
        let rows = self.read(table, tgets)?;
        Ok(rows
            .into_iter()
            .zip(existence_only)
            .map(|(row, existence)| match row {
                Some(row) if !existence => t2::tresult(row),
                _ => empty_result(),
            })
            .collect())
    }

    /// A `TPut` as a row, as HBase's `putFromThrift` and `Table.put` take it.
    fn put_row(p: TPut) -> R<RowMutation> {
        if p.row.is_empty() || p.column_values.is_empty() || p.timestamp.is_some_and(|t| t < 0) {
            return Err(internal_error());
        }
        let (row, puts) = t2::puts_of(p).map_err(tio)?;
        Ok(RowMutation::new(row, puts.into_iter().map(now_if_latest).collect()))
    }

    /// A `TDelete` as a row, as HBase's `deleteFromThrift` builds it.
    fn delete_row(d: TDelete) -> R<RowMutation> {
        if d.row.is_empty() {
            return Err(internal_error());
        }
        // HBase's deleteFromThrift lets this IllegalArgumentException escape.
        if d.delete_type == Some(TDeleteType::DELETE_FAMILY_VERSION)
            && d.columns.iter().flatten().any(|c| c.timestamp.is_none())
        {
            return Err(internal_error());
        }
        let (row, deletes) = t2::deletes_of(d).map_err(tio)?;
        Ok(RowMutation::new(row, deletes.into_iter().map(now_if_latest).collect()))
    }

    /// Writes rows as HBase's `Table.put(List)` and `delete(List)` do: each row on its own,
    /// so a bad row (a family the table lacks) fails the call without keeping the others out.
    /// With `one_row`, the rows are one `RowMutations`' mutations, written all or none.
    fn write(&self, table: &[u8], rows: Vec<RowMutation>, one_row: bool) -> R<()> {
        let desc = two_r(self.state().tables.writable_table(table))?;
        let mut refused = None;
        let mut good = Vec::with_capacity(rows.len());
        if one_row {
            match store::validate_mutations(&desc, &rows) {
                Ok(()) => good = rows,
                Err(e) => refused = Some(e),
            }
        } else {
            for row in rows {
                match store::validate_mutations(&desc, std::slice::from_ref(&row)) {
                    Ok(()) => good.push(row),
                    Err(e) => {
                        refused.get_or_insert(e);
                    }
                }
            }
        }
        if good.iter().any(|r| names_latest(&r.mutations)) {
            // The newest version is looked up, so this connection's deferred writes go first.
            two_r(self.0.commit())?;
            two_r(self.state().apply_resolving(&desc, good, one_row))?;
        } else if one_row && let Some(first) = good.first() {
            let row = first.row.clone();
            let merged = RowMutation::new(row, good.into_iter().flat_map(|g| g.mutations).collect());
            two_r(self.0.write_rows(&desc, vec![merged]))?;
        } else if !good.is_empty() {
            two_r(self.0.write_rows(&desc, good))?;
        }
        match refused {
            Some(e) => Err(two(store_error(e))),
            None => Ok(()),
        }
    }

    /// A row's mutations in order, each on `row`, as HBase's `RowMutations` takes them: one
    /// group per `TMutation`.
    fn row_mutations(row: &[u8], mutations: Vec<TMutation>) -> R<Vec<Vec<StoreMutation>>> {
        let mut out = Vec::new();
        for m in mutations {
            let rm = match m {
                TMutation::Put(p) => Self::put_row(p)?,
                TMutation::DeleteSingle(d) => Self::delete_row(d)?,
            };
            if rm.row != row {
                return Err(tio(format!(
                    "org.apache.hadoop.hbase.client.WrongRowIOException: The row in {} doesn't match the original one {}",
                    String::from_utf8_lossy(&rm.row),
                    String::from_utf8_lossy(row)
                )));
            }
            out.push(rm.mutations);
        }
        Ok(out)
    }

    /// Checks one cell of `row` and applies `groups` (HBase mutations) when the check holds,
    /// atomically.
    fn check_and_mutate(&self, table: &[u8], row: &[u8], check: Check, groups: Vec<Vec<StoreMutation>>) -> R<bool> {
        Tables::table_name(table).map_err(two)?;
        let Check {
            family,
            qualifier,
            op,
            value,
        } = check;
        let family = utf8(family, "column family")?;
        let columns = [(family, qualifier)];
        two_r(self.state().read_modify_write_groups(table, row, &columns, |found| {
            if !matches(found[0].as_ref(), op, &value)? {
                return Ok((Vec::new(), false));
            }
            // A put without a timestamp is not eclipsed by the cell it checked.
            let at = now_millis().max(found[0].as_ref().map_or(0, |c| c.timestamp));
            let stamp = |m| match m {
                StoreMutation::Put {
                    family,
                    qualifier,
                    timestamp: None,
                    value,
                } => StoreMutation::Put {
                    family,
                    qualifier,
                    timestamp: Some(at),
                    value,
                },
                m => m,
            };
            let groups = groups.into_iter().map(|g| g.into_iter().map(stamp).collect()).collect();
            Ok((groups, true))
        }))
    }

    /// checkAndPut and checkAndDelete: one put or delete, which must be on the checked row.
    fn check_and_apply(&self, table: &[u8], row: &[u8], check: Check, action: RowMutation) -> R<bool> {
        if action.row != row {
            return Err(tio(format!("{DO_NOT_RETRY}: Action's getRow must match")));
        }
        self.check_and_mutate(table, row, check, vec![action.mutations])
    }

    /// A scan as HBase's `scanFromThrift` builds it, with what the scanner does beyond it.
    fn scan_in(&self, table: &[u8], mut s: TScan2) -> R<(Scan, ScanOptions, bool)> {
        let (desc, _) = two_r(self.state().tables.data_table(table))?;
        let versions = match s.max_versions {
            Some(v) if v <= 0 => return Err(tio("versions must be positive")),
            Some(v) => v as u32,
            None => 1,
        };
        let columns = s
            .columns
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|c| Ok((utf8(c.family, "column family")?, c.qualifier)))
            .collect::<R<Vec<_>>>()?;
        let global = match s.time_range.take() {
            Some(r) if r.min_stamp < 0 || r.max_stamp < r.min_stamp => return Err(internal_error()),
            r => r.map(|r| (r.min_stamp, r.max_stamp)),
        };
        let parsed = parse_filter(s.filter_string.take(), s.filter_bytes.take())?;
        let row_filter = parsed.as_ref().is_some_and(filter::Filter::has_filter_row);
        let mut family_ranges = HashMap::new();
        if let Some(map) = s.col_fam_time_range_map.take().filter(|m| !m.is_empty()) {
            for (family, r) in map {
                family_ranges.insert(utf8(family, "column family")?, (r.min_stamp, r.max_stamp));
            }
            // Column family time ranges take precedence over the scan's.
            for f in &desc.families {
                family_ranges
                    .entry(f.name.clone())
                    .or_insert(global.unwrap_or((0, LATEST)));
            }
        }
        let all_versions = parsed.is_some() || !family_ranges.is_empty();
        let select = Selection {
            columns: crate::convert::added_columns(columns),
            max_versions: if all_versions { u32::MAX } else { versions },
            time_range: if family_ranges.is_empty() { global } else { None },
            ..Selection::default()
        };
        let batch = s.batch_size.filter(|&b| b > 0).map(|b| b as usize);
        let scan = get_scan(Scan {
            start: s.start_row.unwrap_or_default(),
            stop: s.stop_row.unwrap_or_default(),
            reversed: s.reversed.unwrap_or(false),
            select,
            ..Scan::default()
        });
        let how = ScanOptions {
            filter: parsed.map(Evaluator::new),
            batch,
            sorted: false,
            versions,
            family_ranges,
            limit: match (s.limit, s.caching) {
                (Some(l), _) if l > 0 => Some(l as usize),
                // HBase's client closes a scan once its remaining limit is 0, which an
                // explicit 0 already is after the first batch: `caching` rows.
                (Some(0), Some(c)) if c > 0 => Some(c as usize),
                _ => None,
            },
        };
        Ok((scan, how, batch.is_some() && row_filter))
    }

    fn open(&self, table: &[u8], tscan: TScan2) -> R<i32> {
        Tables::table_name(table).map_err(two)?;
        let (scan, how, incompatible) = self.scan_in(table, tscan)?;
        let id = two_r(self.state().open_scanner(self.0.conn, table, scan, how))?;
        if incompatible {
            // The region server refuses such a scan when it reaches it, as in Thrift1.
            two_r(self.state().scanner(self.0.conn, id))?
                .lock()
                .expect("lock")
                .failure = Some(
                "org.apache.hadoop.hbase.filter.IncompatibleFilterException: Cannot set batch on a scan using a filter that returns true for filter.hasFilterRow",
            );
        }
        Ok(id)
    }

    fn next(&self, id: i32, n: i32) -> R<Vec<TResult>> {
        two_r(self.state().next_rows(self.0.conn, id, n, |row, partial, _| {
            let mut r = t2::tresult(row);
            r.partial = Some(partial);
            r
        }))
    }

    fn close(&self, id: i32) {
        self.state().scanners.map.lock().expect("lock").remove(id);
    }

    /// A table's regions from its split keys, as HBase's region locator reports them.
    fn locations(&self, desc: &TableDescriptor) -> Vec<THRegionLocation> {
        let t = &self.state().tables;
        region_bounds(desc)
            .map(|(start, end)| {
                THRegionLocation::new(
                    TServerName::new(t.host.clone(), t.port, t.started),
                    THRegionInfo::new(
                        0,
                        desc.name.as_bytes().to_vec(),
                        start.to_vec(),
                        end.to_vec(),
                        false,
                        false,
                        0,
                    ),
                )
            })
            .collect()
    }

    /// Tables by namespace and pattern, in name order.
    fn tables(&self, namespace: Option<&str>, regex: Option<&str>) -> R<Vec<(TableDescriptor, TableState)>> {
        let pattern = match regex {
            // Java's Pattern: the whole name must match.
            Some(r) => Some(regex_lite::Regex::new(&format!("^(?:{r})$")).map_err(|_| internal_error())?),
            None => None,
        };
        let mut out = Vec::new();
        for t in two_r(self.state().store.list_tables().map_err(store_error))? {
            if t.name.starts_with("hbase:")
                || namespace.is_some_and(|ns| namespace_of(&t.name) != ns)
                || pattern.as_ref().is_some_and(|p| !p.is_match(&t.name))
            {
                continue;
            }
            if let Ok(found) = self.state().tables.lookup(t.name.as_bytes()) {
                out.push(found);
            }
        }
        out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        Ok(out)
    }

    fn namespace_exists(&self, ns: &str) -> bool {
        matches!(ns, "default" | "hbase") || self.state().tables.namespaces.read().expect("lock").contains_key(ns)
    }

    fn save_namespace(&self, name: &str, config: Option<&BTreeMap<String, String>>) -> R<()> {
        let key = [NAMESPACE_PREFIX, name.as_bytes()].concat();
        let mutation = match config {
            Some(c) => StoreMutation::put_now(
                META_FAMILY,
                META_QUALIFIER,
                serde_json::to_vec(c).expect("configuration serializes"),
            ),
            None => StoreMutation::DeleteRow { timestamp: None },
        };
        two_r(
            self.state()
                .store
                .mutate(META_TABLE, &[RowMutation::new(key, vec![mutation])])
                .map_err(store_error),
        )?;
        let mut namespaces = self.state().tables.namespaces.write().expect("lock");
        match config {
            Some(c) => namespaces.insert(name.to_string(), c.clone()),
            None => namespaces.remove(name),
        };
        Ok(())
    }

    fn namespace_not_found(ns: &str) -> thrift::Error {
        tio(format!("org.apache.hadoop.hbase.NamespaceNotFoundException: {ns}"))
    }

    fn cannot_change_families() -> thrift::Error {
        tio(format!(
            "{DO_NOT_RETRY}: tallrow serve keeps a table's families as created; drop and create the table to change them"
        ))
    }
}

impl THBaseServiceSyncHandler for Thrift2 {
    fn handle_exists(&self, table: Vec<u8>, tget: TGet) -> R<bool> {
        Ok(self.read(&table, vec![tget])?.pop().flatten().is_some())
    }

    fn handle_exists_all(&self, table: Vec<u8>, tgets: Vec<TGet>) -> R<Vec<bool>> {
        Ok(self.read(&table, tgets)?.into_iter().map(|r| r.is_some()).collect())
    }

    fn handle_get(&self, table: Vec<u8>, tget: TGet) -> R<TResult> {
        Ok(self.results(&table, vec![tget])?.pop().unwrap_or_else(empty_result))
    }

    fn handle_get_multiple(&self, table: Vec<u8>, tgets: Vec<TGet>) -> R<Vec<TResult>> {
        self.results(&table, tgets)
    }

    fn handle_put(&self, table: Vec<u8>, tput: TPut) -> R<()> {
        self.handle_put_multiple(table, vec![tput])
    }

    fn handle_check_and_put(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        tput: TPut,
    ) -> R<bool> {
        let check = Check {
            family,
            qualifier,
            op: TCompareOp::EQUAL,
            value,
        };
        self.check_and_apply(&table, &row, check, Self::put_row(tput)?)
    }

    fn handle_put_multiple(&self, table: Vec<u8>, tputs: Vec<TPut>) -> R<()> {
        Tables::table_name(&table).map_err(two)?;
        let rows = tputs.into_iter().map(Self::put_row).collect::<R<Vec<_>>>()?;
        self.write(&table, rows, false)
    }

    fn handle_delete_single(&self, table: Vec<u8>, tdelete: TDelete) -> R<()> {
        self.handle_delete_multiple(table, vec![tdelete]).map(|_| ())
    }

    fn handle_delete_multiple(&self, table: Vec<u8>, tdeletes: Vec<TDelete>) -> R<Vec<TDelete>> {
        Tables::table_name(&table).map_err(two)?;
        let rows = tdeletes.into_iter().map(Self::delete_row).collect::<R<Vec<_>>>()?;
        self.write(&table, rows, false)?;
        // HBase always answers an empty list, for compatibility.
        Ok(Vec::new())
    }

    fn handle_check_and_delete(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        tdelete: TDelete,
    ) -> R<bool> {
        let check = Check {
            family,
            qualifier,
            op: TCompareOp::EQUAL,
            value,
        };
        self.check_and_apply(&table, &row, check, Self::delete_row(tdelete)?)
    }

    fn handle_increment(&self, table: Vec<u8>, tincrement: TIncrement) -> R<TResult> {
        Tables::table_name(&table).map_err(two)?;
        if tincrement.row.is_empty() || tincrement.columns.is_empty() {
            return Err(internal_error());
        }
        let row = tincrement.row;
        // A column named twice is incremented twice from the same old value, the later
        // cell winning, as in HBase.
        let mut columns: Vec<(String, Vec<u8>)> = Vec::new();
        let mut amounts: Vec<i64> = Vec::new();
        for c in tincrement.columns {
            columns.push((utf8(c.family, "column family")?, c.qualifier));
            amounts.push(c.amount.unwrap_or(1));
        }
        let cells = self.rewrite(&table, &row, &columns, |i, old| {
            let current = match old {
                None => 0,
                Some(c) => i64::from_be_bytes(c.value.as_slice().try_into().map_err(|_| {
                    io_error(format!(
                        "{DO_NOT_RETRY}: Field is not a long, it's {} bytes wide",
                        c.value.len()
                    ))
                })?),
            };
            Ok(current.wrapping_add(amounts[i]).to_be_bytes().to_vec())
        })?;
        Ok(self.mutation_result(row, cells, tincrement.return_results))
    }

    fn handle_append(&self, table: Vec<u8>, tappend: TAppend) -> R<TResult> {
        Tables::table_name(&table).map_err(two)?;
        if tappend.row.is_empty() || tappend.columns.is_empty() {
            return Err(internal_error());
        }
        let row = tappend.row;
        let mut columns: Vec<(String, Vec<u8>)> = Vec::new();
        let mut added: Vec<Vec<u8>> = Vec::new();
        for c in tappend.columns {
            columns.push((utf8(c.family, "column family")?, c.qualifier));
            added.push(c.value);
        }
        let cells = self.rewrite(&table, &row, &columns, |i, old| {
            let mut value = old.map(|c| c.value.clone()).unwrap_or_default();
            value.extend_from_slice(&added[i]);
            Ok(value)
        })?;
        Ok(self.mutation_result(row, cells, tappend.return_results))
    }

    fn handle_open_scanner(&self, table: Vec<u8>, tscan: TScan2) -> R<i32> {
        self.open(&table, tscan)
    }

    fn handle_get_scanner_rows(&self, scanner_id: i32, num_rows: i32) -> R<Vec<TResult>> {
        if self.state().scanner(self.0.conn, scanner_id).is_err() {
            return Err(thrift::Error::User(Box::new(TIllegalArgument::new(
                "Invalid scanner Id".to_string(),
            ))));
        }
        self.next(scanner_id, num_rows)
    }

    fn handle_close_scanner(&self, scanner_id: i32) -> R<()> {
        // HBase logs an unknown id and succeeds: the scanner may have expired.
        self.close(scanner_id);
        Ok(())
    }

    fn handle_mutate_row(&self, table: Vec<u8>, trow_mutations: TRowMutations) -> R<()> {
        Tables::table_name(&table).map_err(two)?;
        let row = trow_mutations.row;
        let groups = Self::row_mutations(&row, trow_mutations.mutations)?;
        if groups.iter().all(Vec::is_empty) {
            return Ok(());
        }
        let groups = groups.into_iter().map(|g| RowMutation::new(row.clone(), g)).collect();
        self.write(&table, groups, true)
    }

    fn handle_get_scanner_results(&self, table: Vec<u8>, tscan: TScan2, num_rows: i32) -> R<Vec<TResult>> {
        let id = self.open(&table, tscan)?;
        let rows = self.next(id, num_rows);
        self.close(id);
        rows
    }

    fn handle_get_region_location(&self, table: Vec<u8>, row: Vec<u8>, _reload: bool) -> R<THRegionLocation> {
        let (desc, _) = two_r(self.state().tables.lookup(&table))?;
        let mut locations = self.locations(&desc);
        let at = locations
            .iter()
            .position(|l| {
                let end = l.region_info.end_key.as_deref().unwrap_or_default();
                end.is_empty() || row.as_slice() < end
            })
            .unwrap_or(locations.len() - 1);
        Ok(locations.swap_remove(at))
    }

    fn handle_get_all_region_locations(&self, table: Vec<u8>) -> R<Vec<THRegionLocation>> {
        let (desc, _) = two_r(self.state().tables.lookup(&table))?;
        Ok(self.locations(&desc))
    }

    fn handle_check_and_mutate(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        compare_op: TCompareOp,
        value: Vec<u8>,
        row_mutations: TRowMutations,
    ) -> R<bool> {
        if row_mutations.row != row {
            return Err(tio(format!("{DO_NOT_RETRY}: Action's getRow must match")));
        }
        let mutations = Self::row_mutations(&row, row_mutations.mutations)?;
        let check = Check {
            family,
            qualifier,
            op: compare_op,
            value,
        };
        self.check_and_mutate(&table, &row, check, mutations)
    }

    fn handle_get_table_descriptor(&self, table: TTableName) -> R<TTableDescriptor> {
        let (desc, state) = two_r(self.state().tables.lookup(&name_of(&table)))?;
        Ok(tdescriptor(&desc, &state))
    }

    fn handle_get_table_descriptors(&self, tables: Vec<TTableName>) -> R<Vec<TTableDescriptor>> {
        let mut out = Vec::new();
        for t in &tables {
            let name = name_of(t);
            Tables::table_name(&name).map_err(two)?;
            if let Ok((desc, state)) = self.state().tables.lookup(&name) {
                out.push(tdescriptor(&desc, &state));
            }
        }
        Ok(out)
    }

    fn handle_table_exists(&self, table_name: TTableName) -> R<bool> {
        let name = name_of(&table_name);
        let canonical = Tables::table_name(&name).map_err(two)?;
        Ok(!canonical.starts_with("hbase:") && self.state().tables.lookup(&name).is_ok())
    }

    fn handle_get_table_descriptors_by_pattern(
        &self,
        regex: String,
        _include_sys_tables: bool,
    ) -> R<Vec<TTableDescriptor>> {
        let found = self.tables(None, Some(&regex))?;
        Ok(found.iter().map(|(d, s)| tdescriptor(d, s)).collect())
    }

    fn handle_get_table_descriptors_by_namespace(&self, name: String) -> R<Vec<TTableDescriptor>> {
        if !self.namespace_exists(&name) {
            return Err(Self::namespace_not_found(&name));
        }
        let found = self.tables(Some(&name), None)?;
        Ok(found.iter().map(|(d, s)| tdescriptor(d, s)).collect())
    }

    fn handle_get_table_names_by_pattern(&self, regex: String, _include_sys_tables: bool) -> R<Vec<TTableName>> {
        Ok(self
            .tables(None, Some(&regex))?
            .iter()
            .map(|(d, _)| tname(&d.name))
            .collect())
    }

    fn handle_get_table_names_by_namespace(&self, name: String) -> R<Vec<TTableName>> {
        if !self.namespace_exists(&name) {
            return Err(Self::namespace_not_found(&name));
        }
        Ok(self
            .tables(Some(&name), None)?
            .iter()
            .map(|(d, _)| tname(&d.name))
            .collect())
    }

    fn handle_create_table(&self, desc: TTableDescriptor, split_keys: Vec<Vec<u8>>) -> R<()> {
        let name = Tables::table_name(&name_of(&desc.table_name)).map_err(two)?;
        let families = desc
            .columns
            .unwrap_or_default()
            .into_iter()
            .map(family_in)
            .collect::<R<Vec<_>>>()?;
        let mut splits = split_keys;
        splits.sort();
        // HBase's Admin refuses these with IllegalArgumentException.
        if splits.iter().any(Vec::is_empty) || splits.windows(2).any(|w| w[0] == w[1]) {
            return Err(internal_error());
        }
        sanity_check(&families)?;
        let ns = namespace_of(&name);
        if ns == "hbase" {
            return Err(tio(format!(
                "{DO_NOT_RETRY}: table {name} is in the reserved namespace hbase"
            )));
        }
        if !self.namespace_exists(ns) {
            return Err(Self::namespace_not_found(ns));
        }
        let tables = &self.state().tables;
        let _ddl = tables.ddl.lock().expect("lock");
        if self.state().store.describe_table(&name).is_ok() {
            return Err(tio(format!("org.apache.hadoop.hbase.TableExistsException: {name}")));
        }
        let mut options = BTreeMap::new();
        let mut store_families = Vec::new();
        for (family, versions, o) in families {
            store_families.push(store::FamilyDescriptor {
                name: family.clone(),
                max_versions: versions,
                storage: o.store_storage(),
            });
            // As TableDescriptorBuilder.setColumnFamily: a family given twice is replaced.
            options.insert(family, o);
        }
        store_families.sort_by(|a, b| a.name.cmp(&b.name));
        store_families.dedup_by(|a, b| {
            if a.name == b.name {
                b.max_versions = a.max_versions;
                true
            } else {
                false
            }
        });
        // The table's attributes are the gateway's to keep (its state below), as HBase's
        // master keeps them; region replicas are the store's to make, or to refuse.
        let replication = TableDescriptor::replication_in(
            desc.attributes
                .iter()
                .flatten()
                .filter_map(|(k, v)| Some((std::str::from_utf8(k).ok()?, std::str::from_utf8(v).ok()?))),
        );
        let table = TableDescriptor {
            name,
            families: store_families,
            splits,
            attributes: Vec::new(),
            region_replication: replication,
        };
        two_r(self.state().store.create_table(&table).map_err(store_error))?;
        let state = TableState {
            enabled: true,
            created: now_millis(),
            families: options,
            attributes: desc.attributes.unwrap_or_default(),
            durability: desc.durability.map_or(0, |d| d.0),
        };
        two_r(tables.save_state(&table.name, Some(&state)))
    }

    fn handle_delete_table(&self, table_name: TTableName) -> R<()> {
        two_r(HbaseSyncHandler::handle_delete_table(&self.0, name_of(&table_name)))
    }

    fn handle_truncate_table(&self, table_name: TTableName, preserve_splits: bool) -> R<()> {
        let tables = &self.state().tables;
        let _ddl = tables.ddl.lock().expect("lock");
        let (desc, mut state) = two_r(tables.lookup(&name_of(&table_name)))?;
        if state.enabled {
            return Err(tio(format!(
                "org.apache.hadoop.hbase.TableNotDisabledException: Not DISABLED; tableName={}, state=ENABLED",
                desc.name
            )));
        }
        let mut desc = desc;
        if !preserve_splits {
            desc.splits.clear();
        }
        two_r(self.state().store.delete_table(&desc.name).map_err(store_error))?;
        two_r(self.state().store.create_table(&desc).map_err(store_error))?;
        state.enabled = true;
        state.created = now_millis();
        two_r(tables.save_state(&desc.name, Some(&state)))
    }

    fn handle_enable_table(&self, table_name: TTableName) -> R<()> {
        two_r(self.state().tables.set_enabled(&name_of(&table_name), true))
    }

    fn handle_disable_table(&self, table_name: TTableName) -> R<()> {
        two_r(self.state().tables.set_enabled(&name_of(&table_name), false))
    }

    fn handle_is_table_enabled(&self, table_name: TTableName) -> R<bool> {
        Ok(two_r(self.state().tables.lookup(&name_of(&table_name)))?.1.enabled)
    }

    fn handle_is_table_disabled(&self, table_name: TTableName) -> R<bool> {
        Ok(!two_r(self.state().tables.lookup(&name_of(&table_name)))?.1.enabled)
    }

    fn handle_is_table_available(&self, table_name: TTableName) -> R<bool> {
        let name = name_of(&table_name);
        Tables::table_name(&name).map_err(two)?;
        Ok(self.state().tables.lookup(&name).is_ok_and(|(_, s)| s.enabled))
    }

    fn handle_is_table_available_with_split(&self, table_name: TTableName, _split_keys: Vec<Vec<u8>>) -> R<bool> {
        self.handle_is_table_available(table_name)
    }

    fn handle_add_column_family(&self, _table_name: TTableName, _column: TColumnFamilyDescriptor) -> R<()> {
        Err(Self::cannot_change_families())
    }

    fn handle_delete_column_family(&self, _table_name: TTableName, _column: Vec<u8>) -> R<()> {
        Err(Self::cannot_change_families())
    }

    fn handle_modify_column_family(&self, _table_name: TTableName, _column: TColumnFamilyDescriptor) -> R<()> {
        Err(Self::cannot_change_families())
    }

    fn handle_modify_table(&self, _desc: TTableDescriptor) -> R<()> {
        Err(Self::cannot_change_families())
    }

    fn handle_create_namespace(&self, namespace_desc: TNamespaceDescriptor) -> R<()> {
        let name = namespace_desc.name;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(internal_error());
        }
        let _ddl = self.state().tables.ddl.lock().expect("lock");
        if self.namespace_exists(&name) {
            return Err(tio(format!("org.apache.hadoop.hbase.NamespaceExistException: {name}")));
        }
        self.save_namespace(&name, Some(&namespace_desc.configuration.unwrap_or_default()))
    }

    fn handle_modify_namespace(&self, namespace_desc: TNamespaceDescriptor) -> R<()> {
        let name = namespace_desc.name;
        let _ddl = self.state().tables.ddl.lock().expect("lock");
        if matches!(name.as_str(), "default" | "hbase") || !self.namespace_exists(&name) {
            return Err(Self::namespace_not_found(&name));
        }
        self.save_namespace(&name, Some(&namespace_desc.configuration.unwrap_or_default()))
    }

    fn handle_delete_namespace(&self, name: String) -> R<()> {
        let _ddl = self.state().tables.ddl.lock().expect("lock");
        if matches!(name.as_str(), "default" | "hbase") {
            return Err(tio(format!(
                "org.apache.hadoop.hbase.constraint.ConstraintException: Reserved namespace {name} cannot be removed."
            )));
        }
        if !self.namespace_exists(&name) {
            return Err(Self::namespace_not_found(&name));
        }
        let count = self.tables(Some(&name), None)?.len();
        if count > 0 {
            return Err(tio(format!(
                "org.apache.hadoop.hbase.constraint.ConstraintException: Only empty namespaces can be removed. Namespace {name} has {count} tables"
            )));
        }
        self.save_namespace(&name, None)
    }

    fn handle_get_namespace_descriptor(&self, name: String) -> R<TNamespaceDescriptor> {
        if matches!(name.as_str(), "default" | "hbase") {
            return Ok(TNamespaceDescriptor::new(name, None));
        }
        let namespaces = self.state().tables.namespaces.read().expect("lock");
        match namespaces.get(&name) {
            Some(c) => Ok(TNamespaceDescriptor::new(
                name.clone(),
                (!c.is_empty()).then(|| c.clone()),
            )),
            None => Err(Self::namespace_not_found(&name)),
        }
    }

    fn handle_list_namespace_descriptors(&self) -> R<Vec<TNamespaceDescriptor>> {
        self.handle_list_namespaces()?
            .into_iter()
            .map(|n| self.handle_get_namespace_descriptor(n))
            .collect()
    }

    fn handle_list_namespaces(&self) -> R<Vec<String>> {
        let mut names: BTreeSet<String> = ["default", "hbase"].map(String::from).into();
        names.extend(self.state().tables.namespaces.read().expect("lock").keys().cloned());
        Ok(names.into_iter().collect())
    }

    fn handle_get_thrift_server_type(&self) -> R<TServerType2> {
        Ok(TServerType2::TWO)
    }

    fn handle_get_slow_log_responses(
        &self,
        _server_names: BTreeSet<crate::idl::thrift2::TServerName>,
        _log_query_filter: TLogQueryFilter,
    ) -> R<Vec<TOnlineLogRecord>> {
        // The server keeps no slow log, as HBase with its slow log buffer off.
        Ok(Vec::new())
    }

    fn handle_clear_slow_log_responses(
        &self,
        server_names: BTreeSet<crate::idl::thrift2::TServerName>,
    ) -> R<Vec<bool>> {
        Ok(vec![true; server_names.len()])
    }

    fn handle_get_cluster_id(&self) -> R<String> {
        HbaseSyncHandler::handle_get_cluster_id(&self.0)
    }
}

impl Thrift2 {
    /// Rewrites `columns` of `row` atomically, each from its newest cell (`value_of` gets
    /// the column's index), stamped `max(now, previous + 1 ms)` as HBase stamps increments
    /// and appends, `now` waiting for the clock as `delta_now` says; the new cells.
    fn rewrite(
        &self,
        table: &[u8],
        row: &[u8],
        columns: &[(String, Vec<u8>)],
        value_of: impl Fn(usize, Option<&Cell>) -> R<Vec<u8>>,
    ) -> R<Vec<Cell>> {
        two_r(self.state().read_modify_write(table, row, columns, |found| {
            let now = super::writes::delta_now(found.iter().flatten().map(|c| c.timestamp));
            let mut puts = Vec::new();
            let mut cells = Vec::new();
            for (i, ((family, qualifier), old)) in columns.iter().zip(found).enumerate() {
                let value = value_of(i, old.as_ref())?;
                let ts = now.max(old.as_ref().map_or(0, |c| c.timestamp + 1));
                puts.push(StoreMutation::put(family, qualifier.clone(), ts, value.clone()));
                cells.push(Cell {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: ts,
                    value,
                });
            }
            Ok((puts, cells))
        }))
    }

    /// An increment's or append's answer: the new cells, or an empty result when the
    /// caller asked for none.
    fn mutation_result(&self, row: Vec<u8>, mut cells: Vec<Cell>, return_results: Option<bool>) -> TResult {
        if return_results == Some(false) {
            return empty_result();
        }
        store::sort_cells(&mut cells);
        t2::tresult(Row { key: row, cells })
    }
}
