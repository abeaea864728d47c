//! Applies a parsed filter to the rows of a scan the way HBase's region scanner drives its
//! `Filter` calls: `filterAllRemaining` before each row, `filterRowKey`, `filterCell` per
//! cell in key order (versions newest first), `transformCell`, `filterRowCells`, then
//! `filterRow` for rows that kept cells, and `reset` after each row.
//!
//! HBase's seek hints are folded into their effect: a filter that would seek past cells
//! skips them here. `NEXT_ROW` ends the current family's cells, as it does per store in HBase.

use super::filter::{Comparator, CompareOp, Filter};
use crate::store::{Cell, Row};

/// What `filterCell` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Code {
    Include,
    IncludeAndNextColumn,
    Skip,
    NextColumn,
    NextRow,
}

/// The outcome of one row.
#[derive(Debug)]
pub enum Verdict {
    /// The row, with the cells the filter kept.
    Keep(Row),
    /// The filter drops this row; the scan goes on.
    Drop,
    /// The filter is done: this row and every later one are out.
    Stop,
}

/// A filter with its per-scan and per-row state.
#[derive(Debug)]
pub struct Evaluator {
    root: Node,
}

#[derive(Debug, Default)]
struct State {
    row_out: bool,
    all_done: bool,
    count: u64,
    found: bool,
    matched: bool,
    column: Option<(String, Vec<u8>)>,
}

#[derive(Debug)]
enum Node {
    Leaf(Filter, State),
    Skip(Box<Node>, bool),
    While(Box<Node>, bool),
    All(Vec<Node>),
    Any(Vec<Node>),
}

fn compare(op: CompareOp, comparator: &Comparator, data: &[u8]) -> bool {
    let result = match comparator {
        Comparator::Binary(v) => v.as_slice().cmp(data),
        Comparator::BinaryPrefix(v) => v.as_slice().cmp(&data[..v.len().min(data.len())]),
        Comparator::Regex(re) => {
            if re.is_match(&String::from_utf8_lossy(data)) {
                std::cmp::Ordering::Equal
            } else {
                std::cmp::Ordering::Greater
            }
        }
        Comparator::Substring(s) => {
            if String::from_utf8_lossy(data).to_lowercase().contains(s.as_str()) {
                std::cmp::Ordering::Equal
            } else {
                std::cmp::Ordering::Greater
            }
        }
    };
    // True means "filter out", as in HBase's CompareFilter: the comparator's value is on the left.
    use std::cmp::Ordering::*;
    match op {
        CompareOp::Less => result != Greater,
        CompareOp::LessOrEqual => result == Less,
        CompareOp::Equal => result != Equal,
        CompareOp::NotEqual => result == Equal,
        CompareOp::GreaterOrEqual => result == Greater,
        CompareOp::Greater => result != Less,
    }
}

impl Node {
    fn build(f: Filter) -> Node {
        match f {
            Filter::Skip(inner) => Node::Skip(Box::new(Node::build(*inner)), false),
            Filter::While(inner) => Node::While(Box::new(Node::build(*inner)), false),
            Filter::All(list) => Node::All(list.into_iter().map(Node::build).collect()),
            Filter::Any(list) => Node::Any(list.into_iter().map(Node::build).collect()),
            leaf => Node::Leaf(leaf, State::default()),
        }
    }

    fn all_remaining(&self) -> bool {
        match self {
            Node::Leaf(f, st) => match f {
                Filter::Page(n) => st.count >= *n,
                Filter::Prefix(_) | Filter::InclusiveStop(_) => st.all_done,
                _ => false,
            },
            Node::Skip(inner, _) => inner.all_remaining(),
            Node::While(inner, done) => *done || inner.all_remaining(),
            Node::All(list) => list.iter().any(Node::all_remaining),
            Node::Any(list) => list.iter().all(Node::all_remaining),
        }
    }

    fn row_key(&mut self, row: &[u8], reversed: bool) -> bool {
        match self {
            Node::Leaf(f, st) => {
                let out = match f {
                    Filter::Prefix(p) => {
                        let head = &row[..p.len().min(row.len())];
                        let cmp = head.cmp(p.as_slice());
                        if (!reversed && cmp.is_gt()) || (reversed && cmp.is_lt()) {
                            st.all_done = true;
                        }
                        cmp.is_ne()
                    }
                    Filter::InclusiveStop(stop) => {
                        let cmp = stop.as_slice().cmp(row);
                        let past = if reversed { cmp.is_gt() } else { cmp.is_lt() };
                        if past {
                            st.all_done = true;
                        }
                        past
                    }
                    Filter::Row(op, c) => compare(*op, c, row),
                    _ => false,
                };
                st.row_out = out;
                out
            }
            Node::Skip(..) => false,
            Node::While(inner, done) => {
                let out = inner.row_key(row, reversed);
                *done |= out;
                out
            }
            Node::All(list) => {
                let mut out = false;
                for n in list {
                    out |= n.all_remaining() || n.row_key(row, reversed);
                }
                out
            }
            Node::Any(list) => {
                let mut out = true;
                for n in list {
                    out &= n.all_remaining() || n.row_key(row, reversed);
                }
                out
            }
        }
    }

    fn cell(&mut self, c: &Cell) -> Code {
        match self {
            Node::Leaf(f, st) => leaf_cell(f, st, c),
            Node::Skip(inner, drop) => {
                let code = inner.cell(c);
                *drop |= code != Code::Include;
                code
            }
            Node::While(inner, done) => {
                let code = inner.cell(c);
                *done |= code != Code::Include;
                code
            }
            Node::All(list) => {
                // The first filter that excludes a cell ends its evaluation, as HBase's
                // seek hints skip such cells before later filters see them: a
                // ColumnPaginationFilter after a ColumnRangeFilter counts only columns in range.
                let mut code = Code::Include;
                for n in list {
                    let this = if n.all_remaining() { Code::NextRow } else { n.cell(c) };
                    code = code.max(this);
                    if code > Code::IncludeAndNextColumn {
                        break;
                    }
                }
                code
            }
            Node::Any(list) => {
                let mut code: Option<Code> = None;
                for n in list {
                    if n.all_remaining() || n.row_out() {
                        continue;
                    }
                    let this = n.cell(c);
                    code = Some(code.map_or(this, |c| c.min(this)));
                }
                code.unwrap_or(Code::NextRow)
            }
        }
    }

    /// Whether a WHILE below this node has tripped.
    fn tripped(&self) -> bool {
        match self {
            Node::Leaf(..) => false,
            Node::Skip(inner, _) => inner.tripped(),
            Node::While(_, done) => *done,
            Node::All(list) | Node::Any(list) => list.iter().any(Node::tripped),
        }
    }

    /// Whether this node's row key test already dropped the row.
    fn row_out(&self) -> bool {
        match self {
            Node::Leaf(_, st) => st.row_out,
            _ => false,
        }
    }

    fn transform(&self, c: &mut Cell) {
        match self {
            Node::Leaf(Filter::KeyOnly { len_as_value }, _) => {
                c.value = if *len_as_value {
                    (c.value.len() as u32).to_be_bytes().to_vec()
                } else {
                    Vec::new()
                };
            }
            Node::Leaf(..) => {}
            Node::Skip(inner, _) | Node::While(inner, _) => inner.transform(c),
            Node::All(list) | Node::Any(list) => list.iter().for_each(|n| n.transform(c)),
        }
    }

    fn row_cells(&self, cells: &mut Vec<Cell>) {
        match self {
            Node::Leaf(
                Filter::SingleColumnValue {
                    family,
                    qualifier,
                    exclude: true,
                    ..
                },
                _,
            ) => cells.retain(|c| !(c.family.as_bytes() == family.as_slice() && &c.qualifier == qualifier)),
            Node::Leaf(..) => {}
            Node::Skip(inner, _) | Node::While(inner, _) => inner.row_cells(cells),
            Node::All(list) | Node::Any(list) => list.iter().for_each(|n| n.row_cells(cells)),
        }
    }

    fn filter_row(&mut self) -> bool {
        match self {
            Node::Leaf(f, st) => match f {
                Filter::Page(n) => {
                    st.count += 1;
                    st.count > *n
                }
                Filter::SingleColumnValue { filter_if_missing, .. } => {
                    if st.found {
                        !st.matched
                    } else {
                        *filter_if_missing
                    }
                }
                _ => false,
            },
            Node::Skip(inner, drop) => *drop || inner.filter_row(),
            Node::While(inner, done) => {
                let out = inner.filter_row();
                *done |= out;
                out
            }
            Node::All(list) => list.iter_mut().any(Node::filter_row),
            Node::Any(list) => {
                let mut out = true;
                for n in list {
                    out &= n.filter_row();
                }
                out
            }
        }
    }

    fn reset(&mut self) {
        match self {
            Node::Leaf(f, st) => {
                st.row_out = false;
                st.found = false;
                st.matched = false;
                st.column = None;
                if !matches!(f, Filter::Page(_)) {
                    st.count = 0;
                }
            }
            Node::Skip(inner, drop) => {
                *drop = false;
                inner.reset();
            }
            Node::While(inner, _) => inner.reset(),
            Node::All(list) | Node::Any(list) => list.iter_mut().for_each(Node::reset),
        }
    }
}

fn leaf_cell(f: &Filter, st: &mut State, c: &Cell) -> Code {
    // Counts distinct columns for the column-counting filters.
    let next_column = |st: &mut State| {
        let same = st
            .column
            .as_ref()
            .is_some_and(|(fam, q)| *fam == c.family && *q == c.qualifier);
        if !same {
            st.column = Some((c.family.clone(), c.qualifier.clone()));
            st.count += 1;
        }
        same
    };
    match f {
        Filter::FirstKeyOnly => {
            if st.found {
                Code::NextRow
            } else {
                st.found = true;
                Code::Include
            }
        }
        Filter::ColumnPrefix(p) => {
            if c.qualifier.starts_with(p) {
                Code::Include
            } else {
                Code::Skip
            }
        }
        Filter::MultipleColumnPrefix(ps) => {
            if ps.iter().any(|p| c.qualifier.starts_with(p)) {
                Code::Include
            } else {
                Code::Skip
            }
        }
        Filter::ColumnCountGet(n) => {
            next_column(st);
            if st.count > u64::from(*n) {
                Code::NextColumn
            } else {
                Code::IncludeAndNextColumn
            }
        }
        Filter::ColumnPagination { limit, offset } => {
            next_column(st);
            let index = st.count - 1;
            if index < u64::from(*offset) {
                Code::NextColumn
            } else if index < u64::from(*offset) + u64::from(*limit) {
                Code::IncludeAndNextColumn
            } else {
                Code::NextRow
            }
        }
        Filter::Timestamps(ts) => {
            if ts.contains(&c.timestamp) {
                Code::Include
            } else {
                Code::Skip
            }
        }
        Filter::Row(..) | Filter::Prefix(_) | Filter::InclusiveStop(_) => {
            if st.row_out {
                Code::NextRow
            } else {
                Code::Include
            }
        }
        Filter::Family(op, cmp) => {
            if compare(*op, cmp, c.family.as_bytes()) {
                Code::NextRow
            } else {
                Code::Include
            }
        }
        Filter::Qualifier(op, cmp) => {
            if compare(*op, cmp, &c.qualifier) {
                Code::Skip
            } else {
                Code::Include
            }
        }
        Filter::Value(op, cmp) => {
            if compare(*op, cmp, &c.value) {
                Code::Skip
            } else {
                Code::Include
            }
        }
        Filter::ColumnRange {
            min,
            min_inclusive,
            max,
            max_inclusive,
        } => {
            let q = c.qualifier.as_slice();
            let low = min.is_empty() || q > min.as_slice() || (*min_inclusive && q == min.as_slice());
            let high = max.is_empty() || q < max.as_slice() || (*max_inclusive && q == max.as_slice());
            if low && high { Code::Include } else { Code::Skip }
        }
        Filter::SingleColumnValue {
            family,
            qualifier,
            op,
            comparator,
            latest_version_only,
            ..
        } => {
            if st.matched {
                return Code::Include;
            }
            if *latest_version_only && st.found {
                return Code::NextRow;
            }
            if c.family.as_bytes() != family.as_slice() || c.qualifier != *qualifier {
                return Code::Include;
            }
            st.found = true;
            if compare(*op, comparator, &c.value) {
                return if *latest_version_only {
                    Code::NextRow
                } else {
                    Code::Include
                };
            }
            st.matched = true;
            Code::Include
        }
        Filter::KeyOnly { .. } | Filter::Page(_) => Code::Include,
        Filter::Skip(_) | Filter::While(_) | Filter::All(_) | Filter::Any(_) => {
            unreachable!("composite filters are nodes")
        }
    }
}

impl Evaluator {
    /// A fresh evaluation of `filter` for one scan.
    pub fn new(filter: Filter) -> Self {
        Evaluator {
            root: Node::build(filter),
        }
    }

    /// Filters one row whose cells are in key order with every stored version the read
    /// selects; `max_versions` applies after the filter, as in HBase.
    pub fn row(&mut self, row: Row, max_versions: u32, reversed: bool) -> Verdict {
        if self.root.all_remaining() {
            return Verdict::Stop;
        }
        let verdict = self.evaluate(row, max_versions, reversed);
        self.root.reset();
        // A WHILE that trips inside a row ends the scan there, taking that row with it.
        if self.root.tripped() {
            return Verdict::Stop;
        }
        match verdict {
            Verdict::Drop if self.root.all_remaining() => Verdict::Stop,
            v => v,
        }
    }

    fn evaluate(&mut self, row: Row, max_versions: u32, reversed: bool) -> Verdict {
        if self.root.row_key(&row.key, reversed) {
            return Verdict::Drop;
        }
        let mut kept = Vec::new();
        let mut skip_family: Option<String> = None;
        let mut skip_column: Option<(String, Vec<u8>)> = None;
        let mut versions: (Option<(String, Vec<u8>)>, u32) = (None, 0);
        for cell in row.cells {
            if skip_family.as_deref() == Some(cell.family.as_str()) {
                continue;
            }
            if skip_column
                .as_ref()
                .is_some_and(|(f, q)| *f == cell.family && *q == cell.qualifier)
            {
                continue;
            }
            let code = self.root.cell(&cell);
            match code {
                Code::Include | Code::IncludeAndNextColumn => {
                    let column = (cell.family.clone(), cell.qualifier.clone());
                    if versions.0.as_ref() != Some(&column) {
                        versions = (Some(column.clone()), 0);
                    }
                    versions.1 += 1;
                    if code == Code::IncludeAndNextColumn {
                        skip_column = Some(column);
                    }
                    if versions.1 <= max_versions {
                        let mut cell = cell;
                        self.root.transform(&mut cell);
                        kept.push(cell);
                    }
                }
                Code::Skip => {}
                Code::NextColumn => skip_column = Some((cell.family.clone(), cell.qualifier.clone())),
                Code::NextRow => skip_family = Some(cell.family.clone()),
            }
        }
        self.root.row_cells(&mut kept);
        if kept.is_empty() || self.root.filter_row() {
            return Verdict::Drop;
        }
        Verdict::Keep(Row {
            key: row.key,
            cells: kept,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::filter::parse;
    use super::*;

    fn cell(f: &str, q: &str, ts: i64, v: &str) -> Cell {
        Cell {
            family: f.into(),
            qualifier: q.as_bytes().to_vec(),
            timestamp: ts,
            value: v.as_bytes().to_vec(),
        }
    }

    fn rows() -> Vec<Row> {
        let r = |k: &str, cells: Vec<Cell>| Row {
            key: k.as_bytes().to_vec(),
            cells,
        };
        vec![
            r(
                "a1",
                vec![
                    cell("f", "name", 2, "Ann"),
                    cell("f", "name", 1, "Anne"),
                    cell("g", "x", 1, "1"),
                ],
            ),
            r("a2", vec![cell("f", "age", 1, "30"), cell("f", "name", 1, "Bob")]),
            r("b1", vec![cell("f", "name", 1, "carol"), cell("g", "y", 1, "22")]),
            r("b2", vec![cell("g", "z", 1, "zed")]),
        ]
    }

    /// Row keys and `family:qualifier=value@ts` of what the filter keeps.
    fn run(filter: &str, versions: u32, reversed: bool) -> Vec<String> {
        let mut e = Evaluator::new(parse(filter.as_bytes()).unwrap());
        let mut rows = rows();
        if reversed {
            rows.reverse();
        }
        let mut out = Vec::new();
        for row in rows {
            match e.row(row, versions, reversed) {
                Verdict::Keep(r) => {
                    let cells: Vec<String> = r
                        .cells
                        .iter()
                        .map(|c| {
                            format!(
                                "{}:{}={}@{}",
                                c.family,
                                String::from_utf8_lossy(&c.qualifier),
                                String::from_utf8_lossy(&c.value),
                                c.timestamp
                            )
                        })
                        .collect();
                    out.push(format!("{} {}", String::from_utf8_lossy(&r.key), cells.join(",")));
                }
                Verdict::Drop => {}
                Verdict::Stop => break,
            }
        }
        out
    }

    fn keys(filter: &str) -> Vec<String> {
        run(filter, 1, false)
            .into_iter()
            .map(|s| s.split(' ').next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn row_filters() {
        assert_eq!(keys("PrefixFilter('a')"), ["a1", "a2"]);
        assert_eq!(keys("RowFilter(>=, 'binary:a2')"), ["a2", "b1", "b2"]);
        assert_eq!(keys("RowFilter(<, 'binary:a2')"), ["a1"]);
        assert_eq!(keys("RowFilter(=, 'binaryprefix:b')"), ["b1", "b2"]);
        assert_eq!(keys("RowFilter(=, 'regexstring:^[ab]2$')"), ["a2", "b2"]);
        assert_eq!(keys("RowFilter(!=, 'substring:A')"), ["b1", "b2"]);
        assert_eq!(keys("InclusiveStopFilter('b1')"), ["a1", "a2", "b1"]);
        assert_eq!(keys("PageFilter(3)"), ["a1", "a2", "b1"]);
        assert_eq!(keys("PrefixFilter('a') OR PrefixFilter('b2')"), ["a1", "a2", "b2"]);
        assert_eq!(
            keys("(PrefixFilter('a') OR PrefixFilter('b')) AND PageFilter(1)"),
            ["a1"]
        );
        let reversed: Vec<String> = run("PrefixFilter('b')", 1, true)
            .into_iter()
            .map(|s| s[..2].to_string())
            .collect();
        assert_eq!(reversed, ["b2", "b1"]);
    }

    #[test]
    fn cell_filters_and_transforms() {
        assert_eq!(run("FirstKeyOnlyFilter()", 1, false)[0], "a1 f:name=Ann@2");
        assert_eq!(run("KeyOnlyFilter()", 1, false)[3], "b2 g:z=@1");
        assert_eq!(run("KeyOnlyFilter(true)", 1, false)[3], "b2 g:z=\0\0\0\x03@1");
        assert_eq!(keys("ColumnPrefixFilter('na')"), ["a1", "a2", "b1"]);
        assert_eq!(
            run("MultipleColumnPrefixFilter('ag', 'z')", 1, false),
            ["a2 f:age=30@1", "b2 g:z=zed@1"]
        );
        assert_eq!(run("QualifierFilter(=, 'binary:y')", 1, false), ["b1 g:y=22@1"]);
        assert_eq!(run("FamilyFilter(=, 'binary:g')", 1, false)[0], "a1 g:x=1@1");
        // ValueFilter sees every version; the version limit applies to what passes.
        assert_eq!(run("ValueFilter(=, 'binary:Anne')", 1, false), ["a1 f:name=Anne@1"]);
        assert_eq!(
            run("ValueFilter(=, 'substring:ANN')", 2, false)[0],
            "a1 f:name=Ann@2,f:name=Anne@1"
        );
        assert_eq!(run("ColumnCountGetFilter(1)", 1, false)[1], "a2 f:age=30@1");
        assert_eq!(
            run("ColumnPaginationFilter(1, 1)", 1, false)[..2],
            ["a1 g:x=1@1", "a2 f:name=Bob@1"]
        );
        assert_eq!(run("TimestampsFilter(2)", 1, false), ["a1 f:name=Ann@2"]);
        // Pagination after a range counts only the columns in range.
        assert_eq!(
            run(
                "ColumnRangeFilter('b', false, '', false) AND ColumnPaginationFilter(1, 0)",
                1,
                false
            ),
            [
                "a1 f:name=Ann@2",
                "a2 f:name=Bob@1",
                "b1 f:name=carol@1",
                "b2 g:z=zed@1"
            ]
        );
        assert_eq!(
            run("ColumnRangeFilter('b', true, 'x', false)", 1, false),
            ["a1 f:name=Ann@2", "a2 f:name=Bob@1", "b1 f:name=carol@1"]
        );
        // A KeyOnly transform comes after the value test.
        assert_eq!(
            run("KeyOnlyFilter() AND ValueFilter(=, 'binary:Bob')", 1, false),
            ["a2 f:name=@1"]
        );
    }

    #[test]
    fn single_column_value_filters() {
        assert_eq!(
            keys("SingleColumnValueFilter('f', 'name', =, 'binary:Bob')"),
            ["a2", "b2"]
        );
        assert_eq!(
            keys("SingleColumnValueFilter('f', 'name', =, 'binary:Bob', true, true)"),
            ["a2"]
        );
        // The newest version is "Ann", so "Anne" matches only when older versions count.
        assert_eq!(
            keys("SingleColumnValueFilter('f', 'name', =, 'binary:Anne', true, true)"),
            Vec::<String>::new()
        );
        assert_eq!(
            keys("SingleColumnValueFilter('f', 'name', =, 'binary:Anne', true, false)"),
            ["a1"]
        );
        assert_eq!(
            run(
                "SingleColumnValueExcludeFilter('f', 'name', =, 'binary:carol', true, true)",
                1,
                false
            ),
            ["b1 g:y=22@1"]
        );
    }

    #[test]
    fn skip_and_while() {
        // SKIP drops a whole row when any of its cells fails: a2 holds age=30.
        assert_eq!(keys("SKIP ValueFilter(!=, 'binary:30')"), ["a1", "b1", "b2"]);
        assert_eq!(keys("SKIP QualifierFilter(=, 'binary:name')"), Vec::<String>::new());
        assert_eq!(keys("WHILE RowFilter(<, 'binary:b')"), ["a1", "a2"]);
        assert_eq!(keys("WHILE ValueFilter(!=, 'binary:30')"), ["a1"]);
    }
}
