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
    Some(overwritten_dropped(rows))
}

/// The copy of [`without_overwritten`], made once [`overwrites`] has found a cell put twice.
pub(super) fn overwritten_dropped(rows: &[RowMutation]) -> Vec<RowMutation> {
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
    out
}

/// Whether any two puts of the batch name the same cell, run on every batch: only then does
/// `without_overwritten` copy it.
pub(super) fn may_overwrite(rows: &[RowMutation]) -> bool {
    overwrites(&by_row(rows))
}

/// The batch's rows in row order, a row named twice in its order in the batch (a stable
/// sort: HBase's own order for a region's mutations, `RSRpcServices.doBatchOp`). Compared
/// first by their leading 8 bytes as one integer, the rest only on a tie.
pub(super) fn by_row(rows: &[RowMutation]) -> Vec<&RowMutation> {
    if rows.is_sorted_by(|a, b| a.row <= b.row) {
        return rows.iter().collect();
    }
    let head = |row: &[u8]| {
        let mut b = [0u8; 8];
        let n = row.len().min(8);
        b[..n].copy_from_slice(&row[..n]);
        u64::from_be_bytes(b)
    };
    let mut keyed: Vec<(u64, u32)> = rows.iter().enumerate().map(|(i, r)| (head(&r.row), i as u32)).collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| rows[a.1 as usize].row.cmp(&rows[b.1 as usize].row))
            .then(a.1.cmp(&b.1))
    });
    keyed.into_iter().map(|(_, i)| &rows[i as usize]).collect()
}

/// [`may_overwrite`] over rows in row order: two puts of one cell name one row, so only the
/// puts of each row key are compared, with no set and no hash per cell.
pub(super) fn overwrites(sorted: &[&RowMutation]) -> bool {
    let mut cells: Vec<CellId> = Vec::new();
    for group in sorted.chunk_by(|a, b| a.row == b.row) {
        if let [r] = group
            && r.mutations.len() < 2
        {
            continue;
        }
        cells.clear();
        for r in group {
            cells.extend(r.mutations.iter().filter_map(|m| put_cell(&r.row, m)));
        }
        if cells.len() > 1 {
            cells.sort_unstable();
            if cells.windows(2).any(|w| w[0] == w[1]) {
                return true;
            }
        }
    }
    false
}

/// Splits a row's mutations into steps that Thrift1 applies as the store would: one
/// timestamp per step, and no put after a delete within one (HBase applies a call's puts
/// first).
pub(super) fn steps(rm: &RowMutation) -> Vec<Step> {
    let mut out = Vec::new();
    steps_into(rm, &mut out);
    out
}

/// [`steps`], appended to `out` (a batch's rows share one list).
pub(super) fn steps_into(rm: &RowMutation, out: &mut Vec<Step>) {
    let first = out.len();
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
        let mine = out.len() > first;
        match out.last_mut().filter(|_| mine) {
            Some(Step::Batch(t, range)) if *t == ts && (is_delete || !has_delete) => range.end = i + 1,
            _ => {
                out.push(Step::Batch(ts, i..i + 1));
                has_delete = false;
            }
        }
        has_delete |= is_delete;
    }
}

/// A row and the mutations of one of its steps.
pub(super) type RowStep<'a> = (&'a [u8], &'a [StoreMutation]);
