//! Writes: the store's mutations as Bigtable mutations (HBase's delete semantics over
//! timestamp ranges), cells read back as rows, and `MutateRows` with its retries.

use super::*;

/// Microseconds of an HBase timestamp.
pub(super) fn micros(ms: i64) -> i64 {
    ms * 1000
}

/// A row as the store returns it: cells by family, qualifier, newest first; the cell limit
/// applied last.
pub(super) fn to_row(key: Vec<u8>, cells: Vec<RowCell>, sel: &Selection) -> Option<Row> {
    let mut cells: Vec<Cell> = cells
        .into_iter()
        .map(|c| Cell {
            family: c.family_name,
            qualifier: c.qualifier,
            timestamp: c.timestamp_micros.div_euclid(1000),
            value: c.value,
        })
        .collect();
    crate::store::sort_cells(&mut cells);
    if let Some(n) = sel.cell_limit {
        cells.truncate(n);
    }
    (!cells.is_empty()).then_some(Row { key, cells })
}

/// What a row holds before a call: each column's newest timestamp, in ms.
pub(super) type Columns = BTreeMap<(String, Vec<u8>), i64>;

/// The mutations of one row's entry, given what the row holds; `known` follows the puts.
pub(super) fn row_mutations(ms: &[StoreMutation], now: i64, known: &mut Columns, out: &mut Vec<Mutation>) {
    let m = |m: mutation::Mutation| Mutation { mutation: Some(m) };
    for mu in ms {
        let ts = mu.timestamp().unwrap_or(now);
        match mu {
            StoreMutation::Put {
                family,
                qualifier,
                value,
                ..
            } => {
                let newest = known.entry((family.clone(), qualifier.clone())).or_insert(ts);
                *newest = (*newest).max(ts);
                out.push(m(mutation::Mutation::SetCell(mutation::SetCell {
                    family_name: family.clone(),
                    column_qualifier: qualifier.clone(),
                    timestamp_micros: micros(ts),
                    value: value.clone(),
                })));
            }
            StoreMutation::DeleteColumn { family, qualifier, .. } => {
                out.push(m(mutation::Mutation::DeleteFromColumn(mutation::DeleteFromColumn {
                    family_name: family.clone(),
                    column_qualifier: qualifier.clone(),
                    time_range: Some(at_or_below(ts)),
                })));
            }
            StoreMutation::DeleteVersion { family, qualifier, .. } => {
                out.push(m(mutation::Mutation::DeleteFromColumn(mutation::DeleteFromColumn {
                    family_name: family.clone(),
                    column_qualifier: qualifier.clone(),
                    time_range: Some(exactly(ts)),
                })));
            }
            StoreMutation::DeleteFamilyVersion { family, .. } => {
                // Bigtable deletes a family whole or a column's time range: the version
                // goes column by column.
                for (f, q) in known.keys().filter(|(f, _)| f == family) {
                    out.push(m(mutation::Mutation::DeleteFromColumn(mutation::DeleteFromColumn {
                        family_name: f.clone(),
                        column_qualifier: q.clone(),
                        time_range: Some(exactly(ts)),
                    })));
                }
            }
            StoreMutation::DeleteFamily { family, .. } => {
                let columns: Vec<_> = known.iter().filter(|((f, _), _)| f == family).collect();
                if columns.iter().all(|(_, newest)| **newest <= ts) {
                    out.push(m(mutation::Mutation::DeleteFromFamily(mutation::DeleteFromFamily {
                        family_name: family.clone(),
                    })));
                } else {
                    for ((f, q), _) in columns {
                        out.push(m(mutation::Mutation::DeleteFromColumn(mutation::DeleteFromColumn {
                            family_name: f.clone(),
                            column_qualifier: q.clone(),
                            time_range: Some(at_or_below(ts)),
                        })));
                    }
                }
            }
            StoreMutation::DeleteRow { .. } => {
                if known.values().all(|newest| *newest <= ts) {
                    out.push(m(mutation::Mutation::DeleteFromRow(mutation::DeleteFromRow {})));
                } else {
                    for (f, q) in known.keys() {
                        out.push(m(mutation::Mutation::DeleteFromColumn(mutation::DeleteFromColumn {
                            family_name: f.clone(),
                            column_qualifier: q.clone(),
                            time_range: Some(at_or_below(ts)),
                        })));
                    }
                }
            }
        }
    }
}

impl Bigtable {
    /// Applies entries, resending those that fail transiently (every mutation is idempotent).
    pub(super) fn write(&self, name: &str, table_path: &str, entries: Vec<Entry>) -> Result<()> {
        self.rt.block_on(async {
            let mut pending = entries;
            let mut delay = Duration::from_millis(20);
            for attempt in 1..=ATTEMPTS {
                let mut client = self.data.clone();
                let req = MutateRowsRequest {
                    table_name: table_path.to_string(),
                    entries: pending.clone(),
                    ..Default::default()
                };
                let mut retry = vec![false; pending.len()];
                let mut answered = vec![false; pending.len()];
                let mut failure = None;
                match client.mutate_rows(req).await {
                    Ok(mut stream) => loop {
                        match stream.message().await {
                            Ok(Some(resp)) => {
                                for e in resp.entries {
                                    let Some(i) = usize::try_from(e.index).ok().filter(|i| *i < pending.len()) else {
                                        continue;
                                    };
                                    answered[i] = true;
                                    let Some(status) = e.status.filter(|s| s.code != 0) else {
                                        continue;
                                    };
                                    let err = status_error(Code::from_i32(status.code), &status.message, name);
                                    if err.is_transient() {
                                        retry[i] = true;
                                    }
                                    if failure.is_none() || !err.is_transient() {
                                        failure = Some(err);
                                    }
                                }
                            }
                            Ok(None) => break,
                            Err(s) => {
                                let err = status_error(s.code(), s.message(), name);
                                for (i, a) in answered.iter().enumerate() {
                                    retry[i] |= !a;
                                }
                                failure = Some(err);
                                break;
                            }
                        }
                    },
                    Err(e) => {
                        retry.iter_mut().for_each(|r| *r = true);
                        failure = Some(client_error(e, name));
                    }
                }
                if failure.is_none() && answered.iter().any(|a| !a) {
                    failure = Some(Error::Unavailable("Bigtable left part of a batch unanswered".into()));
                    for (i, a) in answered.iter().enumerate() {
                        retry[i] |= !a;
                    }
                }
                let Some(err) = failure else { return Ok(()) };
                if !err.is_transient() || attempt == ATTEMPTS {
                    return Err(self.data_error(err, name));
                }
                pending = pending
                    .into_iter()
                    .zip(retry)
                    .filter_map(|(e, r)| r.then_some(e))
                    .collect();
                tokio::time::sleep(delay).await;
                delay *= 4;
            }
            unreachable!("the last attempt returns")
        })
    }

    /// What the rows that a family or row delete touches hold: columns and newest versions.
    pub(super) fn columns_of(
        &self,
        name: &str,
        table_path: &str,
        rows: Vec<Vec<u8>>,
    ) -> Result<HashMap<Vec<u8>, Columns>> {
        if rows.is_empty() {
            return Ok(HashMap::new());
        }
        let req = ReadRowsRequest {
            table_name: table_path.to_string(),
            rows: Some(RowSet {
                row_keys: rows,
                row_ranges: Vec::new(),
            }),
            filter: Some(combine(
                vec![
                    filter(row_filter::Filter::CellsPerColumnLimitFilter(1)),
                    filter(row_filter::Filter::StripValueTransformer(true)),
                ],
                true,
            )),
            ..Default::default()
        };
        let mut out = HashMap::new();
        for (key, cells) in self.read(name, req)? {
            let columns: Columns = cells
                .into_iter()
                .map(|c| ((c.family_name, c.qualifier), c.timestamp_micros.div_euclid(1000)))
                .collect();
            out.insert(key, columns);
        }
        Ok(out)
    }
}
