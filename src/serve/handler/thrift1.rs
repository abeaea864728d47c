//! The `Hbase` service: each Thrift1 call on the parts above.

use super::*;

impl HbaseSyncHandler for Handler {
    fn handle_enable_table(&self, table_name: Bytes) -> R<()> {
        self.state.tables.set_enabled(&table_name, true)
    }

    fn handle_disable_table(&self, table_name: Bytes) -> R<()> {
        self.state.tables.set_enabled(&table_name, false)
    }

    fn handle_is_table_enabled(&self, table_name: Bytes) -> R<bool> {
        Ok(self.state.tables.lookup(&table_name)?.1.enabled)
    }

    fn handle_compact(&self, table_name_or_region_name: Bytes) -> R<()> {
        let name = table_name_or_region_name;
        let table = name.split(|&b| b == b',').next().unwrap_or_default();
        self.state.tables.lookup(table).map(|_| ())
    }

    fn handle_major_compact(&self, table_name_or_region_name: Bytes) -> R<()> {
        self.handle_compact(table_name_or_region_name)
    }

    fn handle_get_table_names(&self) -> R<Vec<Text>> {
        Ok(self
            .state
            .store
            .list_tables()
            .map_err(store_error)?
            .into_iter()
            .filter(|t| !t.name.starts_with("hbase:"))
            .map(|t| t.name.into_bytes())
            .collect())
    }

    fn handle_get_table_names_with_is_table_enabled(&self) -> R<BTreeMap<Text, bool>> {
        let mut out = BTreeMap::new();
        for name in self.handle_get_table_names()? {
            let enabled = self.state.tables.lookup(&name).map(|(_, s)| s.enabled).unwrap_or(true);
            out.insert(name, enabled);
        }
        Ok(out)
    }

    fn handle_get_column_descriptors(&self, table_name: Text) -> R<BTreeMap<Text, ColumnDescriptor>> {
        let (desc, state) = self.state.tables.lookup(&table_name)?;
        let mut out = BTreeMap::new();
        for f in &desc.families {
            let o = state.families.get(&f.name).cloned().unwrap_or_default();
            let name = format!("{}:", f.name).into_bytes();
            out.insert(
                name.clone(),
                ColumnDescriptor::new(
                    name,
                    f.max_versions.min(i32::MAX as u32) as i32,
                    o.compression,
                    o.in_memory,
                    o.bloom_filter,
                    0,
                    0,
                    o.block_cache,
                    o.ttl,
                ),
            );
        }
        Ok(out)
    }

    fn handle_get_table_regions(&self, table_name: Text) -> R<Vec<TRegionInfo>> {
        Tables::table_name(&table_name)?;
        match self.state.tables.lookup(&table_name) {
            Ok((desc, state)) => Ok(self.state.tables.regions(&desc, &state)),
            // HBase answers an empty list for a table that does not exist.
            Err(_) => Ok(Vec::new()),
        }
    }

    fn handle_create_table(&self, table_name: Text, column_families: Vec<ColumnDescriptor>) -> R<()> {
        let name = Tables::table_name(&table_name)?;
        if name.starts_with("hbase:") {
            return Err(illegal(format!("table {name} is in the reserved namespace hbase")));
        }
        let _ddl = self.state.tables.ddl.lock().expect("lock");
        // HBase asks whether the table exists before it reads the families.
        if self.state.store.describe_table(&name).is_ok() {
            return Err(store_error(store::Error::TableExists(name)));
        }
        let mut families = Vec::new();
        let mut options = BTreeMap::new();
        for cd in &column_families {
            let (family, versions, o) = family_options(cd)?;
            families.push(store::FamilyDescriptor {
                name: family.clone(),
                max_versions: versions,
                storage: o.store_storage(),
            });
            if options.insert(family.clone(), o).is_some() {
                return Err(illegal(format!("Column Family {family} already exists")));
            }
        }
        if families.is_empty() {
            // HBase's master refuses it in its sanity checks, as an IOError.
            return Err(io_error(format!(
                "{DO_NOT_RETRY}: Table should have at least one column family. Set hbase.table.sanity.checks to false at conf or table descriptor if you want to bypass sanity checks"
            )));
        }
        let desc = TableDescriptor {
            name,
            families,
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        };
        self.state.store.create_table(&desc).map_err(store_error)?;
        let state = TableState {
            enabled: true,
            created: now_millis(),
            families: options,
            attributes: BTreeMap::new(),
            durability: 0,
        };
        self.state
            .tables
            .save_state(&desc.validated().map_err(store_error)?.name, Some(&state))
    }

    fn handle_delete_table(&self, table_name: Text) -> R<()> {
        let _ddl = self.state.tables.ddl.lock().expect("lock");
        let (desc, state) = self.state.tables.lookup(&table_name)?;
        if state.enabled {
            return Err(io_error(format!("{NOT_DISABLED}: {}", desc.name)));
        }
        self.state.store.delete_table(&desc.name).map_err(store_error)?;
        self.state.tables.save_state(&desc.name, None)
    }

    fn handle_get(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.state.cells(&table_name, row, &column, LATEST, 1)
    }

    fn handle_get_ver(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.state.cells(&table_name, row, &column, LATEST, num_versions)
    }

    fn handle_get_ver_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TCell>> {
        self.state.cells(&table_name, row, &column, timestamp, num_versions)
    }

    fn handle_get_row(&self, table_name: Text, row: Text, _attributes: BTreeMap<Text, Text>) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, vec![row], None, LATEST)
    }

    fn handle_get_row_with_columns(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, vec![row], Some(columns), LATEST)
    }

    fn handle_get_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, vec![row], None, timestamp)
    }

    fn handle_get_row_with_columns_ts(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, vec![row], Some(columns), timestamp)
    }

    fn handle_get_rows(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, rows, None, LATEST)
    }

    fn handle_get_rows_with_columns(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, rows, Some(columns), LATEST)
    }

    fn handle_get_rows_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, rows, None, timestamp)
    }

    fn handle_get_rows_with_columns_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<Vec<TRowResult>> {
        self.state.rows(&table_name, rows, Some(columns), timestamp)
    }

    fn handle_mutate_row(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(&table_name, [(row, writes::owned_mutations(mutations))], LATEST, None)
    }

    fn handle_mutate_row_ts(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(
            &table_name,
            [(row, writes::owned_mutations(mutations))],
            timestamp,
            None,
        )
    }

    fn handle_mutate_rows(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(
            &table_name,
            row_batches.into_iter().map(writes::owned_batch),
            LATEST,
            Some("mutateRows"),
        )
    }

    fn handle_mutate_rows_ts(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        self.mutate_rows(
            &table_name,
            row_batches.into_iter().map(writes::owned_batch),
            timestamp,
            Some("mutateRowsTs"),
        )
    }

    fn handle_atomic_increment(&self, table_name: Text, row: Text, column: Text, value: i64) -> R<i64> {
        self.state.increment(&table_name, &row, &column, value)
    }

    fn handle_delete_all(&self, table_name: Text, row: Text, column: Text, attributes: BTreeMap<Text, Text>) -> R<()> {
        self.handle_delete_all_ts(table_name, row, column, LATEST, attributes)
    }

    fn handle_delete_all_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        let m = delete_of(&column, (timestamp != LATEST).then_some(timestamp))?;
        self.state.delete(&table_name, row, m)
    }

    fn handle_delete_all_row(&self, table_name: Text, row: Text, attributes: BTreeMap<Text, Text>) -> R<()> {
        self.handle_delete_all_row_ts(table_name, row, LATEST, attributes)
    }

    fn handle_increment(&self, increment: TIncrement) -> R<()> {
        let (table, row) = (increment.table.unwrap_or_default(), increment.row.unwrap_or_default());
        if table.is_empty() || row.is_empty() {
            return Err(illegal("Must supply a table and a row key; can't increment"));
        }
        let column = increment.column.unwrap_or_default();
        self.state
            .increment(&table, &row, &column, increment.ammount.unwrap_or(0))
            .map(|_| ())
    }

    fn handle_increment_rows(&self, increments: Vec<TIncrement>) -> R<()> {
        increments.into_iter().try_for_each(|i| self.handle_increment(i))
    }

    fn handle_delete_all_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<()> {
        let ts = (timestamp != LATEST).then_some(timestamp);
        self.state
            .delete(&table_name, row, StoreMutation::DeleteRow { timestamp: ts })
    }

    fn handle_scanner_open_with_scan(
        &self,
        table_name: Text,
        scan: TScan,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let reversed = scan.reversed.unwrap_or(false);
        let timestamp = scan.timestamp.unwrap_or(LATEST);
        let parsed = match scan.filter_string.as_deref() {
            // HBase's ParseFilter throws an unchecked IllegalArgumentException, which
            // reaches libthrift's processor: the client gets this and no detail.
            Some(s) if !s.is_empty() => Some(filter::parse(s).map_err(|_| {
                thrift::Error::Application(thrift::ApplicationError::new(
                    thrift::ApplicationErrorKind::InternalError,
                    "Internal error processing scannerOpenWithScan",
                ))
            })?),
            _ => None,
        };
        let row_filter = parsed.as_ref().is_some_and(filter::Filter::has_filter_row);
        let filter = parsed.map(Evaluator::new);
        let mut select = State::selection(scan.columns.as_deref().filter(|c| !c.is_empty()), timestamp, 1)?;
        if filter.is_some() {
            // The filter sees every stored version; one is returned per column after it.
            select.max_versions = u32::MAX;
        }
        let batch = match scan.batch_size {
            Some(b) if b > 0 => Some(b as usize),
            _ => None,
        };
        let scan_ = get_scan(Scan {
            start: scan.start_row.unwrap_or_default(),
            stop: scan.stop_row.unwrap_or_default(),
            reversed,
            select,
            ..Scan::default()
        });
        let id = self.state.open_scanner(
            self.conn,
            &table_name,
            scan_,
            ScanOptions {
                filter,
                batch,
                sorted: scan.sort_columns.unwrap_or(false),
                ..ScanOptions::default()
            },
        )?;
        if batch.is_some() && row_filter {
            // The region server refuses such a scan when it reaches it, so the open succeeds
            // and every read fails (HBase's client retries it for about 48 s first).
            self.state.scanner(self.conn, id)?.lock().expect("lock").failure = Some(
                "org.apache.hadoop.hbase.filter.IncompatibleFilterException: Cannot set batch on a scan using a filter that returns true for filter.hasFilterRow",
            );
        }
        Ok(id)
    }

    fn handle_scanner_open(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, Vec::new(), columns, LATEST, BTreeMap::new())
    }

    fn handle_scanner_open_with_stop(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, stop_row, columns, LATEST, BTreeMap::new())
    }

    fn handle_scanner_open_with_prefix(
        &self,
        table_name: Text,
        start_and_prefix: Text,
        columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let select = State::selection(
            Some(&columns).filter(|c| !c.is_empty()).map(|c| c.as_slice()),
            LATEST,
            1,
        )?;
        let scan = Scan {
            start: start_and_prefix.clone(),
            prefix: start_and_prefix,
            select,
            ..Scan::default()
        };
        self.state
            .open_scanner(self.conn, &table_name, scan, ScanOptions::default())
    }

    fn handle_scanner_open_ts(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        self.handle_scanner_open_with_stop_ts(table_name, start_row, Vec::new(), columns, timestamp, BTreeMap::new())
    }

    fn handle_scanner_open_with_stop_ts(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<ScannerID> {
        let select = State::selection(
            Some(&columns).filter(|c| !c.is_empty()).map(|c| c.as_slice()),
            timestamp,
            1,
        )?;
        let scan = get_scan(Scan {
            start: start_row,
            stop: stop_row,
            select,
            ..Scan::default()
        });
        self.state
            .open_scanner(self.conn, &table_name, scan, ScanOptions::default())
    }

    fn handle_scanner_get(&self, id: ScannerID) -> R<Vec<TRowResult>> {
        self.state
            .next_rows(self.conn, id, 1, |r, _, sorted| row_result(r, sorted))
    }

    fn handle_scanner_get_list(&self, id: ScannerID, nb_rows: i32) -> R<Vec<TRowResult>> {
        self.state
            .next_rows(self.conn, id, nb_rows, |r, _, sorted| row_result(r, sorted))
    }

    fn handle_scanner_close(&self, id: ScannerID) -> R<()> {
        self.state
            .scanners
            .map
            .lock()
            .expect("lock")
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| illegal("scanner ID is invalid"))
    }

    fn handle_get_region_info(&self, row: Text) -> R<TRegionInfo> {
        // A meta row key: `table,row,id` (the row may hold commas; the id does not).
        let mut parts = row.splitn(2, |&b| b == b',');
        let table = parts.next().unwrap_or_default();
        let rest = parts.next().unwrap_or_default();
        let key = match rest.iter().rposition(|&b| b == b',') {
            Some(at) => &rest[..at],
            None => rest,
        };
        let (desc, state) = self.state.tables.lookup(table).map_err(|_| {
            io_error(format!(
                "Cannot find row in hbase:meta, row={}",
                String::from_utf8_lossy(&row)
            ))
        })?;
        let regions = self.state.tables.regions(&desc, &state);
        let at = regions
            .iter()
            .position(|r| {
                let end = r.end_key.as_deref().unwrap_or_default();
                end.is_empty() || key < end
            })
            .unwrap_or(regions.len() - 1);
        Ok(regions.into_iter().nth(at).expect("a region"))
    }

    fn handle_append(&self, append: TAppend) -> R<Vec<TCell>> {
        let (table, row) = (append.table.unwrap_or_default(), append.row.unwrap_or_default());
        if table.is_empty() || row.is_empty() {
            return Err(illegal("Must supply a table and a row key; can't append"));
        }
        let (names, values) = (append.columns.unwrap_or_default(), append.values.unwrap_or_default());
        if names.len() != values.len() {
            return Err(illegal("TAppend needs one value per column"));
        }
        let mut columns = Vec::new();
        for c in &names {
            let (family, qualifier) = parse_column(c)?;
            columns.push((family, qualifier.unwrap_or_default()));
        }
        self.state.read_modify_write(&table, &row, &columns, |found| {
            let now = super::writes::delta_now(found.iter().flatten().map(|c| c.timestamp));
            let mut puts = Vec::new();
            let mut cells = Vec::new();
            for (((family, qualifier), old), add) in columns.iter().zip(found).zip(values) {
                let mut value = old.as_ref().map(|c| c.value.clone()).unwrap_or_default();
                value.extend_from_slice(&add);
                let ts = now.max(old.as_ref().map_or(0, |c| c.timestamp + 1));
                puts.push(StoreMutation::put(family, qualifier.clone(), ts, value.clone()));
                cells.push(Cell {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: ts,
                    value,
                });
            }
            cells.sort();
            Ok((puts, cells.into_iter().map(tcell).collect()))
        })
    }

    fn handle_check_and_put(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _attributes: BTreeMap<Text, Text>,
    ) -> R<bool> {
        let (put_family, put_qualifier) = parse_put_column(&mput.column.clone().unwrap_or_default())?;
        let (family, qualifier) = parse_column(&column)?;
        let checked = [(family, qualifier.unwrap_or_default())];
        let put_value = mput.value.unwrap_or_default();
        self.state.read_modify_write(&table_name, &row, &checked, |found| {
            // As in HBase, an empty expected value matches a missing or empty cell.
            let matches = match &found[0] {
                None => value.is_empty(),
                Some(c) => c.value == value,
            };
            if !matches {
                return Ok((Vec::new(), false));
            }
            Ok((
                vec![StoreMutation::put_now(
                    &put_family,
                    put_qualifier.clone(),
                    put_value.clone(),
                )],
                true,
            ))
        })
    }

    fn handle_get_thrift_server_type(&self) -> R<TThriftServerType> {
        Ok(TThriftServerType::ONE)
    }

    fn handle_get_cluster_id(&self) -> R<String> {
        Ok(format!("tallrow-{}", self.state.store.identity()))
    }
}
