//! The embedded backend: a persistent store in a data directory, on the fjall LSM engine.
//!
//! Each table is one fjall keyspace whose keys are cell coordinates (the `cellkey` module) and whose
//! values are cell values. Table descriptors live in a meta keyspace. Every batch is one
//! atomic fjall write batch, flushed to the operating system before `mutate` returns, so an
//! acknowledged write survives the process being killed (`sync` also survives power loss).
//!
//! Deletes behave as HBase's do by default: they remove the cells they cover and leave a
//! marker (in the markers keyspace, the `markers` module) that hides any later put at or
//! below its timestamp in its scope (a one-version delete: at exactly its timestamp). A read counts versions among the cells inside its time
//! range, at most the family's `VERSIONS`, as HBase reads before a flush; compactions drop
//! the versions past `VERSIONS` (the `prune` module), as HBase's flushes and compactions do.
//! Empty tables can be bulk-loaded (the `bulk` module).

mod bulk;
use crate::store::cellkey;
mod markers;
mod prune;

pub use bulk::MEMORY as BULK_MEMORY;

use super::{
    BulkLoad, Cell, Error, Get, Mutation, Result, Row, RowMutation, Scan, Selection, Store, TableDescriptor,
    canonical_table_name, now_millis, validate_mutations, validate_row_key,
};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

const META: &str = "tallrow_meta";

/// Memtable size of each keyspace (fjall's default is 64 MiB). A memtable's real heap is
/// about three times the bytes it counts for small cells, and each table has one filling
/// plus those sealed and waiting for a flush: at 64 MiB a 24M-row load peaked at 1.0 GB
/// (2 threads) and 1.1 GB (16); at 16 MiB at 0.58 and 0.91 GB, at the same rate. Set when a
/// keyspace is created; existing ones keep theirs.
const MEMTABLE_BYTES: u64 = 16 << 20;
/// Block cache over all tables (fjall's default is 32 MiB).
const CACHE_BYTES: u64 = 128 << 20;

/// The journals kept before the memtables holding the oldest one are flushed (fjall's
/// default is 512 MiB). Every journal not yet flushed is replayed when the store opens: after
/// a load killed halfway (capacity.toml, 20,000 users) that was 450 MB and 5 s of a resume's
/// 13; small tables' memtables, filling slowly, held them longest.
const JOURNAL_BYTES: u64 = 128 << 20;
const TABLE_PREFIX: &[u8] = b"table/";
const NEXT_ID: &[u8] = b"next_keyspace_id";

struct Table {
    desc: TableDescriptor,
    keyspace: Keyspace,
    keyspace_name: String,
    /// Whether any delete marker exists for this table: until one does, puts skip the
    /// marker lookups (a load into fresh tables never makes one).
    has_markers: AtomicBool,
}

impl Table {
    fn family_index(&self, family: &str) -> u8 {
        // Families were validated against the descriptor before any lookup.
        self.desc
            .families
            .iter()
            .position(|f| f.name == family)
            .expect("validated family") as u8
    }
}

/// The embedded store.
pub struct Embedded {
    db: Database,
    meta: Keyspace,
    markers: Keyspace,
    path: PathBuf,
    tables: RwLock<HashMap<String, Arc<Table>>>,
    ddl: Mutex<()>,
    persist: PersistMode,
    /// Each table keyspace's `VERSIONS` per family, for its compactions.
    versions: prune::Versions,
    marked_rows: markers::Rows,
}

/// A flush or compaction of fjall's as a start and an end event: a compaction that took every
/// table of its keyspace is major, as HBase names one that rewrites all of a store's files.
fn activity_events(a: &fjall::Activity, table: String) -> [crate::observe::events::Event; 2] {
    use crate::observe::events::{Event, Kind, Phase};
    let ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    };
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let (kind, detail) = match a.kind {
        fjall::ActivityKind::Flush { bytes } => (Kind::Flush, format!("{:.1} MiB", mib(bytes))),
        fjall::ActivityKind::Compaction {
            tables_in,
            tables_out,
            bytes_in,
            whole,
        } => (
            Kind::Compaction,
            format!(
                "{}, {tables_in} tables into {tables_out}, {:.1} MiB",
                if whole { "major" } else { "minor" },
                mib(bytes_in)
            ),
        ),
    };
    let event = |phase, at_ms, detail: String| Event {
        at_ms,
        kind,
        phase,
        table: table.clone(),
        region: String::new(),
        server: String::new(),
        detail,
        source: "store",
    };
    [
        event(Phase::Start, ms(a.started), String::new()),
        event(Phase::End, ms(a.ended), detail),
    ]
}

fn io(e: impl std::fmt::Display) -> Error {
    Error::Io(format!("embedded store: {e}"))
}

impl Embedded {
    /// Opens (creating if needed) the store in `path`; writes reach the OS before they are
    /// acknowledged.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, false)
    }

    /// Opens the store; with `sync`, every batch is also fsynced before it is acknowledged.
    pub fn open_with(path: &Path, sync: bool) -> Result<Self> {
        std::fs::create_dir_all(path).map_err(|e| io(format!("cannot create {}: {e}", path.display())))?;
        // Runs of a bulk load that never finished: none of it was acknowledged.
        let runs = path.join(bulk::DIR);
        if runs.exists() {
            std::fs::remove_dir_all(&runs).map_err(|e| io(format!("cannot remove {}: {e}", runs.display())))?;
        }
        let versions = prune::Versions::default();
        let assign = versions.clone();
        let db = Database::builder(path)
            .cache_size(CACHE_BYTES)
            .max_journaling_size(JOURNAL_BYTES)
            .with_compaction_filter_factories(Arc::new(move |keyspace: &str| {
                let f: Arc<dyn fjall::compaction::filter::Factory> = Arc::new(prune::Pruning {
                    keyspace: keyspace.to_string(),
                    versions: assign.clone(),
                });
                Some(f)
            }))
            .open()
            .map_err(|e| io(format!("cannot open {}: {e}", path.display())))?;
        let meta = db.keyspace(META, keyspace_options).map_err(io)?;
        let markers = db.keyspace(markers::KEYSPACE, keyspace_options).map_err(io)?;
        let marked_rows = markers::Rows::load(&markers).map_err(io)?;
        let mut tables = HashMap::new();
        for guard in meta.prefix(TABLE_PREFIX) {
            let (key, value) = guard.into_inner().map_err(io)?;
            let name = String::from_utf8_lossy(&key[TABLE_PREFIX.len()..]).into_owned();
            let (desc, keyspace_name) = decode_descriptor(&name, &value)?;
            versions.write().expect("lock").insert(
                keyspace_name.clone(),
                desc.families.iter().map(|f| f.max_versions).collect(),
            );
            let keyspace = db.keyspace(&keyspace_name, keyspace_options).map_err(io)?;
            let has_markers = markers::any(&markers, &keyspace_name).map_err(io)?;
            tables.insert(
                name,
                Arc::new(Table {
                    desc,
                    keyspace,
                    keyspace_name,
                    has_markers: AtomicBool::new(has_markers),
                }),
            );
        }
        Ok(Embedded {
            db,
            meta,
            markers,
            path: path.to_path_buf(),
            tables: RwLock::new(tables),
            ddl: Mutex::new(()),
            versions,
            marked_rows,
            persist: if sync {
                PersistMode::SyncData
            } else {
                PersistMode::Buffer
            },
        })
    }

    /// Bytes the memtables hold; right after opening, what replaying the journal put back
    /// into them (none after a finished load, which flushes: [`Store::flush`]).
    pub fn unflushed_bytes(&self) -> u64 {
        self.db.write_buffer_size()
    }

    /// Flushes a table's memtable and compacts all of it into one run.
    #[cfg(test)]
    fn compact(&self, table: &str) -> Result<()> {
        let t = self.table(table)?;
        t.keyspace.rotate_memtable_and_wait().map_err(io)?;
        t.keyspace.major_compact().map_err(io)
    }

    fn table(&self, name: &str) -> Result<Arc<Table>> {
        let name = canonical_table_name(name)?;
        self.tables
            .read()
            .expect("lock")
            .get(&name)
            .cloned()
            .ok_or(Error::TableNotFound(name))
    }

    /// Marks every key in `prefix` whose timestamp `covered` takes deleted, both the
    /// committed ones and those earlier in the same batch.
    fn delete_prefix(
        &self,
        t: &Table,
        pending: &mut BTreeMap<Vec<u8>, Option<Vec<u8>>>,
        prefix: &[u8],
        covered: impl Fn(i64) -> bool,
    ) -> Result<()> {
        for guard in t.keyspace.prefix(prefix) {
            let key = guard.key().map_err(io)?;
            if covered(cellkey::decode_ts(&key)) {
                pending.insert(key.to_vec(), None);
            }
        }
        for (key, value) in pending.range_mut(prefix.to_vec()..) {
            if !key.starts_with(prefix) {
                break;
            }
            if covered(cellkey::decode_ts(key)) {
                *value = None;
            }
        }
        Ok(())
    }
}

/// Selects the cells of one row from its raw `(key, value)` entries in key order.
/// Cells older than a family's TTL are skipped before versions are counted, as HBase's
/// `ScanQueryMatcher` skips them; `now` is the read's start.
fn select_row(
    t: &Table,
    row: Vec<u8>,
    entries: &[(fjall::UserKey, fjall::UserValue)],
    sel: &Selection,
    now: i64,
) -> Option<Row> {
    let mut cells = Vec::new();
    let row_len = entries.first().map_or(0, |(k, _)| cellkey::split_escaped(k, 0, None));
    // The encoded (family, qualifier) of the column being read; keys of one column differ
    // only in their timestamp, so the column is decoded once, not per version.
    let mut column: &[u8] = &[];
    let (mut family, mut qualifier) = (0u8, Vec::new());
    let (mut taken, mut wanted, mut kept, mut oldest) = (0usize, false, 0usize, i64::MIN);
    for (key, value) in entries {
        let this = &key[row_len..key.len() - 8];
        if this != column {
            column = this;
            family = key[row_len];
            qualifier.clear();
            cellkey::split_escaped(key, row_len + 1, Some(&mut qualifier));
            let fd = &t.desc.families[family as usize];
            wanted = sel.wants_column(&fd.name, &qualifier);
            // Versions are counted among the live cells inside the time range.
            kept = (fd.max_versions as usize).min(sel.max_versions as usize);
            oldest = fd.storage.oldest_unexpired(now).unwrap_or(i64::MIN);
            taken = 0;
        }
        if !wanted || taken >= kept {
            continue;
        }
        let ts = cellkey::decode_ts(key);
        if ts < oldest || !sel.wants_timestamp(ts) {
            continue;
        }
        cells.push(Cell {
            family: t.desc.families[family as usize].name.clone(),
            qualifier: qualifier.clone(),
            timestamp: ts,
            value: value.to_vec(),
        });
        taken += 1;
        if sel.cell_limit.is_some_and(|l| cells.len() >= l) {
            break;
        }
    }
    (!cells.is_empty()).then_some(Row { key: row, cells })
}

impl Store for Embedded {
    fn identity(&self) -> String {
        format!("embedded (fjall 3) at {}", self.path.display())
    }

    fn version(&self) -> String {
        concat!("tallrow ", env!("CARGO_PKG_VERSION"), " embedded store on fjall 3").to_string()
    }

    fn take_events(&self) -> Vec<crate::observe::events::Event> {
        let tables = self.tables.read().expect("lock");
        let named = |keyspace: &str| {
            tables
                .iter()
                .find(|(_, t)| t.keyspace_name == keyspace)
                .map(|(name, _)| name.clone())
                .unwrap_or_else(|| keyspace.to_string())
        };
        self.db
            .take_activity()
            .into_iter()
            .flat_map(|a| activity_events(&a, named(&a.keyspace)))
            .collect()
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        crate::store::one_copy(&desc, "embedded: keeps one copy of each row")?;
        let _ddl = self.ddl.lock().expect("lock");
        if self.tables.read().expect("lock").contains_key(&desc.name) {
            return Err(Error::TableExists(desc.name));
        }
        // A fresh keyspace per table generation: a dropped table's data never comes back.
        let id = match self.meta.get(NEXT_ID).map_err(io)? {
            Some(v) => u64::from_be_bytes(v.as_ref().try_into().map_err(|_| io("corrupt keyspace counter"))?),
            None => 0,
        };
        let keyspace_name = format!("t{id}");
        self.versions.write().expect("lock").insert(
            keyspace_name.clone(),
            desc.families.iter().map(|f| f.max_versions).collect(),
        );
        let keyspace = self.db.keyspace(&keyspace_name, keyspace_options).map_err(io)?;
        let mut batch = self.db.batch().durability(Some(self.persist));
        batch.insert(&self.meta, NEXT_ID, (id + 1).to_be_bytes().to_vec());
        batch.insert(
            &self.meta,
            table_key(&desc.name),
            encode_descriptor(&desc, &keyspace_name),
        );
        batch.commit().map_err(io)?;
        self.tables.write().expect("lock").insert(
            desc.name.clone(),
            Arc::new(Table {
                desc,
                keyspace,
                keyspace_name,
                has_markers: AtomicBool::new(false),
            }),
        );
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        let _ddl = self.ddl.lock().expect("lock");
        let t = self
            .tables
            .write()
            .expect("lock")
            .remove(&name)
            .ok_or_else(|| Error::TableNotFound(name.clone()))?;
        let mut batch = self.db.batch().durability(Some(self.persist));
        batch.remove(&self.meta, table_key(&name));
        for key in markers::keys_of(&self.markers, &t.keyspace_name) {
            batch.remove(&self.markers, key.map_err(io)?);
        }
        batch.commit().map_err(io)?;
        self.versions.write().expect("lock").remove(&t.keyspace_name);
        debug_assert!(!t.keyspace_name.is_empty());
        self.db.delete_keyspace(t.keyspace.clone()).map_err(io)
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        let mut tables: Vec<_> = self
            .tables
            .read()
            .expect("lock")
            .values()
            .map(|t| t.desc.clone())
            .collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(tables)
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        Ok(self.table(table)?.desc.clone())
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let t = self.table(table)?;
        validate_mutations(&t.desc, rows)?;
        let now = now_millis();
        // Keyed by cell so that a later mutation of the same cell in the batch wins, and a
        // delete sees the puts before it.
        let mut pending: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let mut marks = markers::Pending::new(
            &self.markers,
            &self.marked_rows,
            &t.keyspace_name,
            t.has_markers.load(Ordering::Acquire),
        );
        let mut key = Vec::new();
        for rm in rows {
            let row = cellkey::row_prefix(&rm.row);
            for m in &rm.mutations {
                let ts = m.timestamp().unwrap_or(now);
                match m {
                    Mutation::Put {
                        family,
                        qualifier,
                        value,
                        ..
                    } => {
                        let family = t.family_index(family);
                        if marks.hides(&row, family, qualifier, ts).map_err(io)? {
                            continue;
                        }
                        cellkey::column_prefix(&row, family, qualifier, &mut key);
                        key.extend_from_slice(&cellkey::encode_ts(ts));
                        pending.insert(key.clone(), Some(value.clone()));
                    }
                    Mutation::DeleteColumn { family, qualifier, .. } => {
                        let family = t.family_index(family);
                        cellkey::column_prefix(&row, family, qualifier, &mut key);
                        self.delete_prefix(&t, &mut pending, &key, |at| at <= ts)?;
                        marks
                            .raise(markers::Scope::Column(&row, family, qualifier), ts)
                            .map_err(io)?;
                    }
                    Mutation::DeleteVersion { family, qualifier, .. } => {
                        let family = t.family_index(family);
                        cellkey::column_prefix(&row, family, qualifier, &mut key);
                        key.extend_from_slice(&cellkey::encode_ts(ts));
                        pending.insert(key.clone(), None);
                        marks
                            .raise(markers::Scope::Version(&row, family, qualifier, ts), ts)
                            .map_err(io)?;
                    }
                    Mutation::DeleteFamily { family, .. } => {
                        let family = t.family_index(family);
                        key.clear();
                        key.extend_from_slice(&row);
                        key.push(family);
                        self.delete_prefix(&t, &mut pending, &key, |at| at <= ts)?;
                        marks.raise(markers::Scope::Family(&row, family), ts).map_err(io)?;
                    }
                    Mutation::DeleteFamilyVersion { family, .. } => {
                        let family = t.family_index(family);
                        key.clear();
                        key.extend_from_slice(&row);
                        key.push(family);
                        self.delete_prefix(&t, &mut pending, &key, |at| at == ts)?;
                        marks
                            .raise(markers::Scope::FamilyVersion(&row, family, ts), ts)
                            .map_err(io)?;
                    }
                    Mutation::DeleteRow { .. } => {
                        self.delete_prefix(&t, &mut pending, &row, |at| at <= ts)?;
                        marks.raise(markers::Scope::Row(&row), ts).map_err(io)?;
                    }
                }
            }
        }
        let mut batch = self.db.batch().durability(Some(self.persist));
        for (k, v) in pending {
            match v {
                Some(v) => batch.insert(&t.keyspace, k, v),
                None => batch.remove(&t.keyspace, k),
            }
        }
        let raised = marks.write_into(&mut batch);
        if raised {
            // Set before the commit: a put that races this batch looks the markers up.
            t.has_markers.store(true, Ordering::Release);
        }
        batch.commit().map_err(io)
    }

    fn bulk_load(&self, tables: &[&str]) -> Result<Option<Box<dyn BulkLoad>>> {
        let mut empty = Vec::new();
        for name in tables {
            let t = self.table(name)?;
            // A marker can hide puts even in a table with no cells.
            if !t.has_markers.load(Ordering::Acquire) && t.keyspace.is_empty().map_err(io)? {
                empty.push(t);
            }
        }
        if empty.is_empty() {
            return Ok(None);
        }
        Ok(Some(Box::new(bulk::Bulk::new(&self.path, empty, bulk::MEMORY)?)))
    }

    /// Seals the memtables of `tables`, the descriptors' and the delete markers', waits while
    /// fjall's workers flush them side by side, then seals the journal, which deletes every
    /// journal whose writes are all in tables: the next open replays none.
    fn flush(&self, tables: &[&str]) -> Result<()> {
        let mut keyspaces = vec![self.meta.clone(), self.markers.clone()];
        for name in tables {
            keyspaces.push(self.table(name)?.keyspace.clone());
        }
        for k in &keyspaces {
            k.rotate_memtable().map_err(io)?;
        }
        while keyspaces.iter().any(|k| k.sealed_memtable_count() > 0) {
            // A flush that failed poisons the database: said here rather than waited on.
            self.db.persist(PersistMode::Buffer).map_err(io)?;
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.db.rotate_journal().map_err(io)
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        let t = self.table(table)?;
        let now = now_millis();
        let mut out = Vec::with_capacity(gets.len());
        for g in gets {
            validate_row_key(&g.row)?;
            g.select.validate(&t.desc)?;
            let row = cellkey::row_prefix(&g.row);
            // One prefix per selected family or column, in key order; a whole family covers
            // its columns.
            let mut prefixes: Vec<Vec<u8>> = Vec::new();
            if g.select.columns.is_empty() {
                prefixes.push(row.clone());
            } else {
                let whole: Vec<&str> = g
                    .select
                    .columns
                    .iter()
                    .filter(|c| c.qualifier.is_none())
                    .map(|c| c.family.as_str())
                    .collect();
                for c in &g.select.columns {
                    let mut p = Vec::new();
                    match &c.qualifier {
                        None => {
                            p.extend_from_slice(&row);
                            p.push(t.family_index(&c.family));
                        }
                        Some(_) if whole.contains(&c.family.as_str()) => continue,
                        Some(q) => cellkey::column_prefix(&row, t.family_index(&c.family), q, &mut p),
                    }
                    prefixes.push(p);
                }
                prefixes.sort();
                prefixes.dedup();
            }
            let mut entries = Vec::new();
            for p in &prefixes {
                for guard in t.keyspace.prefix(p) {
                    entries.push(guard.into_inner().map_err(io)?);
                }
            }
            out.push(select_row(&t, g.row.clone(), &entries, &g.select, now));
        }
        Ok(out)
    }

    /// Counts the rows with an unexpired cell from the keys alone: no row is built, no
    /// value copied, and a long row (a relation or an inbox of hundreds of cells) is left at
    /// its counted cell for the next row's first key (a scan of one cell per row took 4 s of
    /// a 20,000-user load's 22).
    fn row_count(&self, table: &str) -> Result<u64> {
        // Keys of one row walked before the rest of it is skipped: a new range costs about
        // as much as this many keys.
        const WALK: usize = 32;
        let t = self.table(table)?;
        let now = now_millis();
        let oldest: Vec<i64> = t
            .desc
            .families
            .iter()
            .map(|f| f.storage.oldest_unexpired(now).unwrap_or(i64::MIN))
            .collect();
        let (mut n, mut row, mut counted, mut walked) = (0u64, Vec::new(), false, 0usize);
        let mut iter = t.keyspace.range::<Vec<u8>, std::ops::RangeFrom<Vec<u8>>>(Vec::new()..);
        while let Some(guard) = iter.next() {
            let key = guard.key().map_err(io)?;
            if row.is_empty() || !key.starts_with(&row) {
                let len = cellkey::split_escaped(&key, 0, None);
                row.clear();
                row.extend_from_slice(&key[..len]);
                (counted, walked) = (false, 0);
            }
            walked += 1;
            if !counted && cellkey::decode_ts(&key) >= oldest[usize::from(key[row.len()])] {
                n += 1;
                counted = true;
            }
            if counted && walked >= WALK {
                // The row's prefix ends `00 01`; every key of a later row sorts at or after
                // the same bytes ending `00 02`.
                let mut next = row.clone();
                *next.last_mut().expect("a terminated row") = 2;
                iter = t.keyspace.range(next..);
                row.clear();
            }
        }
        Ok(n)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let t = self.table(table)?;
        scan.select.validate(&t.desc)?;
        let now = now_millis();
        let limit = scan.limit.unwrap_or(usize::MAX);
        let mut rows = Vec::new();
        if limit == 0 {
            return Ok(rows);
        }
        let (lower, upper) = cellkey::scan_bounds(scan);
        if cellkey::is_empty_range(&lower, &upper) {
            return Ok(rows);
        }
        let iter = t
            .keyspace
            .range::<Vec<u8>, (Bound<Vec<u8>>, Bound<Vec<u8>>)>((lower, upper));
        let mut iter: Box<dyn Iterator<Item = fjall::Guard>> = if scan.reversed {
            Box::new(iter.rev())
        } else {
            Box::new(iter)
        };
        let mut entries: Vec<(fjall::UserKey, fjall::UserValue)> = Vec::new();
        let mut row_len = 0;
        let finish = |entries: &mut Vec<(fjall::UserKey, fjall::UserValue)>, row_len: usize, rows: &mut Vec<Row>| {
            if entries.is_empty() {
                return;
            }
            if scan.reversed {
                entries.reverse();
            }
            let mut key = Vec::with_capacity(row_len);
            cellkey::split_escaped(&entries[0].0, 0, Some(&mut key));
            if let Some(row) = select_row(&t, key, entries, &scan.select, now) {
                rows.push(row);
            }
            entries.clear();
        };
        loop {
            let next = iter.next();
            let Some(guard) = next else {
                finish(&mut entries, row_len, &mut rows);
                break;
            };
            let (key, value) = guard.into_inner().map_err(io)?;
            if entries.is_empty() || key.len() < row_len || key[..row_len] != entries[0].0[..row_len] {
                finish(&mut entries, row_len, &mut rows);
                if rows.len() >= limit {
                    break;
                }
                row_len = cellkey::split_escaped(&key, 0, None);
            }
            entries.push((key, value));
        }
        rows.truncate(limit);
        Ok(rows)
    }
}

fn table_key(name: &str) -> Vec<u8> {
    [TABLE_PREFIX, name.as_bytes()].concat()
}

// Descriptor format: 4 (version), keyspace name (u8 length + bytes), family count (u8), then per
// family its name (u16 length + bytes), VERSIONS (u32), and its storage settings: codec
// ordinal, encoding id, bloom ordinal (one byte each), BLOCKSIZE and TTL (u32 each); then the
// split count (u32) and per split key its length (u16) and bytes; then the attribute count
// (u16) and per attribute its key and value (u16 length + bytes each). Version 3 has no
// attributes; version 2 no storage settings either (HBase's defaults); version 1 has no
// splits either and reads as one region.
fn encode_descriptor(desc: &TableDescriptor, keyspace: &str) -> Vec<u8> {
    let mut out = vec![4, keyspace.len() as u8];
    out.extend_from_slice(keyspace.as_bytes());
    out.push(desc.families.len() as u8);
    for f in &desc.families {
        out.extend_from_slice(&(f.name.len() as u16).to_be_bytes());
        out.extend_from_slice(f.name.as_bytes());
        out.extend_from_slice(&f.max_versions.to_be_bytes());
        let s = &f.storage;
        out.push(s.compression.ordinal() as u8);
        out.push(s.data_block_encoding.id() as u8);
        out.push(s.bloom_filter.ordinal() as u8);
        out.extend_from_slice(&s.block_size.to_be_bytes());
        out.extend_from_slice(&s.ttl.to_be_bytes());
    }
    out.extend_from_slice(&(desc.splits.len() as u32).to_be_bytes());
    for k in &desc.splits {
        out.extend_from_slice(&(k.len() as u16).to_be_bytes());
        out.extend_from_slice(k);
    }
    // Validated: at most a few, each within 1 KiB.
    out.extend_from_slice(&(desc.attributes.len() as u16).to_be_bytes());
    for (k, v) in &desc.attributes {
        for b in [k.as_bytes(), v.as_bytes()] {
            out.extend_from_slice(&(b.len() as u16).to_be_bytes());
            out.extend_from_slice(b);
        }
    }
    out
}

fn decode_descriptor(name: &str, bytes: &[u8]) -> Result<(TableDescriptor, String)> {
    let corrupt = || io(format!("descriptor of table {name} is corrupt"));
    let mut r = bytes;
    let mut take = |n: usize| -> Result<&[u8]> {
        if r.len() < n {
            return Err(corrupt());
        }
        let (head, tail) = r.split_at(n);
        r = tail;
        Ok(head)
    };
    let version = take(1)?[0];
    if !(1..=4).contains(&version) {
        return Err(corrupt());
    }
    let n = take(1)?[0] as usize;
    let keyspace = String::from_utf8(take(n)?.to_vec()).map_err(|_| corrupt())?;
    let count = take(1)?[0];
    let mut families = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let n = u16::from_be_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
        let fname = String::from_utf8(take(n)?.to_vec()).map_err(|_| corrupt())?;
        let max_versions = u32::from_be_bytes(take(4)?.try_into().expect("4 bytes"));
        let mut storage = super::Storage::default();
        if version >= 3 {
            let kinds = take(3)?;
            use super::storage::{Bloom, Compression, Encoding};
            storage.compression = Compression::from_ordinal(kinds[0].into()).ok_or_else(corrupt)?;
            storage.data_block_encoding = Encoding::from_id(kinds[1].into()).ok_or_else(corrupt)?;
            storage.bloom_filter = Bloom::from_ordinal(kinds[2].into()).ok_or_else(corrupt)?;
            storage.block_size = u32::from_be_bytes(take(4)?.try_into().expect("4 bytes"));
            storage.ttl = u32::from_be_bytes(take(4)?.try_into().expect("4 bytes"));
        }
        families.push(super::FamilyDescriptor {
            name: fname,
            max_versions,
            storage,
        });
    }
    let mut splits = Vec::new();
    if version >= 2 {
        let count = u32::from_be_bytes(take(4)?.try_into().expect("4 bytes"));
        for _ in 0..count {
            let n = u16::from_be_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            splits.push(take(n)?.to_vec());
        }
    }
    let mut attributes = Vec::new();
    if version >= 4 {
        let count = u16::from_be_bytes(take(2)?.try_into().expect("2 bytes"));
        for _ in 0..count {
            let n = u16::from_be_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            let k = String::from_utf8(take(n)?.to_vec()).map_err(|_| corrupt())?;
            let n = u16::from_be_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            let v = String::from_utf8(take(n)?.to_vec()).map_err(|_| corrupt())?;
            attributes.push((k, v));
        }
    }
    Ok((
        TableDescriptor {
            name: name.to_string(),
            families,
            splits,
            attributes,
            region_replication: 1,
        },
        keyspace,
    ))
}

/// How every keyspace is created.
fn keyspace_options() -> KeyspaceCreateOptions {
    KeyspaceCreateOptions::default().max_memtable_size(MEMTABLE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::events::{Kind, Phase};
    use crate::store::{Mutation, RowMutation};

    /// The journal files in a store's folder.
    fn journals(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jnl"))
            .collect();
        out.sort();
        out
    }

    /// A flushed store opens without replaying its journal, and holds what was written;
    /// one left unflushed replays it.
    #[test]
    fn a_flushed_store_opens_without_replaying_its_journal() {
        for flushed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            {
                let store = Embedded::open(dir.path()).unwrap();
                for t in ["t1", "t2"] {
                    store.create_table(&TableDescriptor::new(t, &["f"], 1)).unwrap();
                    let rows: Vec<RowMutation> = (0..500)
                        .map(|i| RowMutation::new(format!("r{i:04}"), vec![Mutation::put("f", "q", 1, "v")]))
                        .collect();
                    store.mutate(t, &rows).unwrap();
                }
                assert!(store.unflushed_bytes() > 0);
                let written = journals(dir.path());
                assert!(!written.is_empty());
                if flushed {
                    store.flush(&["t1", "t2"]).unwrap();
                    assert_eq!(store.unflushed_bytes(), 0);
                    // The journals holding the writes are gone; a new one is begun.
                    let now = journals(dir.path());
                    assert!(written.iter().all(|j| !now.contains(j)), "{written:?} {now:?}");
                }
            }
            let store = Embedded::open(dir.path()).unwrap();
            assert_eq!(store.unflushed_bytes() == 0, flushed, "flushed: {flushed}");
            for t in ["t1", "t2"] {
                assert_eq!(store.row_count(t).unwrap(), 500, "{t}, flushed: {flushed}");
            }
        }
    }

    /// The store tells each of its flushes and compactions once, as a start and an end
    /// named by the table; one that took all of a table's files is major.
    #[test]
    fn flushes_and_compactions_are_told_once_by_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Embedded::open(dir.path()).unwrap();
        store
            .create_table(&TableDescriptor::new("weibo:inbox", &["a"], 1))
            .unwrap();
        for round in 0..2 {
            let row = RowMutation::new(format!("r{round}"), vec![Mutation::put("a", "q", 1, "v")]);
            store.mutate("weibo:inbox", &[row]).unwrap();
            store
                .table("weibo:inbox")
                .unwrap()
                .keyspace
                .rotate_memtable_and_wait()
                .unwrap();
        }
        store.compact("weibo:inbox").unwrap();
        let events = store.take_events();
        let seen: Vec<(Kind, Phase, &str, &str)> = events
            .iter()
            .map(|e| (e.kind, e.phase, e.table.as_str(), e.source))
            .collect();
        let pair = |k| {
            [
                (k, Phase::Start, "weibo:inbox", "store"),
                (k, Phase::End, "weibo:inbox", "store"),
            ]
        };
        assert_eq!(
            seen,
            [pair(Kind::Flush), pair(Kind::Flush), pair(Kind::Compaction)].concat()
        );
        assert!(events[1].detail.ends_with(" MiB"), "{:?}", events[1]);
        assert!(
            events[5].detail.starts_with("major, 2 tables into 1, "),
            "{:?}",
            events[5]
        );
        assert!(events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert!(store.take_events().is_empty(), "taken once");
    }
}
