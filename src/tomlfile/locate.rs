//! Where in a TOML file a field is: dotted paths to line and column, and back.

use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The byte span of the value at a dotted path (`data.follows.mean`, `run.mix.publish`,
/// `run.stages[2].rate`), or of the deepest table on the path that exists.
pub(crate) fn span_of(src: &str, path: &str) -> Option<Range<usize>> {
    let root = DeTable::parse(src).ok()?;
    let mut span = root.span();
    let mut table: &DeTable = root.get_ref();
    for part in path.split('.') {
        // `stages[2]`: the second of an array of tables (validation counts from 1).
        let (key, index) = match part.strip_suffix(']').and_then(|p| p.split_once('[')) {
            Some((key, n)) => (key, n.parse::<usize>().ok()),
            None => (part, None),
        };
        let Some(mut value) = table.get(key) else { break };
        if let (Some(n), DeValue::Array(items)) = (index, value.get_ref()) {
            match n.checked_sub(1).and_then(|i| items.get(i)) {
                Some(item) => value = item,
                None => {
                    span = value.span();
                    break;
                }
            }
        }
        span = value.span();
        match value.get_ref() {
            DeValue::Table(t) => table = t,
            _ => break,
        }
    }
    Some(span)
}

/// The dotted path of the innermost key or value that contains `at`. Every table is searched,
/// since a table's own span covers its header, not the keys under it.
pub(crate) fn path_at(src: &str, at: usize) -> Option<String> {
    // Text that does not parse (a key given twice, a value cut short) has no tree to search:
    // its line and the table header above it name the field.
    let Ok(root) = DeTable::parse(src) else {
        return path_by_lines(src, at);
    };
    let mut best = Vec::new();
    walk(root.get_ref(), at, &mut Vec::new(), &mut best);
    (!best.is_empty()).then(|| {
        // An array's item is `key[n]`, counted from 1, as validation names it.
        let mut out = String::new();
        for part in &best {
            if !out.is_empty() && !part.starts_with('[') {
                out.push('.');
            }
            out.push_str(part);
        }
        out
    })
}

/// The dotted path of the key on the line holding `at`, under the table header above it
/// (an array of tables' header counted as `name[n]`), or the header itself where `at` is on
/// one.
fn path_by_lines(src: &str, at: usize) -> Option<String> {
    let mut table: Vec<String> = Vec::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    let mut start = 0;
    for line in src.split_inclusive('\n') {
        let here = at >= start && at < start + line.len().max(1);
        start += line.len();
        let t = line.trim();
        // A line opening with `[` inside a multi-line array is a value, not a header.
        let header = |inner: &str| {
            let inner = inner.trim();
            !inner.is_empty()
                && !inner.contains(',')
                && !inner.starts_with(|c: char| c.is_ascii_digit() || "[{-+".contains(c))
        };
        if let Some(inner) = t
            .strip_prefix("[[")
            .and_then(|r| r.split("]]").next())
            .filter(|i| header(i))
        {
            let name = dotted(inner).join(".");
            let n = match arrays.iter_mut().find(|(a, _)| *a == name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    arrays.push((name.clone(), 1));
                    1
                }
            };
            table = vec![format!("{name}[{n}]")];
        } else if let Some(inner) = t
            .strip_prefix('[')
            .and_then(|r| r.split(']').next())
            .filter(|i| header(i))
        {
            table = dotted(inner);
        } else if here && let Some((key, _)) = t.split_once('=') {
            let mut path = table.clone();
            path.extend(dotted(key));
            return Some(path.join(".")).filter(|p| !p.is_empty());
        }
        if here {
            return (!table.is_empty()).then(|| table.join("."));
        }
    }
    None
}

/// The parts of a dotted key as written (`a."b.c"` is `a` and `b.c`), each trimmed and
/// unquoted.
fn dotted(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut quote = None;
    for c in key.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '.') => parts.push(std::mem::take(&mut part).trim().to_string()),
            _ => part.push(c),
        }
    }
    parts.push(part.trim().to_string());
    parts
}

fn inside(s: Range<usize>, at: usize) -> bool {
    s.start <= at && at < s.end.max(s.start + 1)
}

fn walk(table: &DeTable, at: usize, path: &mut Vec<String>, best: &mut Vec<String>) {
    for (key, value) in table.iter() {
        path.push(key.get_ref().to_string());
        if (inside(key.span(), at) || inside(value.span(), at)) && path.len() > best.len() {
            *best = path.clone();
        }
        descend(value, at, path, best);
        path.pop();
    }
}

fn descend(value: &Spanned<DeValue>, at: usize, path: &mut Vec<String>, best: &mut Vec<String>) {
    match value.get_ref() {
        DeValue::Table(t) => walk(t, at, path, best),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(format!("[{}]", i + 1));
                if inside(item.span(), at) && path.len() > best.len() {
                    *best = path.clone();
                }
                descend(item, at, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The byte offset of the line whose key has the most dotted parts, and that count: where a
/// recursion limit the TOML reader reports without a place comes from. Quoted parts count
/// as one part, whatever dots they hold.
pub(crate) fn deepest_key(src: &str) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    for line in src.split_inclusive('\n') {
        let mut parts = 1;
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '.') => parts += 1,
                (None, '=' | '#') => break,
                _ => {}
            }
        }
        if parts > 1 && best.is_none_or(|(_, n)| parts > n) {
            best = Some((start, parts));
        }
        start += line.len();
    }
    best
}

/// Why bytes are not a UTF-8 workload, and where (a byte offset into them).
pub(crate) fn not_utf8(bytes: &[u8]) -> Option<(usize, String)> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Some((
            0,
            "the file starts with a UTF-16 byte-order mark; workload files are UTF-8 (convert it, e.g. iconv -f UTF-16 -t UTF-8)".into(),
        ));
    }
    let e = std::str::from_utf8(bytes).err()?;
    let at = e.valid_up_to();
    Some((
        at,
        format!("byte 0x{:02x} is not UTF-8; workload files are UTF-8 text", bytes[at]),
    ))
}

#[cfg(test)]
mod tests {

    #[test]
    fn text_that_does_not_parse_is_placed_by_its_line_and_the_header_above_it() {
        let src = "name = \"w\"\n[tables.messages]\nname = \"a\"\nname = \"b\"\n[[ops]]\nx = 1\n[[ops]]\n\"y.z\" = [\n  [1, 2],\n]\ny.\"q\" = 2\n[tables.messages]\n";
        let line = |n: usize| src.split_inclusive('\n').take(n - 1).map(str::len).sum::<usize>();
        assert!(DeTable::parse(src).is_err());
        assert_eq!(path_at(src, line(1)).as_deref(), Some("name"));
        assert_eq!(path_at(src, line(4)).as_deref(), Some("tables.messages.name"));
        assert_eq!(path_at(src, line(8) + 2).as_deref(), Some("ops[2].y.z"));
        // A line of a multi-line array is not a header.
        assert_eq!(path_at(src, line(11)).as_deref(), Some("ops[2].y.q"));
        assert_eq!(path_at(src, line(12) + 1).as_deref(), Some("tables.messages"));
    }

    use super::*;

    const SRC: &str = "name = \"x\"\n[data]\nusers = 5\n[data.follows]\nmean = 3.5\n[run.mix]\npublish = 2\n";

    #[test]
    fn paths_and_positions_agree() {
        let span = span_of(SRC, "data.follows.mean").unwrap();
        assert_eq!(&SRC[span.clone()], "3.5");
        assert_eq!(line_col(SRC, span.start), (5, 8));
        assert_eq!(path_at(SRC, span.start).as_deref(), Some("data.follows.mean"));
        let span = span_of(SRC, "run.mix.publish").unwrap();
        assert_eq!(line_col(SRC, span.start), (7, 11));
        // A missing key points at the deepest table that exists.
        let span = span_of(SRC, "data.posts.per_month").unwrap();
        assert_eq!(line_col(SRC, span.start).0, 2);
    }

    #[test]
    fn the_deepest_key_is_found_outside_quotes_and_comments() {
        let src = "a = \"x.y.z.w\"\nb.c = 1 # d.e.f.g\n[h.i.j]\n'k.l'.m = 2\n";
        assert_eq!(deepest_key(src), Some((src.find("[h").unwrap(), 3)));
        assert_eq!(deepest_key("a = 1\n"), None);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_placed() {
        assert_eq!(not_utf8(b"abc"), None);
        let (at, why) = not_utf8(b"ab\ncd\x9c").unwrap();
        assert_eq!(
            (at, why.as_str()),
            (5, "byte 0x9c is not UTF-8; workload files are UTF-8 text")
        );
        assert_eq!(not_utf8(&[0xfe, 0xff, 0, b'a']).unwrap().0, 0);
    }
}
