//! Mutations: building rows from Thrift mutations, applying them (or deferring them to the
//! connection's commit), and the read-modify-write calls under a row's stripe lock.

use super::*;

/// A Thrift1 `Mutation` as the handler reads it: `isDelete`, the column (owned or borrowed
/// from the request) and the value.
pub(super) type ThriftMutation<C> = crate::convert::thrift1::MutationFields<C, Vec<u8>>;

/// A generated `BatchMutation` as [`State::mutation_call`] takes it.
pub(super) fn owned_batch(b: BatchMutation) -> (Vec<u8>, impl Iterator<Item = ThriftMutation<Vec<u8>>>) {
    (
        b.row.unwrap_or_default(),
        owned_mutations(b.mutations.unwrap_or_default()),
    )
}

/// Generated `Mutation`s as [`State::batch`] takes them, absent fields as their defaults.
pub(super) fn owned_mutations(mutations: Vec<Mutation>) -> impl Iterator<Item = ThriftMutation<Vec<u8>>> {
    mutations.into_iter().map(crate::convert::thrift1::fields_of)
}

impl State {
    /// Applies row mutations under shared stripe locks.
    pub(super) fn apply(&self, table: &str, rows: &[RowMutation]) -> R<()> {
        let mut stripes: Vec<usize> = rows.iter().map(|r| stripe_of(&r.row)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _guards: Vec<_> = stripes.iter().map(|&s| self.stripes[s].read().expect("lock")).collect();
        self.store.mutate(table, rows).map_err(store_error)
    }

    /// A Thrift row batch as store mutations: puts first, then deletes, as HBase applies them.
    /// `rows_call` names a mutateRows(Ts) call, where HBase refuses a put that names only a
    /// family; mutateRow(Ts) skips it.
    pub(super) fn batch<C: AsRef<[u8]>>(
        row: Vec<u8>,
        mutations: impl IntoIterator<Item = ThriftMutation<C>>,
        timestamp: i64,
        rows_call: Option<&str>,
    ) -> R<RowMutation> {
        let ts = (timestamp != LATEST).then_some(timestamp);
        crate::convert::thrift1::row_mutation(row, mutations, ts, rows_call.is_some()).map_err(illegal)
    }

    /// A mutation call's table and rows, checked against the table's state.
    /// mutateRows(Ts) (`rows_call`) builds its rows before it looks at the table, outside the
    /// handler's error mapping: a bad row there reaches HBase's Thrift processor as an
    /// unchecked exception, an internal error without detail.
    pub(super) fn mutation_call<C: AsRef<[u8]>, M: IntoIterator<Item = ThriftMutation<C>>>(
        &self,
        table: &[u8],
        batches: impl IntoIterator<Item = (Vec<u8>, M)>,
        timestamp: i64,
        rows_call: Option<&str>,
    ) -> R<(Arc<TableDescriptor>, Vec<RowMutation>)> {
        let rows = batches
            .into_iter()
            .map(|(row, mutations)| Self::batch(row, mutations, timestamp, rows_call))
            .collect::<R<Vec<_>>>()
            .map_err(|e| match (rows_call, e) {
                (Some(name), thrift::Error::User(u)) if u.downcast_ref::<IllegalArgument>().is_some() => {
                    thrift::Error::Application(thrift::ApplicationError::new(
                        thrift::ApplicationErrorKind::InternalError,
                        format!("Internal error processing {name}"),
                    ))
                }
                (_, e) => e,
            })?;
        let desc = self.tables.writable_table(table)?;
        Ok((desc, rows))
    }

    pub(super) fn delete(&self, table: &[u8], row: Vec<u8>, mutation: StoreMutation) -> R<()> {
        let (desc, _) = self.tables.data_table(table)?;
        self.apply(&desc.name, &[RowMutation::new(row, vec![mutation])])
    }

    /// Runs `f` on the newest cells of `columns` in `row` under the row's exclusive lock.
    pub(super) fn read_modify_write<T>(
        &self,
        table: &[u8],
        row: &[u8],
        columns: &[(String, Vec<u8>)],
        f: impl FnOnce(&[Option<Cell>]) -> R<(Vec<StoreMutation>, T)>,
    ) -> R<T> {
        self.read_modify_write_groups(table, row, columns, |found| {
            f(found).map(|(mutations, out)| (vec![mutations], out))
        })
    }

    /// `read_modify_write` where `f` answers HBase mutations one by one (a `RowMutations`),
    /// so that one-version deletes of the newest version resolve per mutation.
    pub(super) fn read_modify_write_groups<T>(
        &self,
        table: &[u8],
        row: &[u8],
        columns: &[(String, Vec<u8>)],
        f: impl FnOnce(&[Option<Cell>]) -> R<(Vec<Vec<StoreMutation>>, T)>,
    ) -> R<T> {
        if row.is_empty() {
            return Err(illegal("Row length is 0"));
        }
        let (desc, state) = self.tables.data_table(table)?;
        let _guard = self.stripes[stripe_of(row)].write().expect("lock");
        let get = Get {
            row: row.to_vec(),
            select: Selection {
                columns: columns.iter().map(|(f, q)| Column::qualifier(f, q.clone())).collect(),
                ..Selection::default()
            },
        };
        let mut current = self.store.get(&desc.name, &[get]).map_err(store_error)?;
        let mut cells = current.pop().flatten().map(|r| r.cells).unwrap_or_default();
        Tables::expire(&Tables::ttls(&state), &mut cells);
        let found: Vec<Option<Cell>> = columns
            .iter()
            .map(|(f, q)| cells.iter().find(|c| c.family == *f && c.qualifier == *q).cloned())
            .collect();
        let (mut groups, out) = f(&found)?;
        if groups.iter().any(|g| names_latest(g)) {
            let all: Vec<StoreMutation> = groups.iter().flatten().cloned().collect();
            store::validate_mutations(&desc, &[RowMutation::new(row.to_vec(), all)]).map_err(store_error)?;
            let now = now_millis();
            for group in &mut groups {
                self.resolve_latest(&desc, &state, row, group, now)?;
            }
        }
        let mutations: Vec<StoreMutation> = groups.into_iter().flatten().collect();
        if !mutations.is_empty() {
            self.store
                .mutate(&desc.name, &[RowMutation::new(row.to_vec(), mutations)])
                .map_err(store_error)?;
        }
        Ok(out)
    }

    /// Gives the one-version deletes at `LATEST_TIMESTAMP` in `group` (one HBase mutation on
    /// `row`) the timestamp HBase's region server gives them (`prepareDeleteTimestamps`):
    /// the n-th such delete of a column takes the column's n-th newest version as the row
    /// stands (no further back than the family's `VERSIONS`), or `now` when it has fewer.
    /// The caller holds the row's stripe exclusively and has validated the mutations.
    pub(super) fn resolve_latest(
        &self,
        desc: &TableDescriptor,
        state: &TableState,
        row: &[u8],
        group: &mut [StoreMutation],
        now: i64,
    ) -> R<()> {
        let mut counts: HashMap<(String, Vec<u8>), u32> = HashMap::new();
        let ttls = Tables::ttls(state);
        for m in group {
            let StoreMutation::DeleteVersion {
                family,
                qualifier,
                timestamp,
            } = m
            else {
                continue;
            };
            if *timestamp != LATEST {
                continue;
            }
            let n = counts.entry((family.clone(), qualifier.clone())).or_insert(0);
            *n += 1;
            let get = Get {
                row: row.to_vec(),
                select: Selection {
                    columns: vec![Column::qualifier(family, qualifier.clone())],
                    max_versions: *n,
                    ..Selection::default()
                },
            };
            let mut found = self.store.get(&desc.name, &[get]).map_err(store_error)?;
            let mut cells = found.pop().flatten().map(|r| r.cells).unwrap_or_default();
            Tables::expire(&ttls, &mut cells);
            *timestamp = cells.get(*n as usize - 1).map_or(now, |c| c.timestamp);
        }
        Ok(())
    }

    /// Applies HBase mutations (`groups`, each on one row) whose one-version deletes may
    /// name the newest version: under the rows' stripes, held exclusively, those deletes
    /// are resolved against the rows as they stand before any is applied, as HBase
    /// prepares a batch. With `one_row`, the groups are one `RowMutations`, applied as one.
    pub(super) fn apply_resolving(&self, desc: &TableDescriptor, groups: Vec<RowMutation>, one_row: bool) -> R<()> {
        let (_, state) = self.tables.data_table(desc.name.as_bytes())?;
        let mut stripes: Vec<usize> = groups.iter().map(|r| stripe_of(&r.row)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _guards: Vec<_> = stripes
            .iter()
            .map(|&s| self.stripes[s].write().expect("lock"))
            .collect();
        let now = now_millis();
        let mut groups = groups;
        for g in &mut groups {
            self.resolve_latest(desc, &state, &g.row, &mut g.mutations, now)?;
        }
        if one_row && let Some(first) = groups.first() {
            let row = first.row.clone();
            groups = vec![RowMutation::new(
                row,
                groups.into_iter().flat_map(|g| g.mutations).collect(),
            )];
        }
        self.store.mutate(&desc.name, &groups).map_err(store_error)
    }

    pub(super) fn increment(&self, table: &[u8], row: &[u8], column: &[u8], amount: i64) -> R<i64> {
        let (family, qualifier) = parse_column(column)?;
        let columns = [(family.clone(), qualifier.unwrap_or_default())];
        self.read_modify_write(table, row, &columns, |found| {
            let (old, ts) = match &found[0] {
                None => (0, 0),
                Some(c) => {
                    let bytes: [u8; 8] = c.value.as_slice().try_into().map_err(|_| {
                        io_error(format!(
                            "{DO_NOT_RETRY}: Field is not a long, it's {} bytes wide",
                            c.value.len()
                        ))
                    })?;
                    (i64::from_be_bytes(bytes), c.timestamp)
                }
            };
            let new = old.wrapping_add(amount);
            let ts = delta_now(found[0].iter().map(|c| c.timestamp)).max(ts + 1);
            let put = StoreMutation::put(&columns[0].0, columns[0].1.clone(), ts, new.to_be_bytes());
            Ok((vec![put], new))
        })
    }
}

/// How far ahead of the clock a cell may be, in milliseconds, for an increment or append
/// of it to wait for the clock: as far as serve's own stamps get ahead of it.
const CATCH_UP_MS: i64 = 2;

/// The `now` of an increment or append whose columns' newest versions are at `previous`.
/// HBase stamps each new cell `max(previous + 1, now)`. Its calls take over a millisecond
/// each, so for one client's calls, one after another, that is `now`, and a put that
/// follows, stamped `now`, lands at or after it. serve's calls take microseconds: stamped
/// the same way, increments in one millisecond run ahead of the clock, and a put that
/// follows falls behind them and is hidden (happybase's `counter_set` after `counter_get`
/// reads back the old count). So a cell stamped at or ahead of the clock by serve is
/// waited past, as a call to HBase would have taken that long; a cell a client stamped
/// far ahead is not waited for, and is followed at `previous + 1` as HBase follows it.
pub(super) fn delta_now(previous: impl Iterator<Item = i64>) -> i64 {
    let newest = previous.max();
    loop {
        let now = now_millis();
        match newest {
            Some(p) if p >= now && p - now <= CATCH_UP_MS => {
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
            _ => return now,
        }
    }
}

/// Whether `mutations` hold a one-version delete of the newest version, which must be
/// resolved against the row before it is applied.
pub(super) fn names_latest(mutations: &[StoreMutation]) -> bool {
    mutations
        .iter()
        .any(|m| matches!(m, StoreMutation::DeleteVersion { timestamp: LATEST, .. }))
}
