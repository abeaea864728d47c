//! Table state: names, enabled or disabled, family options (kept durably in the meta
//! table), TTLs and the region a table reports.

use super::*;

impl Tables {
    pub(super) fn table_name(name: &[u8]) -> R<String> {
        let name = std::str::from_utf8(name).map_err(|_| bad_table_name("table name is not UTF-8".into()))?;
        canonical_table_name(name).map_err(|e| match e {
            store::Error::BadArgument(m) => bad_table_name(m),
            e => store_error(e),
        })
    }

    /// The table's descriptor and state; a state written for an older table of the same
    /// name (other families) is ignored.
    pub(super) fn lookup(&self, name: &[u8]) -> R<(TableDescriptor, TableState)> {
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
                attributes: BTreeMap::new(),
                durability: 0,
            },
        };
        Ok((desc, state))
    }

    /// An enabled table, for data calls.
    pub(super) fn data_table(&self, name: &[u8]) -> R<(TableDescriptor, TableState)> {
        let (desc, state) = self.lookup(name)?;
        if !state.enabled {
            return Err(io_error(format!("{NOT_ENABLED}: {} is disabled.", desc.name)));
        }
        Ok((desc, state))
    }

    pub(super) fn save_state(&self, name: &str, state: Option<&TableState>) -> R<()> {
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

    pub(super) fn set_enabled(&self, name: &[u8], enabled: bool) -> R<()> {
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
    pub(super) fn expire(ttls: &HashMap<String, i32>, cells: &mut Vec<Cell>) {
        if ttls.values().all(|&t| t == FOREVER) {
            return;
        }
        let now = now_millis();
        cells.retain(|c| match ttls.get(&c.family) {
            Some(&ttl) if ttl != FOREVER => c.timestamp > now - i64::from(ttl) * 1000,
            _ => true,
        });
    }

    pub(super) fn ttls(state: &TableState) -> HashMap<String, i32> {
        state.families.iter().map(|(f, o)| (f.clone(), o.ttl)).collect()
    }

    /// An enabled table for a mutation call. A miss is looked up under the cache's lock,
    /// so a state change that clears the cache cannot interleave with it.
    pub(super) fn writable_table(&self, name: &[u8]) -> R<Arc<TableDescriptor>> {
        if let Some(desc) = self.writable.read().expect("lock").get(name) {
            return Ok(desc.clone());
        }
        let mut cache = self.writable.write().expect("lock");
        let desc = Arc::new(self.data_table(name)?.0);
        cache.insert(name.to_vec(), desc.clone());
        Ok(desc)
    }

    /// The table's regions, one per gap between its split keys, as Thrift1's
    /// `getTableRegions` reports them (region names as HBase writes them:
    /// `table,startKey,id.`).
    pub(super) fn regions(&self, desc: &TableDescriptor, state: &TableState) -> Vec<TRegionInfo> {
        let id = state.created;
        region_bounds(desc)
            .map(|(start, end)| {
                let mut name = format!("{},", desc.name).into_bytes();
                name.extend_from_slice(start);
                name.extend_from_slice(format!(",{id}.").as_bytes());
                TRegionInfo::new(
                    start.to_vec(),
                    end.to_vec(),
                    id,
                    name,
                    1i8,
                    self.host.clone().into_bytes(),
                    self.port,
                )
            })
            .collect()
    }
}

/// Each region's start and end key (empty for the table's first start and last end).
pub(super) fn region_bounds(desc: &TableDescriptor) -> impl Iterator<Item = (&[u8], &[u8])> {
    let empty: &[u8] = &[];
    let starts = std::iter::once(empty).chain(desc.splits.iter().map(Vec::as_slice));
    let ends = desc.splits.iter().map(Vec::as_slice).chain(std::iter::once(empty));
    starts.zip(ends)
}

pub(super) fn family_options(cd: &ColumnDescriptor) -> R<(String, u32, FamilyOptions)> {
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
            more: MoreOptions::default(),
        },
    ))
}
