//! Reads as Bigtable row filters and row ranges: a selection's families, columns,
//! versions and time range, and a scan's bounds.

use super::*;

/// A `[0, ts]` delete range in HBase milliseconds as Bigtable microseconds.
pub(super) fn at_or_below(ts: i64) -> TimestampRange {
    TimestampRange {
        start_timestamp_micros: 0,
        end_timestamp_micros: micros(ts + 1),
    }
}

/// The one millisecond at `ts`.
pub(super) fn exactly(ts: i64) -> TimestampRange {
    TimestampRange {
        start_timestamp_micros: micros(ts),
        end_timestamp_micros: micros(ts + 1),
    }
}

pub(super) fn filter(f: row_filter::Filter) -> RowFilter {
    RowFilter { filter: Some(f) }
}

/// One filter from several, in a chain (all must pass) or interleaved (union).
pub(super) fn combine(mut parts: Vec<RowFilter>, chain: bool) -> RowFilter {
    if parts.len() == 1 {
        return parts.pop().expect("one part");
    }
    filter(if chain {
        row_filter::Filter::Chain(row_filter::Chain { filters: parts })
    } else {
        row_filter::Filter::Interleave(row_filter::Interleave { filters: parts })
    })
}

/// An RE2 pattern that matches exactly `s` (family names are ASCII in Bigtable).
pub(super) fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_ascii_punctuation() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The read filter for a selection: one chain per selected family, interleaved. Each chain
/// caps versions at the family's `VERSIONS` before the time range, as the model reads.
pub(super) fn selection_filter(desc: &TableDescriptor, sel: &Selection) -> RowFilter {
    let mut branches = Vec::new();
    for f in &desc.families {
        if !sel.wants_family(&f.name) {
            continue;
        }
        let mut chain = vec![filter(row_filter::Filter::FamilyNameRegexFilter(literal(&f.name)))];
        // Bigtable collects by age lazily: cells past the family's TTL are dropped here,
        // before versions are counted, as HBase's reads drop them.
        if let Some(oldest) = f.storage.oldest_unexpired(now_millis()) {
            chain.push(filter(row_filter::Filter::TimestampRangeFilter(TimestampRange {
                start_timestamp_micros: micros(oldest.max(0)),
                end_timestamp_micros: 0,
            })));
        }
        let whole = sel.columns.is_empty() || sel.columns.iter().any(|c| c.family == f.name && c.qualifier.is_none());
        if !whole {
            // Each qualifier once: an interleave yields a cell once per branch it matches.
            let qualifiers: std::collections::BTreeSet<&Vec<u8>> = sel
                .columns
                .iter()
                .filter(|c| c.family == f.name)
                .filter_map(|c| c.qualifier.as_ref())
                .collect();
            let columns: Vec<RowFilter> = qualifiers
                .into_iter()
                .map(|q| {
                    filter(row_filter::Filter::ColumnRangeFilter(ColumnRange {
                        family_name: f.name.clone(),
                        start_qualifier: Some(column_range::StartQualifier::StartQualifierClosed(q.clone())),
                        end_qualifier: Some(column_range::EndQualifier::EndQualifierClosed(q.clone())),
                    }))
                })
                .collect();
            chain.push(combine(columns, false));
        }
        if let Some(after) = &sel.qualifier_after {
            chain.push(filter(row_filter::Filter::ColumnRangeFilter(ColumnRange {
                family_name: f.name.clone(),
                start_qualifier: Some(column_range::StartQualifier::StartQualifierOpen(after.clone())),
                end_qualifier: None,
            })));
        }
        let kept = f.max_versions.min(i32::MAX as u32) as i32;
        let asked = sel.max_versions.min(i32::MAX as u32) as i32;
        match sel.time_range {
            Some((min, max)) => {
                chain.push(filter(row_filter::Filter::CellsPerColumnLimitFilter(kept)));
                if min >= max || min > MAX_MILLIS {
                    chain.push(filter(row_filter::Filter::BlockAllFilter(true)));
                } else {
                    chain.push(filter(row_filter::Filter::TimestampRangeFilter(TimestampRange {
                        start_timestamp_micros: micros(min),
                        // 0 is Bigtable's open end.
                        end_timestamp_micros: if max > MAX_MILLIS { 0 } else { micros(max) },
                    })));
                }
                chain.push(filter(row_filter::Filter::CellsPerColumnLimitFilter(asked)));
            }
            None => chain.push(filter(row_filter::Filter::CellsPerColumnLimitFilter(kept.min(asked)))),
        }
        // Bigtable leaves the order of a row's families unspecified: each family gives at most
        // the limit, and the client keeps the first cells in the model's order.
        if let Some(n) = sel.cell_limit {
            chain.push(filter(row_filter::Filter::CellsPerRowLimitFilter(
                n.min(i32::MAX as usize) as i32,
            )));
        }
        branches.push(combine(chain, true));
    }
    if branches.is_empty() {
        return filter(row_filter::Filter::BlockAllFilter(true));
    }
    combine(branches, false)
}

/// A scan's bounds as one Bigtable row range, or `None` when it holds no row.
pub(super) fn scan_range(scan: &Scan) -> Option<RowRange> {
    // (key, inclusive) of the low and high ends; empty keys are open.
    let (mut low, mut high) = if scan.reversed {
        ((scan.stop.clone(), false), (scan.start.clone(), !scan.start_exclusive))
    } else {
        ((scan.start.clone(), !scan.start_exclusive), (scan.stop.clone(), false))
    };
    if !scan.prefix.is_empty() {
        if low.0.is_empty() || scan.prefix > low.0 {
            low = (scan.prefix.clone(), true);
        }
        let end = crate::keys::next_prefix(&scan.prefix);
        if !end.is_empty() && (high.0.is_empty() || end <= high.0) {
            high = (end, false);
        }
    }
    if !low.0.is_empty() && !high.0.is_empty() && (low.0 > high.0 || (low.0 == high.0 && !(low.1 && high.1))) {
        return None;
    }
    Some(RowRange {
        start_key: (!low.0.is_empty()).then_some({
            if low.1 {
                row_range::StartKey::StartKeyClosed(low.0)
            } else {
                row_range::StartKey::StartKeyOpen(low.0)
            }
        }),
        end_key: (!high.0.is_empty()).then_some({
            if high.1 {
                row_range::EndKey::EndKeyClosed(high.0)
            } else {
                row_range::EndKey::EndKeyOpen(high.0)
            }
        }),
    })
}

impl Bigtable {
    /// The `ReadRows` request of a scan, or `None` when the scan can hold no row.
    pub(super) fn scan_request(&self, desc: &TableDescriptor, scan: &Scan) -> Result<Option<ReadRowsRequest>> {
        scan.select.validate(desc)?;
        if scan.limit == Some(0) {
            return Ok(None);
        }
        let Some(range) = scan_range(scan) else {
            return Ok(None);
        };
        Ok(Some(ReadRowsRequest {
            table_name: self.table_path(&super::names::table_id(&desc.name)?),
            rows: Some(RowSet {
                row_keys: Vec::new(),
                row_ranges: vec![range],
            }),
            filter: Some(selection_filter(desc, &scan.select)),
            rows_limit: scan.limit.map_or(0, |n| n.min(i64::MAX as usize) as i64),
            reversed: scan.reversed,
            ..Default::default()
        }))
    }

    /// Words a service that lacks reversed scans as such.
    pub(super) fn scan_error(&self, e: Error, scan: &Scan) -> Error {
        match e {
            Error::BadArgument(m) if scan.reversed && m.starts_with(UNSUPPORTED) => Error::BadArgument(format!(
                "{} does not support reversed scans ({})",
                self.where_(),
                &m[UNSUPPORTED.len()..]
            )),
            e => e,
        }
    }
}
