//! A batch of row mutations as Thrift1 calls: each row's steps (puts, then deletes, in
//! order), grouped by timestamp into `mutateRows(Ts)` calls, with puts a later put of the
//! same cell overwrites left out as HBase would keep the first.

use super::*;

/// One step of a row's mutations: a timestamp and Thrift mutations (puts, then deletes),
/// or a whole-row delete.
pub(super) enum Step {
    /// Consecutive mutations of the row, sent in one `BatchMutation`.
    Batch(Option<i64>, std::ops::Range<usize>),
    DeleteRow(Option<i64>),
}

/// A put's cell: row, family, qualifier and timestamp (none: the server's clock).
pub(super) type CellId<'a> = (&'a [u8], &'a str, &'a [u8], Option<i64>);

pub(super) fn put_cell<'a>(row: &'a [u8], m: &'a StoreMutation) -> Option<CellId<'a>> {
    match m {
        StoreMutation::Put {
            family,
            qualifier,
            timestamp,
            ..
        } => Some((row, family, qualifier, *timestamp)),
        _ => None,
    }
}

/// The batch without the puts that a later put of the same cell in it overwrites, or None
/// when there are none. HBase, given both in one call, keeps the first; the store keeps the
/// last. (A delete between them hides both or neither, so dropping the first is exact.)
pub(super) fn without_overwritten(rows: &[RowMutation]) -> Option<Vec<RowMutation>> {
    if !may_overwrite(rows) {
        return None;
    }
    let mut seen: HashSet<CellId> = HashSet::new();
    let mut out: Vec<RowMutation> = rows
        .iter()
        .rev()
        .map(|r| {
            let mut mutations: Vec<StoreMutation> = r
                .mutations
                .iter()
                .rev()
                .filter(|m| put_cell(&r.row, m).is_none_or(|cell| seen.insert(cell)))
                .cloned()
                .collect();
            mutations.reverse();
            RowMutation::new(r.row.clone(), mutations)
        })
        .collect();
    out.reverse();
    out.retain(|r| !r.mutations.is_empty());
    Some(out)
}

/// Whether any two puts of the batch name the same cell, run on every batch: only then does
/// `without_overwritten` copy it. Borrowed cell ids in a set with a fast hash cost no
/// allocation per cell, where copying the batch would cost several.
pub(super) fn may_overwrite(rows: &[RowMutation]) -> bool {
    let cells = rows.iter().map(|r| r.mutations.len()).sum();
    let mut seen: rustc_hash::FxHashSet<CellId> =
        rustc_hash::FxHashSet::with_capacity_and_hasher(cells, Default::default());
    !rows
        .iter()
        .flat_map(|r| r.mutations.iter().filter_map(|m| put_cell(&r.row, m)))
        .all(|cell| seen.insert(cell))
}

/// Splits a row's mutations into steps that Thrift1 applies as the store would: one
/// timestamp per step, and no put after a delete within one (HBase applies a call's puts
/// first).
pub(super) fn steps(rm: &RowMutation) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut has_delete = false;
    for (i, m) in rm.mutations.iter().enumerate() {
        let ts = m.timestamp();
        let is_delete = match m {
            StoreMutation::Put { .. } => false,
            StoreMutation::DeleteColumn { .. }
            | StoreMutation::DeleteFamily { .. }
            | StoreMutation::DeleteVersion { .. }
            | StoreMutation::DeleteFamilyVersion { .. } => true,
            StoreMutation::DeleteRow { timestamp } => {
                out.push(Step::DeleteRow(*timestamp));
                has_delete = false;
                continue;
            }
        };
        match out.last_mut() {
            Some(Step::Batch(t, range)) if *t == ts && (is_delete || !has_delete) => range.end = i + 1,
            _ => {
                out.push(Step::Batch(ts, i..i + 1));
                has_delete = false;
            }
        }
        has_delete |= is_delete;
    }
    out
}

/// A row and the mutations of one of its steps.
pub(super) type RowStep<'a> = (&'a [u8], &'a [StoreMutation]);
