//! HBase's filter language (the `filterString` of a Thrift scan), parsed as HBase's
//! `ParseFilter` parses it: simple expressions `Name(arg, ...)` with quoted byte-string
//! arguments (`''` escapes a quote) and bare integers, booleans and compare operators,
//! combined with `SKIP` and `WHILE` (tightest), `AND`, then `OR`, and parentheses.
//!
//! Anything the server cannot honour exactly (an unknown filter, a wrong argument) is an
//! error that becomes Thrift's `IllegalArgument`, never a silently unfiltered scan.

use regex_lite::Regex;

/// A parsed filter.
#[derive(Debug, Clone)]
pub enum Filter {
    /// `KeyOnlyFilter([lenAsVal])`: cells without values (or with the value's length).
    KeyOnly {
        /// Replace each value by its 4-byte big-endian length.
        len_as_value: bool,
    },
    /// `FirstKeyOnlyFilter()`: the first cell of each row.
    FirstKeyOnly,
    /// `PrefixFilter('p')`: rows whose key starts with `p`.
    Prefix(Vec<u8>),
    /// `ColumnPrefixFilter('p')`: cells whose qualifier starts with `p`.
    ColumnPrefix(Vec<u8>),
    /// `MultipleColumnPrefixFilter('a', 'b', ...)`: cells whose qualifier starts with any.
    MultipleColumnPrefix(Vec<Vec<u8>>),
    /// `ColumnCountGetFilter(n)`: the first `n` columns of a row.
    ColumnCountGet(u32),
    /// `PageFilter(n)`: at most `n` rows.
    Page(u64),
    /// `ColumnPaginationFilter(limit, offset)`: `limit` columns of each row after `offset`.
    ColumnPagination {
        /// Columns kept.
        limit: u32,
        /// Columns skipped first.
        offset: u32,
    },
    /// `InclusiveStopFilter('row')`: rows up to and including `row`.
    InclusiveStop(Vec<u8>),
    /// `TimestampsFilter(t, ...)`: cells with one of these timestamps.
    Timestamps(Vec<i64>),
    /// `RowFilter(op, 'comparator')`.
    Row(CompareOp, Comparator),
    /// `FamilyFilter(op, 'comparator')`.
    Family(CompareOp, Comparator),
    /// `QualifierFilter(op, 'comparator')`.
    Qualifier(CompareOp, Comparator),
    /// `ValueFilter(op, 'comparator')`.
    Value(CompareOp, Comparator),
    /// `ColumnRangeFilter('min', minInclusive, 'max', maxInclusive)`; an empty bound is open.
    ColumnRange {
        /// Lower qualifier bound.
        min: Vec<u8>,
        /// Whether `min` itself is in.
        min_inclusive: bool,
        /// Upper qualifier bound.
        max: Vec<u8>,
        /// Whether `max` itself is in.
        max_inclusive: bool,
    },
    /// `SingleColumnValueFilter('f', 'q', op, 'comparator'[, filterIfMissing,
    /// latestVersionOnly])` and its `Exclude` variant, which also drops the tested column.
    SingleColumnValue {
        /// Family tested.
        family: Vec<u8>,
        /// Qualifier tested.
        qualifier: Vec<u8>,
        /// How the value compares.
        op: CompareOp,
        /// To what.
        comparator: Comparator,
        /// Drop rows without the column (default: keep them).
        filter_if_missing: bool,
        /// Test only the newest version (default: yes).
        latest_version_only: bool,
        /// Drop the tested column from rows kept.
        exclude: bool,
    },
    /// `SKIP f`: drops a whole row when `f` drops any of its cells.
    Skip(Box<Filter>),
    /// `WHILE f`: ends the scan at the first row `f` drops any of.
    While(Box<Filter>),
    /// `f AND g ...`: a cell passes when every filter passes it.
    All(Vec<Filter>),
    /// `f OR g ...`: a cell passes when any filter passes it.
    Any(Vec<Filter>),
}

impl Filter {
    /// HBase's `Filter.hasFilterRow()`: whether the filter decides on whole rows, which a
    /// scan with a batch size (rows split into parts) cannot give it.
    pub fn has_filter_row(&self) -> bool {
        match self {
            Filter::Page(_) | Filter::SingleColumnValue { .. } | Filter::Skip(_) | Filter::While(_) => true,
            Filter::All(fs) | Filter::Any(fs) => fs.iter().any(Filter::has_filter_row),
            _ => false,
        }
    }
}

/// HBase's compare operators, read as "stored value OP argument".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `>=`
    GreaterOrEqual,
    /// `>`
    Greater,
}

/// What a compare filter compares against.
#[derive(Debug, Clone)]
pub enum Comparator {
    /// `binary:bytes`: byte-wise order.
    Binary(Vec<u8>),
    /// `binaryprefix:bytes`: byte-wise order of the value's first `len(bytes)` bytes.
    BinaryPrefix(Vec<u8>),
    /// `regexstring:pattern`: equal when the pattern is found in the value.
    Regex(Regex),
    /// `substring:text`: equal when the value contains the text, ignoring case.
    Substring(String),
}

/// A filter string that is not one the server honours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("filter string: {0}")]
pub struct Error(pub String);

type Result<T> = std::result::Result<T, Error>;

fn bad<T>(message: impl Into<String>) -> Result<T> {
    Err(Error(message.into()))
}

/// Parses a filter string.
pub fn parse(text: &[u8]) -> Result<Filter> {
    let mut p = Parser {
        s: text,
        i: 0,
        depth: 0,
    };
    let f = p.or()?;
    p.skip_space();
    if p.i < p.s.len() {
        return bad(format!("unexpected {:?} at offset {}", char::from(p.s[p.i]), p.i));
    }
    Ok(f)
}

/// Nesting deeper than this is refused (a hostile string must not exhaust the stack).
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t') {
            self.i += 1;
        }
    }

    /// Whether `word` starts here, followed by a space or `(` (HBase's keyword rule).
    fn keyword(&mut self, word: &[u8]) -> bool {
        self.skip_space();
        let end = self.i + word.len();
        if self.s.len() > end && self.s[self.i..end] == *word && matches!(self.s[end], b' ' | b'\t' | b'(') {
            self.i = end;
            return true;
        }
        false
    }

    fn or(&mut self) -> Result<Filter> {
        let mut parts = vec![self.and()?];
        while self.keyword(b"OR") {
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Filter::Any(parts)
        })
    }

    fn and(&mut self) -> Result<Filter> {
        let mut parts = vec![self.unary()?];
        while self.keyword(b"AND") {
            parts.push(self.unary()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Filter::All(parts)
        })
    }

    fn unary(&mut self) -> Result<Filter> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return bad(format!("nested deeper than {MAX_DEPTH}"));
        }
        let f = if self.keyword(b"SKIP") {
            Filter::Skip(Box::new(self.unary()?))
        } else if self.keyword(b"WHILE") {
            Filter::While(Box::new(self.unary()?))
        } else {
            self.skip_space();
            match self.s.get(self.i) {
                None => return bad("a filter is missing at the end"),
                Some(b'(') => {
                    self.i += 1;
                    let f = self.or()?;
                    self.skip_space();
                    if self.s.get(self.i) != Some(&b')') {
                        return bad(format!("mismatched parenthesis at offset {}", self.i));
                    }
                    self.i += 1;
                    f
                }
                Some(_) => self.simple()?,
            }
        };
        self.depth -= 1;
        Ok(f)
    }

    /// `Name(arg, ...)`.
    fn simple(&mut self) -> Result<Filter> {
        let start = self.i;
        while self.i < self.s.len() && !matches!(self.s[self.i], b'(' | b' ' | b'\t') {
            self.i += 1;
        }
        let name = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        if name.is_empty() {
            return bad(format!("a filter name is missing at offset {start}"));
        }
        self.skip_space();
        if self.s.get(self.i) != Some(&b'(') {
            return bad(format!("{name}: an argument list is missing"));
        }
        self.i += 1;
        let mut args = Vec::new();
        loop {
            while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b',') {
                self.i += 1;
            }
            match self.s.get(self.i) {
                None => return bad(format!("{name}: the argument list is not closed")),
                Some(b')') => {
                    self.i += 1;
                    break;
                }
                Some(b'\'') => args.push(Arg::Quoted(self.quoted(&name)?)),
                Some(_) => {
                    let s = self.i;
                    while self.i < self.s.len() && !matches!(self.s[self.i], b' ' | b'\t' | b',' | b')') {
                        self.i += 1;
                    }
                    args.push(Arg::Bare(String::from_utf8_lossy(&self.s[s..self.i]).into_owned()));
                }
            }
        }
        build(&name, args)
    }

    /// A quoted argument, `''` standing for one quote.
    fn quoted(&mut self, name: &str) -> Result<Vec<u8>> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.i) {
                None => return bad(format!("{name}: a quoted argument is not closed")),
                Some(b'\'') if self.s.get(self.i + 1) == Some(&b'\'') => {
                    out.push(b'\'');
                    self.i += 2;
                }
                Some(b'\'') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(&c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

enum Arg {
    Quoted(Vec<u8>),
    Bare(String),
}

fn quoted(name: &str, a: &Arg) -> Result<Vec<u8>> {
    match a {
        Arg::Quoted(b) => Ok(b.clone()),
        Arg::Bare(s) => bad(format!("{name}: expected a quoted argument, got {s}")),
    }
}

fn bare<'a>(name: &str, a: &'a Arg) -> Result<&'a str> {
    match a {
        Arg::Bare(s) => Ok(s),
        Arg::Quoted(b) => bad(format!(
            "{name}: expected a number, boolean or operator, got '{}'",
            String::from_utf8_lossy(b)
        )),
    }
}

fn long(name: &str, a: &Arg) -> Result<i64> {
    let s = bare(name, a)?;
    s.parse().or_else(|_| bad(format!("{name}: {s} is not an integer")))
}

fn count(name: &str, a: &Arg) -> Result<u32> {
    let n = long(name, a)?;
    u32::try_from(n).or_else(|_| bad(format!("{name}: {n} is not a count between 0 and 4294967295")))
}

fn boolean(name: &str, a: &Arg) -> Result<bool> {
    let s = bare(name, a)?;
    match s.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => bad(format!("{name}: {s} is not true or false")),
    }
}

fn compare_op(name: &str, a: &Arg) -> Result<CompareOp> {
    Ok(match bare(name, a)? {
        "<" => CompareOp::Less,
        "<=" => CompareOp::LessOrEqual,
        "=" => CompareOp::Equal,
        "!=" => CompareOp::NotEqual,
        ">=" => CompareOp::GreaterOrEqual,
        ">" => CompareOp::Greater,
        other => return bad(format!("{name}: invalid compare operator {other}")),
    })
}

fn comparator(name: &str, a: &Arg, op: CompareOp) -> Result<Comparator> {
    let text = quoted(name, a)?;
    let Some(colon) = text.iter().position(|&c| c == b':') else {
        return bad(format!(
            "{name}: comparator {:?} is not type:value",
            String::from_utf8_lossy(&text)
        ));
    };
    let (kind, value) = (&text[..colon], text[colon + 1..].to_vec());
    let c = match kind {
        b"binary" => Comparator::Binary(value),
        b"binaryprefix" => Comparator::BinaryPrefix(value),
        b"regexstring" => {
            let pattern = String::from_utf8_lossy(&value).into_owned();
            Comparator::Regex(Regex::new(&pattern).or_else(|e| bad(format!("{name}: bad regular expression: {e}")))?)
        }
        b"substring" => Comparator::Substring(String::from_utf8_lossy(&value).to_lowercase()),
        other => {
            return bad(format!(
                "{name}: unknown comparator type {:?} (binary, binaryprefix, regexstring or substring)",
                String::from_utf8_lossy(other)
            ));
        }
    };
    if matches!(c, Comparator::Regex(_) | Comparator::Substring(_))
        && !matches!(op, CompareOp::Equal | CompareOp::NotEqual)
    {
        return bad(format!(
            "{name}: a regexstring or substring comparator can only be used with = and !="
        ));
    }
    Ok(c)
}

fn arity(name: &str, args: &[Arg], allowed: &[usize]) -> Result<()> {
    if allowed.contains(&args.len()) {
        return Ok(());
    }
    let want: Vec<String> = allowed.iter().map(usize::to_string).collect();
    bad(format!(
        "{name} takes {} arguments, got {}",
        want.join(" or "),
        args.len()
    ))
}

fn build(name: &str, args: Vec<Arg>) -> Result<Filter> {
    let a = &args;
    Ok(match name {
        "KeyOnlyFilter" => {
            arity(name, a, &[0, 1])?;
            Filter::KeyOnly {
                len_as_value: match a.first() {
                    Some(x) => boolean(name, x)?,
                    None => false,
                },
            }
        }
        "FirstKeyOnlyFilter" => {
            arity(name, a, &[0])?;
            Filter::FirstKeyOnly
        }
        "PrefixFilter" => {
            arity(name, a, &[1])?;
            Filter::Prefix(quoted(name, &a[0])?)
        }
        "ColumnPrefixFilter" => {
            arity(name, a, &[1])?;
            Filter::ColumnPrefix(quoted(name, &a[0])?)
        }
        "MultipleColumnPrefixFilter" => {
            if a.is_empty() {
                return bad(format!("{name} takes at least 1 argument"));
            }
            Filter::MultipleColumnPrefix(a.iter().map(|x| quoted(name, x)).collect::<Result<_>>()?)
        }
        "ColumnCountGetFilter" => {
            arity(name, a, &[1])?;
            Filter::ColumnCountGet(count(name, &a[0])?)
        }
        "PageFilter" => {
            arity(name, a, &[1])?;
            let n = long(name, &a[0])?;
            Filter::Page(u64::try_from(n).or_else(|_| bad(format!("{name}: page size {n} is negative")))?)
        }
        "ColumnPaginationFilter" => {
            arity(name, a, &[2])?;
            Filter::ColumnPagination {
                limit: count(name, &a[0])?,
                offset: count(name, &a[1])?,
            }
        }
        "InclusiveStopFilter" => {
            arity(name, a, &[1])?;
            Filter::InclusiveStop(quoted(name, &a[0])?)
        }
        "TimestampsFilter" => Filter::Timestamps(
            a.iter()
                .map(|x| {
                    let t = long(name, x)?;
                    if t < 0 {
                        return bad(format!("{name}: timestamp {t} is negative"));
                    }
                    Ok(t)
                })
                .collect::<Result<_>>()?,
        ),
        "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
            arity(name, a, &[2])?;
            let op = compare_op(name, &a[0])?;
            let c = comparator(name, &a[1], op)?;
            match name {
                "RowFilter" => Filter::Row(op, c),
                "FamilyFilter" => Filter::Family(op, c),
                "QualifierFilter" => Filter::Qualifier(op, c),
                _ => Filter::Value(op, c),
            }
        }
        "ColumnRangeFilter" => {
            arity(name, a, &[4])?;
            Filter::ColumnRange {
                min: quoted(name, &a[0])?,
                min_inclusive: boolean(name, &a[1])?,
                max: quoted(name, &a[2])?,
                max_inclusive: boolean(name, &a[3])?,
            }
        }
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
            arity(name, a, &[4, 6])?;
            let op = compare_op(name, &a[2])?;
            Filter::SingleColumnValue {
                family: quoted(name, &a[0])?,
                qualifier: quoted(name, &a[1])?,
                op,
                comparator: comparator(name, &a[3], op)?,
                filter_if_missing: match a.get(4) {
                    Some(x) => boolean(name, x)?,
                    None => false,
                },
                latest_version_only: match a.get(5) {
                    Some(x) => boolean(name, x)?,
                    None => true,
                },
                exclude: name == "SingleColumnValueExcludeFilter",
            }
        }
        other => {
            return bad(format!("filter {other} is not supported"));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Filter {
        parse(s.as_bytes()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        parse(s.as_bytes()).expect_err(s).0
    }

    #[test]
    fn simple_filters_and_their_arguments() {
        assert!(matches!(ok("PrefixFilter('row1')"), Filter::Prefix(p) if p == b"row1"));
        assert!(matches!(ok("KeyOnlyFilter()"), Filter::KeyOnly { len_as_value: false }));
        assert!(matches!(
            ok("KeyOnlyFilter(true)"),
            Filter::KeyOnly { len_as_value: true }
        ));
        assert!(matches!(ok(" FirstKeyOnlyFilter ( ) "), Filter::FirstKeyOnly));
        assert!(matches!(ok("PageFilter(10)"), Filter::Page(10)));
        assert!(matches!(
            ok("ColumnPaginationFilter(3, 2)"),
            Filter::ColumnPagination { limit: 3, offset: 2 }
        ));
        assert!(matches!(ok("TimestampsFilter(5,7, 9)"), Filter::Timestamps(t) if t == [5, 7, 9]));
        assert!(matches!(
            ok("MultipleColumnPrefixFilter('a','b c')"),
            Filter::MultipleColumnPrefix(p) if p == [b"a".to_vec(), b"b c".to_vec()]
        ));
        // '' stands for a quote; parentheses and keywords inside quotes are data.
        assert!(matches!(ok("PrefixFilter('it''s (OR) AND')"), Filter::Prefix(p) if p == b"it's (OR) AND"));
        let f = ok("SingleColumnValueFilter('info', 'name', =, 'binary:user7', true, false)");
        assert!(matches!(
            f,
            Filter::SingleColumnValue { ref family, op: CompareOp::Equal, filter_if_missing: true,
                latest_version_only: false, exclude: false, .. } if family == b"info"
        ));
        let f = ok("SingleColumnValueExcludeFilter('f','q',>=,'binaryprefix:ab')");
        assert!(matches!(
            f,
            Filter::SingleColumnValue { op: CompareOp::GreaterOrEqual, filter_if_missing: false,
                latest_version_only: true, exclude: true, comparator: Comparator::BinaryPrefix(ref v), .. }
                if v == b"ab"
        ));
        assert!(
            matches!(ok("ValueFilter(!=, 'substring:AbC')"), Filter::Value(CompareOp::NotEqual, Comparator::Substring(s)) if s == "abc")
        );
        assert!(
            matches!(ok("RowFilter(<, 'binary:a:b')"), Filter::Row(CompareOp::Less, Comparator::Binary(v)) if v == b"a:b")
        );
        assert!(matches!(
            ok("QualifierFilter(=, 'regexstring:^c[0-9]+$')"),
            Filter::Qualifier(CompareOp::Equal, Comparator::Regex(_))
        ));
        assert!(matches!(
            ok("ColumnRangeFilter('a', true, 'c', false)"),
            Filter::ColumnRange {
                min_inclusive: true,
                max_inclusive: false,
                ..
            }
        ));
    }

    #[test]
    fn operators_bind_skip_and_while_tightest_then_and_then_or() {
        let f = ok("PrefixFilter('a') OR PrefixFilter('b') AND SKIP ValueFilter(=, 'binary:x')");
        let Filter::Any(or) = f else { panic!("OR on top") };
        assert_eq!(or.len(), 2);
        assert!(matches!(&or[0], Filter::Prefix(_)));
        let Filter::All(and) = &or[1] else {
            panic!("AND under OR")
        };
        assert!(matches!(&and[1], Filter::Skip(inner) if matches!(**inner, Filter::Value(..))));
        let f = ok("(PrefixFilter('a') OR PrefixFilter('b')) AND WHILE(PageFilter(3))");
        let Filter::All(and) = f else { panic!("AND on top") };
        assert!(matches!(&and[0], Filter::Any(v) if v.len() == 2));
        assert!(matches!(&and[1], Filter::While(_)));
        let f = ok("KeyOnlyFilter() AND FirstKeyOnlyFilter() AND PageFilter(1)");
        assert!(matches!(f, Filter::All(v) if v.len() == 3));
    }

    #[test]
    fn what_hbase_refuses_is_refused() {
        assert!(err("NoSuchFilter('x')").contains("NoSuchFilter is not supported"));
        assert!(err("PrefixFilter(row)").contains("expected a quoted argument"));
        assert!(err("PrefixFilter('a', 'b')").contains("takes 1 arguments, got 2"));
        assert!(err("PageFilter(-1)").contains("negative"));
        assert!(err("PageFilter('1')").contains("expected a number"));
        assert!(err("RowFilter(~, 'binary:a')").contains("invalid compare operator"));
        assert!(err("RowFilter(=, 'binary')").contains("not type:value"));
        assert!(err("RowFilter(=, 'bit:a')").contains("unknown comparator type"));
        assert!(err("RowFilter(<, 'substring:a')").contains("only be used with = and !="));
        assert!(err("ValueFilter(=, 'regexstring:(')").contains("bad regular expression"));
        assert!(err("PrefixFilter('a'").contains("not closed"));
        assert!(err("PrefixFilter('a)").contains("not closed"));
        assert!(err("(PrefixFilter('a')").contains("mismatched parenthesis"));
        assert!(err("PrefixFilter('a') AND ").contains("missing"));
        assert!(err("PrefixFilter('a') AND").contains("unexpected 'A'"));
        assert!(err("PrefixFilter('a') PrefixFilter('b')").contains("unexpected"));
        assert!(err("").contains("missing"));
        let deep = format!("{}PageFilter(1){}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(err(&deep).contains("nested deeper"));
    }
}
